"""Whether two sides measure the same thing: decided before anything is paired or judged.

Two runs of one specialization name are comparable only when they measure the same thing.
A difference is one of two kinds:

* **measurement** (`Kind.MEASUREMENT`): the sides measure something else, and no verdict
  (regression, improvement, unchanged) may come from them: the settings that define a
  measurement (`primbench.resultconfig`: ``size``, ``hot``, ``cache_size``, ``flags.sync``,
  every custom setting), the GPU model, the timer (GPU events or the host timer) and, without
  ``--metric``, the metric each side declares (bytes/s, items/s or time). Axis values are part
  of a specialization's name, so matching by name already keeps them equal.
* **environment** (`Kind.ENVIRONMENT`): the same measurement on another machine: another
  physical GPU of the same model (UUID or serial) or another driver. A warning shown in the
  header; `strict` makes these blocking too.

`assess` returns the differences as data (`Comparability`); `compare.core` raises
`NotComparableError` (exit 2, one line per difference) unless mismatches are allowed, and then
marks every affected row. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import attrgetter, itemgetter
from typing import Any, Protocol

import msgspec

from primbench.errors import PrimbenchError
from primbench.metrics import choose
from primbench.resultconfig import RESULT_FLAGS, RESULT_SETTINGS, format_size, format_value, setting_differences
from primbench.results import Results, Specialization


class Kind(StrEnum):
    MEASUREMENT = "measurement"  # another measurement: never a verdict
    ENVIRONMENT = "environment"  # the same measurement elsewhere: a warning (blocking when strict)


@dataclass(frozen=True)
class Difference:
    """One way the sides differ. `algorithm` None: every algorithm of the comparison;
    `names` empty: every specialization of the algorithm, else only these."""

    what: str
    base: str
    head: str
    kind: Kind
    algorithm: str | None = None
    names: tuple[str, ...] = ()

    def applies_to(self, key: tuple[str, str]) -> bool:
        return (self.algorithm is None or self.algorithm == key[0]) and (not self.names or key[1] in self.names)

    def describe(self) -> str:
        """``type_copy: size differs: base 128MiB, head 1MiB``."""
        where = f"{self.algorithm}: " if self.algorithm else ""
        which = ""
        if self.names:
            more = f" and {len(self.names) - 1} more" if len(self.names) > 1 else ""
            which = f" ({self.names[0]!r}{more})"
        return f"{where}{self.what} differs{which}: base {self.base}, head {self.head}"

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "base": self.base, "head": self.head, "kind": self.kind.value,
                "algorithm": self.algorithm, "specializations": list(self.names)}


@dataclass(frozen=True)
class Comparability:
    """Every difference found, and whether environment differences block (`strict`)."""

    differences: tuple[Difference, ...] = ()
    strict: bool = False

    def blocking(self, d: Difference) -> bool:
        return d.kind is Kind.MEASUREMENT or self.strict

    @property
    def blockers(self) -> list[Difference]:
        return [d for d in self.differences if self.blocking(d)]

    @property
    def warnings(self) -> list[Difference]:
        return [d for d in self.differences if not self.blocking(d)]

    @property
    def comparable(self) -> bool:
        return not self.blockers

    def blockers_of(self, key: tuple[str, str]) -> list[Difference]:
        """The blocking differences that apply to the specialization `key` (algorithm, name)."""
        return [d for d in self.blockers if d.applies_to(key)]

    def lines(self) -> list[str]:
        """One line per blocking difference."""
        return [d.describe() for d in self.blockers]

    def to_dict(self) -> dict[str, Any]:
        return {"comparable": self.comparable, "strict": self.strict,
                "differences": [d.to_dict() for d in self.differences]}


class NotComparableError(PrimbenchError):
    """The sides measure different things (exit 2): one line per difference, and the way out."""

    exit_code = 2

    def __init__(self, comparability: Comparability) -> None:
        self.comparability = comparability
        lines = comparability.lines()
        super().__init__("not comparable: base and head measure different things:\n  "
                         + "\n  ".join(lines)
                         + "\n(--allow-mismatch compares them anyway, every row marked and none judged)")


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "absent"
    if key in ("size", "cache_size"):
        return format_size(value)
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    return format_value(value)


_ALGORITHM = attrgetter("algorithm")
_FIRST = itemgetter(0)


def by_algorithm(side: Sequence[Results]) -> dict[str, Results]:
    """The first file of a side that holds each algorithm (its context stands for the algorithm)."""
    out: dict[str, Results] = {}
    for r in side:
        try:  # the names as written (Specialization.algorithm, without a property call a specialization)
            written = {s.meta.get("algo", "") for s in r.specializations}
        except TypeError:  # an unhashable meta.algo
            written = {0}
        named = written if all(type(a) is str for a in written) else set(map(_ALGORITHM, r.specializations))
        algos = {a or r.algorithm for a in named} or {r.algorithm}
        for a in sorted(algos):
            out.setdefault(a, r)
    return out


def _gpu(results: Results) -> tuple[str | None, str | None]:
    """The GPU model and the physical GPU of a run; of a ``--devices`` run (results 4.8.0) every
    model it ran on (joined: several models are another measurement) and every GPU's id."""
    gpus = [d.gpu for d in results.devices if d.gpu is not None] or [results.gpu]
    names = sorted({g.name for g in gpus if g.name is not None})
    ids = [next((str(v) for v in (g.uuid, g.serial) if v), None) for g in gpus]
    known = [i for i in ids if i is not None]
    return (" and ".join(names) if names else None), (", ".join(sorted(known)) if known else None)


