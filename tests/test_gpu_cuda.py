"""GPU tests: the CUDA backend on a real device. Run on the lent H200 with
``PRIMBENCH_GPU_OUT=dir pytest -m gpu``; the results files they write are kept there."""

from __future__ import annotations

import time

import numpy as np
import pytest

import primbench as pb
from tests.gpu_support import example, run_benchmarks

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def copy_example() -> dict:
    return example("copy_benchmark")


run = run_benchmarks


class SyncCopy(pb.Benchmark):
    """A copy that synchronizes inside the timed function."""

    def __init__(self, example: dict) -> None:
        self.example = example

    def meta(self) -> dict:
        return {"algo": "sync_copy", "type": "long long"}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        a = cp.arange(1 << 20, dtype=cp.int64)
        b = cp.empty_like(a)
        state.set_items(a.size)
        state.add_reads(np.int64, a.size)
        state.add_writes(np.int64, a.size)

        def fn() -> None:
            cp.copyto(b, a)
            state.stream.synchronize()

        state.run(fn)


def test_copy_example_measures_and_is_stable_across_two_runs(copy_example, out_dir):
    bench = copy_example["CopyBenchmark"]
    first = run([bench(np.int64)], out_dir / "gpu-copy-run1.json", "--size", "64MiB", "--output-batches")
    second = run([bench(np.int64)], out_dir / "gpu-copy-run2.json", "--size", "64MiB", "--output-batches")
    a, b = first["specializations"][0], second["specializations"][0]
    assert a.get("error") is None and b.get("error") is None
    assert a["bytes_per_second"] > 1e12  # an H200 copies at well over 1 TB/s
    assert a["noise_percent"] < 1.0
    assert abs(a["bytes_per_second"] / b["bytes_per_second"] - 1) < 0.01
    general = first["context"]["general"]
    assert general["backend"]["name"] == "cuda"
    assert general["gpu"]["arch"].startswith("sm_")
    assert general["temperature_type"] == "gpu"
    assert a["sm_clock"]["average_mhz"] > 500


def test_synchronous_kernel_without_sync_flag_fails_within_the_timeout(copy_example, out_dir):
    start = time.perf_counter()
    doc = run([SyncCopy(copy_example)], out_dir / "gpu-sync-noflag.json", "--stream-blocking-timeout-secs", "2",
              "--no-monitoring")
    elapsed = time.perf_counter() - start
    error = doc["specializations"][0]["error"]
    assert "flags.sync" in error
    assert elapsed < 2 + 20  # the timeout, plus process-level setup; never a hang


def test_synchronous_kernel_with_sync_flag_runs(copy_example, out_dir):
    doc = run([SyncCopy(copy_example)], out_dir / "gpu-sync-flag.json", "--min-secs", "0.2", "--no-monitoring",
              flags=pb.flags.sync)
    spec = doc["specializations"][0]
    assert spec.get("error") is None and spec["bytes_per_second"] > 0
    assert doc["context"]["flags"] == {"sync": True}


def test_hot_is_faster_than_cold_for_an_l2_sized_input(copy_example, out_dir):
    bench = copy_example["CopyBenchmark"]
    cold = run([bench(np.int64)], out_dir / "gpu-l2-cold.json", "--size", "8MiB", "--min-secs", "0.3")
    hot = run([bench(np.int64)], out_dir / "gpu-l2-hot.json", "--size", "8MiB", "--min-secs", "0.3", "--hot")
    assert hot["context"]["settings"]["hot"] is True
    assert hot["specializations"][0]["bytes_per_second"] > 1.2 * cold["specializations"][0]["bytes_per_second"]


def test_average_sm_clock_is_near_the_default_clock(copy_example, out_dir):
    bench = copy_example["CopyBenchmark"]
    doc = run([bench(np.int8)], out_dir / "gpu-clock.json", "--size", "32MiB", "--min-secs", "0.5")
    clock = doc["specializations"][0]["sm_clock"]
    assert clock["default_mhz"] and clock["average_mhz"]
    assert 0.9 < clock["fraction_of_default"] < 1.05
    assert not clock["below_expected"]
