"""The pytest plugin's baseline (``pytest11`` entry point ``primbench-baseline``): with
``--primbench-baseline PATH``, the ``gpubench`` session's measurements (the harness plugin's
``pytest_primbench_results``) are compared with a baseline, a results file of any format the
loader reads (`primbench.results.load_results`: primbench or C++ results.json, C++ CSV,
NVBench, Google Benchmark, pytest-benchmark JSON) or a directory of them, as ``primbench
compare BASELINE SESSION`` would. The baseline is read when the session starts (a bad file is
a usage error); compare's table is in the terminal summary; a regression (or a suite-wide
shift beyond the limit) fails the session (exit 1), a baseline that shares nothing with the
session is a usage error (exit 4). Here, on the analysis side, so that the harness never
imports compare."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from primbench.errors import PrimbenchError

if TYPE_CHECKING:
    from primbench.compare.model import Comparison
    from primbench.results import Results

_STATE = pytest.StashKey["_Baseline"]()


class _Baseline:
    def __init__(self, path: str, side: list[Results]) -> None:
        self.path = path
        self.side = side
        self.comparison: Comparison | None = None
        self.error: str | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("primbench", "primbench: GPU benchmarks with the gpubench fixture")
    group.addoption("--primbench-baseline", metavar="PATH", default=None,
                    help="compare the session's gpubench measurements with this results file (any format "
                         "primbench reads) or directory of them; a regression fails the session")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("primbench_baseline", None)
    if not path:
        return
    from primbench.compare.core import load_side

    try:
        config.stash[_STATE] = _Baseline(str(path), load_side(path))
    except PrimbenchError as exc:
        raise pytest.UsageError(f"--primbench-baseline: {exc}") from None


@pytest.hookimpl(optionalhook=True)
def pytest_primbench_results(config: pytest.Config, results: Results) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    from primbench.compare.core import compare_runs

    try:
        state.comparison = compare_runs(state.side, [results])
    except PrimbenchError as exc:  # nothing in common with the baseline: the user's to fix
        state.error = str(exc)


@pytest.hookimpl(trylast=True)  # after the harness plugin's, which hands over the results
def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None or session.exitstatus != 0:
        return
    if state.error is not None:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif state.comparison is not None and state.comparison.failed():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or (state.comparison is None and state.error is None):
        return
    from primbench.textsafe import term_clean

    if state.error is not None:
        terminalreporter.write_line(f"Against {term_clean(state.path)}: error: {term_clean(state.error)}")
        return
    import io

    from primbench.compare.render import render_terminal
    from primbench.console import make_console

    assert state.comparison is not None
    terminalreporter.write_line(f"Against {term_clean(state.path)}:")
    text = io.StringIO()  # compare's own table, as `primbench compare` prints it to a pipe
    render_terminal(state.comparison, make_console(text))
    for line in text.getvalue().splitlines():
        terminalreporter.write_line(line)
