"""Evaluation of `primbench compare`'s verdicts, beside NVBench's legacy rule and a Mann–Whitney U
test on batches, on real H200 data and on synthetic suites.

    python tests/benchmarks/compare_eval.py [DATA_DIR]     (default tests/benchmarks/data/h200)

writes compare_eval.txt beside this file.

Real data (when present in DATA_DIR, all written with --output-batches):
  aa-<k>.json          repeated runs of the unchanged copy example
  slow-<x>-<k>.json    planted slowdowns: copies x % more bytes than it reports (x = 0.5, 1, 2)
A/A pairs are all pairs of aa files; planted pairs are aa-k against slow-x-k.

Methods, each on the same pairs:
  ours            compare_runs with its defaults (threshold 0.5 %, alpha 0.05, run-to-run prior)
  ours + history  compare_runs given run_to_run_cv per specialization, estimated from the aa runs
                  that are not in the pair (what the history layer would pass); real data only
  NVBench legacy  |relative diff| <= min(noise of both runs) is "same", else slower / faster
  Mann–Whitney U  two-sided on per-call batch times, batches as iid samples, alpha 0.05

Targets (issue 5): no A/A pair flagged; every slowdown of 1 % or more flagged.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from compare import stats  # noqa: E402
from compare.core import compare_runs  # noqa: E402
from compare.model import Verdict  # noqa: E402
from primbench.results import Results, Specialization, load_results, results_from_dict  # noqa: E402
from tests.compare_data import document, run_from_batches  # noqa: E402

ALPHA = 0.05
METHODS = ("ours", "ours + history", "NVBench legacy", "Mann–Whitney U")


# --------------------------------------------------------------------------- per-pair verdicts, all methods


@dataclass
class Tally:
    """Per method: specialization comparisons flagged (any direction) and flagged slower."""

    specs: int = 0
    flagged: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    slower: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    pairs: int = 0
    pairs_flagged: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    pairs_all_slower: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    ours_verdicts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    changes: list[float] = field(default_factory=list)
    available: set[str] = field(default_factory=set)
    per_spec: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))


def _times(spec: Specialization) -> np.ndarray | None:
    if not spec.batches:
        return None
    return stats.per_call_times([b.batch_ms for b in spec.batches], [b.kernel_calls for b in spec.batches],
                                spec.kernel_calls_per_batch)


def judge_pair(base: Results, head: Results, tally: Tally,
               history_cv: Mapping[tuple[str, str], float] | None = None) -> None:
    """Add one (base, head) pair's verdicts, for every method, to `tally`."""
    ours = compare_runs([base], [head])
    methods: dict[str, dict[tuple[str, str], str]] = {"ours": {}}
    for r in ours.rows:
        if r.verdict in (Verdict.ADDED, Verdict.REMOVED):
            continue
        methods["ours"][r.key] = {"regression": "slower", "improvement": "faster"}.get(r.verdict.value, "same")
        tally.ours_verdicts[r.verdict.value] += 1
        if r.change is not None:
            tally.changes.append(r.change)
            tally.per_spec[r.name].append((r.change, r.verdict.value))
    if history_cv is not None:
        hist = compare_runs([base], [head], run_to_run_cv=history_cv)
        methods["ours + history"] = {
            r.key: {"regression": "slower", "improvement": "faster"}.get(r.verdict.value, "same")
            for r in hist.rows if r.verdict not in (Verdict.ADDED, Verdict.REMOVED)}
    legacy: dict[tuple[str, str], str] = {}
    mwu: dict[tuple[str, str], str] = {}
    head_specs = {(s.algorithm, s.name): s for s in head.specializations}
    for b in base.specializations:
        key = (b.algorithm, b.name)
        h = head_specs.get(key)
        if h is None or b.failed or h.failed or not b.bytes_per_second or not h.bytes_per_second:
            continue
        legacy[key] = stats.nvbench_legacy(b.bytes_per_second, h.bytes_per_second,
                                           (b.noise_percent or 0) / 100, (h.noise_percent or 0) / 100)
        tb, th = _times(b), _times(h)
        if tb is not None and th is not None and tb.size >= 2 and th.size >= 2:
            p, shift = stats.mann_whitney_batches(tb, th)
            mwu[key] = "same" if p >= ALPHA else ("slower" if shift > 0 else "faster")  # longer time = slower
    methods["NVBench legacy"] = legacy
    if mwu:
        methods["Mann–Whitney U"] = mwu
    tally.pairs += 1
    tally.specs += len(methods["ours"])
    for name, verdicts in methods.items():
        tally.available.add(name)
        flagged = [k for k, v in verdicts.items() if v != "same"]
        slower = [k for k, v in verdicts.items() if v == "slower"]
        tally.flagged[name] += len(flagged)
        tally.slower[name] += len(slower)
        tally.pairs_flagged[name] += bool(flagged)
        tally.pairs_all_slower[name] += bool(verdicts) and len(slower) == len(verdicts)


