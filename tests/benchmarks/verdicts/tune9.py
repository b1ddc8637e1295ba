"""The ninth pilot's in-sample comparison of `--processes 8` and `--processes 16` (with batches of at
least 0.25 ms) at 1 MiB and 64 KiB (h200_tune9.sh; files in h200/tune9/): 4 and 2 runs of each,
alternating, the eighth evaluation's suite, the same --min-secs (so a worker of 16 has half a worker of
8's share). `tune8.py`'s statistics for each protocol and size: every
ordered A/A pair through `primbench compare` as it is (exit codes, rows unchanged, the median
smallest detectable change), each kernel's spread of run means about the suite (the SD of ln time
of a run less that run's mean over the kernels, over the 6 runs), the workers' SM clocks, and the
wall time of a run.

    python3 tests/benchmarks/verdicts/tune9.py > tests/benchmarks/verdicts/tune9.txt
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "h200" / "tune9"
ROOT = Path(__file__).resolve().parents[3]


def compare(base: Path, head: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run([sys.executable, "-m", "primbench", "compare", str(base), str(head), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    return done.returncode, json.loads(done.stdout)


def run_means(path: Path) -> dict[str, float]:
    """Each kernel's run value as compare takes a --processes file: the mean over its workers of
    each worker's mean ln time per call over its measured rounds (the warm-up left out)."""
    doc = json.loads(path.read_text())
    out = {}
    for s in doc["specializations"]:
        by: dict[int, list[float]] = {}
        for r in s["rounds"]:
            by.setdefault(r["process"], []).append(float(np.log(r["gpu_ms_per_call"])))
        out[s["name"]] = float(np.mean([np.mean(v[1:] if len(v) >= 4 else v) for v in by.values()]))
    return out


def clocks(path: Path) -> str:
    doc = json.loads(path.read_text())
    per = {}
    for s in doc["specializations"]:
        for r in s["rounds"]:
            per.setdefault(r["process"], []).append(r["sm_clock_mhz"])
    return "/".join(f"{statistics.mean(v):.0f}" for _, v in sorted(per.items()))


def timeline(label: str) -> tuple[float, float, float]:
    """From a run's stamped output: seconds until the first worker measures, the median turn (one
    "measuring" line to the next), and from the last turn's start to the end of the output."""
    stamps = [(float(line.split()[0]), line) for line in (HERE / f"wall-{label}.txt").read_text().splitlines()
              if line.strip() and line.split()[0].replace(".", "", 1).isdigit()]
    starts = [t for t, line in stamps if ": measuring (" in line]
    if not starts:
        return float("nan"), float("nan"), float("nan")
    turns = [b - a for a, b in zip(starts, starts[1:])]
    return starts[0], statistics.median(turns) if turns else float("nan"), stamps[-1][0] - starts[-1]


def main() -> None:
    steps = {m.group(1): float(m.group(2)) for line in (HERE / "steps.txt").read_text().splitlines()
             if (m := re.search(r": (\S+): ([\d.]+) s wall", line))}
    print("# `--processes 8` against `--processes 16` (0.25 ms batches), in sample (h200/tune9, tune9.py)\n")
    print((HERE / "gpu.txt").read_text().strip().splitlines()[-1], "\n")
    print((HERE / "env-after.txt").read_text().strip(), "\n")
    for proto in ("p8-1MiB", "p16-1MiB", "p8-64KiB", "p16-64KiB"):
        files = sorted(HERE.glob(f"{proto}-[0-9].json"))
        if len(files) < 2:
            continue
        means = [run_means(f) for f in files]
        names = sorted(means[0])
        x = np.array([[m[n] for n in names] for m in means]) * 100  # runs x kernels, ln %
        rel = x - x.mean(axis=1, keepdims=True)
        sd = rel.std(axis=0, ddof=1)
        exits, unchanged, rows, detect = 0, 0, 0, {n: [] for n in names}
        for a, b in itertools.permutations(files, 2):
            code, doc = compare(a, b)
            exits += code == 1
            for r in doc["specializations"]:  # type: ignore[union-attr]
                rows += 1
                unchanged += r["verdict"] == "unchanged"
                if r["min_detectable_change"] is not None:
                    detect[r["name"]].append(abs(r["min_detectable_change"]) * 100)
        pairs = len(files) * (len(files) - 1)
        walls = [steps[f.stem] for f in files]
        print(f"## --processes {proto.split('-')[0][1:]} at {proto.split('-')[1]}: {len(files)} runs, {pairs} ordered "
              "A/A pairs\n")
        print(f"- wall per run: {', '.join(f'{w:.1f}' for w in walls)} s (median {statistics.median(walls):.1f} s,"
              f" {statistics.median(walls) / len(names):.2f} s a specialization)")
        lines = [timeline(f.stem) for f in files]
        print(f"- until the first worker measures: {', '.join(f'{a:.1f}' for a, _, _ in lines)} s; the median turn: "
              f"{', '.join(f'{b:.2f}' for _, b, _ in lines)} s; the last turn to the end: "
              f"{', '.join(f'{c:.1f}' for _, _, c in lines)} s")
        print(f"- workers' mean SM clocks (MHz), run by run: {'; '.join(clocks(f) for f in files)}")
        print(f"- A/A exit 1: {exits}/{pairs}; rows unchanged: {unchanged}/{rows} ({100 * unchanged / rows:.0f} %)")
        med = {n: statistics.median(v) for n, v in detect.items() if v}
        print(f"- median smallest detectable change (median per kernel): {statistics.median(med.values()):.2f} %\n")
        print("| kernel | run means' SD about the suite | compare's median detectable |")
        print("|---|---|---|")
        for n, s in zip(names, sd, strict=True):
            print(f"| {n} | {s:.2f} % | {med.get(n, float('nan')):.2f} % |")
        print(f"\nMedian over kernels of the run means' SD about the suite: {np.median(sd):.2f} %; pooled "
              f"(root mean square): {np.sqrt(np.mean(sd ** 2)):.2f} %.\n")


if __name__ == "__main__":
    main()
