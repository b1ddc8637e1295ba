"""Parameter axes, the NVBench way: a benchmark declares named axes of values; the executor
queues one specialization per combination (the Cartesian product), and ``--axis`` replaces an
axis's values from the command line.

A benchmark declares them with the `sweep` class decorator (or in its ``axes`` attribute,
e.g. set per instance in ``__init__``)::

    @pb.axis.sweep(block=pb.axis.ints([128, 256]), size=pb.axis.pow2(16, 28, 4),
                   dtype=pb.axis.dtypes([np.float32, np.float64]))
    class Copy(pb.Benchmark):
        def run(self, state):
            block, dtype = state.axis("block"), state.axis("dtype")
            n = state.size // dtype.itemsize            # the axis named "size" is state.size

Each specialization's ``meta`` (and so its name, ``block: 128, dtype: float32, size: 65536``)
carries its axis values; a dtype shows as `primbench.type_name` prints it. The axis named
``size`` is the input size in bytes: `State.size` returns its value, and ``--size X`` on the
command line is short for ``--axis size=X``. The grammar of ``--axis``: `parse_override` and
docs/axes.md.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from primbench.errors import UsageError
from primbench.settings import parse_size
from primbench.typenames import registered_dtype, type_name

B = TypeVar("B", bound=type)  # a benchmark class (primbench.benchmark imports this module)

__all__ = ["MAX_VALUES", "SIZE", "Axis", "Constraint", "Kind", "constrain", "dtypes", "floats", "ints",
           "parse_override", "pow2", "sizes", "strings", "sweep", "zipped"]

#: The axis that is the input size: `State.size` returns its value.
SIZE = "size"
#: Most values one axis may have (a range such as ``[1:10^9]`` is refused, not expanded).
MAX_VALUES = 10_000

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Kind(StrEnum):
    """What an axis holds."""

    INT = "int"
    FLOAT = "float"
    STRING = "string"
    DTYPE = "dtype"


@dataclass(frozen=True)
class Axis:
    """One axis: its kind and its values, in the order declared. Build it with `ints`, `pow2`,
    `sizes`, `floats`, `strings` or `dtypes`."""

    kind: Kind
    values: tuple[Any, ...]
    in_bytes: bool = False  # values are byte counts: --axis accepts KiB, MiB, GiB suffixes

    def __post_init__(self) -> None:
        if not self.values:
            raise UsageError("an axis needs at least one value")
        labels = [str(self.label(v)) for v in self.values]
        counts = Counter(labels)
        for label in labels:
            if counts[label] > 1:
                raise UsageError(f"axis value {label} is given twice")

    def label(self, value: Any) -> Any:
        """What `value` shows as in ``meta`` and the specialization's name (a dtype: its type name)."""
        return type_name(value) if self.kind is Kind.DTYPE else value

    def with_values(self, values: Iterable[Any]) -> Axis:
        """This axis with other values (checked as the constructor of its kind checks them)."""
        return Axis(self.kind, tuple(_convert(self.kind, v) for v in values), self.in_bytes)


def _convert(kind: Kind, value: Any) -> Any:
    if kind is Kind.INT:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise UsageError(f"an integer axis takes whole numbers, got {value!r}")
        return int(value)
    if kind is Kind.FLOAT:
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise UsageError(f"a float axis takes numbers, got {value!r}")
        if not math.isfinite(float(value)):
            raise UsageError(f"a float axis takes finite numbers, got {value!r}")
        return float(value)
    if kind is Kind.STRING:
        if not isinstance(value, str) or not value:
            raise UsageError(f"a string axis takes non-empty strings, got {value!r}")
        return value
    try:
        return np.dtype(value)
    except TypeError:
        raise UsageError(f"a dtype axis takes NumPy dtypes, got {value!r}") from None


def ints(values: Iterable[int]) -> Axis:
    """Whole numbers: ``pb.axis.ints([128, 256, 512])``, ``pb.axis.ints(range(1, 9))``."""
    return Axis(Kind.INT, tuple(_convert(Kind.INT, v) for v in values))


def pow2(first: int, last: int, step: int = 1) -> Axis:
    """Powers of two by exponent, NVBench's power-of-two axis: 2**first, 2**(first + step), …
    up to 2**last. ``pb.axis.pow2(16, 28, 4)`` is 65536, 1048576, 16777216, 268435456."""
    for name, value in (("first", first), ("last", last), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"pow2(): {name} must be a non-negative whole number, got {value!r}")
    if step < 1 or last < first:
        raise UsageError(f"pow2({first}, {last}, {step}): needs first <= last and step >= 1")
    return Axis(Kind.INT, tuple(2**e for e in range(first, last + 1, step)))


