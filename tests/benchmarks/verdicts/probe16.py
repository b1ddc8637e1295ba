"""The sixteenth probe's reading (probe16-plan.md, written before its data): two runs in one command (`--runs 2`)
against two separate commands, eval_suite12.py at 64 MiB: per kernel how far a command's two runs' means sit
apart, against a pair of separate commands', and the walls.

    python tests/benchmarks/verdicts/probe16.py [FOLDER] > tests/benchmarks/verdicts/probe16.txt

FOLDER (default `h200/probe16`) holds `runs2/cmd-K.json`, `sep/cmd-K-J.json` and `timeline.txt`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from probe14 import worker_means  # noqa: E402  (each kernel's workers' means of ln time per call)


def run_means(doc: dict) -> list[dict[str, float]]:
    """Each run's per-kernel mean over its workers: a `--runs` file's processes 0 to K-1, K to 2K-1, ... (its
    rounds are process after process, so `worker_means` lists the workers in that order)."""
    settings = doc["context"]["settings"]
    runs, k = int(settings.get("runs", 1)), int(settings.get("processes", 1))
    return [{name: st.fmean(means[r * k:(r + 1) * k]) for name, means in worker_means(doc).items()}
            for r in range(runs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="?", default=HERE / "h200" / "probe16")
    args = ap.parse_args()
    walls: dict[str, float] = {}
    for line in (args.folder / "timeline.txt").read_text().splitlines():
        if m := re.match(r"(runs2 \d+|sep \d+-\d) exit 0 wall ([\d.]+)", line):
            walls[m[1]] = float(m[2])
    within: dict[str, list[float]] = {}
    between: dict[str, list[float]] = {}
    pairs = 0
    for f in sorted((args.folder / "runs2").glob("cmd-*.json")):
        k = f.stem.removeprefix("cmd-")
        seps = [args.folder / "sep" / f"cmd-{k}-{j}.json" for j in (1, 2)]
        if not all(p.is_file() for p in seps):
            continue
        pairs += 1
        one = run_means(json.loads(f.read_text()))
        two = [run_means(json.loads(p.read_text()))[0] for p in seps]
        for name in one[0]:
            within.setdefault(name, []).append(abs(one[0][name] - one[1][name]))
            between.setdefault(name, []).append(abs(two[0][name] - two[1][name]))
    print(f"# probe16: {args.folder} ({pairs} pairs)\n")
    print("| kernel | mean abs. difference of a command's two runs | of two separate commands | ratio |")
    print("|---|---|---|---|")
    ratios = []
    for name in sorted(within):
        w, b = st.fmean(within[name]), st.fmean(between[name])
        ratios.append(w / b if b > 0 else math.nan)
        print(f"| {name} | {w * 100:.3f} % | {b * 100:.3f} % | {ratios[-1]:.2f} |")
    med_w = st.median(st.fmean(v) for v in within.values())
    med_b = st.median(st.fmean(v) for v in between.values())
    ratio = med_w / med_b
    print(f"\nMedian over kernels: within a command {med_w * 100:.3f} %, between commands {med_b * 100:.3f} %, "
          f"ratio {ratio:.2f} (median of the kernels' ratios {st.median(r for r in ratios if r == r):.2f})")
    for k in range(1, pairs + 1):
        if f"runs2 {k}" in walls:
            print(f"pair {k}: one --runs 2 command {walls[f'runs2 {k}']:.1f} s, two commands "
                  f"{walls.get(f'sep {k}-1', math.nan) + walls.get(f'sep {k}-2', math.nan):.1f} s")
    verdict = "--runs 2 stands in for two commands" if ratio >= 0.7 else "two commands stay the recipe"
    print(f"\nThe plan's rule (ratio >= 0.7): {ratio:.2f}: {verdict}")


if __name__ == "__main__":
    main()
