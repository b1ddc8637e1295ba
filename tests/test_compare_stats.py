"""The statistics of `primbench compare`, against values worked out by hand or by SciPy directly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primbench.compare import stats


def test_benjamini_hochberg_matches_hand_computation() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5])
    # sorted: .01 .03 .04 .5 -> .01*4/1=.04, .03*4/2=.06, .04*4/3=.0533, .5 -> monotone from the top
    q = stats.benjamini_hochberg(p)
    assert q == pytest.approx([0.04, 0.0533333, 0.0533333, 0.5], rel=1e-5)
    assert stats.benjamini_hochberg(np.array([])).size == 0


def test_geometric_mean() -> None:
    assert stats.geometric_mean([0.5, 2.0]) == pytest.approx(1.0)
    assert stats.geometric_mean([1.01, 1.01, 1.01]) == pytest.approx(1.01)
    assert stats.geometric_mean([]) is None


# --------------------------------------------------------------------------- moderated variance

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def test_t_tests_match_scipy() -> None:
    from scipy import stats as ss

    d, se, df = np.array([0.01, -0.02, 0.0]), np.array([0.005, 0.01, 0.01]), np.array([4.0, 10.0, 3.0])
    assert stats.t_test_p(d, se, df) == pytest.approx(2 * ss.t.sf(np.abs(d / se), df))
    p = stats.equivalence_p(d, se, df, 0.005)
    assert p[2] == pytest.approx(ss.t.sf(0.5, 3.0))
    assert stats.t_test_p(np.array([0.0, 0.1]), np.array([0.0, 0.0]), np.array([2.0, 2.0])).tolist() == [1.0, 0.0]


def test_fit_prior_recovers_a_common_variance() -> None:
    rng = np.random.default_rng(1)
    df = np.full(500, 4.0)
    s_sq = 0.01**2 * rng.chisquare(4, 500) / 4
    prior = stats.fit_prior(s_sq, df)
    assert prior is not None
    assert math.sqrt(prior.s0_sq) == pytest.approx(0.01, rel=0.1)
    assert prior.df0 > 50  # one common variance: the prior is worth a lot


def test_fit_prior_needs_a_few_variances() -> None:
    assert stats.fit_prior(np.array([1e-4, 2e-4]), np.array([4.0, 4.0])) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-8, 1e-1), min_size=3, max_size=30), st.integers(1, 10))
def test_moderated_variances_lie_between_each_sample_and_the_prior(variances: list[float], dfs: int) -> None:
    s_sq = np.array(variances)
    df = np.full(s_sq.size, float(dfs))
    prior = stats.fit_prior(s_sq, df)
    assert prior is not None and prior.df0 > 0 and prior.s0_sq > 0
    assert prior.df0 <= df.sum()
    post, post_df = stats.moderated_variance(s_sq, df, prior)
    lo, hi = np.minimum(s_sq, prior.s0_sq), np.maximum(s_sq, prior.s0_sq)
    assert np.all(post >= lo * (1 - 1e-9)) and np.all(post <= hi * (1 + 1e-9))
    out = stats.outlying(s_sq, df, prior)
    assert np.all(post_df[~out] == pytest.approx(prior.df0 + df[~out]))
    assert np.all(post[out] == s_sq[out]) and np.all(post_df[out] == df[out])  # outliers keep their own


def test_a_noisy_kernel_among_quiet_ones_keeps_its_own_variance() -> None:
    s_sq = np.array([1e-6] * 20 + [1e-3])
    df = np.full(s_sq.size, 8.0)
    prior = stats.fit_prior(s_sq, df)
    assert prior is not None and prior.s0_sq < 2e-6  # the winsorized fit is the quiet ones'
    post, _ = stats.moderated_variance(s_sq, df, prior)
    assert post[-1] == pytest.approx(1e-3)


def test_satterthwaite_df_of_a_sum() -> None:
    assert stats.satterthwaite([(1.0, 4.0)]) == pytest.approx(4.0)
    assert stats.satterthwaite([(1.0, 4.0), (1.0, 4.0)]) == pytest.approx(8.0)
    assert stats.satterthwaite([(1.0, 4.0), (1e-9, 1.0)]) == pytest.approx(4.0, rel=1e-6)
    assert stats.satterthwaite([(1.0, 0.0)]) == math.inf  # known exactly


def test_min_detectable_change_grows_with_noise_and_suite_size() -> None:
    one = stats.min_detectable_change(np.array([0.01]), np.array([4.0]), 0.05, 1, 0.005)
    many = stats.min_detectable_change(np.array([0.01]), np.array([4.0]), 0.05, 100, 0.005)
    assert 0.005 < one[0] < many[0]
    # a quiet row: the threshold, plus t_0.8 of its tiny standard error
    assert stats.min_detectable_change(np.array([1e-6]), np.array([4.0]), 0.05, 1, 0.005)[0] == pytest.approx(
        math.expm1(0.005), rel=1e-3)


def test_a_change_of_the_detectable_size_is_found_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    se, df = 0.01, 1e6  # a normal t-test
    mdc = float(stats.min_detectable_change(np.array([se]), np.array([df]), 0.05, 1, 0.0)[0])
    d = np.log1p(mdc) + rng.normal(0, se, 20_000)
    found = stats.t_test_p(d, np.full(d.size, se), np.full(d.size, df)) <= 0.05
    assert found.mean() == pytest.approx(0.8, abs=0.02)


def test_the_centre_of_a_suite_varies_as_simulated() -> None:
    se = np.full(11, 0.01)
    z = np.random.default_rng(9).standard_normal((20_000, 11)) * se  # not the method's seed
    assert stats.centre_variance(se) == pytest.approx(np.var(stats.suite_centre(z, se)), rel=0.1)
    big = np.full(101, 0.01)  # above CENTRE_MODE_MAX: the median, whose variance is known
    assert stats.centre_variance(big) == pytest.approx(math.pi / 2 * 0.01**2 / 101, rel=0.1)


def test_the_centre_stays_with_the_rows_that_agree() -> None:
    """Six of ten kernels moved by 1, 1, 2, 2, 5 and 5 %: the median is 1 %, the unchanged four
    are the largest group that agrees."""
    x = np.log1p(np.array([0, 0, 0, 0, 1, 1, 2, 2, 5, 5]) / 100)
    se = np.full(10, 0.002)
    assert float(np.median(x)) == pytest.approx(math.log1p(0.01))
    assert abs(float(stats.suite_centre(x, se)[0])) < 0.001
    # no group: an A/A suite's centre is near its median, and moves with the data
    rng = np.random.default_rng(3)
    aa = rng.normal(0, 0.002, 10)
    assert abs(float(stats.suite_centre(aa, se)[0]) - float(np.median(aa))) < 0.002
    assert float(stats.suite_centre(aa + 0.03, se)[0]) == pytest.approx(float(stats.suite_centre(aa, se)[0]) + 0.03)
    assert float(stats.suite_centre(3 * aa, 3 * se)[0]) == pytest.approx(3 * float(stats.suite_centre(aa, se)[0]))


def test_the_centre_is_the_densest_point() -> None:
    """Against a brute-force search over a fine grid of the same density (every row one vote,
    twice its own standard error wide)."""
    rng = np.random.default_rng(21)
    for _ in range(50):
        n = int(rng.integers(5, 30))
        se = rng.uniform(0.001, 0.004, n)
        x = np.where(rng.random(n) < 0.6, rng.normal(0, se), rng.normal(0.02, 0.01, n))
        grid = np.linspace(x.min(), x.max(), 20_001)
        w = stats.CENTRE_BANDWIDTH * se
        density = np.exp(-0.5 * ((x[None, :] - grid[:, None]) / w) ** 2).sum(axis=1)
        assert float(stats.suite_centre(x, se)[0]) == pytest.approx(float(grid[np.argmax(density)]), abs=0.002)


def test_a_large_suite_is_centred_on_its_median() -> None:
    x = np.random.default_rng(4).normal(0, 0.01, 101)
    assert float(stats.suite_centre(x, np.full(101, 0.01))[0]) == float(np.median(x))


def test_centred_standard_errors_match_a_simulation() -> None:
    rng = np.random.default_rng(5)
    se = np.array([0.0005] + [0.02] * 5)
    d = rng.normal(0, se, size=(50_000, se.size))
    actual = np.std(d - stats.suite_centre(d, se)[:, None], axis=0)
    family = np.ones(se.size, dtype=bool)
    assert stats.centred_standard_errors(se, family) == pytest.approx(actual, rel=0.12)
    equal = np.full(101, 0.01)  # the median's: Var(d_i - m) = se^2 (1 + (pi/2 - 2)/n)
    expected = 0.01 * math.sqrt(1 + (math.pi / 2 - 2) / 101)
    assert stats.centred_standard_errors(equal, np.ones(101, dtype=bool)) == pytest.approx(expected, rel=0.05)


def _ar1(rng: np.random.Generator, rho: float, runs: int, n: int) -> np.ndarray:
    """`runs` sequences of n AR(1) values of unit variance (a generator apart from compare's)."""
    x = np.empty((runs, n))
    x[:, 0] = rng.normal(size=runs)
    for r in range(1, n):
        x[:, r] = rho * x[:, r - 1] + math.sqrt(1 - rho**2) * rng.normal(size=runs)
    return x


def _pooled(x: np.ndarray) -> tuple[float, float, list[int]]:
    d = x - x.mean(axis=1, keepdims=True)
    return float(np.sum(d[:, :-1] * d[:, 1:])), float(np.sum(d * d)), [x.shape[1]] * x.shape[0]


def test_the_rounds_lag_1_correlation_is_recovered_and_zero_for_independent_rounds() -> None:
    rng = np.random.default_rng(7)
    assert stats.round_autocorrelation(*_pooled(_ar1(rng, 0.5, 60, 9))) == pytest.approx(0.5, abs=0.12)
    independent = [stats.round_autocorrelation(*_pooled(_ar1(rng, 0.0, 20, 9))) for _ in range(200)]
    assert sum(r > 0 for r in independent) <= 10  # a one-sided test at about 2.3 %
    assert stats.round_autocorrelation(0.0, 0.0, [9]) == 0.0


def test_the_inflation_is_what_a_mean_of_correlated_rounds_really_varies_by() -> None:
    rng = np.random.default_rng(3)
    x = _ar1(rng, 0.5, 200_000, 9)
    simulated = 9 * x.mean(axis=1).var() / x.var(axis=1, ddof=1).mean()
    assert stats.autocorrelation_inflation(0.5, 9)[0] == pytest.approx(simulated, rel=0.03)
    assert list(stats.autocorrelation_inflation(0.0, np.array([9.0, 3.0]))) == [1.0, 1.0]


def test_the_pairwise_satterthwaite_is_the_scalar_one_element_by_element() -> None:
    v1 = np.array([1e-4, 0.0, 2e-5, 3e-5, 1e-6, 5e-5])
    df1 = np.array([8.0, 5.0, 0.0, math.inf, 3.0, 10.0])
    v2 = np.array([2e-5, 0.0, 1e-5, 0.0, 4e-6, 5e-5])
    df2 = np.array([25.0, 5.0, 4.0, 2.0, 0.0, 10.0])
    got = stats.satterthwaite_pair(v1, df1, v2, df2)
    want = [stats.satterthwaite([(a, b), (c, d)]) for a, b, c, d in zip(v1, df1, v2, df2, strict=True)]
    assert list(got) == pytest.approx(want)


# --------------------------------------------------------------------------- exact sums (math.fsum, vectorised)


def _bits(x: np.ndarray) -> list[int]:
    return np.asarray(x, dtype=float).view(np.int64).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
                         min_size=4, max_size=4), min_size=1, max_size=30))
