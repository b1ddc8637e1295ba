"""Simulated suites for `primbench compare`: how often a no-change suite fails CI, and the power
for planted slowdowns, under run-to-run noise models that are not the method's own.

    python tests/benchmarks/rounds/simulate.py > tests/benchmarks/rounds/simulate.txt

Every simulated process ("side") measures each specialization in R rounds. The log throughput of
specialization i in round r of side s is

    ln y = planted_i [s = head] + L_i C_s + P_si + R_sri + M_sri

* C_s: a shift shared by every specialization of a process, with loadings L_i;
* P_si: a per-specialization shift of the whole process that its rounds do NOT see
  (variance (1 - f) sd_i^2; f is the share of the process-level variance the rounds capture);
* R_sri: a per-specialization shift of each round (variance f sd_i^2): the harness renews its
  stream, events and cache buffer every round, so rounds see what separate processes would;
* M_sri: the measurement error of a round's mean, batch CV / sqrt(batches per round).

Shifts are normal or Student t (3 df, scaled to the stated SD). The method of this branch reads
4.3.0 files with rounds; the method of main at 92ce889 (z-test, fixed 0.1 % run-to-run prior plus
within-run SE) reads 4.2.0 files without rounds whose value is the mean of the side's rounds and
whose noise_percent is the batch CV; it runs from a git worktree of 92ce889 in a subprocess
(`git worktree add --detach /tmp/old92 92ce889`; `--old-tree` to point elsewhere).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

#: Planted slowdowns (fractions of throughput) and how many specializations carry each.
CHANGES = (0.01, 0.02, 0.05)
PLANTED = 3
#: From this size on, one planted suite carries all three changes (3 specializations each);
#: smaller suites get one suite per change (9 of 10 planted would move the suite's median).
TOGETHER_FROM = 100
#: Within-round measurement: batch CV and batches per round (3 rounds of 16 = the 48 batches
#: the 4.2.0 file of the old method reports).
BATCH_CV = 0.001
BATCHES_PER_ROUND = 16
TB = 1.0e12


@dataclass(frozen=True)
class Model:
    """A run-to-run noise model. `spec_sd`: SD of each specialization's own process-level
    shift (a pair (low, high) draws it log-uniformly per specialization); `rounds_see`: the
    share of that variance the rounds capture; `common_sd`: SD of the shift shared by the
    process; `loadings`: (share, loading) pairs drawn per specialization (default all 1)."""

    key: str
    label: str
    spec_sd: float | tuple[float, float]
    rounds_see: float = 1.0
    common_sd: float = 0.0
    loadings: tuple[tuple[float, float], ...] = ((1.0, 1.0),)
    tails: str = "normal"  # or "t3"


MODELS: tuple[Model, ...] = (
    Model("common", "common 1 % per process + 0.2 % per spec, rounds see the spec part", 0.002, common_sd=0.01),
    Model("indep", "independent 0.3 % per spec, rounds see all of it", 0.003),
    Model("indep70", "independent 0.3 % per spec, rounds see 70 % of the variance", 0.003, rounds_see=0.7),
    Model("t3-0.1", "heavy-tailed t(3), SD 0.1 % per spec, rounds see all", 0.001, tails="t3"),
    Model("t3-1", "heavy-tailed t(3), SD 1 % per spec, rounds see all", 0.01, tails="t3"),
    Model("mixed", "mixed: spec SD log-uniform 0.05-2 %, common 0.5 % per process, loading 1 (70 %) or 2 (30 %)",
          (0.0005, 0.02), common_sd=0.005, loadings=((0.7, 1.0), (0.3, 2.0))),
    # what in `mixed` costs the 5 %: the spread of noise levels, or the unequal loadings?
    Model("mix-s", "mixed without the common factor (spread of noise levels only)", (0.0005, 0.02)),
    Model("mix-1", "mixed with every loading 1 (the common factor is a pure suite shift)", (0.0005, 0.02),
          common_sd=0.005),
)


@dataclass(frozen=True)
class Cell:
    """One row of the table: a model, a suite size, rounds per side, and repetitions."""

    model: str
    size: int
    rounds: int
    null_reps: int
    power_reps: int


# --------------------------------------------------------------------------- data


def _draw(rng: np.random.Generator, sd: np.ndarray | float, shape: tuple[int, ...], tails: str) -> np.ndarray:
    """Shifts of the given SD: normal, or Student t with 3 df scaled to that SD."""
    if tails == "t3":
        return rng.standard_t(3, shape) / math.sqrt(3.0) * sd
    return rng.normal(0.0, 1.0, shape) * sd


def simulate_suite(model: Model, size: int, rounds: int, changes: Sequence[float],
                   seed: Sequence[int]) -> np.ndarray:
    """ln throughput, shape (2 sides, rounds, size); side 1 (head) slower by changes[k] in
    specializations k * PLANTED to (k + 1) * PLANTED - 1."""
    rng = np.random.default_rng(list(seed))
    if isinstance(model.spec_sd, tuple):
        lo, hi = model.spec_sd
        sd = np.exp(rng.uniform(math.log(lo), math.log(hi), size))
    else:
        sd = np.full(size, model.spec_sd)
    shares = np.array([s for s, _ in model.loadings])
    loading = np.array([v for _, v in model.loadings])[rng.choice(len(shares), size, p=shares / shares.sum())]
    common = _draw(rng, model.common_sd, (2, 1, 1), model.tails) * loading
    process = _draw(rng, sd * math.sqrt(1.0 - model.rounds_see), (2, 1, size), model.tails)
    per_round = _draw(rng, sd * math.sqrt(model.rounds_see), (2, rounds, size), model.tails)
    measured = rng.normal(0.0, BATCH_CV / math.sqrt(BATCHES_PER_ROUND), (2, rounds, size))
    y = math.log(TB) + common + process + per_round + measured
    for k, change in enumerate(changes):
        y[1, :, k * PLANTED:(k + 1) * PLANTED] += math.log1p(-change)
    return y


# --------------------------------------------------------------------------- results files


def _compare_data() -> ModuleType:
    """This branch's tests/compare_data.py, by path (the old tree has a `tests` package of its own)."""
    spec = importlib.util.spec_from_file_location("sim_compare_data", ROOT / "tests" / "compare_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def side_document(data: ModuleType, logs: np.ndarray, *, with_rounds: bool) -> dict[str, Any]:
    """One side (rounds x specializations of ln throughput) as a results document: 4.3.0 with
    rounds, or 4.2.0 whose value is the mean of the rounds and whose noise is the batch CV."""
    rounds, size = logs.shape
    template = data.spec("k", TB, round_cv=None, noise_percent=BATCH_CV * 100, batch_count=rounds * BATCHES_PER_ROUND)
    doc = data.document([template], version="4.3.0" if with_rounds else "4.2.0")
    values = np.exp(logs).tolist()
    means = np.exp(logs.mean(axis=0)).tolist()
    specs = []
    for i in range(size):
        s = {**template, "index": i, "name": f"k: {i:04d}", "bytes_per_second": means[i],
             "items_per_second": means[i] / 2}
        if with_rounds:
            s["rounds"] = [
                {"round": r, "gpu_ms_per_call": 1.0, "bytes_per_second": values[r][i],
                 "items_per_second": values[r][i] / 2, "noise_timeout": False,
                 "noise_percent": BATCH_CV * 100, "batches": BATCHES_PER_ROUND}
                for r in range(rounds)
            ]
        specs.append(s)
    doc["specializations"] = specs
    doc["context"]["general"]["specialization_count"] = size
    return doc


# --------------------------------------------------------------------------- one method on one cell


@dataclass
class Outcome:
    """What one method did on one cell: failed null suites, and planted specializations
    flagged as regressions per change (with how many were planted)."""

    null_failed: int
    null_suites: int
    found: dict[str, int]
    planted: dict[str, int]
    mdc: float | None  # median smallest detectable change of the null suites (new method only)
    cpu_seconds: float


def _suites(cell: Cell) -> Iterator[tuple[tuple[float, ...], tuple[int, ...]]]:
    """(planted changes, seed) of every suite of a cell: the null suites, then the planted ones.
    Seeds depend on the cell only, so both methods see the same suites."""
    tag = (sum(map(ord, cell.model)), cell.size, cell.rounds)
    for rep in range(cell.null_reps):
        yield (), (*tag, 0, rep)
    groups = [CHANGES] if cell.size >= TOGETHER_FROM else [(c,) for c in CHANGES]
    for g, changes in enumerate(groups):
        for rep in range(cell.power_reps):
            yield changes, (*tag, 1 + g, rep)


def run_cell(cell: Cell, *, with_rounds: bool) -> Outcome:
    """Run compare (whichever `compare` is importable) on the cell's null and planted suites."""
    from primbench.results import results_from_dict

    try:  # this checkout
        core = importlib.import_module("primbench.compare.core")
        model = importlib.import_module("primbench.compare.model")
    except ImportError:  # 92ce889, where compare was a top-level package
        core = importlib.import_module("compare.core")
        model = importlib.import_module("compare.model")
    compare_runs, Verdict = core.compare_runs, model.Verdict

    data = _compare_data()
    model = next(m for m in MODELS if m.key == cell.model)
    start = time.process_time()
    failed, mdcs = 0, []
    found = {f"{c:g}": 0 for c in CHANGES}
    planted = {f"{c:g}": 0 for c in CHANGES}
    for changes, seed in _suites(cell):
        y = simulate_suite(model, cell.size, cell.rounds, changes, seed)
        base, head = (results_from_dict(side_document(data, y[s], with_rounds=with_rounds), name)
                      for s, name in ((0, "base.json"), (1, "head.json")))
        c = compare_runs([base], [head])
        if not changes:
            failed += bool(c.failed())
            mdcs += [r.min_detectable_change for r in c.rows if getattr(r, "min_detectable_change", None)]
        for k, change in enumerate(changes):
            rows = c.rows[k * PLANTED:(k + 1) * PLANTED]
            found[f"{change:g}"] += sum(r.verdict is Verdict.REGRESSION for r in rows)
            planted[f"{change:g}"] += len(rows)
    return Outcome(failed, cell.null_reps, found, planted, float(np.median(mdcs)) if mdcs else None,
                   time.process_time() - start)


def worker_main() -> None:
    """Worker mode: cells (JSON) on stdin, outcomes (JSON) on stdout, with whichever `compare`
    PYTHONPATH names; `--worker old` writes files without rounds."""
    todo = [Cell(**c) for c in json.loads(sys.stdin.read())]
    with_rounds = sys.argv[sys.argv.index("--worker") + 1] == "new"
    print(json.dumps([asdict(run_cell(c, with_rounds=with_rounds)) for c in todo]))


def run_worker(method: str, cell: Cell, tree: Path) -> Outcome:
    """One cell with one method, in a subprocess that imports `compare` from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", method],
                          input=json.dumps([asdict(cell)]), capture_output=True, text=True, cwd=tree, env=env,
                          check=True)
    return Outcome(**json.loads(proc.stdout)[0])


# --------------------------------------------------------------------------- report


def _rate(k: int, n: int) -> str:
    """A share in percent with its 95 % Wilson interval (honest at 0 and 100 %)."""
    if n == 0:
        return "-"
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:5.1f} [{100 * max(0.0, centre - half):4.1f}-{100 * min(1.0, centre + half):5.1f}]"


def _power(o: Outcome | None) -> str:
    if o is None:
        return "   -  /   -  /   - "
    return " / ".join(f"{100 * o.found[k] / o.planted[k]:4.0f}" if o.planted[k] else "   -" for k in o.found)


def report(cells: Sequence[Cell], new: Sequence[Outcome], old: dict[int, Outcome], out: Callable[[str], None]) -> None:
    out("model   | specs | rounds | suites (null/planted) | P(no-change suite fails CI) % [95 % CI]: new | 92ce889 "
        "| power % at 1/2/5 %: new | 92ce889 | median MDC new")
    for i, (cell, n) in enumerate(zip(cells, new, strict=True)):
        o = old.get(i)
        mdc = f"{100 * n.mdc:.2f} %" if n.mdc is not None else "-"
        out(f"{cell.model:<7} | {cell.size:>5} | {cell.rounds:>6} | {cell.null_reps:>4} / {cell.power_reps:<4}"
            f"           | {_rate(n.null_failed, n.null_suites):>18} | "
            f"{_rate(o.null_failed, o.null_suites) if o else 'not run':>18} | {_power(n)} | {_power(o)} | {mdc}")


def cells(scale: float) -> list[Cell]:
    """The table: every model at 10, 100 and 1,000 specializations with 3 rounds; mixed also
    with 5 rounds (half the suites at 100); common also at 3 specializations (fewer than the 5
    a suite shift needs); two parts of mixed (no-change suites only). Repetitions: 400
    no-change suites (±2 % on a 5 % rate) below 1,000 specializations, 40 at 1,000."""
    def reps(size: int) -> tuple[int, int]:
        null, power = {3: (400, 150), 10: (400, 150), 100: (400, 100), 1000: (40, 20)}[size]
        return max(2, round(null * scale)), max(2, round(power * scale))

    out = [Cell("common", 3, 3, *reps(3))]
    for m in MODELS:
        if not m.key.startswith("mix-"):
            out += [Cell(m.key, size, 3, *reps(size)) for size in (10, 100, 1000)]
    out += [Cell("mixed", 10, 5, *reps(10)), Cell("mixed", 100, 5, *(max(2, round(r / 2)) for r in reps(100)))]
    out += [Cell(key, size, 3, reps(size)[0] // (1 if size == 10 else 2), 0)
            for key in ("mix-s", "mix-1") for size in (10, 100)]
    return out


def main() -> None:
    if "--worker" in sys.argv:
        worker_main()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every repetition count (quick runs)")
    parser.add_argument("--old-tree", type=Path, default=Path("/tmp/old92"), help="worktree of 92ce889")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes at once")
    args = parser.parse_args()

    table = cells(args.scale)
    tasks = [("new", i, ROOT) for i in range(len(table))]
    if args.old_tree.exists():
        tasks += [("old", i, args.old_tree.resolve()) for i in range(len(table))]
    tasks.sort(key=lambda t: -table[t[1]].size * (table[t[1]].null_reps + table[t[1]].power_reps))
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {(m, i): pool.submit(run_worker, m, table[i], tree) for m, i, tree in tasks}
        done = {k: f.result() for k, f in futures.items()}
    elapsed = time.perf_counter() - start
    new = [done["new", i] for i in range(len(table))]
    old = {i: done["old", i] for i in range(len(table)) if ("old", i) in done}

    out = print
    out("primbench compare: simulated suites (tests/benchmarks/rounds/simulate.py)")
    out("ln y[side, round, spec] = planted (head only) + loading x common[side] + process[side, spec]")
    out("                          + round[side, round, spec] + measurement[side, round, spec]")
    out(f"measurement: batch CV {BATCH_CV * 100:g} % over {BATCHES_PER_ROUND} batches per round; planted slowdowns "
        f"{', '.join(f'{c * 100:g} %' for c in CHANGES)}, {PLANTED} specializations each: one change per suite "
        f"below {TOGETHER_FROM} specializations, all three in one suite from {TOGETHER_FROM} on")
    out("defaults of compare: threshold 0.5 %, alpha 0.05, suite-shift limit 5 %; fail = Comparison.failed() "
        "(a regression, or a suite shift beyond the limit)")
    out("92ce889: 4.2.0 files, value = geometric mean of the rounds, noise_percent = batch CV, "
        f"{BATCHES_PER_ROUND} batches per round")
    out("models (SDs are of ln throughput, per process unless said):")
    for m in MODELS:
        out(f"  {m.key:<7} {m.label}")
    out("P(fail): share of no-change suites on which compare would exit 1, with its 95 % Wilson interval; "
        "power: share of planted specializations flagged as regressions; MDC: median smallest detectable change")
    out("")
    report(table, new, old, out)
    out("")
    cpu_new = sum(o.cpu_seconds for o in new)
    cpu_old = sum(o.cpu_seconds for o in old.values())
    out(f"runtime: {elapsed:.0f} s wall, {args.jobs} worker processes on {os.cpu_count()} CPUs, load average "
        f"{load:.1f} at start (a shared machine); CPU time of the simulations and comparisons: new method "
        f"{cpu_new:.0f} s, 92ce889 {cpu_old:.0f} s")


if __name__ == "__main__":
    main()
