"""Which settings change what a run measures: the one home of that list.

A specialization name measured with other settings is another measurement: ``type: char``
copied at ``--size 1MiB`` (about 370 GB/s on an H200) and at the default 128 MiB (about
1.1 TB/s) must never be one series, nor the two sides of one comparison. The settings that
make a run another measurement are

* ``context.settings``: `RESULT_SETTINGS` (``size``, ``hot``, ``cache_size``);
* ``context.flags.sync``;
* every ``context.custom_settings`` value (a benchmark program's own options, e.g. the
  copy example's ``extra_percent``).

`result_config` collects them from a run (with the value a writer used when the file lacks
the key: results 4.0.0 files have no ``cache_size``, which was then 256 MiB), and
`config_key` turns them into a short, stable, readable string — ``size=128MiB``, plus only
what departs from the baseline: ``size=1MiB hot``, ``size=128MiB extra_percent=1`` — that
`history` stores per run and adds to the key of every series. `setting_differences` is what
`compare` warns about: those settings, plus `PROTOCOL_SETTINGS`, which do not define another
measurement but can still move results.

The stored keys depend on `KEY_BASELINE` and on the formatting here: never change either
(a changed default of the harness does not change the baseline), or old and new runs of one
configuration would get different keys.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from primbench.results import Results

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
TiB = 1024 * GiB

#: Settings (``context.settings``) that make a run another measurement.
RESULT_SETTINGS = ("size", "hot", "cache_size")
#: Flags (``context.flags``) that make a run another measurement.
RESULT_FLAGS = ("sync",)
#: Settings that do not define another measurement but can move results (compare warns on them).
PROTOCOL_SETTINGS = ("seed", "min_gpu_ms_per_batch", "min_gpu_temp", "max_gpu_temp", "no_monitoring", "dry")

#: The value a file that lacks the key was measured with (the harness's value when the key was added).
ABSENT: dict[str, Any] = {"size": 128 * MiB, "hot": False, "cache_size": 256 * MiB, "sync": False}
#: Values left out of a config key (``size`` is always written). Frozen: stored keys depend on it.
KEY_BASELINE: dict[str, Any] = {"hot": False, "cache_size": 256 * MiB, "sync": False}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _context(source: Results | Mapping[str, Any]) -> Mapping[str, Any]:
    """The context of a Results (as its JSON object), of a whole results document, or a
    context mapping itself (history stores contexts as JSON)."""
    if isinstance(source, Mapping):
        return _mapping(source.get("context")) if "context" in source else source
    import msgspec

    return _mapping(msgspec.to_builtins(source.context))


def result_config(source: Results | Mapping[str, Any]) -> dict[str, Any]:
    """What defines the measurement of a run: ``size``, ``hot``, ``cache_size`` (from
    ``context.settings``), ``sync`` (from ``context.flags``), each with `ABSENT`'s value where
    the file lacks it, and ``custom_settings`` (a dict, as written; empty if none).

    `source`: a `Results`, a results document, or its ``context`` (as stored by history)."""
    context = _context(source)
    settings, flags = _mapping(context.get("settings")), _mapping(context.get("flags"))
    out: dict[str, Any] = {key: settings.get(key, ABSENT[key]) for key in RESULT_SETTINGS}
    out.update({key: flags.get(key, ABSENT[key]) for key in RESULT_FLAGS})
    out["custom_settings"] = dict(_mapping(context.get("custom_settings")))
    return out


def format_size(value: Any) -> str:
    """Bytes as the largest binary unit that divides them (``1MiB``, ``1536KiB``), else plain bytes."""
    if isinstance(value, bool) or not isinstance(value, int):
        return format_value(value)
    for unit, factor in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if value and value % factor == 0:
            return f"{value // factor}{unit}"
    return str(value)


def format_value(value: Any) -> str:
    """A setting's value in a key: whole numbers without ``.0``, other text quoted only when needed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        if value and not any(c.isspace() or c in '="\\' for c in value) and value.isprintable():
            return value
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _off(value: Any) -> bool:
    """A custom setting at its usual default (off): None, false, zero, empty."""
    if value is None or value is False:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == 0
    return isinstance(value, (str, list, tuple, dict)) and len(value) == 0


def _part(name: str, value: Any, *, size: bool = False) -> str:
    if value is True:
        return name
    return f"{name}={format_size(value) if size else format_value(value)}"


def config_key(source: Results | Mapping[str, Any]) -> str:
    """A short, stable, readable string naming a run's measurement configuration.

    ``size=…`` always; then, in this order, ``hot``, ``cache_size=…``, ``sync`` when they
    depart from `KEY_BASELINE`; then every custom setting that is not off (None, false, zero,
    empty — so a file written before an option existed keys like one with it off), sorted by
    name, as ``name=value`` (``name`` alone for true). Examples: ``size=128MiB``,
    ``size=1MiB hot``, ``size=128MiB extra_percent=1``. Equal configurations give equal keys."""
    config = result_config(source)
    parts = [_part("size", config["size"], size=True)]
    for key in ("hot", "cache_size", "sync"):
        value = config[key]
        if value != KEY_BASELINE[key]:
            parts.append(_part(key, value, size=key == "cache_size"))
    standard = {*RESULT_SETTINGS, *RESULT_FLAGS}
    for name in sorted(config["custom_settings"], key=str):
        value = config["custom_settings"][name]
        if _off(value):
            continue
        label = f"custom.{name}" if name in standard else str(name)
        parts.append(_part(label, value))
    return " ".join(parts)


def setting_differences(base: Results | Mapping[str, Any],
                        head: Results | Mapping[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """What differs between two runs in settings that move results, as (section, key, base
    value, head value), section one of ``settings``, ``flags``, ``custom_settings``:

    * `RESULT_SETTINGS` and `RESULT_FLAGS` (a missing key counts as `ABSENT`'s value);
    * `PROTOCOL_SETTINGS` present on both sides;
    * every other flag and every custom setting (a missing one as None)."""
    bctx, hctx = _context(base), _context(head)
    bconf, hconf = result_config(bctx), result_config(hctx)  # the contexts, converted once
    bs, hs = _mapping(bctx.get("settings")), _mapping(hctx.get("settings"))
    out: list[tuple[str, str, Any, Any]] = []
    for key in RESULT_SETTINGS:
        if bconf[key] != hconf[key]:
            out.append(("settings", key, bconf[key], hconf[key]))
    for key in PROTOCOL_SETTINGS:
        if key in bs and key in hs and bs[key] != hs[key]:
            out.append(("settings", key, bs[key], hs[key]))
    bf, hf = _mapping(bctx.get("flags")), _mapping(hctx.get("flags"))
    for key in sorted(set(bf) | set(hf) | set(RESULT_FLAGS), key=str):
        b = bconf[key] if key in RESULT_FLAGS else bf.get(key)
        h = hconf[key] if key in RESULT_FLAGS else hf.get(key)
        if b != h:
            out.append(("flags", key, b, h))
    bc, hc = bconf["custom_settings"], hconf["custom_settings"]
    for key in sorted(set(bc) | set(hc), key=str):
        if bc.get(key) != hc.get(key):
            out.append(("custom_settings", key, bc.get(key), hc.get(key)))
    return out