def test_exact_sums_are_math_fsum_bit_for_bit(rows: list[list[float]]) -> None:
    parts = np.array(rows, dtype=float)
    assert _bits(stats.exact_sums(parts)) == _bits(np.array([math.fsum(r) for r in rows]))


def test_exact_sums_near_midpoints_cancellations_and_non_finite_rows_fall_back_to_math_fsum() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(27.6, 1e-3, size=(5000, 3))
    x[::7, 2] = -x[::7, 0]  # cancellation
    x[::11] = [1.0, 2.0**-53, 2.0**-106]  # a sum just beyond a midpoint
    x[1] = [1e308, -1e308, 1.0]
    x[2] = [math.inf, 1.0, 2.0]
    x[3] = [0.0, -0.0, 0.0]
    want = np.array([math.fsum(r) for r in x.tolist()])
    got = stats.exact_sums(x)
    assert _bits(got[4:]) == _bits(want[4:]) and got[1] == want[1] == 1.0 and math.isinf(got[2])
    assert _bits(got[3:4]) == _bits(want[3:4])  # 0.0, as fsum gives
    assert stats.exact_sums(np.zeros((3, 0))).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(OverflowError):  # as math.fsum itself
        stats.exact_sums(np.array([[1e308, 1e308, -1e308]]))


