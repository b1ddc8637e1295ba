"""GPU tests of the examples: each runs on the device and shows the effect it is about."""

from __future__ import annotations

from pathlib import Path

import pytest

import primbench as pb
from tests.gpu_support import example, run_benchmarks

pytestmark = pytest.mark.gpu


def run(benches, path: Path, *args: str, settings: pb.Settings | None = None,
        flags: pb.flags = pb.flags.none) -> dict:
    return run_benchmarks(benches, path, "--min-secs", "0.2", *args, settings=settings, flags=flags)


def by_name(doc: dict) -> dict:
    assert all(s.get("error") is None for s in doc["specializations"]), doc["specializations"]
    return {s["name"]: s for s in doc["specializations"]}


def test_divergent_warps_run_at_about_half_speed(out_dir):
    ex = example("branch_penalty")
    doc = run([ex["BranchPenalty"](0.0, 256), ex["BranchPenalty"](0.5, 256), ex["BranchPenalty"](1.0, 256)],
              out_dir / "gpu-branch.json", settings=pb.Settings(hot=True))
    s = by_name(doc)
    uniform0, divergent, uniform1 = (s[f"p: {p}"]["items_per_second"] for p in ("0.0000", "0.5000", "1.0000"))
    assert abs(uniform0 / uniform1 - 1) < 0.05  # same instruction count on either branch
    assert 1.6 < uniform0 / divergent < 2.4


def test_latency_grows_from_l1_to_hbm(out_dir):
    ex = example("memory_latency")
    lat = ex["Latency"]
    doc = run([lat(16 * 1024, False, 2048), lat(32 << 20, False, 2048), lat(1 << 30, False, 2048),
               lat(16 * 1024, False, 2048, shared=True)], out_dir / "gpu-latency.json",
              settings=pb.Settings(hot=True))
    ns = {k: 1e9 / v["items_per_second"] for k, v in by_name(doc).items()}
    l1 = ns["bytes: 16384, memory: global, threads: one"]
    l2 = ns["bytes: 33554432, memory: global, threads: one"]
    hbm = ns["bytes: 1073741824, memory: global, threads: one"]
    shared = ns["bytes: 16384, memory: shared, threads: one"]
    assert l1 < l2 < hbm
    assert shared < l2
    assert hbm > 250 and l1 < 100


def test_synchronous_sum_runs_with_the_sync_flag(out_dir):
    ex = example("sync_benchmark")
    import numpy as np

    doc = run([ex["SumToHost"](np.float32)], out_dir / "gpu-sync-example.json", "--size", "64MiB",
              flags=pb.flags.sync)
    spec = by_name(doc)["type: float"]
    assert spec["bytes_per_second"] > 1e11


def test_torch_and_triton_add_on_the_harness_stream(out_dir):
    ex = example("torch_triton")
    doc = run([ex["VectorAdd"]("torch"), ex["VectorAdd"]("triton")], out_dir / "gpu-torch-triton.json",
              "--size", "256MiB")
    s = by_name(doc)
    t, tr = s["impl: torch, type: float"]["bytes_per_second"], s["impl: triton, type: float"]["bytes_per_second"]
    assert t > 1e12 and tr > 1e12
    assert 0.7 < t / tr < 1.3


def test_axes_sweep_measures_the_product_in_natural_order(out_dir):
    ex = example("axes_sweep")
    doc = run([ex["AxesSweep"]()], out_dir / "gpu-axes-sweep.json", "--axis", "block=[256,128]",
              "--axis", "size=[2^16:2^24:*256]")
    s = by_name(doc)
    assert list(s) == ["block: 128, size: 65536, type: int", "block: 128, size: 16777216, type: int",
                       "block: 256, size: 65536, type: int", "block: 256, size: 16777216, type: int"]
    for block in (128, 256):
        small, large = s[f"block: {block}, size: 65536, type: int"], s[f"block: {block}, size: 16777216, type: int"]
        assert small["items"] == 16384 and large["items"] == 4194304
        assert large["bytes_per_second"] > 3 * small["bytes_per_second"]  # 64 KiB is launch-bound, 16 MiB is not
        assert large["gpu_seconds_per_call"] > small["gpu_seconds_per_call"]
        t = large["time_per_call"]
        assert t["min"] <= t["q1"] <= t["median"] <= t["q3"]