def sizes(values: Iterable[int | str]) -> Axis:
    """Byte counts, each a number or a size with a suffix: ``pb.axis.sizes(["64KiB", "1MiB",
    "128MiB"])``. Meant for the axis named ``size``; its ``--axis`` values take the suffixes too."""
    return Axis(Kind.INT, tuple(parse_size(v) if isinstance(v, str) else _convert(Kind.INT, v) for v in values),
                in_bytes=True)


def floats(values: Iterable[float]) -> Axis:
    """Real numbers: ``pb.axis.floats([0.0, 0.5, 1.0])``."""
    return Axis(Kind.FLOAT, tuple(_convert(Kind.FLOAT, v) for v in values))


def strings(values: Iterable[str]) -> Axis:
    """Text: ``pb.axis.strings(["uniform", "sorted"])``."""
    return Axis(Kind.STRING, tuple(_convert(Kind.STRING, v) for v in values))


def dtypes(values: Iterable[Any]) -> Axis:
    """NumPy dtypes: ``pb.axis.dtypes([np.float32, np.float64])``; ``state.axis(name)`` gives an
    ``np.dtype``, the name shows its `primbench.type_name` (``float`` when registered so)."""
    return Axis(Kind.DTYPE, tuple(_convert(Kind.DTYPE, v) for v in values))


# --------------------------------------------------------------------------- declarations


def sweep(**axes: Axis) -> Callable[[B], B]:
    """A class decorator that declares a benchmark's axes, in this order::

        @pb.axis.sweep(block=pb.axis.ints([128, 256]), size=pb.axis.pow2(16, 28, 4))
        class Copy(pb.Benchmark): ...

    It sets the class's ``axes`` (read-only); the executor queues every combination."""
    def decorate(cls: B) -> B:
        setattr(cls, "axes", MappingProxyType(dict(axes)))  # noqa: B010 (B is any class to mypy)
        declared(cls)  # checked now: a bad declaration fails where it is written
        return cls

    return decorate



@dataclass(frozen=True)
class Constraint:
    """One predicate over a combination of axis values (a dict of name to value, dtypes as
    ``np.dtype``): True keeps the combination, False excludes it, for `reason`."""

    predicate: Callable[[Mapping[str, Any]], object]
    reason: str


def zipped(*names: str) -> Callable[[B], B]:
    """A class decorator: the axes `names` advance together (NVBench's zip) instead of forming
    their product: ``@pb.axis.zipped("m", "n")`` over ``m=ints([1, 2, 4])``, ``n=ints([8, 16, 32])``
    gives (1, 8), (2, 16), (4, 32). They need as many values each (after ``--axis``). Several
    groups may be zipped; an axis belongs to one group at most."""
    def decorate(cls: B) -> B:
        groups = tuple(getattr(cls, "axis_zips", ()) or ())
        setattr(cls, "axis_zips", (*groups, tuple(names)))  # noqa: B010 (B is any class to mypy)
        return cls

    if len(names) < 2 or not all(isinstance(n, str) for n in names):
        raise UsageError(f"pb.axis.zipped{names!r}: name two axes or more")
    return decorate


def constrain(predicate: Callable[[Mapping[str, Any]], object], reason: str) -> Callable[[B], B]:
    """A class decorator: exclude the combinations for which `predicate` is false, for `reason`
    (``--list`` shows them). ``@pb.axis.constrain(lambda c: c["block"] <= c["items"], "block >
    items")``: `c` holds every axis value of one combination by name. Several may be stacked;
    a combination must pass them all. Excluded combinations are neither run nor written."""
    if not callable(predicate) or not isinstance(reason, str) or not reason.strip():
        raise UsageError("pb.axis.constrain(predicate, reason): a callable and a non-empty reason")

    def decorate(cls: B) -> B:
        constraints = tuple(getattr(cls, "axis_constraints", ()) or ())
        setattr(cls, "axis_constraints", (*constraints, Constraint(predicate, reason)))  # noqa: B010
        return cls

    return decorate


def zips(benchmark: Any, axes: Mapping[str, Axis]) -> tuple[tuple[str, ...], ...]:
    """The zipped groups a benchmark declares (``axis_zips``), checked against its `axes`."""
    label = benchmark.__name__ if isinstance(benchmark, type) else type(benchmark).__name__
    groups = tuple(tuple(g) for g in getattr(benchmark, "axis_zips", ()) or ())
    seen: set[str] = set()
    for group in groups:
        for name in group:
            if name not in axes:
                raise UsageError(f"{label}: pb.axis.zipped{group!r} names {name!r}, which is not an axis "
                                 f"(its axes: {', '.join(axes) or 'none'})")
            if name in seen:
                raise UsageError(f"{label}: axis {name!r} is zipped twice")
            seen.add(name)
    return groups