def test_exact_sums_on_midpoints_round_to_even_as_math_fsum() -> None:
    """Sums that fall exactly on the midpoint between two floats, whose errors add up exactly (no
    `math.fsum` fallback there): rounded to even, as fsum rounds them; and rows of three logs of
    rounds as compare sums them (a quarter of them on a midpoint), against fsum bit for bit."""
    ties = np.array([[1.0, 2.0**-53, 0.0], [1.0 + 2.0**-52, 2.0**-53, 0.0], [1.0, 2.0**-54, 2.0**-54],
                     [1.0 + 2.0**-52, -(2.0**-54), -(2.0**-54)], [-3.0, -(2.0**-52), 0.0],
                     [27.610210169310342, 27.611210169310343, 27.61221016931034],
                     [2.0**-1070, 2.0**-1074, 2.0**-1074]])
    rng = np.random.default_rng(5)
    logs = np.log(rng.normal(1e12, 1e9, size=(20000, 3)))
    logs[::3] = np.round(logs[::3], 3) + np.array([0.0, 0.001, 0.002])  # 27.61 + steps of 0.001: many midpoints
    for x in (ties, logs):
        want = np.array([math.fsum(r) for r in x.tolist()])
        assert _bits(stats.exact_sums(x)) == _bits(want)
    assert stats.exact_sums(ties[:2]).tolist() == [1.0, 1.0 + 2.0**-51]  # to even, either way


