"""primbench's change points beside Apache Otava and ruptures' PELT, on the same generated series.

Run: ``python tests/benchmarks/changepoints/compare_detectors.py`` (writes
``changepoints.txt`` beside it; a few minutes on the 2-core development machine). Needs
``pip install apache-otava ruptures`` (neither is a dependency of primbench).

Series (`generate.py`, not primbench's own model: relative additive noise, heavy tails, AR(1),
drifts, bursts of bad runs): for each case, noise and n = 30 / 100 / 1,000, `SERIES` series.
Two sets: **tune** (seed 1, Gaussian innovations), the set primbench's constants were chosen
on, and **eval** (seed 2, Student-t(5) innovations, plus an AR(1) 0.3 set), the one reported
against the targets. Every tool sees the same values.

Tools:
* primbench: `history.changepoints.analyse` with its defaults (steps and drifts are change
  points; bursts are not).
* Otava 0.8.0 (`otava.analysis.compute_change_points`, the algorithm `otava analyze` runs):
  its defaults (window 50, p 0.001, no minimum magnitude) and with a 1 % minimum magnitude.
* PELT: ruptures 1.1.10, squared-error cost on ln(value), min_size 3, the BIC penalty
  ``2 sigma^2 ln n`` with sigma from the MAD of successive differences; run through
  `KernelCPD(kernel="linear")`, ruptures' compiled PELT for that cost (its pure-Python `Pelt`
  gives the same change points and is timed once below: it is about 2,000 times slower).

Scoring: a true step is found when a change point lies within `TOL` commits of it (each found
point counts for one true step at most); a drift is found when a change point lies within its
span (± `TOL`), and further points inside the span are not counted as false; symmetrically, a
drift found over true steps (a staircase reported as a ramp) finds every true step in its span. Recall: true
changes found / true changes. Precision: found points that match / found points (100 % where
nothing was found). Time: wall time per series of the tool's call, mean, in this process.

The second fresh evaluation (``CP_FRESH=2``, issue 24's third pass) runs primbench as
`history.changepoints.analyse_many` (`Pooled`): the 100 series of each row together, their
noise pooled (`NoisePrior`), its time the whole call's over its series; beside it main at
aa0c92a's `analyse`, each series alone (this checkout's `analyse` gave the same results then).
The third (``CP_FRESH=3``, the fourth pass) runs both this checkout and main at abbe481 as
`analyse_many` (`Pooled`), on new seeds 9301 (t5) and 9302 (AR(1) 0.3). The fourth
(``CP_FRESH=4``, the fifth pass) does so beside main at 07dc46a, on new seeds 9401 (t5) and 9402
(AR(1) 0.3). The fifth (``CP_FRESH=5``, the sixth pass) beside main at 8bca0be, on new seeds 9501
(t5) and 9502 (AR(1) 0.3). The sixth (``CP_FRESH=6``, the seventh pass) beside main at 98cdbcf,
on new seeds 9601 (t5) and 9602 (AR(1) 0.3). The seventh (``CP_FRESH=7``, the eighth pass)
beside main at 2db5c8a, on new seeds 9701 (t5) and 9702 (AR(1) 0.3).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from generate import Noise, Series, series  # noqa: E402

from primbench.history.changepoints import analyse, analyse_many, clear_cache  # noqa: E402

SERIES = int(os.environ.get("CP_SERIES", "100"))
#: The fresh evaluation (issue 24's second pass, `CP_FRESH=1`): new seeds never used before for
#: the t5 and AR(1) eval sets, main at cd87fcb (before the second pass) beside this checkout
#: on the same series, written to ``changepoints-fresh.txt``; the eval sections and the speed only.
#: The second fresh evaluation (the third pass, `CP_FRESH=2`): seeds 9101 (t5) and 9102 (AR(1)
#: 0.3), primbench's `analyse_many` (each cell's 100 series together, their noise pooled) beside
#: main at aa0c92a (`analyse`, each series alone: the same as this checkout's `analyse`), written to
#: ``changepoints-fresh2.txt``.
#: The third fresh evaluation (the fourth pass, `CP_FRESH=3`): seeds 9301 (t5) and 9302 (AR(1)
#: 0.3), this checkout's `analyse_many` beside main at abbe481's `analyse_many` (both pooled, each
#: cell's 100 series together), written to ``changepoints-fresh3.txt``.
#: The fourth (the fifth pass, `CP_FRESH=4`): seeds 9401 (t5) and 9402 (AR(1) 0.3), as the third
#: beside main at 07dc46a's `analyse_many`, written to ``changepoints-fresh4.txt``.
#: The fifth (the sixth pass, `CP_FRESH=5`): seeds 9501 (t5) and 9502 (AR(1) 0.3), beside main at
#: 8bca0be's `analyse_many`, written to ``changepoints-fresh5.txt``.
#: The sixth (the seventh pass, `CP_FRESH=6`): seeds 9601 (t5) and 9602 (AR(1) 0.3), beside main at
#: 98cdbcf's `analyse_many`, written to ``changepoints-fresh6.txt``.
#: The seventh (the eighth pass, `CP_FRESH=7`): seeds 9701 (t5) and 9702 (AR(1) 0.3), beside main
#: at 2db5c8a's `analyse_many`, written to ``changepoints-fresh7.txt``.
FRESH7 = os.environ.get("CP_FRESH") == "7"
FRESH6 = os.environ.get("CP_FRESH") == "6" or FRESH7
FRESH5 = os.environ.get("CP_FRESH") == "5" or FRESH6
FRESH4 = os.environ.get("CP_FRESH") == "4" or FRESH5
FRESH3 = os.environ.get("CP_FRESH") == "3" or FRESH4
FRESH2 = os.environ.get("CP_FRESH") == "2" or FRESH3
FRESH = os.environ.get("CP_FRESH") == "1" or FRESH2
EVAL_SEEDS = ((9701, 9702) if FRESH7 else (9601, 9602) if FRESH6 else (9501, 9502) if FRESH5 else (9401, 9402) if FRESH4
              else (9301, 9302) if FRESH3 else (9101, 9102) if FRESH2
              else (9001, 9002) if FRESH else (2, 3))
BEFORE = "2db5c8a" if FRESH7 else "98cdbcf" if FRESH6 else "8bca0be" if FRESH5 else (
    "07dc46a" if FRESH4 else "abbe481" if FRESH3 else "aa0c92a" if FRESH2 else "cd87fcb")
BASELINE_1000 = int(os.environ.get("CP_BASELINE_1000", "10"))
TOL = 2
NS = (30, 100, 1000)


@dataclass(frozen=True)
class Config:
    kind: str
    noise: Noise
    size: float = 0.03

    def label(self) -> str:
        size = f" {self.size * 100:g} %" if self.kind not in ("flat", "burst2", "burst3") else ""
        return f"{self.kind}{size}, noise {self.noise.label()}"


def configs(tails: str) -> list[Config]:
    half, one, low = Noise(0.005, tails=tails), Noise(0.01, tails=tails), Noise(0.003, tails=tails)
    out = [Config("flat", half), Config("flat", one), Config("burst2", half), Config("burst3", half),
           Config("burst2", one), Config("step", Noise(0.002, tails=tails), 0.01), Config("step", one, 0.03)]
    for noise in (low, half, one):
        out += [Config("steps3", noise), Config("alternating3", noise)]
    out += [Config("fixed", half, 0.03), Config("fixed", one, 0.03), Config("fixed", one, 0.02),
            Config("drift", half, 0.01)]
    return out


def ar1_configs(phi: float = 0.3) -> list[Config]:
    noise = Noise(0.005, phi=phi)
    return [Config("flat", noise), Config("burst2", noise), Config("steps3", noise), Config("fixed", noise)]


# --------------------------------------------------------------------------- the tools


Found = tuple[list[int], list[tuple[int, int]]]  # step indices, drift spans


def primbench_tool(min_shift: float | None = None,
                   fn: Callable[..., Any] | None = None) -> Callable[[np.ndarray], Found]:
    """primbench's `analyse` (or `fn`, another version's) with its defaults. The cache that
    keeps a series' result within a command is emptied first: each call is an analysis."""
    def run(values: np.ndarray) -> Found:
        kw = {} if min_shift is None else {"min_shift": min_shift}
        clear_cache()
        c = (fn or analyse)(values, **kw)
        return [p.index for p in c.points], [(d.start, d.end) for d in c.drifts]
    return run


