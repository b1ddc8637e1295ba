"""The audit's simulated suites (`simulate.py`'s generator) under the CI design "p8r2x2": a side is
`FILES` = 2 separate `primbench run --processes 8 --rounds 2 --min-secs 0.25` files, each of `WORKERS` = 8
worker processes of `ROUNDS` = 2 rounds (``compare B1 B2 -- H1 H2``: compare takes each file's workers as
runs and the files by their source, `_between_files`); beside it one such file a side ("p8r2"), on the
same models and seeds.

    python tests/benchmarks/verdicts/simulate_p8r2x2.py > tests/benchmarks/verdicts/simulate-p8r2x2.txt

At 2 rounds no round is a warm-up (`primbench.rounds.measured_rounds`: from `WARMUP_FROM` = 4 rounds on):
both rounds enter a worker's estimate, the generator's warm-up offset of the first round (N(-1 %, 1 %),
every model, small and large alike) included. The generator's rounds do not shorten with their number
or the workers (its round SD is per round, whatever the round's length).

Models: `simulate_processes.NULL_MODELS`, one noisy kernel among 1,000, and the state every worker of one
run (file) shares that the H100/H200 runs showed (`run_states14.txt`: at 4 MiB some kernels' run means
move 0.3-0.9 % between files while the 8 workers of a file agree): `Model.file_sd`, per kernel, normal,
drawn once per file and added to every round of its workers (small 0.3 and 0.6 %, large 0.1 %). Then
the shared -3 % change and the one-kernel power of `simulate_processes.py`, and (beyond the brief of
those tables) the one-kernel power under a file state.
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
from simulate_processes import NULL_MODELS

from primbench.compare.model import Verdict

FILES = 2  # --processes files a side
WORKERS = 8  # worker processes of a file
ROUNDS = 2  # --rounds of each worker

FILE_STATE_MODELS = [
    ("one noisy kernel among 1,000", replace(SMALL, kernels=1000, noisy=1), 100),
    ("a state each file's workers share, 0.3 % SD (small)", replace(SMALL, file_sd=0.003), 1000),
    ("a state each file's workers share, 0.6 % SD (small)", replace(SMALL, file_sd=0.006), 1000),
    ("large: a state each file's workers share, 0.1 % SD", replace(LARGE, file_sd=0.001), 1000),
]


def design(m: Model, files: int) -> Model:
    """The model measured as `files` --processes files a side, each of `WORKERS` workers of `ROUNDS` rounds."""
    return replace(m, runs=files * WORKERS * m.runs, rounds=ROUNDS, head_rounds=ROUNDS, workers=True,
                   files=files * m.runs)


DESIGNS = (FILES, 1)


def null_table() -> None:
    print(f"| model | suites | P(no-change suite fails): {FILES} files a side (p{WORKERS}r{ROUNDS}x{FILES}) "
          f"| one file a side (p{WORKERS}r{ROUNDS}) |")
    print("|---|---|---|---|")
    for seed, (label, m, n) in enumerate(NULL_MODELS + FILE_STATE_MODELS):
        cells = []
        for files in DESIGNS:
            p, se, _ = rate(design(m, files), n, 500 + seed)
            cells.append(f"{p * 100:.1f} ± {se * 100:.1f} %")
        print(f"| {label} | {n} | {' | '.join(cells)} |", flush=True)


def shared_table() -> None:
    print(f"\n| shared change | suites | P(suite fails CI), changed rows flagged: {FILES} files a side "
          "| one file a side |")
    print("|---|---|---|---|")
    for seed, frac in enumerate((0.4, 0.6, 1.0)):
        for label, m in (("small", SMALL), ("large", LARGE)):
            cells = []
            for files in DESIGNS:
                model = design(m, files)
                change = np.zeros(model.kernels)
                change[: round(frac * model.kernels)] = math.log(1 / 0.97)  # -3 % throughput: time up
                p, se, v = rate(model, 200, 600 + seed, change)
                hit = np.mean([x is Verdict.REGRESSION for vs in v for x in vs[: round(frac * model.kernels)]])
                cells.append(f"{p * 100:.1f} ± {se * 100:.1f} %, {hit * 100:.0f} %")
            print(f"| {label}: -3 % on {frac * 100:.0f} % of 10 kernels | 200 | {' | '.join(cells)} |", flush=True)


def power_table(models: tuple[tuple[str, Model], tuple[str, Model]], seed0: int) -> None:
    print(f"\n| one kernel changed among 10 (200 suites) | {models[0][0]}: {FILES} files / one file "
          f"| {models[1][0]}: {FILES} files / one file |")
    print("|---|---|---|")
    for seed, size in enumerate((0.01, 0.02, 0.05)):
        cells = []
        for _, m in models:
            found = []
            for files in DESIGNS:
                model = design(m, files)
                change = np.zeros(model.kernels)
                change[0] = math.log1p(size)
                _, _, v = rate(model, 200, seed0 + seed, change)
                found.append(f"{np.mean([vs[0] is Verdict.REGRESSION for vs in v]) * 100:.0f} %")
            cells.append(" / ".join(found))
        print(f"| {size * 100:g} % | {cells[0]} | {cells[1]} |", flush=True)


def main() -> None:
    start = time.perf_counter()
    print(f"# Simulated suites under p{WORKERS}r{ROUNDS}x{FILES} (tests/benchmarks/verdicts/simulate_p8r2x2.py)\n")
    print(f"A side: {FILES} files of --processes {WORKERS} --rounds {ROUNDS} (both rounds measured), or one such "
          "file; the same model and seed in both columns.\n")
    null_table()
    shared_table()
    power_table((("small", SMALL), ("large", LARGE)), 700)
    print("\nUnder a state each file's workers share (beyond the brief of the tables above):")
    power_table((("small, file state 0.3 %", replace(SMALL, file_sd=0.003)),
                 ("large, file state 0.1 %", replace(LARGE, file_sd=0.001))), 800)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