def constraints(benchmark: Any) -> tuple[Constraint, ...]:
    """The constraints a benchmark declares (``axis_constraints``)."""
    out = tuple(getattr(benchmark, "axis_constraints", ()) or ())
    label = benchmark.__name__ if isinstance(benchmark, type) else type(benchmark).__name__
    for c in out:
        if not isinstance(c, Constraint):
            raise UsageError(f"{label}.axis_constraints: build them with pb.axis.constrain, got {type(c).__name__}")
    return out


def combinations(label: str, axes: Mapping[str, Axis], groups: tuple[tuple[str, ...], ...],
                 rules: tuple[Constraint, ...]) -> list[tuple[dict[str, Any], str | None]]:
    """Every combination of `axes` (the product, zipped `groups` advancing together) in the
    order declared, each with the reason a constraint excludes it (None: kept)."""
    from itertools import product

    for group in groups:
        lengths = {n: len(axes[n].values) for n in group}
        if len(set(lengths.values())) > 1:
            raise UsageError(f"{label}: the zipped axes {', '.join(group)} need as many values each, got "
                             + ", ".join(f"{n} {k}" for n, k in lengths.items()))
    zipped_of = {n: g for g in groups for n in g}
    units: list[tuple[str, ...]] = []  # one axis, or one zipped group at its first axis's place
    for name in axes:
        group = zipped_of.get(name, (name,))
        if group not in units:
            units.append(group)
    choices = [list(zip(*(axes[n].values for n in unit), strict=True)) for unit in units]
    out: list[tuple[dict[str, Any], str | None]] = []
    for combo in product(*choices):
        flat = {n: v for unit, values in zip(units, combo, strict=True) for n, v in zip(unit, values, strict=True)}
        values = {n: flat[n] for n in axes}  # the declared order
        out.append((values, _excluded_by(label, values, rules)))
    return out


def _excluded_by(label: str, values: Mapping[str, Any], rules: tuple[Constraint, ...]) -> str | None:
    for rule in rules:
        try:
            ok = rule.predicate(dict(values))
        except Exception as exc:
            raise UsageError(f"{label}: the constraint {rule.reason!r} raised {type(exc).__name__}: {exc} "
                             f"for {dict(values)!r}") from None
        if not ok:
            return rule.reason
    return None


def declared(benchmark: Any) -> dict[str, Axis]:
    """The axes a benchmark (or a benchmark class) declares, its ``axes`` attribute, checked:
    names are identifiers, not ``algo``; the ``size`` axis holds positive whole numbers."""
    label = benchmark.__name__ if isinstance(benchmark, type) else type(benchmark).__name__
    axes = getattr(benchmark, "axes", None) or {}
    if not isinstance(axes, Mapping):
        raise UsageError(f"{label}.axes must be a mapping of names to pb.axis values, got {type(axes).__name__}")
    out: dict[str, Axis] = {}
    for name, axis in axes.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "algo":
            raise UsageError(f"{label}.axes: {name!r} is not an axis name (a Python identifier other than 'algo')")
        if not isinstance(axis, Axis):
            raise UsageError(f"{label}.axes[{name!r}] must be built with pb.axis (ints, pow2, sizes, floats, "
                             f"strings, dtypes), got {type(axis).__name__}")
        if name == SIZE and (axis.kind is not Kind.INT or any(v <= 0 for v in axis.values)):
            raise UsageError(f"{label}.axes['size'] is the input size: it takes positive whole numbers of bytes")
        out[name] = axis
    return out


# --------------------------------------------------------------------------- --axis


def parse_override(text: str) -> tuple[str, str]:
    """``--axis NAME=SPEC`` -> (NAME, SPEC); `Axis.with_values(values(axis, SPEC))` applies it."""
    name, eq, spec = text.partition("=")
    name = name.strip()
    if not eq or not _NAME.fullmatch(name):
        raise UsageError(f"--axis {text!r}: write NAME=VALUE, NAME=[V1,V2,...] or NAME=[START:STOP:STEP] "
                         "(see docs/axes.md)")
    if not spec.strip():
        raise UsageError(f"--axis {text!r}: no value after '='")
    return name, spec.strip()


