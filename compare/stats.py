"""The statistics of `primbench compare`: the one home of each.

All effects are measured on the log scale: ``d = ln(head / base)`` of a throughput, so a
change and its inverse weigh the same and variances of relative quantities add.

* Run-to-run variance: the sample variances of each specialization's rounds and repeats,
  moderated toward a prior fitted across the suite (Smyth 2004, limma's ``squeezeVar``).
* t-tests of "no change" and of equivalence (TOST: is |d| smaller than the threshold?),
  both on ``d`` with the moderated degrees of freedom; the threshold itself is applied to
  the point estimate; the smallest change a row could have flagged.
* A suite-wide shift: the median change, taken out before each specialization is judged.
* Benjamini–Hochberg false-discovery control across specializations.

SciPy is imported on first use; without it `MissingDependencyError` names the extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from primbench.errors import MissingDependencyError

#: Smallest change (a fraction of throughput) that counts as a regression or improvement.
#: A practical floor: a statistically sure change smaller than this is reported as unchanged
#: or inconclusive, never as a regression.
DEFAULT_THRESHOLD = 0.005

DEFAULT_ALPHA = 0.05


def scipy_special() -> ModuleType:
    """`scipy.special`, or MissingDependencyError naming the `compare` extra."""
    try:
        from scipy import special
    except ImportError:
        raise MissingDependencyError("scipy", "compare", "primbench compare") from None
    return special


def scipy_stats() -> ModuleType:
    """`scipy.stats`, or MissingDependencyError naming the `compare` extra."""
    try:
        from scipy import stats
    except ImportError:
        raise MissingDependencyError("scipy", "compare", "primbench compare") from None
    return stats


# --------------------------------------------------------------------------- run-to-run variance


def trigamma(x: np.ndarray | float) -> np.ndarray:
    return np.asarray(scipy_special().polygamma(1, x), dtype=float)


def trigamma_inverse(y: float) -> float:
    """x with trigamma(x) = y (Newton's method on 1/x, as in Smyth 2004)."""
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(50):
        tri = float(trigamma(x))
        dif = tri * (1.0 - tri / y) / float(scipy_special().polygamma(2, x))
        x += dif
        if -dif / x < 1e-8:
            break
    return x


@dataclass(frozen=True)
class Prior:
    """The suite's prior of the run-to-run variance (limma's ``squeezeVar``): `df0` degrees of
    freedom worth of variance `s0_sq` (of ln throughput per round or run)."""

    df0: float
    s0_sq: float


#: Fewest specializations with a variance of their own to fit the suite's prior.
PRIOR_MIN = 3


def fit_prior(s_sq: np.ndarray, df: np.ndarray) -> Prior | None:
    """Fit a scaled inverse-chi-square prior to per-specialization sample variances (Smyth
    2004, moment estimates on log variances). None with fewer than `PRIOR_MIN` usable ones."""
    ok = (df > 0) & (s_sq > 0) & np.isfinite(s_sq)
    if int(ok.sum()) < PRIOR_MIN:
        return None
    sp = scipy_special()
    s2, d = s_sq[ok], df[ok]
    e = np.log(s2) - sp.digamma(d / 2) + np.log(d / 2)
    emean = float(e.mean())
    evar = float(np.sum((e - emean) ** 2) / (e.size - 1) - np.mean(trigamma(d / 2)))
    if evar > 0:
        df0 = 2.0 * trigamma_inverse(evar)
        s0_sq = math.exp(emean + float(sp.digamma(df0 / 2)) - math.log(df0 / 2))
    else:
        df0 = math.inf
        s0_sq = math.exp(emean)
    # limma caps the prior at the residual df of the whole suite: never worth more data than exists
    return Prior(min(df0, float(d.sum())), s0_sq)


def moderated_variance(s_sq: np.ndarray, df: np.ndarray, prior: Prior | None) -> tuple[np.ndarray, np.ndarray]:
    """Posterior variances and their degrees of freedom: ``(df0 s0^2 + df s^2) / (df0 + df)``.
    Without a prior, the sample variances as they are (df 0 where there is none)."""
    if prior is None:
        return np.where(df > 0, s_sq, np.nan), df.astype(float)
    total = prior.df0 + df
    post = (prior.df0 * prior.s0_sq + df * np.nan_to_num(s_sq)) / total
    return post, total


# --------------------------------------------------------------------------- the verdict tests


def log_threshold(threshold: float) -> float:
    """The threshold on the log scale: a change matters when |ln(head/base)| > ln(1 + threshold)."""
    return math.log1p(threshold)


def t_test_p(d: np.ndarray, se: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Two-sided p-value of H0: d = 0, Student's t with `df` degrees of freedom."""
    t = scipy_stats().t
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * t.sf(a / se, df)
    p = np.where(se > 0, p, np.where(a > 0, 0.0, 1.0))
    return np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)


def equivalence_p(d: np.ndarray, se: np.ndarray, df: np.ndarray, delta: float) -> np.ndarray:
    """TOST p-value of H0: |d| >= delta (the change is at least the threshold), t-tests."""
    t = scipy_stats().t
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.maximum(t.sf((d + delta) / se, df), t.cdf((d - delta) / se, df))
    p = np.where(se > 0, p, np.where(np.abs(d) < delta, 0.0, 1.0))
    return np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)


