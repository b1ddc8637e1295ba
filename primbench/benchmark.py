"""The benchmark interface: what a user writes."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from primbench.errors import UsageError
from primbench.settings import DEFAULT_NAMING

if TYPE_CHECKING:
    from primbench.axis import Axis
    from primbench.state import State


class Benchmark(ABC):
    """One specialization of an algorithm, or one per combination of its axes.

    `meta()` returns a mapping with an ``algo`` key, the same for every queued
    specialization; the other keys form the specialization's name (``type: char``).
    `run(state)` sets up inputs, declares items and bytes, and calls ``state.run(fn)``.
    `axes` (optional, `primbench.axis`; the ``@pb.axis.sweep(...)`` decorator sets it): named
    values; the executor queues the Cartesian product, each combination's values join ``meta``
    and reach `run` as ``state.axis(name)`` (the ``size`` axis as ``state.size``).
    `graph` (optional): True to capture the function into a CUDA graph and time its replay beside
    the stream launches, as ``--graph`` does for every benchmark (`primbench.graph`).
    """

    axes: Mapping[str, Axis] = MappingProxyType({})
    graph: bool = False

    @abstractmethod
    def meta(self) -> Mapping[str, Any]: ...

    @abstractmethod
    def run(self, state: State) -> None: ...


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{k}: {_format_value(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
        return "{ " + inner + " }"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def specialization_name(meta: Mapping[str, Any]) -> str:
    """``key: value`` pairs of every key but ``algo``, sorted by key, joined by ``, ``."""
    return ", ".join(
        f"{k}: {_format_value(v)}" for k, v in sorted(meta.items(), key=lambda kv: str(kv[0])) if k != "algo"
    )



_CPP_DROPPED = ("lvl", "algo")
_CPP_PREFIXES = ("rocprim::", "common::")


def _cpp_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + _cpp_fields(value) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        for prefix in _CPP_PREFIXES:
            value = value.replace(prefix, "")
        return value
    if isinstance(value, float):
        return f"{value:g}"  # a C++ stream's default: 6 significant digits
    return str(value)


def _cpp_fields(meta: Mapping[str, Any]) -> str:
    parts = []
    for key in sorted(meta, key=str):  # the C++ json keeps its keys in a std::map: byte order
        if key in _CPP_DROPPED:
            continue
        shown = _cpp_value(meta[key])
        if key == "cfg" and shown == "default":
            continue
        parts.append(f"{key}: {shown}")
    return ", ".join(parts)


def cpp_specialization_name(meta: Mapping[str, Any]) -> str:
    """The C++ primbench's name of a meta (its ``json::serialize_name``): ``key: value`` pairs
    sorted by key, at every level leaving out ``lvl`` and ``algo`` and a ``cfg`` whose value is
    ``default``, ``rocprim::`` and ``common::`` removed from string values, nested objects as
    ``{ key: value, ... }``, numbers as a C++ stream prints them, booleans as true/false."""
    return _cpp_fields(meta)


def name_for(meta: Mapping[str, Any], naming: str = DEFAULT_NAMING) -> str:
    """A specialization's name under `naming` (`NAMINGS`)."""
    return cpp_specialization_name(meta) if naming == "cpp" else specialization_name(meta)


def order_key(naming: str = DEFAULT_NAMING) -> Callable[[str], Any]:
    """How names are ordered under `naming`: naturally, or (``cpp``) as plain strings."""
    return natural_key if naming != "cpp" else str


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def natural_key(name: str) -> tuple[tuple[int, Any, str], ...]:
    """A sort key that orders the numbers in names by value: ``size: 256`` before
    ``size: 1024``, ``p: 0.25`` before ``p: 0.5``, ``int8`` before ``int16``; text compares as
    text. A ``-`` right before a number after a space, colon, comma, ``=`` or bracket (or at
    the start) is its sign. The one sort order of specialization names."""
    parts: list[tuple[int, Any, str]] = []
    at = 0
    for m in _NUMBER.finditer(name):
        start, token = m.start(), m.group()
        if start > 0 and name[start - 1] == "-" and (start == 1 or name[start - 2] in " :,=([{"):
            start -= 1
            token = "-" + token
        if start > at:
            parts.append((1, name[at:start], ""))
        parts.append((0, float(token), token))
        at = m.end()
    if at < len(name):
        parts.append((1, name[at:], ""))
    return tuple(parts)


def checked_meta(benchmark: Benchmark) -> dict[str, Any]:
    """`benchmark.meta()` as a plain dict, checked for an ``algo`` key."""
    label = type(benchmark).__name__
    try:
        meta = benchmark.meta()
    except Exception as exc:  # the user's code: say whose it was
        raise UsageError(f"{label}.meta() raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(meta, Mapping):
        raise UsageError(f"{label}.meta() must return a mapping, got {type(meta).__name__}")
    if "algo" not in meta:
        raise UsageError(f"{label}.meta() has no 'algo' key; every benchmark must name its algorithm")
    return dict(meta)
