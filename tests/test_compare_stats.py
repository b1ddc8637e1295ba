"""The statistics of `primbench compare`, against values worked out by hand or by SciPy directly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from compare import stats


def test_z_test_p_is_two_sided_normal() -> None:
    d = np.array([0.0, 0.002, -0.002, 0.01])
    se = np.full(4, 0.001)
    p = stats.z_test_p(d, se)
    assert p[0] == pytest.approx(1.0)
    assert p[1] == pytest.approx(2 * sps.norm.sf(2.0)) and p[1] == pytest.approx(p[2])
    assert p[3] < 1e-20


def test_equivalence_p_is_tost() -> None:
    delta, se = 0.005, 0.0014
    d = np.array([0.001, -0.004, 0.0])
    p = stats.equivalence_p(d, np.full(3, se), delta)
    for got, x in zip(p, d, strict=True):
        expected = max(sps.norm.sf((x + delta) / se), sps.norm.cdf((x - delta) / se))
        assert got == pytest.approx(expected)
    assert p[2] < 0.001  # |d| = 0 is clearly inside +-0.5 % at sigma 0.14 %
    assert p[1] > 0.05  # -0.4 % is too close to the edge


def test_zero_standard_error_gives_certain_answers() -> None:
    d = np.array([0.01, 0.001])
    se = np.zeros(2)
    assert list(stats.z_test_p(d, se)) == [0.0, 0.0]
    assert list(stats.z_test_p(np.zeros(1), np.zeros(1))) == [1.0]
    assert list(stats.equivalence_p(d, se, 0.005)) == [1.0, 0.0]


def test_standard_error_adds_both_runs_run_to_run_variance() -> None:
    se = stats.standard_error(np.array([0.0003]), np.array([0.0004]), np.array([0.001]))
    assert se[0] == pytest.approx(math.sqrt(0.0003**2 + 0.0004**2 + 2 * 0.001**2))


def test_change_interval_is_the_tost_interval() -> None:
    low, high = stats.change_interval(np.array([0.0]), np.array([0.001]), 0.05)
    assert low[0] == pytest.approx(math.expm1(-1.6448536 * 0.001), rel=1e-6)
    assert high[0] == pytest.approx(math.expm1(1.6448536 * 0.001), rel=1e-6)


def test_benjamini_hochberg_matches_hand_computation() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5])
    # sorted: .01 .03 .04 .5 -> .01*4/1=.04, .03*4/2=.06, .04*4/3=.0533, .5 -> monotone from the top
    q = stats.benjamini_hochberg(p)
    assert q == pytest.approx([0.04, 0.0533333, 0.0533333, 0.5], rel=1e-5)
    assert stats.benjamini_hochberg(np.array([])).size == 0


def test_within_run_se_from_independent_batches_is_cv_over_root_n() -> None:
    rng = np.random.default_rng(7)
    times = 0.25 * np.exp(rng.normal(0, 0.0002, 400))
    w = stats.within_run_from_batches(times)
    assert w is not None and w.source == "batches"
    assert w.cv == pytest.approx(0.0002, rel=0.1)
    assert w.n_eff > 300
    assert w.se == pytest.approx(w.cv / math.sqrt(w.n_eff))


def test_drifting_batches_count_as_fewer() -> None:
    rng = np.random.default_rng(8)
    walk = np.cumsum(rng.normal(0, 0.0001, 200))  # strongly autocorrelated
    w = stats.within_run_from_batches(0.25 * np.exp(walk))
    assert w is not None
    assert w.n_eff < 20
    assert w.se > w.cv / math.sqrt(200) * 3


def test_within_run_needs_two_batches() -> None:
    assert stats.within_run_from_batches(np.array([1.0])) is None


def test_per_call_times_divides_by_calls_and_drops_empty_batches() -> None:
    t = stats.per_call_times([10.0, 20.0, 0.0, 8.0], [10, 20, 5, None], default_calls=4)
    assert list(t) == [1.0, 1.0, 2.0]


def test_within_run_from_summary() -> None:
    w = stats.within_run_from_summary(0.04, 16)
    assert w.cv == pytest.approx(0.0004)
    assert w.se == pytest.approx(0.0001)
    assert stats.within_run_from_summary(0.04, None).n == stats.DEFAULT_BATCH_WINDOW
    assert stats.within_run_from_summary(0.04, None, 25).n == 25


def test_default_run_to_run_is_the_prior_or_the_batch_noise() -> None:
    assert stats.default_run_to_run_cv(0.0002, 0.0003) == stats.DEFAULT_RUN_TO_RUN_CV
    assert stats.default_run_to_run_cv(0.02, 0.001) == 0.02


def test_run_to_run_cv_from_runs() -> None:
    assert stats.run_to_run_cv_from_runs([1.0]) is None
    cv = stats.run_to_run_cv_from_runs([100.0, 101.0, 99.0])
    assert cv == pytest.approx(np.std(np.log([100.0, 101.0, 99.0]), ddof=1))


def test_geometric_mean() -> None:
    assert stats.geometric_mean([0.5, 2.0]) == pytest.approx(1.0)
    assert stats.geometric_mean([1.01, 1.01, 1.01]) == pytest.approx(1.01)
    assert stats.geometric_mean([]) is None


def test_nvbench_legacy_rule() -> None:
    assert stats.nvbench_legacy(100.0, 100.01, 0.0002, 0.0003) == "same"
    assert stats.nvbench_legacy(100.0, 99.9, 0.0002, 0.0003) == "slower"
    assert stats.nvbench_legacy(100.0, 100.1, 0.0002, 0.01) == "faster"


def test_mann_whitney_on_batches() -> None:
    rng = np.random.default_rng(3)
    base = 1.0 + rng.normal(0, 0.0002, 30)
    p_same, _ = stats.mann_whitney_batches(base, 1.0 + rng.normal(0, 0.0002, 30))
    p_diff, shift = stats.mann_whitney_batches(base, 1.001 + rng.normal(0, 0.0002, 30))
    assert p_diff < 1e-6 < p_same
    assert shift == pytest.approx(0.001, abs=2e-4)


def test_empirical_null_scale() -> None:
    rng = np.random.default_rng(11)
    assert stats.empirical_null_scale(rng.normal(0, 1, 5000)) == pytest.approx(1.0, abs=0.05)
    assert stats.empirical_null_scale(rng.normal(0, 3, 5000)) == pytest.approx(3.0, rel=0.05)
    assert stats.empirical_null_scale(rng.normal(0, 0.2, 5000)) == 1.0  # never narrows
    assert stats.empirical_null_scale(rng.normal(0, 3, 19)) == 1.0  # too few to tell
    shifted = np.concatenate([rng.normal(-40, 1, 900), rng.normal(0, 1, 100)])
    assert stats.empirical_null_scale(shifted) < 1.3  # a suite-wide shift is not spread