class Pooled:
    """primbench's `analyse_many`: the series of one cell (a case, a noise, an n) analysed
    together, their noise pooled, as `history regressions` would analyse one store's series;
    `module`: another version's (`versions.load`), else this checkout's."""

    def __init__(self, module: Any = None) -> None:
        self.module = module

    def __call__(self, values: np.ndarray) -> Found:
        return self.many([values])[0]

    def many(self, batch: list[np.ndarray]) -> list[Found]:
        (clear_cache if self.module is None else self.module.clear_cache)()
        many = analyse_many if self.module is None else self.module.analyse_many
        return [([p.index for p in c.points], [(d.start, d.end) for d in c.drifts]) for c in many(batch)]


def run_batch(tool: Callable[[np.ndarray], Found], batch: list[np.ndarray]) -> list[Found]:
    """`tool` on each series of `batch`, or on all of them together where it pools (`Pooled`)."""
    return tool.many(batch) if isinstance(tool, Pooled) else [tool(v) for v in batch]


def otava_tool(min_magnitude: float) -> Callable[[np.ndarray], Found]:
    from otava.analysis import compute_change_points

    def run(values: np.ndarray) -> Found:
        cps, _ = compute_change_points(list(values), window_len=50, max_pvalue=0.001, min_magnitude=min_magnitude)
        return [int(c.index) for c in cps], []
    return run


