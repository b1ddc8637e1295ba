"""Each kernel's answer to the SM clock measured across the compared runs (`primbench.compare.clock`,
`compare.core._clock_within`), on runs from a generator of this file's own, not compare's model: a
GPU that runs each worker process in one of two clock regimes 0.7 % apart (1,977 and 1,991 MHz, as
the H100s of tests/benchmarks/verdicts/clock_regimes.txt), regimes that change between and within a
run's workers; kernels that answer the clock between -1 (bound by the SMs) and +0.3; each worker
0.05 % of its own a kernel, each round 0.3 %, and each file a small state (0.02 %) the clock does
not explain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primbench.compare import core
from primbench.compare.clock import MIN_CLOCK_RANGE, MIN_RUNS_A_SIDE, within_files
from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec

REGIMES = (1977.0, 1991.0)
#: 12 kernels: a third bound by memory (about 0), a third by their SMs (about -1), the rest between.
RESPONSE = np.array([0.0, 0.05, -0.1, 0.3, -1.0, -0.95, -0.9, -1.0, -0.5, -0.4, -0.6, 0.2])


def _file(rng: np.random.Generator, base: np.ndarray, source: str, *, high: float, slow: dict[int, float] | None = None,
          workers: int = 8) -> list[Results]:
    """One ``--processes 8`` file, split into its workers: each worker in the high clock regime with
    probability `high` (drawn per worker, so a file's workers can sit in both), its kernels' ln(time)
    moved by their response times ln(clock / 1,977 MHz), a file state, a worker's own part, two
    measured rounds after a warm-up; `slow`: kernel -> a fractional slowdown of its time."""
    slow = slow or {}
    state = rng.normal(0.0, 0.0002, len(base))
    clocks = [REGIMES[1] if rng.random() < high else REGIMES[0] for _ in range(workers)]
    specs = []
    for i in range(len(base)):
        rounds = []
        for j, mhz in enumerate(clocks):
            level = base[i] + RESPONSE[i] * math.log(mhz / REGIMES[0]) + state[i] + rng.normal(0.0, 0.0005)
            level += math.log1p(slow.get(i, 0.0))
            for v in level + rng.normal(0.0, 0.003, 3):
                ms = float(np.exp(v))
                rounds.append({"round": len(rounds), "gpu_ms_per_call": ms, "bytes_per_second": 1e9 / ms,
                               "items_per_second": 5e8 / ms, "noise_timeout": False, "noise_percent": 0.1,
                               "sm_clock_mhz": mhz * (1 + rng.normal(0.0, 5e-5)), "process": j})
        rec = spec(f"k: {i:02d}", 1e9 / float(np.exp(base[i])), round_cv=None, time_ms=float(np.exp(base[i])))
        rec["rounds"] = rounds
        specs.append(rec)
    doc = document(specs, version="4.11.0", settings={"size": 64 << 20, "processes": workers})
    return results_from_dict(doc, source).per_process()


def _side(rng: np.random.Generator, base: np.ndarray, name: str, *, high: float = 0.5,
          slow: dict[int, float] | None = None) -> list[Results]:
    """Two files a side, as the default protocol's one file of two runs is read."""
    return [r for k in (1, 2) for r in _file(rng, base, f"{name}-{k}.json", high=high, slow=slow)]


def _without_clock_within(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "_clock_within", lambda suite: suite)


def test_within_files_reads_each_kernels_slope_and_not_the_change_nor_a_files_state() -> None:
    """Two files a side of 8 workers each, workers in both regimes: the slopes come back within a few
    standard errors of the truth; a 5 % change of the head side moves none of them, nor does a state
    of 1 % that one file's workers share, though that file sat mostly in the high regime (a slope
    across the files would read it as the clock's)."""
    rng = np.random.default_rng(3)
    k, n = len(RESPONSE), 8
    file = np.tile(np.repeat(np.arange(4), n), k)  # files 0, 1: base; 2, 3: head
    row, side = np.repeat(np.arange(k), 4 * n), (file >= 2).astype(np.int64)
    high = np.where(file == 0, 0.9, 0.4)
    clock = np.log(np.where(rng.random(row.size) < high, REGIMES[1], REGIMES[0]))
    value = RESPONSE[row] * clock + rng.normal(0.0, 0.0005, row.size)
    beta, var = within_files(row, side, file, clock, value, k)
    assert np.all(np.abs(beta - RESPONSE) < 5 * np.sqrt(var) + 1e-3)
    assert np.all(var > 0)
    moved, _ = within_files(row, side, file, clock, value + 0.05 * side + 0.01 * (file == 0), k)
    np.testing.assert_allclose(moved, beta, atol=1e-9)


def test_within_files_measures_nothing_over_one_regime_or_too_few_runs() -> None:
    """No slope where a file's workers sat in one regime (clocks that spread less than
    `MIN_CLOCK_RANGE`, even where the files differ: that difference is no evidence within a file),
    or where a side has fewer than `MIN_RUNS_A_SIDE` runs with a clock; a NaN clock is no run."""
    rng = np.random.default_rng(4)
    n = 8
    row, side, file = np.zeros(2 * n, dtype=np.int64), np.repeat([0, 1], n), np.repeat([0, 1], n)
    one = np.log(REGIMES[0]) + rng.normal(0.0, MIN_CLOCK_RANGE / 20, 2 * n)
    beta, _ = within_files(row, side, file, one, -one + rng.normal(0.0, 1e-4, 2 * n), 1)
    assert math.isnan(beta[0])
    apart = np.log(np.repeat(REGIMES, n))  # each file in its own regime
    beta, _ = within_files(row, side, np.zeros(2 * n, dtype=np.int64) + side, apart, -apart, 1)
    assert math.isnan(beta[0])
    two = np.log(np.where(np.arange(2 * n) % 2, REGIMES[0], REGIMES[1]))
    ok, _ = within_files(row, side, file, two, -two, 1)
    assert ok[0] == pytest.approx(-1.0)
    few = two.copy()
    few[: n - MIN_RUNS_A_SIDE + 1] = np.nan  # the base keeps MIN_RUNS_A_SIDE - 1 runs with a clock
    none, _ = within_files(row, side, file, few, -two, 1)
    assert math.isnan(none[0])


def test_a_side_of_one_file_keeps_the_priors_term() -> None:
    """One ``--processes`` file a side: its workers' clocks spread, but the state its run shares is
    not measured, so the prior's clock term stays (the warning counts rows that carry it, none
    corrected)."""
    rng = np.random.default_rng(8)
    base = np.log(rng.uniform(0.02, 0.2, len(RESPONSE)))
    c = compare_runs(_file(rng, base, "b.json", high=0.2), _file(rng, base, "h.json", high=0.8))
    said = [w for w in c.warnings if "SM clock" in w]
    assert said and "corrected" not in said[0] and "carry" in said[0]


def test_sides_whose_runs_change_clock_regime_are_judged_on_the_clocks_corrected_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A/A pairs whose workers sit in both regimes, the head's more often in the high one: with each
    kernel's slope measured across the runs, the standard errors come down to what the workers and
    rounds leave (at most 0.6 x those without the correction, which widen every row by the prior's
    term and by the sides' spread), no pair fails, and the warning names where the answers were
    measured."""
    rng = np.random.default_rng(5)
    base = np.log(rng.uniform(0.02, 0.2, len(RESPONSE)))
    pairs = [(_side(rng, base, "b", high=0.3), _side(rng, base, "h", high=0.7)) for _ in range(6)]
    judged = [compare_runs(b, h) for b, h in pairs]
    assert sum(c.failed() for c in judged) == 0
    said = [w for c in judged for w in c.warnings if "SM clock" in w]
    assert said and all("measured within each side's files" in w for w in said)
    corrected = float(np.median([r.standard_error or 0.0 for c in judged for r in c.rows]))
    assert sum(r.verdict is Verdict.UNCHANGED for c in judged for r in c.rows) >= 0.9 * 6 * len(RESPONSE)
    _without_clock_within(monkeypatch)
    plain = float(np.median([r.standard_error or 0.0 for c in (compare_runs(b, h) for b, h in pairs)
                             for r in c.rows]))
    assert corrected < 0.6 * plain


def test_a_one_percent_slowdown_of_an_sm_bound_kernel_across_clock_regimes_is_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The head runs mostly in the low regime and one SM-bound kernel (response -1) is 1 % slower:
    the clock alone would make every SM-bound kernel look about 0.4 % slower. Corrected by the
    kernels' own slopes, the slowed kernel is the regression in most pairs and the other SM-bound
    kernels are not; without the correction the 1 % is lost in the widened rows more often."""
    rng = np.random.default_rng(6)
    base = np.log(rng.uniform(0.02, 0.2, len(RESPONSE)))
    target = 4  # response -1.0
    pairs = [(_side(rng, base, "b", high=0.8), _side(rng, base, "h", high=0.2, slow={target: 0.01}))
             for _ in range(8)]
    found = others = 0
    for b, h in pairs:
        rows = {r.name: r for r in compare_runs(b, h).rows}
        found += rows[f"k: {target:02d}"].verdict is Verdict.REGRESSION
        others += sum(r.verdict is Verdict.REGRESSION for n, r in rows.items() if n != f"k: {target:02d}")
    assert found >= 7 and others <= 1
    _without_clock_within(monkeypatch)
    plain = sum(next(r for r in compare_runs(b, h).rows if r.name == f"k: {target:02d}").verdict
                is Verdict.REGRESSION for b, h in pairs)
    assert plain < found


def test_history_of_the_clock_takes_precedence_over_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where history measured the kernels' answers (`compare_runs(clock_response=...)`), those decide and
    the runs' own are not measured: the warning says history."""
    rng = np.random.default_rng(7)
    base = np.log(rng.uniform(0.02, 0.2, len(RESPONSE)))
    b, h = _side(rng, base, "b", high=0.2), _side(rng, base, "h", high=0.8)
    history = {("copy", f"k: {i:02d}"): (float(r), 1e-4) for i, r in enumerate(RESPONSE)}
    called: list[int] = []
    real = core._clock_within
    monkeypatch.setattr(core, "_clock_within", lambda suite: called.append(1) or real(suite))
    c = compare_runs(b, h, clock_response=history)
    assert not called
    said = [w for w in c.warnings if "SM clock" in w]
    assert said and "measured in history" in said[0]
