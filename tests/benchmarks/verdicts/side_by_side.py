"""primbench beside NVBench (cuda-bench) and triton.testing.do_bench, in one session on one GPU
(issue "Verdicts that speak", step 6): the same six kernels, each tool in separate processes,
interleaved in time. What counts is what a CI job would see: the process-to-process spread of
each tool's reported time per call, and the wall time that number cost.

    python3 tests/benchmarks/verdicts/side_by_side.py drive --out DIR [--processes 5] [--size 4MiB]
    python3 tests/benchmarks/verdicts/side_by_side.py summarize DIR > side_by_side.txt

Kernels (library calls and RawKernels, no copy kernel): cuBLAS SGEMM, CUB radix sort (`cp.sort`),
cuFFT (batched c2c), an atomics histogram (RawKernel), a sum of squares (`ReductionKernel`), a
strided transpose (`cp.copyto` of a transposed view). Each built once per process from its own
seed, outside the timing.

Tools and settings (each process measures all six kernels, in this order):
- ``primbench``: `primbench.Executor` with default settings (10 rounds, cold: cache cleared);
  its number is the estimate compare uses (mean of ln time per call over the measured rounds).
- ``nvbench``: cuda-bench's default stopping rule (cold, ≥ 10 samples, ≥ 0.5 s, noise ≤ 0.5 %,
  15 s timeout); its number is the cold GPU mean.
- ``nvbench-1s``: cuda-bench with ``--timeout 1 --max-noise 0.0001``, so each kernel gets about a
  second, as primbench spends.
- ``do_bench``: `triton.testing.do_bench(fn)` as its docs show (25 ms warm-up, 100 ms of
  repetitions, L2 flushed between calls; the mean).
- ``do_bench-1s``: ``do_bench(fn, warmup=100, rep=900)``: about a second per kernel.
Wall time per kernel is measured around each tool's own measuring call (setup and imports
excluded); the process's whole wall time is recorded too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
import eval_suite  # noqa: E402  (its kernels' source: the histogram)

OPS = ("sgemm", "sort", "fft", "histogram", "sumsq", "transpose")
TOOLS = ("primbench", "nvbench", "nvbench-1s", "do_bench", "do_bench-1s")


def parse_size(text: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, mult in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * mult
    return int(text)


def make(op: str, size: int, seed: int):
    """The kernel as a callable on the current CuPy stream, its inputs built and warm."""
    import cupy as cp

    rng = cp.random.default_rng(seed)
    if op == "sgemm":
        n = max(32, int((size // 12) ** 0.5))
        a, b = rng.random((n, n), dtype=cp.float32), rng.random((n, n), dtype=cp.float32)
        c = cp.empty((n, n), dtype=cp.float32)
        fn = lambda: cp.matmul(a, b, out=c)  # noqa: E731
    elif op == "sort":
        x = rng.integers(0, 1 << 30, max(1024, size // 4), dtype=cp.int32)
        fn = lambda: cp.sort(x)  # noqa: E731
    elif op == "fft":
        rows = max(1, size // 8 // 4096)
        z = (rng.random((rows, 4096), dtype=cp.float32) + 1j).astype(cp.complex64)
        fn = lambda: cp.fft.fft(z)  # noqa: E731
    elif op == "histogram":
        n = max(1024, size)
        h = rng.integers(0, 256, n, dtype=cp.int32).astype(cp.uint8)
        bins = cp.zeros(256, dtype=cp.uint32)
        kernel = eval_suite.module().get_function("histogram")  # the evaluation suite's own kernel
        blocks = min(1024, max(1, n // 4096))
        fn = lambda: kernel((blocks,), (256,), (h, bins, cp.uint32(n)))  # noqa: E731
    elif op == "sumsq":
        k = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = a", "0", "sbs_sumsq")
        v, y = rng.random(max(1024, size // 4), dtype=cp.float32), cp.empty((), dtype=cp.float32)
        fn = lambda: k(v, y)  # noqa: E731
    else:
        n = max(32, int((size // 8) ** 0.5))
        t, out = rng.random((n, n), dtype=cp.float32), cp.empty((n, n), dtype=cp.float32)
        fn = lambda: cp.copyto(out, t.T)  # noqa: E731
    fn()
    cp.cuda.Device().synchronize()
    return fn


# --- one process per tool --------------------------------------------------------------------


def run_primbench(size: int, seed: int, keep: Path | None = None) -> list[dict[str, Any]]:
    import primbench as pb
    from primbench.rounds import estimate

    class Op(pb.Benchmark):
        def __init__(self, op: str) -> None:
            self.op = op

        def meta(self) -> dict[str, object]:
            return {"algo": "side_by_side", "op": self.op}

        def run(self, state: pb.State) -> None:
            state.run(make(self.op, state.size, state.seed))

    rows = []
    for op in OPS:  # one Executor per kernel, so that its wall time is the kernel's own
        dest = str(keep.with_name(f"{keep.stem}-{op}-results.json")) if keep else os.devnull
        ex = pb.Executor(["--size", str(size), "--seed", str(seed), "--json-out", dest])
        ex.queue(Op(op))
        t0 = time.perf_counter()
        doc = ex.run()
        wall = time.perf_counter() - t0
        spec = doc["specializations"][0]
        est = estimate([r["gpu_ms_per_call"] for r in spec.get("rounds") or []])
        us = math.exp(est.log_mean) * 1e3 if est else spec["gpu_seconds_per_call"] * 1e6
        rows.append({"op": op, "us": us, "wall_s": wall})
    return rows


def run_nvbench(size: int, seed: int, extra: list[str]) -> list[dict[str, Any]]:
    """All six kernels in one cuda-bench run; a kernel's wall time runs from the end of its setup
    to the start of the next kernel's (the last: to the end of the run)."""
    import tempfile

    import cuda.bench as bench
    import cupy as cp

    marks: list[tuple[str, str, float]] = []

    def register(op: str) -> None:
        def body(state: Any) -> None:
            marks.append((op, "setup", time.perf_counter()))
            fn = make(op, size, seed)
            marks.append((op, "ready", time.perf_counter()))

            def launcher(launch: Any) -> None:
                with cp.cuda.ExternalStream(launch.get_stream().addressof()):
                    fn()

            state.exec(launcher)

        body.__name__ = op
        bench.register(body)

    for op in OPS:
        register(op)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nv.json"
        bench.run_all_benchmarks(["nvbench", "--json", str(path), *extra])
        marks.append(("", "end", time.perf_counter()))
        data = json.loads(path.read_text())
    ready = {op: t for op, what, t in marks if what == "ready"}
    following = {}
    for i, (op, what, _) in enumerate(marks):
        if what == "ready":
            following[op] = next(t for _, w, t in marks[i + 1:] if w in ("setup", "end"))
    rows = []
    for b in data["benchmarks"]:
        tags: dict[str, float] = {}
        for st in b["states"]:
            for s in st.get("summaries") or []:
                for d in s.get("data", []):
                    if d.get("name") == "value":
                        tags[s["tag"]] = float(d["value"])
        op = b["name"]
        rows.append({"op": op, "us": tags.get("nv/cold/time/gpu/mean", float("nan")) * 1e6,
                     "wall_s": following.get(op, float("nan")) - ready.get(op, float("nan")),
                     "samples": tags.get("nv/cold/sample_size")})
    return rows