def _bic_penalty(y: np.ndarray) -> float:
    d = np.diff(y)
    sigma = 1.4826 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)
    return 2 * sigma**2 * math.log(len(y))


def pelt_tool() -> Callable[[np.ndarray], Found]:
    import ruptures as rpt

    def run(values: np.ndarray) -> Found:
        y = np.log(values)
        pen = _bic_penalty(y)
        if pen <= 0:
            return [], []
        bkps = rpt.KernelCPD(kernel="linear", min_size=3, jump=1).fit(y).predict(pen=pen)
        return [int(b) for b in bkps[:-1]], []
    return run


# --------------------------------------------------------------------------- scoring


@dataclass
class Score:
    truth: int = 0
    found_truth: int = 0
    points: int = 0
    matched_points: int = 0
    series_with_points: int = 0
    all_found: int = 0
    series: int = 0
    seconds: float = 0.0

    def recall(self) -> float:
        return self.found_truth / self.truth if self.truth else math.nan

    def precision(self) -> float:
        return self.matched_points / self.points if self.points else 1.0


def score(s: Series, found: Found, acc: Score) -> None:
    steps, drift_spans = found
    detections = [(i, i) for i in steps] + list(drift_spans)
    used = [False] * len(detections)
    acc.series += 1
    acc.series_with_points += bool(detections)
    hits = 0
    truth = list(s.truth)
    for k, (a, b) in enumerate(detections):  # a drift found over true steps reports each of them
        if a < b:
            inside = [t for t in truth if a - TOL <= t <= b + TOL]
            if inside:
                used[k] = True
                hits += len(inside)
                truth = [t for t in truth if t not in inside]
    for t in truth:
        best = None
        for k, (a, b) in enumerate(detections):
            dist = 0 if a <= t <= b else min(abs(t - a), abs(t - b))
            if not used[k] and dist <= TOL and (best is None or dist < best[0]):
                best = (dist, k)
        if best is not None:
            used[best[1]] = True
            hits += 1
    ignored = 0
    for start, end in s.drifts:
        inside = [k for k, (a, b) in enumerate(detections) if not used[k] and b >= start - TOL and a <= end + TOL]
        if inside:
            hits += 1
            used[inside[0]] = True
            ignored += len(inside) - 1  # a drift cut into a staircase: not false points
            for k in inside[1:]:
                used[k] = True
    events = len(s.truth) + len(s.drifts)
    acc.truth += events
    acc.found_truth += hits
    acc.all_found += hits == events
    acc.points += len(detections) - ignored
    acc.matched_points += sum(used) - ignored


