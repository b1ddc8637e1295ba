"""The audit's simulated suites (`simulate.py`, its models and generator unchanged) under the protocol
of `primbench run --processes 4`: a side is one file of 4 worker processes of `PROCESS_ROUNDS` rounds
each (8 since 7ed5d90: a warm-up and seven measured; 4 before), which compare splits into 4 runs
(`Results.per_process`); the generator's rounds do not shorten with their number (its round-to-round
variance is the model's, whatever the round's length); beside it the
same 4 processes as 4 separate files a side (a loop of `--rounds 4 --min-secs 0.25` runs, which
compare judges by their spread about the suite), and `simulate.txt`'s protocol (one process of 10
rounds a side), on the same model and seeds. The generator's processes are independent: it has no
part shared by the workers of one run, which the sixth evaluation measured (`calibration6.txt`).

    python tests/benchmarks/verdicts/simulate_processes.py > tests/benchmarks/verdicts/simulate-processes.txt

Written after the sixth evaluation (`evaluate6.txt`); the method is compare's as at that commit, the
generator is not compare's model (Student-t shared shifts, per-process kernel parts, two process
states, AR(1) and outlier rounds, a round-order pattern).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulate import LARGE, SMALL, Model, rate

from primbench.compare.model import Verdict
from primbench.processes import PROCESS_ROUNDS

NULL_MODELS = [
    ("small, 10 kernels", SMALL, 400),
    ("large, 10 kernels", LARGE, 400),
    ("common shift twice as large (1 %)", replace(SMALL, shared_sd=0.01), 400),
    ("one noisy kernel among 10", replace(SMALL, noisy=1), 400),
    ("one noisy kernel among 100", replace(SMALL, kernels=100, noisy=1), 100),
    ("two process states 1 % apart", replace(SMALL, states=0.01), 400),
    ("AR(1) rounds, rho 0.5", replace(SMALL, ar=0.5), 400),
    ("outlier rounds (5 % of rounds +5 %)", replace(SMALL, outliers=0.05), 400),
    ("large: two process states 0.3 % apart", replace(LARGE, states=0.003), 400),
    ("round-order pattern every kernel shares (1 % SD)", replace(SMALL, order=0.01), 400),
    ("large: a process part 10x as large (0.3 %)", replace(LARGE, process_sd=0.003), 400),
]


WORKERS = 4  # `--workers K`: the workers of one --processes file (only that column is then printed)


def processes(m: Model) -> Model:
    """The same model measured as one `--processes K` file a side: K workers of `PROCESS_ROUNDS` rounds."""
    return replace(m, runs=WORKERS * m.runs, rounds=PROCESS_ROUNDS, head_rounds=PROCESS_ROUNDS, workers=True)


def loop(m: Model) -> Model:
    """The same model measured as 4 separate files a side of 4 rounds each."""
    return replace(m, runs=4 * m.runs, rounds=4, head_rounds=4)


def only_workers(argv: list[str]) -> None:
    """`--workers K`: the audit's tables for one `--processes K` file a side alone (the generator's rounds do
    not shorten with more workers: what a round of a sixteenth of the budget shows is the evaluation's to say).

        python tests/benchmarks/verdicts/simulate_processes.py --workers 16 > simulate-processes16.txt
    """
    global WORKERS
    WORKERS = int(argv[argv.index("--workers") + 1])
    start = time.perf_counter()
    print(f"# Simulated suites under `--processes {WORKERS}` (simulate_processes.py --workers {WORKERS})\n")
    print(f"| model | suites | P(no-change suite fails): one --processes {WORKERS} file a side |")
    print("|---|---|---|")
    for seed, (label, m, n) in enumerate(NULL_MODELS):
        p, se, _ = rate(processes(m), n, 500 + seed)
        print(f"| {label} | {n} | {p * 100:.1f} ± {se * 100:.1f} % |", flush=True)
    print(f"\n| shared change | suites | P(suite fails CI), changed rows flagged: --processes {WORKERS} a side |")
    print("|---|---|---|")
    for seed, frac in enumerate((0.4, 0.6, 1.0)):
        for label, m in (("small", SMALL), ("large", LARGE)):
            model = processes(m)
            change = np.zeros(model.kernels)
            change[: round(frac * model.kernels)] = math.log(1 / 0.97)
            p, se, v = rate(model, 200, 600 + seed, change)
            hit = np.mean([x is Verdict.REGRESSION for vs in v for x in vs[: round(frac * model.kernels)]])
            print(f"| {label}: -3 % on {frac * 100:.0f} % of 10 kernels | 200 | {p * 100:.1f} ± {se * 100:.1f} %, "
                  f"{hit * 100:.0f} % |", flush=True)
    print("\n| one kernel changed among 10 | small | large |")
    print("|---|---|---|")
    for seed, size in enumerate((0.01, 0.02, 0.05)):
        cells = []
        for m in (SMALL, LARGE):
            model = processes(m)
            change = np.zeros(model.kernels)
            change[0] = math.log1p(size)
            _, _, v = rate(model, 200, 700 + seed, change)
            cells.append(f"{np.mean([vs[0] is Verdict.REGRESSION for vs in v]) * 100:.0f} %")
        print(f"| {size * 100:g} % | {cells[0]} | {cells[1]} |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


def main() -> None:
    if "--workers" in sys.argv:
        only_workers(sys.argv)
        return
    start = time.perf_counter()
    print("# Simulated suites under `--processes 4` (tests/benchmarks/verdicts/simulate_processes.py)\n")
    print("| model | suites | P(no-change suite fails): one --processes 4 file a side "
          "| 4 separate files a side | one process of 10 rounds a side |")
    print("|---|---|---|---|---|")
    null_models = NULL_MODELS
    for seed, (label, m, n) in enumerate(null_models):
        cells = []
        for model in (processes(m), loop(m), m):
            p, se, _ = rate(model, n, 500 + seed)
            cells.append(f"{p * 100:.1f} ± {se * 100:.1f} %")
        print(f"| {label} | {n} | {' | '.join(cells)} |")
    print("\n| shared change | suites | P(suite fails CI), changed rows flagged: --processes 4 a side | "
          "4 separate files a side | one process a side |")
    print("|---|---|---|---|---|")
    for seed, frac in enumerate((0.4, 0.6, 1.0)):
        for label, m in (("small", SMALL), ("large", LARGE)):
            cells = []
            for model in (processes(m), loop(m), m):
                change = np.zeros(model.kernels)
                change[: round(frac * model.kernels)] = math.log(1 / 0.97)  # -3 % throughput: time up
                p, se, v = rate(model, 200, 600 + seed, change)
                hit = np.mean([x is Verdict.REGRESSION for vs in v for x in vs[: round(frac * model.kernels)]])
                cells.append(f"{p * 100:.1f} ± {se * 100:.1f} %, {hit * 100:.0f} %")
            print(f"| {label}: -3 % on {frac * 100:.0f} % of 10 kernels | 200 | {' | '.join(cells)} |")
    print("\n| one kernel changed among 10 | small: --processes 4 / 4 files / one process "
          "| large: --processes 4 / 4 files / one process |")
    print("|---|---|---|")
    for seed, size in enumerate((0.01, 0.02, 0.05)):
        cells = []
        for m in (SMALL, LARGE):
            found = []
            for model in (processes(m), loop(m), m):
                change = np.zeros(model.kernels)
                change[0] = math.log1p(size)
                _, _, v = rate(model, 200, 700 + seed, change)
                found.append(f"{np.mean([vs[0] is Verdict.REGRESSION for vs in v]) * 100:.0f} %")
            cells.append(" / ".join(found))
        print(f"| {size * 100:g} % | {cells[0]} | {cells[1]} |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
