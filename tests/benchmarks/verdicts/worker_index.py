"""Is a worker's place among the side-by-side workers of a `--processes` run a lasting effect (worker j
always landing in the same state), which compare could block on by pairing worker j of one side with
worker j of the other? Per kernel, relative to the suite, a two-way layout runs x worker index of the
workers' means: the F ratio of the worker-index effect against the residual (about 1: no effect),
and the run means' variance across runs against what the workers' spread predicts, unblocked and
blocked on the index.

    python3 tests/benchmarks/verdicts/worker_index.py > tests/benchmarks/verdicts/worker_index.txt
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "h200"
SETS = (("data7", "64KiB", "aa"), ("data7", "1MiB", "aa"), ("data7", "4MiB", "aa"), ("data7", "64MiB", "aa"),
        ("data8", "1MiB", "aa"), ("data8", "4MiB", "aa"), ("tune8", "", "p4"), ("tune8", "", "p8"))


def worker_means(path: Path) -> list[list[float]]:
    """kernels x workers: each worker's mean ln time per call (%) over its measured rounds."""
    out = []
    for s in json.loads(path.read_text())["specializations"]:
        t: dict[int, list[float]] = defaultdict(list)
        for r in s["rounds"]:
            t[r["process"]].append(float(np.log(r["gpu_ms_per_call"]) * 100))
        out.append([float(np.mean(t[p][1:] if len(t[p]) >= 4 else t[p])) for p in sorted(t)])
    return out


def main() -> None:
    print("# A worker's place among a run's workers (worker_index.py)\n")
    print("| data | size | runs x workers | F of the worker index (median over kernels) | run means' variance / "
          "workers' spread predicts: unblocked | blocked on the index |")
    print("|---|---|---|---|---|---|")
    for data, size, label in SETS:
        folder = HERE / data / size if size else HERE / data
        files = sorted(folder.glob(f"{label}-[0-9].json"))
        w = np.array([worker_means(f) for f in files])  # runs x kernels x workers
        runs, _, workers = w.shape
        x = w - w.mean(axis=1, keepdims=True)  # relative to the suite
        x = x - x.mean(axis=(0, 2), keepdims=True)
        run = x.mean(axis=2, keepdims=True)
        index = x.mean(axis=0, keepdims=True)
        resid = x - run - index
        ms_index = (index**2).sum(axis=(0, 2)) * runs / (workers - 1)
        ms_resid = (resid**2).sum(axis=(0, 2)) / ((runs - 1) * (workers - 1))
        within = (x - run).var(axis=2, ddof=1).mean(axis=0) / workers
        actual = run[:, :, 0].var(axis=0, ddof=1)
        print(f"| {data} | {size or '1MiB'} ({label}) | {runs} x {workers} | {np.median(ms_index / ms_resid):.2f} | "
              f"{actual.sum() / within.sum():.2f} | {actual.sum() / (ms_resid / workers).sum():.2f} |")


if __name__ == "__main__":
    main()
