"""The runs a benchmark program made that returned instead of exiting, for ``primbench run FILE``.

``primbench run FILE`` executes FILE as ``python FILE`` would; a program that ends with
``executor.run()`` rather than ``executor.main()`` never exits with its run's code, so the
command records the program's runs (`recording`, scoped to that one execution by a context
variable: no module-level list, nothing left over between calls) and returns the code of the
first one that did not exit (`exit_code`). `Executor.main` takes its own run back out
(`exited`): it exits with its code itself."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from primbench.errors import EXIT_OK
from primbench.report import Report

_runs: ContextVar[list[Report] | None] = ContextVar("primbench_runs", default=None)


@contextmanager
def recording() -> Iterator[list[Report]]:
    """Record every run that returns inside the block (in order); the list is yielded."""
    runs: list[Report] = []
    token = _runs.set(runs)
    try:
        yield runs
    finally:
        _runs.reset(token)


def returned(report: Report) -> None:
    """A run returned `report` (outside `recording`, nothing is kept)."""
    if (runs := _runs.get()) is not None:
        runs.append(report)


def exited(report: Report) -> None:
    """The run of `report` exits with its code itself (`Executor.main`)."""
    if (runs := _runs.get()) is not None:
        runs[:] = [r for r in runs if r is not report]


def exit_code(runs: Sequence[Report]) -> int:
    """The code of the first recorded run that did not succeed, else 0."""
    return next((r.exit_code for r in runs if r.exit_code != EXIT_OK), EXIT_OK)


__all__ = ["exit_code", "exited", "recording", "returned"]
