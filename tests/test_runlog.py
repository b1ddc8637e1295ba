"""`primbench run FILE` gets the code of a run the program did not exit with from a record scoped
to that one execution (`primbench.runlog`), not from a module-level list."""

from __future__ import annotations

import pytest

from primbench import runlog
from primbench.report import Report


def test_runs_are_recorded_only_inside_the_block_and_the_first_failure_is_the_code() -> None:
    runlog.returned(Report("run", 1))  # outside: nothing is kept anywhere
    with runlog.recording() as runs:
        ok, failed, later = Report("run", 0), Report("run", 1), Report("run", 130)
        for report in (ok, failed, later):
            runlog.returned(report)
    assert runs == [ok, failed, later]
    assert runlog.exit_code(runs) == 1
    with runlog.recording() as again:
        pass
    assert again == [] and runlog.exit_code(again) == 0


def test_a_run_that_exits_itself_is_taken_back_out() -> None:
    with runlog.recording() as runs:
        failed = Report("run", 1)
        runlog.returned(failed)
        runlog.exited(failed)
    assert runs == [] and runlog.exit_code(runs) == 0


def test_recordings_nest_and_an_exception_leaves_none_behind() -> None:
    with runlog.recording() as outer:
        with pytest.raises(RuntimeError), runlog.recording() as inner:
            runlog.returned(Report("run", 1))
            raise RuntimeError
        runlog.returned(Report("run", 2))
    assert [r.exit_code for r in inner] == [1] and [r.exit_code for r in outer] == [2]