def _cell(t: Tally, name: str, planted: bool) -> str:
    if name not in t.available or t.specs == 0:
        return "n/a"
    if planted:
        return f"{t.slower[name]}/{t.specs} slower ({t.pairs_all_slower[name]}/{t.pairs} pairs all)"
    return f"{t.flagged[name]}/{t.specs} flagged ({t.pairs_flagged[name]}/{t.pairs} pairs)"


def table(rows: Sequence[tuple[str, Tally, bool]], methods: Sequence[str]) -> list[str]:
    head = ["pairs", "mean change", *methods]
    body = []
    for label, t, planted in rows:
        mean = f"{np.mean(t.changes) * 100:+.3f} %" if t.changes else "n/a"
        body.append([label, mean, *[_cell(t, m, planted) for m in methods]])
    return md_table(head, body)


def md_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *[line(r) for r in body]]


# --------------------------------------------------------------------------- real data


def _numbered(files: Sequence[Path], prefix: str) -> dict[int, Path]:
    out = {}
    for f in files:
        m = re.fullmatch(re.escape(prefix) + r"-(\d+)\.json", f.name)
        if m:
            out[int(m.group(1))] = f
    return dict(sorted(out.items()))


def real_data(data: Path) -> list[str]:
    lines = [f"## Real H200 data ({data.relative_to(ROOT) if data.is_relative_to(ROOT) else data})", ""]
    files = sorted(data.glob("*.json")) if data.is_dir() else []
    aa = _numbered(files, "aa")
    if len(aa) < 2:
        lines += [f"ABSENT: need at least two aa-<k>.json files in {data}, found {len(aa)}; "
                  "the real-data part was not run.", ""]
        return lines
    runs = {k: load_results(p) for k, p in aa.items()}
    lines.append(f"{len(aa)} A/A runs: {', '.join(p.name for p in aa.values())}")

    # what the data says about noise: within-run CV and run-to-run CV per specialization
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    within: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in runs.values():
        for s in r.specializations:
            if not s.failed and s.bytes_per_second:
                values[(s.algorithm, s.name)].append(s.bytes_per_second)
                times = _times(s)
                if times is not None and times.size >= 2:
                    within[(s.algorithm, s.name)].append(float(np.std(np.log(times), ddof=1)))
    lines += ["", "Noise per specialization over the A/A runs (CV of run throughputs; median batch-to-batch CV):"]
    for key, v in values.items():
        r2r = stats.run_to_run_cv_from_runs(v)
        w = f"{np.median(within[key]) * 100:.3f} %" if within.get(key) else "n/a"
        r2r_text = f"{r2r * 100:.3f} %" if r2r is not None else "n/a"
        lines.append(f"  {key[1]}: run-to-run {r2r_text}, within-run {w}, runs {len(v)}")

    def history_for(excluded: set[int]) -> dict[tuple[str, str], float] | None:
        others = [runs[k] for k in runs if k not in excluded]
        if len(others) < 3:
            return None
        v: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in others:
            for s in r.specializations:
                if not s.failed and s.bytes_per_second:
                    v[(s.algorithm, s.name)].append(s.bytes_per_second)
        return {k: cv for k, vals in v.items() if (cv := stats.run_to_run_cv_from_runs(vals)) is not None}

    rows: list[tuple[str, Tally, bool]] = []
    t = Tally()
    for i, j in itertools.combinations(runs, 2):
        judge_pair(runs[i], runs[j], t, history_for({i, j}))
    rows.append(("A/A (want 0 flagged)", t, False))
    for planted in sorted({m.group(1) for f in files if (m := re.fullmatch(r"slow-([\d.]+)-\d+\.json", f.name))},
                          key=float):
        slow = _numbered(files, f"slow-{planted}")
        t = Tally()
        for k, path in slow.items():
            if k in runs:
                judge_pair(runs[k], load_results(path), t, history_for({k}))
        rows.append((f"slowdown {planted} % (detected)", t, True))
    aa_t = rows[0][1]
    planted_ok = [t.slower["ours"] == t.specs for label, t, _ in rows[1:] if float(label.split()[1]) >= 1]
    lines += ["", f"Targets: no A/A pair flagged: {'MET' if aa_t.pairs_flagged['ours'] == 0 else 'NOT MET'} "
              f"({aa_t.pairs_flagged['ours']}/{aa_t.pairs} pairs); every planted slowdown of 1 % or more flagged: "
              f"{'MET' if planted_ok and all(planted_ok) else 'NOT MET' if planted_ok else 'no such pairs'}."]
    lines += ["", "Specializations flagged (A/A: any direction) or found slower (planted), per method:", ""]
    lines += table(rows, METHODS)
    lines += ["", "Our verdicts, all pairs:"]
    for label, t, _ in rows:
        lines.append(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in sorted(t.ours_verdicts.items())))
    lines += ["", "Per specialization: change (min / mean / max over the pairs) and our verdicts:", ""]
    body = []
    for label, t, _ in rows:
        for name, items in t.per_spec.items():
            ch = np.array([c for c, _ in items]) * 100
            counts = defaultdict(int)
            for _, v in items:
                counts[v] += 1
            body.append([label, name, f"{ch.min():+.3f} / {ch.mean():+.3f} / {ch.max():+.3f} %",
                         ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))])
    lines += md_table(["pairs", "specialization", "change", "ours"], body)
    lines.append("")
    return lines


