"""What the state a default-protocol run shares is made of at each of data15's sizes: the SM clock (in sample,
descriptive; written after evaluate15.txt and run_order15.txt, and what led to 17f1c2c).

For every A/A label's file (two runs of 8 workers), each worker's mean ln(GPU time per call) over its measured
rounds, less that worker's mean over the suite's kernels (the part every kernel of a worker shares, as compare's
relative test takes it out), and its mean ln(SM clock). Per kernel: the slope of those values on the clock over all
A/A workers (each kernel's answer to the clock about the suite's), the SD of the runs' means (8 workers each)
before and after taking the slope times the run's clock out, and the SD the runs' own workers predict
(within-run variance over 8). Where the first SD is above the last and the second falls to it, the runs' state was
the clock's.

    python tests/benchmarks/verdicts/run_clocks15.py > tests/benchmarks/verdicts/run_clocks15.txt
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE / "h200" / "data15" / "default"
WORKERS = 8


def frame(size: Path) -> pd.DataFrame:
    rows = []
    for f in sorted(size.glob("aa-*.json")):
        for s in json.loads(f.read_text())["specializations"]:
            for r in s.get("rounds") or []:
                if r.get("sm_clock_mhz") and r.get("gpu_ms_per_call"):
                    rows.append({"file": f.name, "kernel": s["name"], "worker": r["process"],
                                 "run": r["process"] // WORKERS, "t": math.log(r["gpu_ms_per_call"]),
                                 "c": math.log(r["sm_clock_mhz"])})
    df = pd.DataFrame(rows)
    w = df.groupby(["file", "kernel", "run", "worker"], as_index=False).agg(t=("t", "mean"), c=("c", "mean"))
    w["t"] -= w.groupby(["file", "worker"])["t"].transform("mean")  # the suite's part of each worker out
    w["t"] -= w.groupby("kernel")["t"].transform("mean")
    w["c"] -= w.groupby("kernel")["c"].transform("mean")
    return w


def main() -> None:
    for size in ("64MiB", "4MiB", "1MiB"):
        w = frame(DATA / size)
        spread = (w.groupby(["file", "worker"])["c"].first().max() - w.groupby(["file", "worker"])["c"].first().min())
        within = w.groupby(["file", "run"])["c"].agg(lambda x: x.max() - x.min())
        print(f"## {size}: {w['file'].nunique()} A/A files, {w.groupby(['file', 'run']).ngroups} runs; the workers' "
              f"mean clocks span {spread * 100:.2f} %, within a run up to {within.max() * 100:.2f} % "
              f"({int((within >= 0.0035).sum())} runs of {len(within)} span 0.35 % or more)\n")
        print("| kernel | slope on the clock | runs' SD | after the clock | the workers predict |")
        print("|---|---|---|---|---|")
        out = []
        for k, g in w.groupby("kernel"):
            slope = float(np.polyfit(g["c"], g["t"], 1)[0])
            g = g.assign(a=g["t"] - slope * g["c"])
            runs = g.groupby(["file", "run"]).agg(t=("t", "mean"), a=("a", "mean"))
            predicted = math.sqrt(float(g.groupby(["file", "run"])["t"].var().mean()) / WORKERS)
            out.append((k, slope, float(runs["t"].std()), float(runs["a"].std()), predicted))
        for k, slope, sd, adj, pred in sorted(out, key=lambda r: -r[2]):
            print(f"| {k} | {slope:+.2f} | {sd * 100:.3f} % | {adj * 100:.3f} % | {pred * 100:.3f} % |")
        med = np.median(np.array([r[2:] for r in out]), axis=0) * 100
        print(f"| **median** | | **{med[0]:.3f} %** | **{med[1]:.3f} %** | **{med[2]:.3f} %** |\n")


if __name__ == "__main__":
    sys.exit(main())