def run_do_bench(size: int, seed: int, kwargs: dict[str, int]) -> list[dict[str, Any]]:
    import triton.testing

    rows = []
    for op in OPS:
        fn = make(op, size, seed)
        t0 = time.perf_counter()
        ms = triton.testing.do_bench(fn, **kwargs)
        wall = time.perf_counter() - t0
        rows.append({"op": op, "us": float(ms) * 1e3, "wall_s": wall})
    return rows


def one(tool: str, size: int, seed: int, out: Path) -> None:
    t0 = time.perf_counter()
    if tool == "primbench":
        rows = run_primbench(size, seed, out)
    elif tool == "nvbench":
        rows = run_nvbench(size, seed, [])
    elif tool == "nvbench-1s":
        rows = run_nvbench(size, seed, ["--timeout", "1", "--max-noise", "0.0001"])
    elif tool == "do_bench":
        rows = run_do_bench(size, seed, {})
    else:
        rows = run_do_bench(size, seed, {"warmup": 100, "rep": 900})
    out.write_text(json.dumps({"tool": tool, "size": size, "seed": seed, "rows": rows,
                               "in_process_wall_s": time.perf_counter() - t0}))


# --- the driver and the table ----------------------------------------------------------------


def drive(out: Path, processes: int, size_text: str, deadline_s: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    size = parse_size(size_text)
    start = time.perf_counter()
    log = (out / "drive.log").open("a")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for p in range(processes):
        for tool in TOOLS:
            if time.perf_counter() - start > deadline_s:
                log.write(f"deadline reached before process {p} of {tool}\n")
                return
            dest = out / f"{tool}-{size_text}-{p}.json"
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, str(HERE), "one", tool, str(size), str(1000 + p), str(dest)],
                                  env=env, capture_output=True, text=True, timeout=300)
            wall = time.perf_counter() - t0
            if dest.exists():
                doc = json.loads(dest.read_text())
                doc["process_wall_s"] = wall
                dest.write_text(json.dumps(doc))
            line = f"{tool} {size_text} process {p}: exit {proc.returncode}, wall {wall:.1f} s"
            log.write(line + "\n" + (proc.stderr[-3000:] if proc.returncode else ""))
            log.flush()
            print(line, flush=True)


