"""Read the seventeenth probe (`probe17-plan.md`, written before its data): p8r2 runs at 4 MiB, plain and with each
worker's placement pad, alternating. Per design and kernel, as `run_states12.py`: the SD of the runs' means, the SD
its workers predict, and the run state beyond them; then the plan's rule on the kernels it names.

    python tests/benchmarks/verdicts/probe17.py tests/benchmarks/verdicts/h200/probe17 > probe17.txt
"""

from __future__ import annotations

import argparse
import math
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_states12 import kernel_spreads, worker_means  # noqa: E402

#: The kernels with a run state of 0.2 % or more at 4 MiB in the fourteenth evaluation (`run_states14.txt`),
#: named before probe17's data: the rule reads these.
NAMED = ("chacha.8", "chacha.12", "chacha.20", "thomas.64", "triton.dwt.haar")
DESIGNS = ("plain", "pad")


def pooled(values: list[float]) -> float:
    """The root of the mean square: SDs pooled over kernels of equal degrees of freedom."""
    return math.sqrt(st.fmean(v * v for v in values))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--size", default="4MiB")
    args = ap.parse_args()
    spreads, pads = {}, {}
    print(f"# probe17: {args.folder} ({args.size})\n")
    for d in DESIGNS:
        files = sorted((args.folder / args.size / d).glob("run-*.json"), key=lambda p: int(p.stem.split("-")[1]))
        runs = [worker_means(f)[0] for f in files]
        pages = [int(line.split()[1]) for f in files if (log := f.with_suffix(".pads")).exists()
                 for line in log.read_text().split("\n") if line.strip()]
        pads[d] = pages
        if len(runs) < 3:
            print(f"{d}: {len(runs)} runs, too few to read\n")
            continue
        spreads[d] = kernel_spreads(runs)
        print(f"## {d}: {len(runs)} runs; pads written {len(pages)} (pages {min(pages, default=0)}-"
              f"{max(pages, default=0)})\n")
        print(f"{'kernel':24} {'SD of run means':>16} {'workers predict':>16} {'run state SD':>13}")
        for k, (sd, predicted) in spreads[d].items():
            state = math.sqrt(max(sd * sd - predicted * predicted, 0.0))
            mark = " *" if k in NAMED else ""
            print(f"{k:24} {sd * 100:15.2f}% {predicted * 100:15.2f}% {state * 100:12.2f}%{mark}")
        print()
    if set(spreads) != set(DESIGNS):
        print("The plan's rule cannot be read: a design has fewer than 3 runs")
        return
    plain, pad = spreads["plain"], spreads["pad"]
    named = [k for k in NAMED if k in plain and k in pad]
    sd_ratio = pooled([pad[k][0] for k in named]) / pooled([plain[k][0] for k in named])
    workers_ratio = pooled([pad[k][1] for k in pad]) / pooled([plain[k][1] for k in plain])
    all_ratio = pooled([pad[k][0] for k in pad]) / pooled([plain[k][0] for k in plain])
    print(f"Pooled SD of run means, the {len(named)} named kernels, pad over plain: {sd_ratio:.2f}")
    print(f"Pooled SD of run means, all {len(pad)} kernels, pad over plain: {all_ratio:.2f} (descriptive)")
    print(f"Pooled SD the workers predict, all kernels, pad over plain: {workers_ratio:.2f}")
    met = sd_ratio <= 0.75 and workers_ratio <= 1.15
    print(f"\nThe plan's rule (named kernels' ratio <= 0.75 and the workers' <= 1.15): {sd_ratio:.2f}, "
          f"{workers_ratio:.2f}: " + ("the pad is a candidate for the next evaluation" if met
                                       else "not supported: the pad stays out"))


if __name__ == "__main__":
    main()
