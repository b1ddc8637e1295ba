"""primbench beside NVBench (cuda-bench, cold), triton.testing.do_bench and
cupyx.profiler.benchmark, on the seed's copy kernel, in one run on one GPU.

    python tests/benchmarks/vs_tools.py OUTDIR

Writes OUTDIR/vs_tools.md (the table and the targets of issue 3) and OUTDIR/vs_tools.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cupy as cp
import numpy as np

import primbench as pb
from primbench.measure import timed_calls

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _copy import copy_example, nvbench_values

HERE = Path(__file__).resolve().parent
EX = copy_example()
CASES = [("long long", 64 * 1024), ("long long", 1 << 20), ("long long", 16 << 20), ("long long", 128 << 20),
         ("char", 128 << 20)]
DTYPES = {"char": np.int8, "long long": np.int64}


def kernel_and_args(tname: str, size: int):
    dtype = np.dtype(DTYPES[tname])
    expr = f"copy_kernel<{EX['C_TYPES'][dtype]}, 256, 4>"
    kernel = cp.RawModule(code=EX["CODE"], options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
    n = size // dtype.itemsize
    items = 1024 * ((n + 1023) // 1024)
    a = cp.arange(items).astype(dtype)
    b = cp.empty_like(a)
    grid = (items // 1024,)
    return (lambda: kernel(grid, (256,), (a, b))), items * dtype.itemsize * 2


def run_primbench(tname: str, size: int, out: Path, *extra: str) -> dict:
    json_out = out / f"primbench-{tname.replace(' ', '')}-{size}{'-'.join(extra).replace('-', '_')}.json"
    ex = pb.Executor(["--size", str(size), "--json-out", str(json_out), "--output-batches", *extra])
    ex.queue(EX["CopyBenchmark"](DTYPES[tname]))
    t0 = time.perf_counter()
    doc = ex.run()
    wall = time.perf_counter() - t0
    spec = doc["specializations"][0]
    calls = spec["calls"]["kernel_calls"]
    return {
        "gpu_us": spec["elapsed_secs"]["gpu"] / calls * 1e6,
        "noise_percent_per_batch": spec["noise_percent"],
        "measure_secs": spec["elapsed_secs"]["host"],
        "run_wall_secs": wall,
        "warming_secs": doc["context"]["general"].get("thermal", {}).get("warming_secs"),
        "host_us_per_call": spec["elapsed_secs"]["host"] / calls * 1e6,
        "bytes_per_second": spec["bytes_per_second"],
        "calls_per_batch": spec["calls"]["kernel_calls_per_batch"],
        "batches": spec["calls"]["batches"],
        "sm_clock_mhz": spec.get("sm_clock", {}).get("average_mhz"),
    }


def enqueue_cost_us(fn, calls: int = 4096) -> dict:
    """Host time per timed call spent enqueueing (synchronize waits excluded), cold protocol."""
    from primbench.backends import open_device
    from primbench.settings import effective_cache_size

    dev = open_device(None, monitoring=False)
    cache = effective_cache_size(None, dev.context()["gpu"].get("l2_cache_bytes"))  # what --cache-size auto clears
    dev.prepare(cache_size=cache, blocking_timeout_secs=10, slots=64)
    waits = 0.0
    real_sync = dev.synchronize

    def timed_sync() -> None:
        nonlocal waits
        t = time.perf_counter()
        real_sync()
        waits += time.perf_counter() - t

    dev.synchronize = timed_sync  # type: ignore[method-assign]
    with dev.activate():
        timed_calls(dev, fn, 256, hot=False, block=True)
        waits = 0.0
        t0 = time.perf_counter()
        timed_calls(dev, fn, calls, hot=False, block=True)
        total = time.perf_counter() - t0
    dev.close()
    return {"enqueue_us_per_call": (total - waits) / calls * 1e6, "wall_us_per_call": total / calls * 1e6}


def run_do_bench(fn) -> dict:
    import triton.testing

    times = triton.testing.do_bench(fn, return_mode="all")
    return {"median_us": statistics.median(times) * 1e3, "noise_percent_per_sample":
            statistics.stdev(times) / statistics.mean(times) * 100}


def run_cupyx(fn) -> dict:
    from cupyx.profiler import benchmark

    res = benchmark(fn, n_repeat=2000, n_warmup=50)
    g = res.gpu_times[0]
    return {"mean_us": float(np.mean(g)) * 1e6, "noise_percent_per_sample": float(np.std(g, ddof=1) / np.mean(g) * 100)}


def run_nvbench(tname: str, size: int) -> dict:
    name = "copy_" + tname.replace(" ", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nv.json"
        env = {**os.environ, "PB_SIZE": str(size)}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(HERE / "nvbench_copy.py"), "-b", name, "--json", str(path)],
                              env=env, capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            return {"error": proc.stderr[-2000:]}
        data = json.loads(path.read_text())
    tags = nvbench_values(data)
    return {
        "gpu_us": tags.get("nv/cold/time/gpu/mean", float("nan")) * 1e6,
        "noise_percent_per_sample": tags.get("nv/cold/time/gpu/stdev/relative", float("nan")) * 100,
        "cpu_us_per_sample": tags.get("nv/cold/time/cpu/mean", float("nan")) * 1e6,
        "samples": tags.get("nv/cold/sample_size"),
        "process_wall_secs": wall,
        "tags": {k: v for k, v in tags.items() if k.startswith("nv/cold")},
    }


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for tname, size in CASES:
        fn, moved = kernel_and_args(tname, size)
        row = {"type": tname, "size": size, "bytes_moved": moved}
        row["primbench"] = run_primbench(tname, size, out)
        row["nvbench"] = run_nvbench(tname, size)
        row["do_bench"] = run_do_bench(fn)
        row["cupyx"] = run_cupyx(fn)
        if size <= 1 << 20:
            row["primbench_enqueue"] = enqueue_cost_us(fn)
            row["primbench_l2_clear"] = run_primbench(tname, size, out, "--cache-size", "60MiB")
        rows.append(row)
        print(json.dumps(row), flush=True)
    (out / "vs_tools.json").write_text(json.dumps(rows, indent=1))
    (out / "vs_tools.md").write_text(render(rows))
    print(render(rows))


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def render(rows: list[dict]) -> str:
    lines = [
        "| type | size | primbench GPU µs/call (noise per batch) | NVBench cold (noise per sample) | do_bench median "
        "| cupyx mean | primbench / NVBench | primbench measure s | host µs per timed call: primbench wall "
        "(enqueue only) / NVBench CPU per sample |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, n, d, c = r["primbench"], r["nvbench"], r["do_bench"], r["cupyx"]
        ratio = p["gpu_us"] / n["gpu_us"] if "gpu_us" in n else float("nan")
        enq = r.get("primbench_enqueue", {}).get("enqueue_us_per_call")
        host = f"{p['host_us_per_call']:.1f}" + (f" ({enq:.1f})" if enq else "")
        lines.append(
            f"| {r['type']} | {_size(r['size'])} | {p['gpu_us']:.3f} ({p['noise_percent_per_batch']:.3f} %) "
            f"| {n.get('gpu_us', float('nan')):.3f} ({n.get('noise_percent_per_sample', float('nan')):.2f} %) "
            f"| {d['median_us']:.3f} ({d['noise_percent_per_sample']:.2f} %) "
            f"| {c['mean_us']:.3f} ({c['noise_percent_per_sample']:.2f} %) | {ratio:.4f} "
            f"| {p['measure_secs']:.2f} | {host} / {n.get('cpu_us_per_sample', float('nan')):.1f} |"
        )
    lines.append("")
    lines.append("Targets, default settings:")
    for r in rows:
        p, n = r["primbench"], r["nvbench"]
        if "gpu_us" not in n:
            continue
        diff = abs(p["gpu_us"] / n["gpu_us"] - 1) * 100
        if r["size"] == 128 << 20:
            lines.append(f"- {r['type']} 128 MiB: |primbench/NVBench - 1| = {diff:.2f} % (target ≤ 1 %: "
                         f"{'HIT' if diff <= 1 else 'MISS'}); noise {p['noise_percent_per_batch']:.4f} % "
                         f"(target ≤ 0.03 %: {'HIT' if p['noise_percent_per_batch'] <= 0.03 else 'MISS'}); "
                         f"{p['measure_secs']:.2f} s of measurement, whole run {p['run_wall_secs']:.2f} s, of which "
                         f"warming {p['warming_secs'] or 0:.2f} s")
        if r["size"] == 64 * 1024:
            lines.append(f"- long long 64 KiB: |primbench/NVBench - 1| = {diff:.2f} % (target ≤ 5 %: "
                         f"{'HIT' if diff <= 5 else 'MISS'})")
            enq = r.get("primbench_enqueue", {})
            l2 = r.get("primbench_l2_clear", {})
            lines.append(f"- host time per timed call at 64 KiB: primbench {p['host_us_per_call']:.1f} µs wall "
                         f"(target ≤ 40 µs: {'HIT' if p['host_us_per_call'] <= 40 else 'MISS'}), "
                         f"{enq.get('enqueue_us_per_call', float('nan')):.1f} µs of it enqueueing; "
                         f"clearing only the L2 (--cache-size 60MiB) {l2.get('host_us_per_call', float('nan')):.1f}"
                         f" µs wall, GPU {l2.get('gpu_us', float('nan')):.3f} µs/call; NVBench CPU time per sample "
                         f"{n['cpu_us_per_sample']:.1f} µs")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
