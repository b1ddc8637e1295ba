"""The thirteenth probe's reading (probe13-plan.md, written before its data): whether runs that start on a quiet
GPU (B: no compute process listed, then 5 s) share less of a state than runs started right after the run before
(A), over the kernels that carried a run state in the twelfth collection at 4 MiB.

    python tests/benchmarks/verdicts/probe13.py [FOLDER] > tests/benchmarks/verdicts/probe13.txt

FOLDER (default `h200/probe13`) holds `A/run-K.json`, `B/run-K.json` and `timeline.txt` (h200_probe13.sh). For
each condition and kernel: the SD of the runs' means, what the workers predict, and the run state's SD
(`run_states12.kernel_spreads`). The statistic is the run state's variance pooled over `STATE_KERNELS`, the
mean over them of (SD of run means)^2 - (workers' prediction)^2, in A less in B; its p-value is exact, over
every split of the runs into two groups of the conditions' sizes (one-sided: A more). `--dry A_GLOB B_GLOB`
reads other files as the two conditions (the checks of the script on data12, where both are back to back).
Then condition C, runs in pairs from one parent (`parents`).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics as st
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_states12 import kernel_spreads, worker_means  # noqa: E402

#: The kernels whose runs at 4 MiB shared a state in data12 (run_states12.txt: a run-state SD of 0.26 % or more
#: in the p16r4 runs), chosen from data12 before any probe13 file existed.
STATE_KERNELS = ("torch.avg_pool3d.k2s2", "torch.avg_pool3d.k4s4", "triton.black_scholes.bfloat16",
                 "triton.black_scholes.float", "triton.black_scholes.half", "triton.lif.32")


def pooled_excess(means: np.ndarray, predicted: np.ndarray) -> float:
    """Mean over kernels of the runs' means' variance less the workers' predicted variance (runs x kernels)."""
    return float(np.mean(np.var(means, axis=0, ddof=1) - np.mean(predicted, axis=0) ** 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="?", default=HERE / "h200" / "probe13")
    ap.add_argument("--dry", nargs=2, metavar=("A_GLOB", "B_GLOB"))
    args = ap.parse_args()
    globs = args.dry or ["A/run-*.json", "B/run-*.json"]
    runs = {c: [worker_means(f)[0] for f in sorted(args.folder.glob(g))] for c, g in zip("AB", globs, strict=True)}
    runs = {c: [r for r in rs if all(len(r.get(k, [])) >= 2 for k in STATE_KERNELS)] for c, rs in runs.items()}
    print(f"# probe13: {args.folder}, A {len(runs['A'])} runs, B {len(runs['B'])} runs\n")
    timeline = args.folder / "timeline.txt"
    if timeline.exists():
        starts = [line.split() for line in timeline.read_text().splitlines() if " start " in line]
        for c in "AB":
            apps = [int(w[5]) for w in starts if w[0] == c]
            print(f"{c}: compute processes listed at each run's start: {apps}")
        print()
    for c in "AB":
        sp = kernel_spreads(runs[c])
        print(f"## {c}\n{'kernel':34} {'SD of run means':>16} {'workers predict':>16} {'run state SD':>13}")
        for k, (sd, pred) in sp.items():
            mark = " *" if k in STATE_KERNELS else ""
            print(f"{k:34} {sd * 100:15.2f}% {pred * 100:15.2f}% "
                  f"{math.sqrt(max(sd * sd - pred * pred, 0.0)) * 100:12.2f}%{mark}")
        print()
    # runs x kernels: each run's mean and its workers' predicted SD of that mean, over STATE_KERNELS
    every = runs["A"] + runs["B"]
    means = np.array([[st.fmean(r[k]) for k in STATE_KERNELS] for r in every])
    predicted = np.array([[st.stdev(r[k]) / math.sqrt(len(r[k])) for k in STATE_KERNELS] for r in every])
    n_a = len(runs["A"])
    a, b = np.arange(n_a), np.arange(n_a, len(every))
    ex_a, ex_b = pooled_excess(means[a], predicted[a]), pooled_excess(means[b], predicted[b])
    observed = ex_a - ex_b
    at_least = total = 0
    for group in itertools.combinations(range(len(every)), n_a):
        rest = np.setdiff1d(np.arange(len(every)), group)
        g = np.array(group)
        t = pooled_excess(means[g], predicted[g]) - pooled_excess(means[rest], predicted[rest])
        at_least += t >= observed - 1e-15
        total += 1
    print(f"run state pooled over {len(STATE_KERNELS)} kernels (* above), variance in %^2: A {ex_a * 1e4:.4f} "
          f"(SD {math.sqrt(max(ex_a, 0)) * 100:.2f} %), B {ex_b * 1e4:.4f} (SD {math.sqrt(max(ex_b, 0)) * 100:.2f} %)")
    print(f"A less B: {observed * 1e4:.4f} %^2; exact one-sided p over {total} splits: {at_least / total:.4f}")
    verdict = "supported" if at_least / total < 0.05 and ex_b < ex_a / 2 else "not supported"
    print(f"the plan's rule (p < 0.05 and B's pooled run-state variance under half of A's): {verdict}")
    parents(args.folder / "C")


def pairings(items: list[int]) -> list[list[tuple[int, int]]]:
    """Every way to split `items` (an even count) into pairs."""
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    return [[(first, other), *more] for i, other in enumerate(rest) for more in pairings(rest[:i] + rest[i + 1:])]


def parents(folder: Path) -> None:
    """Condition C: runs in pairs from one parent process (`same_parent.py`, ``pJ-r1.json``, ``pJ-r2.json``).
    The statistic: the mean over `STATE_KERNELS` of the squared difference of a pair's run means, over the
    parents' pairs; its exact p is the share of all pairings of the runs into pairs whose statistic is as small or
    smaller (one-sided: a parent's two runs alike). Beside it, the same over every pair of runs of different
    parents."""
    pairs = [(folder / f"p{j}-r1.json", folder / f"p{j}-r2.json") for j in range(1, 100)
             if (folder / f"p{j}-r1.json").exists() and (folder / f"p{j}-r2.json").exists()]
    if len(pairs) < 2:
        print(f"\nC: {len(pairs)} parents with both runs in {folder}: nothing to read")
        return
    runs = [worker_means(f)[0] for pair in pairs for f in pair]
    means = np.array([[st.fmean(r[k]) for k in STATE_KERNELS] for r in runs])

    def within(pairing: list[tuple[int, int]]) -> float:
        return float(np.mean([np.mean((means[a] - means[b]) ** 2) for a, b in pairing]))

    own = [(2 * j, 2 * j + 1) for j in range(len(pairs))]
    observed = within(own)
    every = pairings(list(range(len(runs))))
    p = sum(within(q) <= observed + 1e-18 for q in every) / len(every)
    across = float(np.mean([np.mean((means[a] - means[b]) ** 2) for a in range(len(runs))
                            for b in range(a + 1, len(runs)) if a // 2 != b // 2]))
    print(f"\n## C: {len(pairs)} parents, each two runs (same_parent.py)")
    for j, (a, b) in enumerate(own):
        diffs = ", ".join(f"{k.split('.', 1)[1]} {(means[b, i] - means[a, i]) * 100:+.2f} %"
                          for i, k in enumerate(STATE_KERNELS))
        print(f"parent {j + 1}: second run less first: {diffs}")
    print(f"mean squared difference over {len(STATE_KERNELS)} kernels, in %^2: a parent's two runs "
          f"{observed * 1e4:.4f}, runs of different parents {across * 1e4:.4f}; "
          f"exact one-sided p over {len(every)} pairings: {p:.4f}")
    verdict = "supported" if p < 0.05 and observed < across / 2 else "not supported"
    print(f"the plan's rule for C (p < 0.05 and a parent's two runs under half the difference of runs of different "
          f"parents): the state drawn by the parent {verdict}")


if __name__ == "__main__":
    main()
