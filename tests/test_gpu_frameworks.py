"""GPU tests of the framework examples: each example runs as a program (a subprocess, as a user
runs it) with a short measurement, writes results.json (and its output as a .log beside it in
`out_dir`), and shows the effect it is about. Skipped without a GPU, and with the reason when a
framework is not installed. Their --dry and --help tests: tests/test_framework_examples.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, out_dir: Path, *args: str) -> dict[str, dict[str, Any]]:
    """Run examples/<name>.py; its specializations by name (every one measured, none failed)."""
    out = out_dir / f"gpu-{name}.json"
    # PRIMBENCH_LOG: pb.log messages are written in a pipe only when asked, as the C++ primbench does
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PRIMBENCH_LOG": "1"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), "--json-out", str(out),
                           "--min-secs", "0.2", *args], capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env=env, check=False)
    (out_dir / f"gpu-{name}.log").write_text(done.stdout + done.stderr)
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    doc = json.loads(out.read_text())
    specs = doc["specializations"]
    assert all(s.get("error") is None for s in specs), specs
    for s in specs:
        assert s["calls"]["kernel_calls"] > 0 and s["gpu_seconds_per_call"] > 0, s["name"]
    return {s["name"]: s for s in specs}


def per_call(spec: dict[str, Any]) -> float:
    return float(spec["gpu_seconds_per_call"])


def test_numba_saxpy_runs_on_the_harness_stream_as_fast_as_cupys(out_dir: Path) -> None:
    pytest.importorskip("numba.cuda", reason="Numba CUDA is not installed (pip install 'numba-cuda[cu13]')")
    s = run_example("numba_saxpy", out_dir, "--size", "64MiB")
    assert list(s) == ["impl: cupy, type: float", "impl: numba, type: float"]
    numba, cupy = s["impl: numba, type: float"], s["impl: cupy, type: float"]
    # 3 x 64 MiB per call, memory-bound: over 1 TB/s on a data-center GPU, and below 10 TB/s, which
    # no GPU's memory reaches (a kernel on another stream than the events' would read as far more)
    for s_ in (numba, cupy):
        assert 1e12 < s_["bytes_per_second"] < 1e13
    # the same saxpy: Numba's kernel no slower than CuPy's ElementwiseKernel (on the H200 at 64 MiB
    # it was faster: 65.0 µs against 83.3 µs a call, tests/gpu_results/gpu-numba_saxpy.json)
    assert 0.5 < per_call(numba) / per_call(cupy) < 1.25


def test_every_triton_autotune_config_is_measured_and_the_autotuners_choice_is_among_the_fastest(
        out_dir: Path) -> None:
    pytest.importorskip("torch", reason="PyTorch is not installed")
    pytest.importorskip("triton", reason="Triton is not installed")
    s = run_example("triton_autotune", out_dir, "--size", "64MiB")
    configs = [f"block_size: {b}, num_warps: {w}, type: float" for b in (256, 1024, 4096) for w in (4, 8)]
    assert list(s) == [*configs, "block_size: auto, num_warps: auto, type: float"]
    times = [per_call(s[c]) for c in configs]
    assert all(1e11 < s[c]["bytes_per_second"] < 1e13 for c in configs)
    auto = per_call(s["block_size: auto, num_warps: auto, type: float"])
    assert min(times) * 0.95 <= auto <= min(times) * 1.15
    assert "autotune chose BLOCK_SIZE:" in (out_dir / "gpu-triton_autotune.log").read_text()


def test_a_compiled_train_step_is_not_slower_than_eager(out_dir: Path) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    s = run_example("torch_train_step", out_dir, "--tokens", "4096", "--width", "512")
    assert list(s) == ["mode: compiled", "mode: eager"]
    eager, compiled = per_call(s["mode: eager"]), per_call(s["mode: compiled"])
    # 4096 x 512 -> 2048 -> 512 in bfloat16: 2 GEMMs forward, 3 backward (no input gradient), 8.6 GFLOP each
    assert 5e-6 < eager < 5e-2
    assert compiled <= eager * 1.5
    assert s["mode: eager"]["items"] == 4096
    assert s["mode: eager"]["items_per_second"] == pytest.approx(4096 / eager, rel=1e-6)


def test_a_graph_replay_is_as_fast_as_its_launches_one_by_one(out_dir: Path) -> None:
    pytest.importorskip("cupy")
    s = run_example("cuda_graph", out_dir)
    assert list(s) == ["kernels: 10, launch: graph", "kernels: 10, launch: stream"]
    graph, stream = per_call(s["kernels: 10, launch: graph"]), per_call(s["kernels: 10, launch: stream"])
    assert 1e-6 < stream < 1e-3  # ten 1 MiB kernels: microseconds each
    assert graph <= stream * 1.1


def test_the_graph_column_replays_the_stream_launches_as_fast_as_the_examples_own_graph(out_dir: Path) -> None:
    """--graph (issue 26, primbench.graph): the harness captures each function on its stream; the
    stream-launched chain's replay reads about what the example's own graph reads, faster than
    the 10 launches; the example's own graph, captured again inside the harness's capture, too."""
    pytest.importorskip("cupy")
    s = run_example("cuda_graph", out_dir, "--graph")
    own, stream = s["kernels: 10, launch: graph"], s["kernels: 10, launch: stream"]
    g = stream["graph"]
    assert g["captured"] is True, g
    assert g["seconds_per_call"] < per_call(stream) and g["saved_seconds_per_call"] > 0
    assert 0.8 < g["seconds_per_call"] / per_call(own) < 1.25
    assert all(r["graph"]["captured"] for r in stream["rounds"])
    assert "graph" in own  # a graph launch captured into a graph, or the runtime's reason


def test_the_host_timer_times_jax_and_reads_no_faster_than_events(out_dir: Path) -> None:
    pytest.importorskip("jax", reason="JAX is not installed")
    if not any(importlib.util.find_spec(m) for m in ("jax_cuda13_plugin", "jax_cuda12_plugin", "jax_plugins")):
        pytest.skip("JAX has no CUDA plugin (pip install 'jax[cuda13]')")
    s = run_example("jax_host_timer", out_dir)  # 128 MiB: the kernel takes longer than a launch
    events = s["impl: cupy, timer: events, type: float"]
    cupy_host = s["impl: cupy, timer: host, type: float"]
    jax_host = s["impl: jax, timer: host, type: float"]
    assert "timer" not in events
    assert cupy_host["timer"] == "host" and jax_host["timer"] == "host"
    # the same CuPy kernel: host times hold its GPU time plus launch and synchronization
    assert per_call(cupy_host) > per_call(events)
    # JAX's kernel moves the same bytes: the time holds it (a sync that did not wait would leave
    # only the launch), and it is not wildly slower
    assert per_call(events) * 0.8 < per_call(jax_host) < per_call(cupy_host) * 10
