"""The plan of a run: the queued benchmarks, their axes expanded into specializations, and the
selection (``--filter``, the names' rules and order, the combinations a constraint excludes).

The executor queues (`queued`) and asks for the plan (`plan`) when it runs; nothing here
measures. Bad definitions and options are `UsageError`s, raised before anything runs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from primbench.axis import SIZE, Axis, Constraint, combinations, constraints, declared, override, parse_override, zips
from primbench.benchmark import Benchmark, checked_meta, name_for, order_key, specialization_name
from primbench.errors import UsageError
from primbench.settings import DEFAULT_NAMING, Settings


@dataclass
class Queued:
    """A queued benchmark (with the axes it declares), or after expansion one specialization
    of it (with its axis values)."""

    benchmark: Benchmark
    meta: dict[str, Any]
    name: str
    declared: dict[str, Axis] = field(default_factory=dict)
    axes: dict[str, Any] = field(default_factory=dict)  # this specialization's value of each axis
    size: int | None = None  # its value of the size axis: state.size
    zips: tuple[tuple[str, ...], ...] = ()  # axes that advance together (pb.axis.zipped)
    constraints: tuple[Constraint, ...] = ()  # predicates that exclude combinations (pb.axis.constrain)
    excluded: str | None = None  # after expansion: why a constraint excludes this combination


@dataclass(frozen=True)
class Plan:
    """What a run runs: the selected specializations in their order, and the selected
    combinations a constraint excludes as (name, reason) (listed, never run)."""

    selected: tuple[Queued, ...]
    excluded: tuple[tuple[str, str], ...] = ()


def queued(benchmark: Benchmark) -> Queued:
    """A benchmark as the queue holds it; a bad definition raises its `PrimbenchError`."""
    meta = checked_meta(benchmark)
    axes = declared(benchmark)
    groups = zips(benchmark, axes)
    rules = constraints(benchmark)
    if clash := sorted(set(axes) & set(meta)):
        raise UsageError(
            f"{type(benchmark).__name__}: {', '.join(map(repr, clash))} is both a meta() key and an axis; "
            "the axis value joins meta by itself")
    return Queued(benchmark, meta, specialization_name(meta), axes, zips=groups, constraints=rules)


def overrides(queue: Sequence[Queued], settings: Settings, given: frozenset[str]) -> dict[str, str]:
    """``--axis`` values by axis name (and ``--size`` given on the command line, as the
    value of every declared size axis)."""
    out: dict[str, str] = {}
    for text in settings.axis:
        name, spec = parse_override(text)
        if name in out:
            raise UsageError(f"--axis {name}= is given twice ({out[name]!r} and {spec!r}); give all values in one")
        out[name] = spec
    if "size" in given and any(SIZE in q.declared for q in queue):
        if SIZE in out:
            raise UsageError("--size and --axis size=... are both given: give one")
        out[SIZE] = str(settings.size)
    return out


def expanded(queue: Sequence[Queued], settings: Settings, given: frozenset[str]) -> list[Queued]:
    """Every specialization: each queued benchmark, or the Cartesian product of its axes
    (zipped axes advancing together); a combination a constraint excludes is kept with its
    reason in ``excluded`` (listed, never run)."""
    replaced = overrides(queue, settings, given)
    used: set[str] = set()
    out: list[Queued] = []
    for q in queue:
        axes = dict(q.declared)
        for name, spec in replaced.items():
            if name in axes:
                axes[name] = override(axes[name], name, spec)
                used.add(name)
        if not axes:
            out.append(q)
            continue
        if SIZE in axes and any(v <= 0 for v in axes[SIZE].values):
            raise UsageError(f"--axis size={replaced.get(SIZE)}: sizes must be greater than 0")
        for values, reason in combinations(type(q.benchmark).__name__, axes, q.zips, q.constraints):
            meta = {**q.meta, **{n: axes[n].label(v) for n, v in values.items()}}
            out.append(Queued(q.benchmark, meta, specialization_name(meta), q.declared, values,
                              values.get(SIZE), q.zips, q.constraints, reason))
    if unknown := [n for n in replaced if n not in used]:
        known = sorted({n for q in queue for n in q.declared})
        raise UsageError(f"--axis {unknown[0]}=...: no queued benchmark has an axis {unknown[0]!r} "
                         f"(axes: {', '.join(known) or 'none'})")
    return out


def _check_algorithms(queue: Sequence[Queued]) -> None:
    if not queue:
        raise UsageError("no benchmarks queued: call executor.queue(...) before run()")
    algos = {q.meta["algo"] for q in queue}
    if len(algos) > 1:
        raise UsageError(
            "every queued specialization must have the same 'algo'; found "
            + ", ".join(repr(a) for a in sorted(map(str, algos)))
        )


def _check_unique(specs: Sequence[Queued]) -> None:
    seen: dict[str, str] = {}
    for q in specs:
        if q.name in seen:
            raise UsageError(
                f"two specializations are named {q.name!r} ({seen[q.name]} and "
                f"{type(q.benchmark).__name__}); give their meta() a distinguishing key"
            )
        seen[q.name] = type(q.benchmark).__name__


def plan(queue: Sequence[Queued], settings: Settings, *, given: frozenset[str], naming: str,
         listing: bool = False) -> Plan:
    """The specializations to run, named and ordered by `naming`: primbench's names in their
    natural order (`natural_key`), or the C++ primbench's sorted as strings. `listing` (``--list``)
    accepts a selection whose every combination is excluded."""
    _check_algorithms(queue)
    specs = expanded(queue, settings, given)
    if naming != DEFAULT_NAMING:
        specs = [dataclasses.replace(q, name=name_for(q.meta, naming)) for q in specs]
    key = order_key(naming)
    _check_unique(specs)
    pattern = re.compile(settings.filter)
    matched = sorted((q for q in specs if pattern.search(q.name)), key=lambda q: key(q.name))
    chosen = tuple(q for q in matched if q.excluded is None)
    excluded = tuple((q.name, q.excluded) for q in matched if q.excluded is not None)
    if not matched:
        names = ", ".join(repr(q.name) for q in sorted(specs, key=lambda q: key(q.name)) if q.excluded is None)
        raise UsageError(f"--filter {settings.filter!r} matches none of: {names}")
    if not chosen and not listing:
        raise UsageError(f"every selected combination is excluded by a constraint ({excluded[0][1]}, ...): "
                         "nothing to run")
    return Plan(chosen, excluded)


__all__ = ["Plan", "Queued", "expanded", "overrides", "plan", "queued"]