def evaluate(tools: dict[str, Callable[[np.ndarray], Found]], cfgs: list[Config], seed: int,
             ns: tuple[int, ...] = NS, counts: dict[int, int] | None = None,
             index: dict[str, int] | None = None) -> dict[tuple[str, int, str], Score]:
    """Score every tool on the same series: `SERIES` per case and n (or `counts[n]`, the first
    of them); each case's series depend on (seed, its index in `cfgs` or `index[label]`, n)."""
    out: dict[tuple[str, int, str], Score] = {}
    for ci, cfg in enumerate(cfgs):
        ci = (index or {}).get(cfg.label(), ci)
        for n in ns:
            rng = np.random.default_rng([seed, ci, n])
            batch = [series(cfg.kind, n, cfg.noise, rng, size=cfg.size) for _ in range(SERIES)]
            batch = batch[:(counts or {}).get(n, SERIES)]
            for name, tool in tools.items():
                acc = out.setdefault((cfg.label(), n, name), Score())
                t = time.perf_counter()
                founds = run_batch(tool, [s.values for s in batch])
                acc.seconds += time.perf_counter() - t
                for s, found in zip(batch, founds, strict=True):
                    score(s, found, acc)
    return out


def table(results: dict[tuple[str, int, str], Score], tools: list[str]) -> list[str]:
    lines = []
    labels = list(dict.fromkeys(k[0] for k in results))
    head = f"{'case':<42} {'n':>5}  " + "  ".join(f"{t:>26}" for t in tools)
    lines.append(head)
    lines.append(f"{'':<42} {'':>5}  " + "  ".join(f"{'recall prec any/of   ms':>30}" for _ in tools))
    for label in labels:
        for n in NS:
            cells = []
            for t in tools:
                sc = results.get((label, n, t))
                if sc is None:
                    cells.append(f"{'':>30}")
                    continue
                rec = "   -  " if math.isnan(sc.recall()) else f"{sc.recall() * 100:5.1f}%"
                cells.append(f"{rec} {sc.precision() * 100:5.1f}% {sc.series_with_points:4d}/{sc.series:<4d}"
                             f"{sc.seconds / sc.series * 1e3:7.2f}")
            if any(c.strip() for c in cells):
                lines.append(f"{label:<42} {n:>5}  " + "  ".join(f"{c:>30}" for c in cells))
    return lines