def override(axis: Axis, name: str, spec: str) -> Axis:
    """`axis` with the values of a ``--axis`` SPEC: ``V``, ``[V1,V2,...]``, ``[START:STOP]``,
    ``[START:STOP:+STEP]`` (linear), ``[START:STOP:*FACTOR]`` or ``[START:STOP:FACTOR]``
    (geometric); STOP is included when reached. Numbers may be written ``2^16``; a byte axis
    (``size``) takes KiB, MiB, GiB, TiB suffixes. Strings and dtypes take no ranges."""
    where = f"--axis {name}={spec}"
    body = spec.strip()
    if name == SIZE and not axis.in_bytes:  # the input size takes KiB, MiB, ... whatever declared it
        axis = Axis(axis.kind, axis.values, in_bytes=True)
    try:
        if body.startswith("[") and body.endswith("]"):
            inner = body[1:-1].strip()
            if not inner:
                raise UsageError("an empty list")
            if ":" in inner and axis.kind in (Kind.INT, Kind.FLOAT):
                values: list[Any] = _range(axis, inner)
                if axis.kind is Kind.FLOAT:  # 0.1 + 2 x 0.1 is 0.30000000000000004: say 0.3
                    values = [float(f"{v:.12g}") for v in values]
            else:
                values = [_scalar(axis, part.strip()) for part in inner.split(",")]
        elif body.startswith("[") or body.endswith("]"):
            raise UsageError("unbalanced brackets")
        else:
            values = [_scalar(axis, body)]
        return axis.with_values(values)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None


_POWER = re.compile(r"(\d+)\s*\^\s*(\d+)")
_INT = re.compile(r"[-+]?\d+")


def _int(axis: Axis, text: str) -> int:
    if m := _POWER.fullmatch(text):
        base, exp = int(m.group(1)), int(m.group(2))
        if exp > 64:
            raise UsageError(f"{text} is too large")
        return int(base**exp)
    if _INT.fullmatch(text):
        return int(text)
    if axis.in_bytes:
        return parse_size(text)
    raise UsageError(f"{text!r} is not a whole number" + (" (nor 2^N)" if "^" not in text else ""))


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"{text!r} is not a finite number")
    return value


def _scalar(axis: Axis, text: str) -> Any:
    if not text:
        raise UsageError("an empty value")
    if axis.kind is Kind.INT:
        return _int(axis, text)
    if axis.kind is Kind.FLOAT:
        return _float(text)
    if axis.kind is Kind.STRING:
        return text
    return _dtype(axis, text)


def _dtype(axis: Axis, text: str) -> np.dtype[Any]:
    """A dtype by the name it shows as (``char`` when registered so), else NumPy's (``int8``)."""
    for value in axis.values:
        if type_name(value) == text:
            return np.dtype(value)
    if (registered := registered_dtype(text)) is not None:
        return registered
    try:
        return np.dtype(text)
    except TypeError:
        raise UsageError(f"{text!r} is not a dtype (a NumPy name such as float32, or a registered type name)") \
            from None


def _range(axis: Axis, inner: str) -> list[Any]:
    parts = [p.strip() for p in inner.split(":")]
    if len(parts) not in (2, 3):
        raise UsageError("a range is [START:STOP], [START:STOP:+STEP] or [START:STOP:*FACTOR]")
    number = (lambda t: _int(axis, t)) if axis.kind is Kind.INT else _float
    start, stop = number(parts[0]), number(parts[1])
    step_text = parts[2] if len(parts) == 3 else "+1"
    geometric = not step_text.startswith("+")
    raw = step_text.lstrip("+*").strip()
    step = number(raw) if raw else None
    if step is None:
        raise UsageError("a range's third part needs a number (+STEP or *FACTOR)")
    if stop < start:
        raise UsageError(f"STOP {parts[1]} is below START {parts[0]}")
    values: list[Any] = []
    if geometric:
        if not step > 1:
            raise UsageError(f"a FACTOR must be above 1, got {raw}")
        if start <= 0:
            raise UsageError(f"a geometric range needs a positive START, got {parts[0]}")
        k = 0
        while (v := start * step**k) <= stop * (1 + 1e-12):
            values.append(v)
            k += 1
            if len(values) > MAX_VALUES:
                break
    else:
        if not step > 0:
            raise UsageError(f"a STEP must be above 0, got {raw}")
        k = 0
        while (v := start + step * k) <= stop + abs(step) * 1e-9:
            values.append(v)
            k += 1
            if len(values) > MAX_VALUES:
                break
    if len(values) > MAX_VALUES:
        raise UsageError(f"the range has more than {MAX_VALUES} values")
    return values