def change_interval(d: np.ndarray, se: np.ndarray, df: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - 2 alpha) interval of the change, head/base - 1: the one TOST at `alpha` uses."""
    q = scipy_stats().t.isf(alpha, df)
    return np.expm1(d - q * se), np.expm1(d + q * se)


def min_detectable_change(se: np.ndarray, df: np.ndarray, alpha: float, tested: int, delta: float) -> np.ndarray:
    """The smallest change these runs could flag: beyond the threshold and past the critical
    value of a lone change among `tested` (BH's first step is Bonferroni's, alpha / tested)."""
    q = scipy_stats().t.isf(alpha / (2 * max(1, tested)), df)
    return np.expm1(np.maximum(delta, q * se))


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """BH-adjusted p-values (q-values) across the specializations tested."""
    if p.size == 0:
        return p
    return np.asarray(scipy_stats().false_discovery_control(p, method="bh"), dtype=float)


def geometric_mean(ratios: Sequence[float]) -> float | None:
    r = np.asarray([x for x in ratios if x > 0 and math.isfinite(x)], dtype=float)
    if r.size == 0:
        return None
    return float(np.exp(np.mean(np.log(r))))


# --------------------------------------------------------------------------- suite-wide shifts

#: Fewest specializations for a suite-wide shift to be estimated and taken out.
SUITE_MIN = 5
#: Share of specializations that must move in the direction of the median for a shift to be
#: reported as a suite-wide finding.
SUITE_AGREEMENT = 0.75


@dataclass(frozen=True)
class SuiteShift:
    """The median change of a suite (log scale), how many moved its way, and whether that is
    a suite-wide finding: beyond the threshold and shared by `SUITE_AGREEMENT` of them."""

    shift: float
    count: int
    same_direction: int
    detected: bool


def suite_shift(d: np.ndarray, delta: float) -> SuiteShift | None:
    """The suite's common move, or None for fewer than `SUITE_MIN` specializations. Separate
    processes on the H200 moved whole suites together by 0.5-2 % (tests/benchmarks/rounds/);
    each specialization is judged against the suite's median rather than against zero."""
    d = d[np.isfinite(d)]
    if d.size < SUITE_MIN:
        return None
    c = float(np.median(d))
    same = int(np.sum(np.sign(d) == np.sign(c))) if c != 0 else 0
    return SuiteShift(c, int(d.size), same, abs(c) >= delta and same >= SUITE_AGREEMENT * d.size)


#: Normal draws behind `centred_standard_errors` (fewer per draw for large suites).
CENTRING_DRAWS = 4000


def centred_standard_errors(se: np.ndarray, family: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Standard errors of d_i - median(d over `family`), for specializations of unequal noise.

    Var(d_i - m) = se_i^2 - 2 Cov(d_i, m) + Var(m); the median's variance and its covariance
    with each member are simulated from independent normal changes with the family's standard
    errors (a quiet specialization carries the noise the noisy ones put into the median, which
    large-sample formulas get wrong for small, mixed suites). Seeded: the same inputs give the
    same answer. Non-members get Cov = 0."""
    usable = family & np.isfinite(se) & (se > 0)
    members = se[usable]
    n = members.size
    if n == 0:
        return se
    draws = int(min(CENTRING_DRAWS, max(200, 2_000_000 // n)))
    z = np.random.default_rng(seed).standard_normal((draws, n)) * members
    med = np.median(z, axis=1)
    centred_med = med - med.mean()
    var_median = float(np.mean(centred_med**2))
    cov = np.zeros(se.shape)
    cov[usable] = (z - z.mean(axis=0)).T @ centred_med / draws
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.maximum(se**2 - 2 * cov + var_median, 0.0))


#: Fewest specializations for the suite's empirical check of the noise model.
EMPIRICAL_NULL_MIN = 10


def empirical_null_scale(d: np.ndarray, se: np.ndarray, df: np.ndarray, min_n: int = EMPIRICAL_NULL_MIN) -> float:
    """How much wider than the noise model predicts a suite's changes spread (Efron's empirical
    null, scale only, never below 1).

    Most specializations of a suite do not change, so their t-scores d/se, mapped to normal
    scores through their own t distributions, should spread like N(0, 1). A wider robust spread
    (1.4826 x their median absolute deviation) means the rounds saw less of the run-to-run
    variance than there is (in simulation: rounds that see 70 % of it failed a third to all of
    the no-change suites); every standard error is then widened by that factor."""
    ok = np.isfinite(d) & np.isfinite(se) & (se > 0) & (df > 0)
    if int(ok.sum()) < min_n:
        return 1.0
    st = scipy_stats()
    u = st.norm.ppf(np.clip(st.t.cdf(d[ok] / se[ok], df[ok]), 1e-300, 1 - 1e-16))
    mad = float(np.median(np.abs(u - np.median(u))))
    return max(1.0, 1.482602218505602 * mad)