# --------------------------------------------------------------------------- synthetic suites


@dataclass(frozen=True)
class Scenario:
    name: str
    run_to_run: Callable[[float], float]  # per-spec run-to-run CV from its batch CV
    heavy_tails: bool = False


PLANTED = {-0.01: 5, -0.02: 5, -0.05: 5, 0.02: 5}  # throughput change: count


HISTORY_RUNS = 5


def synthetic_suite(rng: np.random.Generator, n: int, scenario: Scenario
                    ) -> tuple[Results, Results, dict[str, float], dict[tuple[str, str], float]]:
    """n specializations, base and head runs with per-batch data; PLANTED changes on a few.
    Also the run-to-run CV per specialization as a history of HISTORY_RUNS earlier base runs
    would estimate it."""
    effects = np.zeros(n)
    planted_at = rng.choice(n, size=sum(PLANTED.values()), replace=False)
    k = 0
    for change, count in PLANTED.items():
        effects[planted_at[k:k + count]] = change
        k += count
    batch_cv = np.exp(rng.uniform(np.log(0.0001), np.log(0.005), n))  # 0.01 % .. 0.5 %
    ms = np.exp(rng.uniform(np.log(0.005), np.log(2.0), n))
    history = {}
    for i in range(n):
        sigma = scenario.run_to_run(batch_cv[i])
        if scenario.heavy_tails:
            draws = rng.standard_t(3, HISTORY_RUNS) / math.sqrt(3)
        else:
            draws = rng.normal(size=HISTORY_RUNS)
        runs = np.exp(sigma * draws + rng.normal(0, batch_cv[i] / math.sqrt(30), HISTORY_RUNS))
        history[("copy", f"spec {i}")] = stats.run_to_run_cv_from_runs(list(1.0 / runs)) or 0.0
    sides = []
    for side in ("base", "head"):
        specs = []
        for i in range(n):
            sigma = scenario.run_to_run(batch_cv[i])
            offset = sigma * (rng.standard_t(3) / math.sqrt(3) if scenario.heavy_tails else rng.normal())
            t = ms[i] * math.exp(offset) / (1 + (effects[i] if side == "head" else 0.0))
            noise = np.empty(30)  # AR(1) batch noise, phi 0.3, stationary CV batch_cv
            noise[0] = rng.normal(0, batch_cv[i])
            for j in range(1, 30):
                noise[j] = 0.3 * noise[j - 1] + rng.normal(0, batch_cv[i] * math.sqrt(1 - 0.09))
            specs.append(run_from_batches(f"spec {i}", list(t * 64 * np.exp(noise))))
        sides.append(results_from_dict(document(specs), f"{side}.json"))
    return sides[0], sides[1], {f"spec {i}": float(effects[i]) for i in range(n)}, history


