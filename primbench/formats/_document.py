"""What every reader builds: a results document's JSON values (4.4.0 keys), a
specialization of it, a date from a file's modification time, numbers checked."""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from primbench.benchmark import specialization_name
from primbench.formats._base import FormatError


def number(value: Any, where: str, *, allow_none: bool = False) -> float | None:
    """A finite number (a JSON number or a numeric string, as NVBench writes them)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        raise FormatError(where, f"must be a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise FormatError(where, f"must be a number, got {value!r}") from None
    if not isinstance(value, int | float):
        raise FormatError(where, f"must be a number, got {type(value).__name__}")
    out = float(value)
    if not math.isfinite(out):
        raise FormatError(where, f"must be finite, got {value!r}")
    return out


def non_negative(value: Any, where: str) -> float:
    out = number(value, where)
    assert out is not None
    if out < 0:
        raise FormatError(where, f"must not be negative, got {value!r}")
    return out


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise FormatError(where, f"must be a string, got {type(value).__name__}")
    return value


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FormatError(where, "must be an object")
    return value


def sequence(value: Any, where: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise FormatError(where, "must be a list")
    return value


def file_date(source: str) -> str | None:
    """The modification time of the file at `source` as an ISO 8601 UTC date (None: no file)."""
    try:
        mtime = os.stat(source).st_mtime
    except (OSError, ValueError):
        return None
    return _dt.datetime.fromtimestamp(mtime, _dt.UTC).isoformat(timespec="seconds")


def name_of(meta: Mapping[str, Any], fallback: str) -> str:
    """A specialization's name from its meta (primbench's rule), else `fallback`."""
    return specialization_name(meta) or fallback


def time_per_call(mean: float | None, **stats: float | None) -> dict[str, float] | None:
    if mean is None:
        return None
    return {"mean": mean, **{k: v for k, v in stats.items() if v is not None}}


def specialization(index: int, name: str, meta: Mapping[str, Any], *, seconds_per_call: float | None,
                   bytes_per_second: float | None = None, items_per_second: float | None = None,
                   noise_percent: float = 0.0, noise_timeout: bool = False, calls: Mapping[str, Any] | None = None,
                   elapsed: Mapping[str, float] | None = None, batches: Sequence[Mapping[str, Any]] | None = None,
                   rounds: Sequence[Mapping[str, Any]] | None = None, stats: Mapping[str, float] | None = None,
                   sm_clock: Mapping[str, Any] | None = None, timer: str = "events",
                   error: str | None = None) -> dict[str, Any]:
    """One specialization's JSON values: measured (`seconds_per_call` known) or failed (`error`)."""
    bps = bytes_per_second or 0.0
    ips = items_per_second or 0.0
    spec: dict[str, Any] = {
        "index": index,
        "name": name,
        "bytes_per_second": None if error else bps,
        "items_per_second": None if error else ips,
        "bytes_per_item": bps / ips if bps > 0 and ips > 0 else None,
        "items": None,
        "noise_timeout": None if error else noise_timeout,
        "noise_percent": None if error else noise_percent,
        "meta": dict(meta),
        "elapsed_secs": None if error else dict(elapsed or {}),
        "calls": None if error else dict(calls or {}),
    }
    if batches:
        spec["batches"] = [dict(b) for b in batches]
    if sm_clock is not None:
        spec["sm_clock"] = dict(sm_clock)
    if rounds:
        spec["rounds"] = [dict(r) for r in rounds]
    if error is None:
        spec["gpu_seconds_per_call"] = seconds_per_call
        spec["time_per_call"] = dict(stats) if stats else time_per_call(seconds_per_call)
    if timer != "events":
        spec["timer"] = timer
    if error is not None:
        spec["error"] = error
    return spec


def between_rounds(per_call: Sequence[float]) -> dict[str, Any]:
    """``between_rounds`` of repetitions: their count and the spread of their time per call."""
    n = len(per_call)
    if n < 2:
        return {"count": n, "cv_percent": None}
    mean = math.fsum(per_call) / n
    var = math.fsum((x - mean) ** 2 for x in per_call) / (n - 1)
    return {"count": n, "cv_percent": (math.sqrt(var) / mean * 100.0) if mean > 0 else None}


def document(algorithm: str, specializations: Sequence[Mapping[str, Any]], *,
             general: Mapping[str, Any] | None = None, settings: Mapping[str, Any] | None = None,
             custom_settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A whole results document (4.4.0 keys; the loader sets the version it decodes)."""
    gen = {"algorithm": algorithm, "specialization_count": len(specializations)}
    gen.update({k: v for k, v in (general or {}).items() if v is not None})
    context: dict[str, Any] = {"results_version": "4.4.0", "general": gen, "settings": dict(settings or {})}
    if custom_settings:
        context["custom_settings"] = dict(custom_settings)
    ok = [s for s in specializations if s.get("error") is None]
    summary = {
        "noise_timeouts": sum(1 for s in ok if s.get("noise_timeout")),
        "failures": len(specializations) - len(ok),
    }
    return {"context": context, "specializations": [dict(s) for s in specializations], "summary": summary}


def algorithm_of(names: Sequence[str]) -> str:
    """A run's algorithm: the one its specializations share, else their names joined by ``+``."""
    unique = list(dict.fromkeys(names))
    return unique[0] if len(unique) == 1 else "+".join(unique)
