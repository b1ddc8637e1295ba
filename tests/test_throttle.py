"""Throttled batches handled (issue 26) on the fake device, every branch of
`primbench.throttle`: a clock that drops for three batches and recovers, clock-event reasons
that cap and those that do not, the growing recovery delay, a GPU that stays throttled (kept
batches, the clock below expected, compare's inconclusive), --no-monitoring, a device that
reads no clocks, rounds, and the counts in results.json (4.5.0)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import primbench as pb
from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.console import Reporter, make_console
from primbench.results import load_results, results_from_dict, upgrade
from primbench.throttle import FIRST_DELAY_SECS, MAX_DELAY_SECS, MAX_DISCARDS_IN_A_ROW, recovery_delay
from tests.fakes import BatchClock, FakeDevice

DEFAULT = 1980.0


class Kernel(pb.Benchmark):
    def meta(self) -> dict[str, Any]:
        return {"algo": "k"}

    def run(self, state: pb.State) -> None:
        state.run(lambda: state.device.launch(1.0))


def run(tmp_path: Path, device: FakeDevice, *args: str, name: str = "r.json",
        out: io.StringIO | None = None) -> dict[str, Any]:
    argv = ["--json-out", str(tmp_path / name), "--min-secs", "0", "--rounds", "1", *args]
    ex = pb.Executor(argv, device=device, reporter=Reporter(make_console(out or io.StringIO())), prog="bench")
    ex.queue(Kernel())
    assert ex.run().exit_code == 0
    doc: dict[str, Any] = json.loads((tmp_path / name).read_text())
    return doc


def clock(low: set[int], mhz: float = 1000.0, reasons: list[str] | None = None) -> BatchClock:
    """Batches numbered in `low` run at `mhz` (with `reasons`), the others at the default clock."""
    return lambda n: (mhz, list(reasons or [])) if n in low else (DEFAULT, [])


def test_the_recovery_delay_doubles_up_to_its_limit() -> None:
    assert [recovery_delay(k) for k in range(1, 8)] == [0.1, 0.2, 0.4, 0.8, 1.6, 1.6, 1.6]
    assert recovery_delay(1) == FIRST_DELAY_SECS and recovery_delay(99) == MAX_DELAY_SECS


def test_a_clock_that_drops_for_three_batches_and_recovers(tmp_path: Path) -> None:
    device = FakeDevice(1.0, batch_clock=clock({2, 3, 4}))
    out = io.StringIO()
    doc = run(tmp_path, device, out=out)
    spec = doc["specializations"][0]
    window = spec["calls"]["batches"]
    assert spec["throttled_batches"] == 3 and spec["rounds"][0]["throttled_batches"] == 3
    assert doc["summary"]["throttled_batches"] == 3
    # the three slow batches were measured and dropped: the window is made of full-clock batches
    # (the window's first batch is the last sizing batch, kept as measured: it opens no "batch N" range)
    assert len(device.batch_log) == window - 1 + 3
    assert [mhz for _, mhz, _ in device.batch_log[1:4]] == [1000.0] * 3
    # the delays grew: 0.1 + 0.2 + 0.4 s on the host, none of it in the measurement
    assert device.slept_secs == pytest.approx(0.7)
    # recovered: the clock over the kept batches is the default, so nothing is below expected
    assert spec["sm_clock"]["average_mhz"] == pytest.approx(DEFAULT)
    assert spec["sm_clock"]["below_expected"] is False
    text = out.getvalue()
    assert "3 throttled batches discarded" in text.splitlines()[1]  # the specialization's line
    assert "Summary:" in text and text.count("3 throttled batches discarded") == 2


class CountingSamples(FakeDevice):
    """Counts `clock_sample` calls: each is a kernel and a synchronization on a real GPU."""

    samples = 0

    def clock_sample(self) -> tuple[int, int]:
        self.samples += 1
        return super().clock_sample()


def test_the_guard_launches_nothing_between_batches(tmp_path: Path) -> None:
    """The clock is sampled once before and once after each round, not around every batch: on the
    H200 a sample around every batch made short kernels' batches alternate 10 % (h200/diag4)."""
    device = CountingSamples(1.0, batch_clock=clock({3}))
    spec = run(tmp_path, device, "--rounds", "2", "--batch-window-size", "8")["specializations"][0]
    assert spec["throttled_batches"] == 1  # the guard still works, from the clock NVML reads
    assert sum(r["batches"] for r in spec["rounds"]) >= 8
    assert device.samples == 2 * 2  # once before and once after each of the two rounds


def test_a_batch_exactly_at_the_threshold_is_kept_one_below_it_discarded(tmp_path: Path) -> None:
    at = FakeDevice(1.0, batch_clock=clock({2}, mhz=0.9 * DEFAULT))
    assert run(tmp_path, at)["specializations"][0]["throttled_batches"] == 0
    below = FakeDevice(1.0, batch_clock=clock({2}, mhz=0.89 * DEFAULT))
    assert run(tmp_path, below)["specializations"][0]["throttled_batches"] == 1
    assert below.slept_secs == pytest.approx(0.1)


def test_min_clock_fraction_is_the_threshold(tmp_path: Path) -> None:
    device = FakeDevice(1.0, batch_clock=clock({2, 3}, mhz=0.8 * DEFAULT))
    assert run(tmp_path, device, "--min-clock-fraction", "0.7")["specializations"][0]["throttled_batches"] == 0
    device = FakeDevice(1.0, batch_clock=clock({2, 3}, mhz=0.8 * DEFAULT))
    assert run(tmp_path, device, "--min-clock-fraction", "0.85")["specializations"][0]["throttled_batches"] == 2