def synthetic(n: int = 1000, suites: int = 10) -> list[str]:
    scenarios = [
        Scenario("run-to-run as the prior assumes (max(0.1 %, batch CV))",
                 lambda cv: max(stats.DEFAULT_RUN_TO_RUN_CV, cv)),
        Scenario("run-to-run twice the prior (the 0.2 % systematic differences DESIGN.md mentions)",
                 lambda cv: 2 * max(stats.DEFAULT_RUN_TO_RUN_CV, cv)),
        Scenario("run-to-run at the prior's scale, heavy tails (Student t, 3 df)",
                 lambda cv: max(stats.DEFAULT_RUN_TO_RUN_CV, cv), heavy_tails=True),
    ]
    planted_text = ", ".join(f"{c} at {x * 100:+g} %" for x, c in PLANTED.items())
    lines = ["## Synthetic suites", "",
             f"{suites} suites per scenario, each {n} specializations x 30 batches per run (AR(1) batch noise, "
             f"batch CV 0.01-0.5 %), planted changes: {planted_text}; the rest unchanged.", ""]
    methods = ("ours", f"ours + history ({HISTORY_RUNS} runs)", "NVBench legacy", "Mann–Whitney U")
    for sc in scenarios:
        rng = np.random.default_rng(20261130)
        false_flags: dict[str, list[int]] = defaultdict(list)
        fdp: dict[str, list[float]] = defaultdict(list)
        found: dict[str, dict[float, int]] = defaultdict(lambda: defaultdict(int))
        t0 = time.perf_counter()
        for _ in range(suites):
            base, head, effects, history = synthetic_suite(rng, n, sc)
            verdicts = _verdicts_by_name(base, head, history)
            for m in methods:
                flagged = {name for name, v in verdicts[m].items() if v != "same"}
                false = {name for name in flagged if effects[name] == 0.0}
                false_flags[m].append(len(false))
                fdp[m].append(len(false) / max(1, len(flagged)))
                for name, v in verdicts[m].items():
                    e = effects[name]
                    if e != 0.0 and v == ("slower" if e < 0 else "faster"):
                        found[m][e] += 1
        lines.append(f"### {sc.name}  ({time.perf_counter() - t0:.0f} s)")
        lines.append("")
        head_row = ["method", "false flags per suite (mean / max)", "false discovery proportion (mean)"]
        head_row += [f"found {x * 100:+g} %" for x in PLANTED]
        body = []
        for m in methods:
            ff = false_flags[m]
            body.append([m, f"{np.mean(ff):.1f} / {max(ff)}", f"{np.mean(fdp[m]):.3f}",
                         *[f"{found[m][x]}/{c * suites}" for x, c in PLANTED.items()]])
        lines += md_table(head_row, body)
        lines.append("")
    return lines


def _verdicts_by_name(base: Results, head: Results, history: Mapping[tuple[str, str], float]
                      ) -> dict[str, dict[str, str]]:
    hist = f"ours + history ({HISTORY_RUNS} runs)"
    out: dict[str, dict[str, str]] = {"ours": {}, hist: {}, "NVBench legacy": {}, "Mann–Whitney U": {}}
    for name, cv in (("ours", None), (hist, history)):
        for r in compare_runs([base], [head], run_to_run_cv=cv).rows:
            out[name][r.name] = {"regression": "slower", "improvement": "faster"}.get(r.verdict.value, "same")
    heads = {s.name: s for s in head.specializations}
    for b in base.specializations:
        h = heads[b.name]
        out["NVBench legacy"][b.name] = stats.nvbench_legacy(
            b.bytes_per_second or 0, h.bytes_per_second or 0, (b.noise_percent or 0) / 100,
            (h.noise_percent or 0) / 100)
        p, shift = stats.mann_whitney_batches(_times(b), _times(h))
        out["Mann–Whitney U"][b.name] = "same" if p >= ALPHA else ("slower" if shift > 0 else "faster")
    return out


def main() -> None:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data" / "h200"
    t0 = time.perf_counter()
    lines = ["# primbench compare: evaluation (tests/benchmarks/compare_eval.py)", "",
             f"ours: threshold {stats.DEFAULT_THRESHOLD * 100:g} %, alpha {ALPHA}, run-to-run prior "
             f"{stats.DEFAULT_RUN_TO_RUN_CV * 100:g} % (or the batch CV if larger); "
             "NVBench legacy: |diff| <= min noise is same; Mann–Whitney U: batches, alpha 0.05.",
             "A flag is a regression or improvement (ours), slower or faster (legacy, Mann–Whitney U).", ""]
    lines += real_data(data)
    lines += synthetic()
    lines.append(f"total time {time.perf_counter() - t0:.0f} s")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(__file__).with_suffix(".txt").write_text(text)


if __name__ == "__main__":
    main()