def test_grouped_sums_and_satterthwaite_rows_are_their_scalar_forms() -> None:
    values = np.array([0.1, 0.2, 0.3, 5.0, 1e-17, -0.0])
    group = np.array([2, 2, 2, 0, 0, 3])
    assert stats.grouped_sums(values, group, 5).tolist() == [math.fsum([5.0, 1e-17]), 0.0, math.fsum([0.1, 0.2, 0.3]),
                                                              0.0, 0.0]
    v = np.array([[1e-4, 2e-5, 0.0, 3e-6], [0.0, 0.0, 0.0, 0.0], [1e-4, 1e-4, 0.0, 0.0]])
    df = np.array([[2.0, 5.0, 0.0, math.inf], [1.0, 1.0, 1.0, 1.0], [0.0, 3.0, 0.0, 0.0]])
    want = [stats.satterthwaite([(a, b) for a, b in zip(vr, dr, strict=True) if a != 0]) for vr, dr in zip(v, df,
                                                                                                         strict=True)]
    assert stats.satterthwaite_rows(v, df).tolist() == want


def test_shift_tail_p_reads_the_measured_quantiles() -> None:
    levels = (0.5, 0.9, 1.0)
    q = (0.01, 0.03, 0.05)
    assert stats.shift_tail_p(0.0, q, levels, 99) == pytest.approx(1.0)
    assert stats.shift_tail_p(0.01, q, levels, 99) == pytest.approx(0.5)
    assert stats.shift_tail_p(-0.02, q, levels, 99) == pytest.approx(0.3)  # between 0.5 and 0.9, either sign
    assert stats.shift_tail_p(0.2, q, levels, 99) == pytest.approx(0.01)  # beyond all: 1 / (pairs + 1)
    assert stats.shift_tail_p(0.02, q, levels, 99, scale=0.5) == pytest.approx(0.05)  # 0.04 on one run's scale
    assert stats.shift_tail_p(0.2, (), levels, 0) == 0.0  # nothing measured: no constraint


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 70), st.integers(1, 300), st.integers(0, 2**32 - 1))
def test_exact_sums_of_rows_of_signed_zeros_are_math_fsum(terms: int, rows: int, seed: int) -> None:
    """Rows whose every term is 0.0 or -0.0 (`stats._sums_of_zeros`: fsum asked once per pattern of
    signs), among rows that are not (a zero sum of non-zero terms, a NaN, ordinary sums)."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random((rows, terms)) < 0.5, -0.0, 0.0)
    x[::5] = rng.normal(size=(len(x[::5]), terms))
    if terms >= 2 and rows >= 3:
        x[2, :2] = [1.5, -1.5]
        x[1, -1] = np.nan
    got = stats.exact_sums(x)
    want = np.array([math.fsum(r) for r in x.tolist()])
    assert got.tobytes() == want.tobytes() or (np.isnan(want).any() and np.array_equal(got, want, equal_nan=True))
