"""What run(state) declares, checked as the C++ primbench does: set_items() once, before
add_reads() / add_writes(); or nothing at all, for GPU time per call only."""

from __future__ import annotations

import numpy as np
import pytest

import primbench as pb
from tests.test_executor import Copy, executor, queued

# ----------------------------------------------------------------- the state contract


@pytest.mark.parametrize(("declare", "error"), [
    (lambda s: (s.set_items(4), s.set_items(8)), "state.set_items() was called twice (with 4, then 8)"),
    (lambda s: s.add_reads(np.int8, 4), "state.add_reads() before state.set_items()"),
    (lambda s: s.add_writes(np.int8, 4), "state.add_writes() before state.set_items()"),
])
def test_the_items_contract_is_a_clear_error(tmp_path, declare, error):
    class Bad(Copy):
        def run(self, state):
            declare(state)
            state.run(state.device.launch)

    report = queued(executor(tmp_path), Bad(np.int8)).run()
    assert report.failures["type: char"].startswith(error)
    assert "\n" not in report.failures["type: char"]
    assert isinstance(report.exceptions["type: char"], pb.UsageError)


def test_time_only_declares_nothing_and_is_measured(tmp_path):
    class TimeOnly(Copy):
        def run(self, state):
            state.run(state.device.launch)

    report = queued(executor(tmp_path), TimeOnly(np.int8)).run()
    result = report.result("type: char")
    assert report.ok and result.bytes_per_second is None and result.items_per_second is None
    assert result.seconds_per_call == pytest.approx(0.25e-3) and result.metric.name == "gpu_seconds_per_call"
