"""The benchmark interface: what a user writes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from primbench.errors import UsageError

if TYPE_CHECKING:
    from primbench.state import State


class Benchmark(ABC):
    """One specialization of an algorithm.

    `meta()` returns a mapping with an ``algo`` key, the same for every queued
    specialization; the other keys form the specialization's name (``type: char``).
    `run(state)` sets up inputs, declares items and bytes, and calls ``state.run(fn)``.
    """

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