def main() -> None:
    warnings.filterwarnings("ignore")
    tools = {"primbench": primbench_tool(), "otava": otava_tool(0.0), "otava 1%": otava_tool(0.01),
             "pelt": pelt_tool()}
    if FRESH:
        from versions import load

        before = load(BEFORE)
        if before is None:
            raise SystemExit(f"primbench at {BEFORE} could not be loaded (no git history here)")
        ours: dict[str, Callable[[np.ndarray], Found]] = (
            {"primbench pooled": Pooled()} if FRESH2 else {"primbench": tools["primbench"]})
        theirs: dict[str, Callable[[np.ndarray], Found]] = (
            {f"primbench {BEFORE} pooled": Pooled(before)} if FRESH3
            else {f"primbench {BEFORE}": primbench_tool(fn=before.analyse)})
        tools = {**ours, **theirs, **{k: v for k, v in tools.items() if k != "primbench"}}
    names = list(tools)
    lines = ["Change points: primbench beside Apache Otava 0.8.0 and ruptures 1.1.10 PELT on the same series "
             "(tests/benchmarks/changepoints/compare_detectors.py)",
             f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
             f"load average at start {os.getloadavg()[0]:.2f}; {SERIES} series per row; match tolerance ±{TOL} commits",
             "columns per tool: recall (true changes found), precision (found points that are true), "
             "any/of (series with at least one change point / series scored), ms (mean time per series)",
             ""]
    t0 = time.perf_counter()
    t5_seed, ar_seed = EVAL_SEEDS
    lines.append(f"== eval set: seed {t5_seed}, Student-t(5) innovations (NOT the set the constants were tuned on) ==")
    ev = evaluate(tools, configs("t5"), seed=t5_seed)
    lines += table(ev, names)
    lines.append("")
    lines.append(f"== eval set, AR(1) 0.3 noise (seed {ar_seed}, Gaussian innovations) ==")
    lines += table(evaluate(tools, ar1_configs(), seed=ar_seed), names)
    lines.append("")
    if FRESH:
        lines += speed_section(tools)
        lines.append(f"(whole run {time.perf_counter() - t0:.0f} s; load average at end {os.getloadavg()[0]:.2f})")
        record = ("changepoints-fresh7.txt" if FRESH7 else "changepoints-fresh6.txt" if FRESH6
                  else "changepoints-fresh5.txt" if FRESH5
                  else "changepoints-fresh4.txt" if FRESH4
                  else "changepoints-fresh3.txt" if FRESH3
                  else "changepoints-fresh2.txt" if FRESH2
                  else "changepoints-fresh.txt")
        (HERE / record).write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
        return
    lines.append("== tune set: seed 1, Gaussian innovations (the set primbench's constants were chosen on) ==")
    tune = evaluate(tools, configs("normal"), seed=1)
    lines += table(tune, names)
    lines.append("")
    for phi in (0.2, 0.5):
        lines.append(f"== tune set, AR(1) {phi:g} noise (seed 4, Gaussian innovations; the eval set has 0.3) ==")
        lines += table(evaluate(tools, ar1_configs(phi), seed=4), names)
        lines.append("")
    lines += min_shift_section()
    lines.append("")
    lines += baseline_section(names)
    lines.append("")
    lines += speed_section(tools)
    lines.append("")
    lines += pelt_python_timing()
    lines.append("")
    lines.append(f"(whole run {time.perf_counter() - t0:.0f} s; load average at end {os.getloadavg()[0]:.2f})")
    (HERE / "changepoints.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def min_shift_section() -> list[str]:
    """primbench's false points and recall of small steps by min_shift, on the tune set."""
    shifts = (0.0, 0.0025, 0.005, 0.01)
    tools = {f"min_shift {m * 100:g} %": primbench_tool(m) for m in shifts}
    cfgs = [Config("flat", Noise(0.005)), Config("flat", Noise(0.01)), Config("flat", Noise(0.002)),
            Config("step", Noise(0.002), 0.01), Config("step", Noise(0.002), 0.006), Config("step", Noise(0.005), 0.02)]
    res = evaluate(tools, cfgs, seed=11)
    lines = ["== primbench by min_shift (seed 11, Gaussian innovations): "
             "false points on flat series, recall of small steps =="]
    lines += table(res, list(tools))
    flat = {name: sum(sc.points for (label, _, t), sc in res.items() if t == name and label.startswith("flat"))
            for name in tools}
    total = sum(sc.series for (label, _, t), sc in res.items() if t == next(iter(tools)) and label.startswith("flat"))
    lines.append("false points on all flat series (" f"{total}): " +
                 ", ".join(f"{name}: {v}" for name, v in flat.items()))
    return lines


def baseline_section(names: list[str]) -> list[str]:
    """primbench as it was at c16539c (the issue's baseline) and at ec89fec (main before this
    branch) on the first rows of the eval set: the same series as the rows above (same seeds),
    fewer of them at n = 1,000 where c16539c takes over a second per series."""
    from versions import load

    tools: dict[str, Callable[[np.ndarray], Found]] = {}
    for rev in ("c16539c", "ec89fec"):
        module = load(rev)
        if module is None:
            return [f"== baseline: primbench at {rev} could not be loaded (no git history here) =="]
        tools[f"primbench {rev}"] = primbench_tool(fn=module.analyse)
    tools["primbench"] = primbench_tool()
    every = configs("t5")
    index = {c.label(): i for i, c in enumerate(every)}
    chosen = [c for c in every if (c.kind, c.noise.cv, c.size) in
              {("flat", 0.005, 0.03), ("burst2", 0.005, 0.03), ("alternating3", 0.005, 0.03),
               ("alternating3", 0.01, 0.03), ("fixed", 0.01, 0.03), ("fixed", 0.01, 0.02)}]
    res = evaluate(tools, chosen, seed=2, counts={30: 100, 100: 100, 1000: BASELINE_1000}, index=index)
    return ["== baseline: primbench at c16539c (the issue's) and ec89fec (main before this branch), eval set "
            f"(seed 2, t5), the same series as above; n = 1,000: the first {BASELINE_1000} of them ==",
            *table(res, list(tools))]


def speed_section(tools: dict[str, Callable[[np.ndarray], Found]]) -> list[str]:
    """Mean time per series by n, every tool on the same series: flat (the slowest for PELT's
    pruning) and with three steps and a fixed regression (0.5 % noise, t5), in this process."""
    rng = np.random.default_rng(99)
    lines = ["== speed: ms per series (mean), flat and with changes, 0.5 % noise t5 (seed 99) ==",
             f"{'n':>6} {'series':>6}  " + "  ".join(f"{t + ' flat':>16} {t + ' changes':>18}" for t in tools)]
    for n, count in ((30, 100), (100, 100), (1000, 30), (10_000, 5)):
        flat = [series("flat", n, Noise(0.005, tails="t5"), rng) for _ in range(count)]
        moved = []
        for _ in range(count):
            a = series("steps3", n, Noise(0.005, tails="t5"), rng)
            b = series("fixed", n, Noise(0.005), rng)
            moved.append(a.values * b.values / 1e12)
        cells = []
        for tool in tools.values():
            for batch in ([f.values for f in flat], moved):
                t = time.perf_counter()
                run_batch(tool, batch)
                cells.append((time.perf_counter() - t) / len(batch) * 1e3)
        lines.append(f"{n:>6} {count:>6}  " + "  ".join(f"{cells[2 * i]:16.2f} {cells[2 * i + 1]:18.2f}"
                                                        for i in range(len(tools))))
    return lines


def pelt_python_timing() -> list[str]:
    import ruptures as rpt

    rng = np.random.default_rng(5)
    out = ["== ruptures' pure-Python Pelt (model l2) against KernelCPD(linear), the same search =="]
    for n in (100, 1000):
        y = np.log(1e12 * (1 + 0.005 * rng.standard_normal(n)))
        y[n // 2:] += 0.03
        pen = _bic_penalty(y)
        t = time.perf_counter()
        a = rpt.Pelt(model="l2", min_size=3, jump=1).fit(y).predict(pen=pen)
        slow = time.perf_counter() - t
        times = []
        for _ in range(5):
            t = time.perf_counter()
            b = rpt.KernelCPD(kernel="linear", min_size=3, jump=1).fit(y).predict(pen=pen)
            times.append(time.perf_counter() - t)
        out.append(f"n={n}: Pelt {slow * 1e3:.1f} ms, KernelCPD {statistics.median(times) * 1e3:.2f} ms, "
                   f"same change points: {[int(v) for v in a] == [int(v) for v in b]}")
    return out


if __name__ == "__main__":
    main()