def summarize(out: Path) -> str:
    docs = [json.loads(f.read_text()) for f in sorted(out.glob("*.json")) if not f.stem.endswith("-results")]
    lines = ["# primbench, NVBench and do_bench side by side (recorded by side_by_side.py)", ""]
    for size in sorted({d["size"] for d in docs}):
        lines += [f"## {size >> 20} MiB" if size >= 1 << 20 else f"## {size >> 10} KiB", "",
                  "Process-to-process CV of the reported time per call (sd of ln over processes, %), and "
                  "wall seconds per kernel (median over processes). n = processes.", "",
                  "| kernel | " + " | ".join(f"{t} CV % (wall s)" for t in TOOLS) + " |",
                  "|---|" + "---|" * len(TOOLS)]
        cv: dict[str, list[float]] = {t: [] for t in TOOLS}
        walls: dict[str, list[float]] = {t: [] for t in TOOLS}
        counts: dict[str, int] = {}
        for op in OPS:
            cells = []
            for tool in TOOLS:
                vals = [r for d in docs if d["size"] == size and d["tool"] == tool for r in d["rows"] if r["op"] == op]
                counts[tool] = len(vals)
                us = [r["us"] for r in vals if r["us"] > 0 and math.isfinite(r["us"])]
                w = [r["wall_s"] for r in vals]
                if len(us) >= 2:
                    c = statistics.stdev(math.log(u) for u in us) * 100
                    cv[tool].append(c)
                    walls[tool].append(statistics.median(w))
                    cells.append(f"{c:.3f} ({statistics.median(w):.2f})")
                else:
                    cells.append("–")
            mean_us = [r["us"] for d in docs if d["size"] == size and d["tool"] == "primbench"
                       for r in d["rows"] if r["op"] == op]
            label = f"{op} ({statistics.median(mean_us):.1f} µs)" if mean_us else op
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("| **median** | " + " | ".join(
            f"**{statistics.median(cv[t]):.3f}** ({statistics.median(walls[t]):.2f})" if cv[t] else "–"
            for t in TOOLS) + " |")
        lines += ["", "Processes per tool: " + ", ".join(f"{t} {counts.get(t, 0)}" for t in TOOLS), ""]
        pb_cv = statistics.median(cv["primbench"]) if cv["primbench"] else float("nan")
        for peer in ("nvbench", "nvbench-1s", "do_bench", "do_bench-1s"):
            if cv[peer]:
                ratio = pb_cv / statistics.median(cv[peer])
                lines.append(f"- primbench / {peer} median CV = {ratio:.2f} (target ≤ 0.5 at equal wall time: "
                             f"{'met' if ratio <= 0.5 else 'missed'}); wall per kernel "
                             f"{statistics.median(walls['primbench']):.2f} s against "
                             f"{statistics.median(walls[peer]):.2f} s")
        per_kernel = [(op, a, b, c) for op, a, b, c in zip(OPS, cv["primbench"], cv["nvbench-1s"],
                                                          cv["do_bench-1s"], strict=False)]
        wins = sum(1 for _, a, b, c in per_kernel if a <= 0.5 * b and a <= 0.5 * c)
        lines.append(f"- kernels where primbench's CV is at most half of both 1-second peers': {wins} of "
                     f"{len(per_kernel)}")
        lines += ["", "The same with each process's common shift taken out (each process's median deviation "
                  "over the six kernels, as compare's relative verdicts do):", "",
                  "| tool | median CV % centred | per kernel |", "|---|---|---|"]
        for tool in TOOLS:
            procs = [d for d in docs if d["size"] == size and d["tool"] == tool]
            logs = {op: [math.log(r["us"]) for d in procs for r in d["rows"] if r["op"] == op and r["us"] > 0]
                    for op in OPS}
            if len(procs) < 2 or any(len(v) != len(procs) for v in logs.values()):
                continue
            means = {op: statistics.fmean(v) for op, v in logs.items()}
            shift = [statistics.median(logs[op][i] - means[op] for op in OPS) for i in range(len(procs))]
            cvs = [statistics.stdev(logs[op][i] - shift[i] for i in range(len(procs))) * 100 for op in OPS]
            lines.append(f"| {tool} | {statistics.median(cvs):.3f} | " + ", ".join(f"{c:.2f}" for c in cvs) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "one":
        one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("drive")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--processes", type=int, default=5)
    d.add_argument("--size", default="4MiB")
    d.add_argument("--deadline-s", type=float, default=420.0)
    s = sub.add_parser("summarize")
    s.add_argument("dir", type=Path)
    args = ap.parse_args()
    if args.cmd == "drive":
        drive(args.out, args.processes, args.size, args.deadline_s)
    else:
        sys.stdout.write(summarize(args.dir))


if __name__ == "__main__":
    main()
