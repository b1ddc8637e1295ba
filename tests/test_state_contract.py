"""What run(state) declares, checked as the C++ primbench does: set_items() once, before
add_reads() / add_writes(); or nothing at all, for GPU time per call only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from tests.fakes import FakeDevice
from tests.test_executor import Copy


def executor(tmp_path: Path, *args: str, device: FakeDevice | None = None) -> pb.Executor:
    argv = ["--json-out", str(tmp_path / "results.json"), "--min-secs", "0", *args]
    return pb.Executor(argv, device=device or FakeDevice(0.25), reporter=Reporter(make_console()))


def queued(ex: pb.Executor, *benches: pb.Benchmark) -> pb.Executor:
    for b in benches or (Copy(np.int8), Copy(np.int64)):
        ex.queue(b)
    return ex


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
