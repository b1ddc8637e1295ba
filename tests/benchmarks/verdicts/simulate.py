"""Simulated suites for `primbench compare` under the audit's models, none of them the method's
own: how often a no-change suite fails CI, and the power for planted changes.

    python tests/benchmarks/verdicts/simulate.py > tests/benchmarks/verdicts/simulate.txt

A simulated process measures each kernel in R = 10 rounds (the first a warm-up, its own offset);
ln(time) of kernel k, round r, process s is

    base_k + change_k [s = head] + C_s + P_sk + E_skr (+ W_sk at r = 0)

* C_s, shared by every kernel of a process: Student t (3 df) scaled to its SD;
* P_sk, a process's shift of one kernel that its rounds do not see;
* E_skr, the round's own (normal), SD drawn per kernel around its class's level (lognormal 30 %);
* W_sk, the warm-up round's offset (N(-1 %, 1 %)).

Levels ("small": a 1 MiB-like kernel; "large": 64 MiB-like) differ from compare's priors on
purpose: small rounds 1 %, shared 0.5 %, process part 0.15 %; large rounds 0.1 %, shared 0.03 %,
process part 0.03 %. Models (each from "small" unless named): a common shift twice as large; a
-3 % change shared by 40, 60 and 100 % of kernels; one kernel 10x noisier among 10, 100, 1,000;
two process states 1 % apart (each kernel, each process, 50/50); AR(1) rounds (rho 0.5); a head
with 4 rounds and 3x the noise; outlier rounds (5 % of rounds +5 %); a round-order pattern every
kernel of a process shares; a large kernel's process part 10x; power for one kernel changed by 1,
2, 5 %.

`Model.files` and `Model.file_sd` (a side's runs in several files, a state of each kernel every run of a file
shares) are for `simulate_p8r2x2.py`; at their defaults (one file, no state) nothing above changes.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from primbench.compare.core import compare_runs  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402
from primbench.results import results_from_dict  # noqa: E402
from tests.compare_data import document, spec  # noqa: E402

MIB = 1 << 20


@dataclass(frozen=True)
class Model:
    rounds_sd: float = 0.01
    shared_sd: float = 0.005
    process_sd: float = 0.0015
    size: int = MIB
    kernels: int = 10
    head_rounds: int = 10
    head_noise: float = 1.0
    states: float = 0.0  # two process states this far apart
    ar: float = 0.0
    outliers: float = 0.0
    noisy: int = 0  # how many kernels are 10x noisier
    runs: int = 1  # runs a side
    rounds: int = 10  # rounds of a base process (a head's: head_rounds)
    workers: bool = False  # a side's runs are the worker processes of one --processes file
    order: float = 0.0  # SD of a round-order pattern every kernel of a process shares (`ORDER_SHAPE`)
    files: int = 1  # the side's runs split evenly into this many files (sources base1.json, ...; 1: base.json)
    file_sd: float = 0.0  # SD of a state of each kernel every run of one file shares (normal, drawn per file)


#: The round-order pattern's shape over the rounds (unit SD), the same in every process, its sign
#: drawn per process: what `../variance/round_order.py` measured on the H200.
_SHAPE = np.random.default_rng(2024).standard_normal(10)
ORDER_SHAPE = (_SHAPE - _SHAPE.mean()) / _SHAPE.std()

SMALL = Model()
LARGE = Model(rounds_sd=0.001, shared_sd=0.0003, process_sd=0.0003, size=64 * MIB)


def t3(rng: np.random.Generator, sd: float, size: Any = None) -> Any:
    return rng.standard_t(3, size) * sd / math.sqrt(3.0)


def side(rng: np.random.Generator, m: Model, base: np.ndarray, sd: np.ndarray, change: np.ndarray,
         head: bool, process: int = 0, file: int | None = None, state: np.ndarray | None = None) -> list[Any]:
    k = m.kernels
    rounds = m.head_rounds if head else m.rounds
    noise = m.head_noise if head else 1.0
    c = t3(rng, m.shared_sd)
    p = rng.normal(0, m.process_sd, k) + (rng.random(k) < 0.5) * m.states
    e = rng.normal(0, 1, (k, rounds))
    if m.ar:
        for r in range(1, rounds):
            e[:, r] = m.ar * e[:, r - 1] + math.sqrt(1 - m.ar**2) * e[:, r]
    e *= (sd * noise)[:, None]
    e += (rng.random((k, rounds)) < m.outliers) * 0.05
    e[:, 0] += rng.normal(-0.01, 0.01, k)
    if m.order:  # drawn only for this model: the other models' draws stay as they were
        e += rng.choice([-1.0, 1.0]) * m.order * ORDER_SHAPE[:rounds]
    logt = base[:, None] + (change[:, None] if head else 0) + c + p[:, None] + e
    if state is not None:
        logt += state[:, None]
    specs = []
    for i in range(k):
        ms = np.exp(logt[i])
        rec = spec(f"k: {i:04d}", 1e9 / float(ms.mean()), round_cv=None, time_ms=float(ms.mean()))
        rec["rounds"] = [{"round": r, "gpu_ms_per_call": float(v), "bytes_per_second": 1e9 / float(v),
                          "items_per_second": 5e8 / float(v), "noise_timeout": False, "noise_percent": 0.1,
                          **({"process": process} if m.workers else {})}
                         for r, v in enumerate(ms)]
        specs.append(rec)
    doc = document(specs, version="4.4.0", settings={"size": m.size})
    name = "head" if head else "base"
    return [results_from_dict(doc, f"{name}.json" if file is None else f"{name}{file + 1}.json")]


def runs(rng: np.random.Generator, m: Model, base: np.ndarray, sd: np.ndarray, change: np.ndarray,
         head: bool) -> list[Any]:
    """A side's `m.runs` runs, split evenly into `m.files` files, each file's runs sharing its state
    (`m.file_sd`; drawn, and files named, only where the model has them: the other models' draws stay as
    they were)."""
    per_file = m.runs // m.files if m.files > 1 else m.runs
    out: list[Any] = []
    state: np.ndarray | None = None
    for j in range(m.runs):
        if m.file_sd and j % per_file == 0:
            state = rng.normal(0, m.file_sd, m.kernels)
        out += side(rng, m, base, sd, change, head, j, j // per_file if m.files > 1 else None, state)
    return out


def trial(rng: np.random.Generator, m: Model, change: np.ndarray) -> tuple[bool, list[Verdict]]:
    k = m.kernels
    base = np.log(rng.uniform(0.005, 0.5, k))
    sd = m.rounds_sd * np.exp(rng.normal(0, 0.3, k))
    if m.noisy:
        sd[: m.noisy] *= 10
    b = runs(rng, m, base, sd, np.zeros(k), False)
    h = runs(rng, m, base, sd, change, True)
    c = compare_runs(b, h)
    by = {r.name: r.verdict for r in c.rows}
    return c.failed(), [by[f"k: {i:04d}"] for i in range(k)]


def rate(m: Model, n: int, seed: int, change: np.ndarray | None = None) -> tuple[float, float, list[list[Verdict]]]:
    rng = np.random.default_rng(seed)
    fails, verdicts = 0, []
    for _ in range(n):
        f, v = trial(rng, m, np.zeros(m.kernels) if change is None else change)
        fails += f
        verdicts.append(v)
    p = fails / n
    return p, math.sqrt(p * (1 - p) / n), verdicts


def main() -> None:
    start = time.perf_counter()
    print("# Simulated suites (tests/benchmarks/verdicts/simulate.py)\n")
    print("| model | suites | P(no-change suite fails) |")
    print("|---|---|---|")
    null_models = [
        ("small, 10 kernels", SMALL, 400), ("small, 100 kernels", replace(SMALL, kernels=100), 100),
        ("large, 10 kernels", LARGE, 400),
        ("common shift twice as large (1 %)", replace(SMALL, shared_sd=0.01), 400),
        ("one noisy kernel among 10", replace(SMALL, noisy=1), 400),
        ("one noisy kernel among 100", replace(SMALL, kernels=100, noisy=1), 100),
        ("one noisy kernel among 1,000", replace(SMALL, kernels=1000, noisy=1), 20),
        ("two process states 1 % apart", replace(SMALL, states=0.01), 400),
        ("two process states 1 % apart, 3 runs a side", replace(SMALL, states=0.01, runs=3), 200),
        ("AR(1) rounds, rho 0.5", replace(SMALL, ar=0.5), 400),
        ("head: 4 rounds, 3x the noise", replace(SMALL, head_rounds=4, head_noise=3.0), 400),
        ("outlier rounds (5 % of rounds +5 %)", replace(SMALL, outliers=0.05), 400),
        ("large: two process states 0.3 % apart", replace(LARGE, states=0.003), 400),
        ("round-order pattern every kernel shares (1 % SD, one shape, its sign per process)",
         replace(SMALL, order=0.01), 400),
        ("large: a process part 10x as large (0.3 %)", replace(LARGE, process_sd=0.003), 400),
    ]
    for seed, (label, m, n) in enumerate(null_models):
        p, se, _ = rate(m, n, 100 + seed)
        print(f"| {label} | {n} | {p * 100:.1f} ± {se * 100:.1f} % |")
    print("\n| shared change | suites | P(suite fails CI) | changed rows flagged |")
    print("|---|---|---|---|")
    for seed, frac in enumerate((0.4, 0.6, 1.0)):
        for label, m in (("small", SMALL), ("large", LARGE), ("small, 3 runs a side", replace(SMALL, runs=3))):
            change = np.zeros(m.kernels)
            change[: round(frac * m.kernels)] = math.log(1 / 0.97)  # -3 % throughput: time up
            p, se, v = rate(m, 200, 200 + seed, change)
            hit = np.mean([x is Verdict.REGRESSION for vs in v for x in vs[: round(frac * m.kernels)]])
            print(f"| {label}: -3 % on {frac * 100:.0f} % of 10 kernels | 200 | {p * 100:.1f} ± {se * 100:.1f} % | "
                  f"{hit * 100:.0f} % |")
    print("\n| one kernel changed among 10 | small: found | large: found |")
    print("|---|---|---|")
    for seed, size in enumerate((0.01, 0.02, 0.05)):
        cells = []
        for m in (SMALL, LARGE):
            change = np.zeros(m.kernels)
            change[0] = math.log1p(size)
            _, _, v = rate(m, 200, 300 + seed, change)
            cells.append(f"{np.mean([vs[0] is Verdict.REGRESSION for vs in v]) * 100:.0f} %")
        print(f"| {size * 100:g} % | {cells[0]} | {cells[1]} |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