@pytest.mark.parametrize("reason", ["sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                                    "hw_power_brake_slowdown"])
def test_a_capping_clock_event_reason_discards_the_batch_at_full_clock(tmp_path: Path, reason: str) -> None:
    device = FakeDevice(1.0, batch_clock=clock({3}, mhz=DEFAULT, reasons=[reason]))
    doc = run(tmp_path, device)
    assert doc["specializations"][0]["throttled_batches"] == 1
    assert device.slept_secs == pytest.approx(0.1)


def test_a_reason_that_does_not_cap_keeps_the_batch(tmp_path: Path) -> None:
    device = FakeDevice(1.0, batch_clock=clock({2, 3}, mhz=DEFAULT,
                                               reasons=["gpu_idle", "applications_clocks_setting"]))
    assert run(tmp_path, device)["specializations"][0]["throttled_batches"] == 0
    assert device.slept_secs == 0


def test_a_gpu_that_stays_throttled_keeps_its_batches_and_is_inconclusive(tmp_path: Path) -> None:
    slow = FakeDevice(1.0, batch_clock=lambda n: (1000.0, []))
    doc = run(tmp_path, slow, "--rounds", "2", name="head.json")
    spec = doc["specializations"][0]
    # each round discards its first MAX_DISCARDS_IN_A_ROW batches, then keeps the rest
    assert [r["throttled_batches"] for r in spec["rounds"]] == [MAX_DISCARDS_IN_A_ROW] * 2
    assert spec["throttled_batches"] == 2 * MAX_DISCARDS_IN_A_ROW
    assert doc["summary"]["throttled_batches"] == 2 * MAX_DISCARDS_IN_A_ROW
    assert slow.slept_secs == pytest.approx(2 * sum(recovery_delay(k) for k in range(1, MAX_DISCARDS_IN_A_ROW + 1)))
    assert spec["sm_clock"]["below_expected"] is True
    assert spec["sm_clock"]["average_mhz"] == pytest.approx(1000.0)
    run(tmp_path, FakeDevice(1.0), "--rounds", "2", name="base.json")
    c = compare_runs([load_results(tmp_path / "base.json")], [load_results(tmp_path / "head.json")])
    assert c.rows[0].verdict is Verdict.INCONCLUSIVE
    assert "SM clock below expected in head" in (c.rows[0].reason or "")


def test_the_guard_rearms_after_a_batch_that_passes(tmp_path: Path) -> None:
    low = set(range(2, 2 + MAX_DISCARDS_IN_A_ROW + 1)) | {10}  # one more than the limit, then a pass, then one
    device = FakeDevice(1.0, batch_clock=clock(low))
    spec = run(tmp_path, device, "--batch-window-size", "12")["specializations"][0]
    assert spec["throttled_batches"] == MAX_DISCARDS_IN_A_ROW + 1


def test_rounds_sum_their_discards(tmp_path: Path) -> None:
    device = FakeDevice(1.0, batch_clock=clock({2, 3, 4}))
    spec = run(tmp_path, device, "--rounds", "3")["specializations"][0]
    assert [r["throttled_batches"] for r in spec["rounds"]] == [3, 0, 0]  # the batch numbers are the device's
    assert spec["throttled_batches"] == 3


def test_no_monitoring_checks_nothing(tmp_path: Path) -> None:
    device = FakeDevice(1.0, batch_clock=clock({2, 3, 4}, reasons=["sw_power_cap"]))
    spec = run(tmp_path, device, "--no-monitoring")["specializations"][0]
    assert spec["throttled_batches"] == 0 and device.slept_secs == 0


class Unmonitored(FakeDevice):
    """A device that reads neither clocks nor reasons."""

    def clock_sample(self) -> tuple[int, int] | None:  # type: ignore[override]
        return None

    def sm_clock_now_mhz(self) -> float | None:
        return None

    def clock_event_reasons(self) -> list[str] | None:
        return None


def test_a_device_without_clock_samples_or_reasons_discards_nothing(tmp_path: Path) -> None:
    device = Unmonitored(1.0, batch_clock=clock({2, 3, 4}))
    spec = run(tmp_path, device)["specializations"][0]
    assert spec["throttled_batches"] == 0 and "sm_clock" not in spec


def test_an_older_file_counts_no_throttled_batches(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(1.0))
    doc["context"]["results_version"] = "4.4.0"
    for spec in doc["specializations"]:
        spec.pop("throttled_batches")
        for r in spec["rounds"]:
            r.pop("throttled_batches", None)
    for key in ("skipped", "throttled_batches"):
        doc["summary"].pop(key)
    up = upgrade(doc, "4.4.0")
    assert up["context"]["results_version"] == pb.RESULTS_VERSION and up["specializations"] == doc["specializations"]
    results = results_from_dict(doc)
    assert results.version == "4.4.0" and results.specializations[0].throttled_batches is None
    assert results.summary is not None and results.summary.throttled_batches is None


def test_the_recorded_demo_is_reproduced() -> None:
    """tests/benchmarks/throttle/demo.py (a clock that drops for three batches) prints demo.txt."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    demo = root / "tests/benchmarks/throttle/demo.py"
    proc = subprocess.run([sys.executable, str(demo), "--check"], capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