def _context_differences(algorithm: str | None, base: Results, head: Results) -> list[Difference]:
    out: list[Difference] = []
    measured = {*RESULT_SETTINGS, *RESULT_FLAGS}
    for section, key, b, h in setting_differences(base, head):
        if section == "custom_settings":
            out.append(Difference(f"custom setting {key}", _fmt(key, b), _fmt(key, h), Kind.MEASUREMENT, algorithm))
        elif key in measured:
            label = f"setting {key}" if section == "settings" else f"flag {key}"
            out.append(Difference(label, _fmt(key, b), _fmt(key, h), Kind.MEASUREMENT, algorithm))
    (bname, bid), (hname, hid) = _gpu(base), _gpu(head)
    if bname != hname and (bname is None or hname is None):
        # a file that does not say (a C++ CSV has no context): unknown is not a difference, but say so
        out.append(Difference("GPU model unknown on one side", _fmt("", bname), _fmt("", hname), Kind.ENVIRONMENT,
                              algorithm))
    elif bname != hname:
        out.append(Difference("GPU model", _fmt("", bname), _fmt("", hname), Kind.MEASUREMENT, algorithm))
    elif bid and hid and bid != hid:
        out.append(Difference("physical GPU (same model)", bid, hid, Kind.ENVIRONMENT, algorithm))
    bb, hb = base.general.backend, head.general.backend
    for field in ("driver_version", "kernel_driver_version"):
        b, h = (getattr(x, field, None) if x is not None else None for x in (bb, hb))
        if isinstance(b, str) and isinstance(h, str) and b != h:
            out.append(Difference(field.replace("_", " "), b, h, Kind.ENVIRONMENT, algorithm))
    return out


_TIMERS = {"events": "GPU events", "host": "host timer"}


class Measured(Protocol):
    """A side's measurement of a specialization (`compare.core`'s index entry)."""

    @property
    def spec(self) -> Specialization: ...


#: Both sides' measurements of each specialization, by (algorithm, name).
Pairs = Mapping[tuple[str, str], tuple[Sequence[Measured], Sequence[Measured]]]


def _spec_differences(algorithm: str, pairs: Iterable[tuple[tuple[str, str], tuple[Sequence[Measured],
                                                                                    Sequence[Measured]]]],
                      metric: str | None) -> list[Difference]:
    """Timer and (without a --metric choice) declared metric, per specialization of `pairs` (the
    items of `algorithm`), grouped."""
    timers: dict[tuple[str, str], list[str]] = {}
    metrics: dict[tuple[str, str], list[str]] = {}
    for (_, name), (measured_base, measured_head) in pairs:
        if len(measured_base) == 1 and len(measured_head) == 1:  # a file a side (the usual case): no sets of one
            b, h = measured_base[0].spec, measured_head[0].spec
            if b.timer != h.timer:
                timers.setdefault((_TIMERS.get(b.timer, b.timer), _TIMERS.get(h.timer, h.timer)), []).append(name)
            if metric is None and not ((b.bytes_per_second or 0) > 0 and (h.bytes_per_second or 0) > 0) \
                    and b.measured and h.measured:  # (both bytes/s, as most are: `choose` agrees)
                bn = choose(b.bytes_per_second, b.items_per_second).name
                hn = choose(h.bytes_per_second, h.items_per_second).name
                if bn != hn:
                    metrics.setdefault((bn, hn), []).append(name)
            continue
        base, head = [m.spec for m in measured_base], [m.spec for m in measured_head]
        if {s.timer for s in base} != {s.timer for s in head}:
            bt, ht = (" and ".join(sorted({_TIMERS.get(s.timer, s.timer) for s in side})) for side in (base, head))
            timers.setdefault((bt, ht), []).append(name)
        if metric is None:
            bm, hm = ({choose(s.bytes_per_second, s.items_per_second).name for s in side if s.measured}
                      for side in (base, head))
            if bm and hm and bm != hm:
                metrics.setdefault((", ".join(sorted(bm)), ", ".join(sorted(hm))), []).append(name)
    out = [Difference("timer", b, h, Kind.MEASUREMENT, algorithm, tuple(names)) for (b, h), names in timers.items()]
    out += [Difference("declared metric", b, h, Kind.MEASUREMENT, algorithm, tuple(names))
            for (b, h), names in metrics.items()]
    return out


def assess(base: Sequence[Results], head: Sequence[Results], pairs: Pairs, *,
           metric: str | None = None, strict: bool = False) -> Comparability:
    """The differences between `base` and `head` for the specializations in `pairs` ((algorithm,
    name) -> both sides' measurements of it, each with its `spec`), per algorithm. `metric`: the
    ``--metric`` choice (None: each side's declared metric must agree); `strict`: environment
    differences block."""
    b, h = by_algorithm(base), by_algorithm(head)
    algorithms = list(dict.fromkeys(map(_FIRST, pairs)))  # by C iteration (100,000 keys)
    several = len(algorithms) > 1
    found: list[Difference] = []
    for algo in algorithms:
        if algo in b and algo in h:
            found += _context_differences(algo if several else None, b[algo], h[algo])
        items = [kv for kv in pairs.items() if kv[0][0] == algo] if several else pairs.items()
        found += [d if several else Difference(d.what, d.base, d.head, d.kind, None, d.names)
                  for d in _spec_differences(algo, items, metric)]
    return Comparability(tuple(dict.fromkeys(found)), strict)
