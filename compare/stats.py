"""The statistics of `primbench compare`: the one home of each.

All effects are measured on the log scale: ``d = ln(head / base)`` of a throughput, so a
change and its inverse weigh the same and variances of relative quantities add.

* Within-run standard error of a run's mean (from per-batch times, or from the summary's
  noise and batch count when batches were not written).
* Run-to-run variability: a relative coefficient of variation per run, from history
  when the caller has it, else a documented prior.
* A z-test of "no change" and an equivalence test (TOST: is |d| smaller than the
  threshold?), both on ``d``; the threshold itself is applied to the point estimate.
* An empirical-null check across a suite: standard errors widened when the changes spread
  wider than the noise model predicts.
* Benjamini–Hochberg false-discovery control across specializations.
* For evaluation only: NVBench's legacy rule and a Mann–Whitney U test on batches.

SciPy is imported on first use; without it `MissingDependencyError` names the extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from primbench.errors import MissingDependencyError
from primbench.rounds import log_sd

#: Smallest change (a fraction of throughput) that counts as a regression or improvement.
#: A practical floor: a statistically sure change smaller than this is reported as unchanged
#: or inconclusive, never as a regression.
DEFAULT_THRESHOLD = 0.005

DEFAULT_ALPHA = 0.05

#: Window of the seed's noise estimate, used when a summary-only file does not say.
DEFAULT_BATCH_WINDOW = 10


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


# --------------------------------------------------------------------------- within-run noise


@dataclass(frozen=True)
class WithinRun:
    """A run's own noise: `se` is the standard error of ln(mean time per call);
    `cv` the batch-to-batch coefficient of variation; `n_eff` the batches it rests on after
    allowing for autocorrelation between neighbouring batches."""

    se: float
    cv: float
    n: int
    n_eff: float
    source: str  # "batches" or "summary"


def per_call_times(batch_ms: Sequence[float], kernel_calls: Sequence[float | None],
                   default_calls: float | None = None) -> np.ndarray:
    """Milliseconds per kernel call of each batch (batches with no time or calls dropped)."""
    ms = np.asarray(batch_ms, dtype=float)
    calls = np.array(
        [c if c is not None else (default_calls if default_calls is not None else 1.0) for c in kernel_calls],
        dtype=float,
    )
    ok = (ms > 0) & (calls > 0) & np.isfinite(ms) & np.isfinite(calls)
    return ms[ok] / calls[ok]


def lag1_autocorrelation(x: np.ndarray) -> float:
    """Sample lag-1 autocorrelation (0 for fewer than 3 values or no variance)."""
    if x.size < 3:
        return 0.0
    c = x - x.mean()
    denom = float(c @ c)
    if denom <= 0:
        return 0.0
    return float(c[:-1] @ c[1:]) / denom


def within_run_from_batches(times_per_call: np.ndarray) -> WithinRun | None:
    """Standard error of the log mean time from per-batch times per call.

    Uses the sample SD of ln(time) (n-1) over sqrt(n_eff), where
    ``n_eff = n (1 - r1) / (1 + r1)`` for a positive lag-1 autocorrelation r1 (drifting
    batches carry less information than independent ones). None for fewer than 2 batches."""
    n = int(times_per_call.size)
    if n < 2:
        return None
    logs = np.log(times_per_call)
    sd = float(np.std(logs, ddof=1))
    r1 = max(0.0, lag1_autocorrelation(logs))
    n_eff = max(2.0, n * (1.0 - r1) / (1.0 + r1)) if r1 > 0 else float(n)
    n_eff = min(n_eff, float(n))
    return WithinRun(se=sd / math.sqrt(n_eff), cv=sd, n=n, n_eff=n_eff, source="batches")


def within_run_from_summary(noise_percent: float, batches: int | None, window: int | None = None) -> WithinRun:
    """Standard error from the summary: the seed's noise (CV over the last batches, percent)
    over sqrt(batch count); the window size stands in when the count is unknown."""
    cv = max(0.0, noise_percent) / 100.0
    n = batches if batches and batches > 0 else (window or DEFAULT_BATCH_WINDOW)
    n = max(1, int(n))
    return WithinRun(se=cv / math.sqrt(n), cv=cv, n=n, n_eff=float(n), source="summary")


def run_to_run_cv_from_runs(values: Sequence[float]) -> float | None:
    """Coefficient of variation (SD of ln, n-1) of one specialization's throughput across
    several runs or rounds. None for fewer than 2 values."""
    return log_sd(values)


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


# --------------------------------------------------------------------------- reference rules (evaluation)


def nvbench_legacy(base_value: float, head_value: float, base_noise: float, head_noise: float) -> str:
    """NVBench's legacy compare rule: "same" when |relative diff| <= min(noises), else
    "slower" / "faster" (throughput: lower is slower). Noises are fractions."""
    diff = (head_value - base_value) / base_value
    if abs(diff) <= min(base_noise, head_noise):
        return "same"
    return "slower" if diff < 0 else "faster"


def mann_whitney_batches(base_times: Sequence[float], head_times: Sequence[float]) -> tuple[float, float]:
    """Two-sided Mann–Whitney U on per-call batch times, batches taken as iid samples.
    Returns (p-value, median shift of head over base as a fraction of time)."""
    b = np.asarray(base_times, dtype=float)
    h = np.asarray(head_times, dtype=float)
    res: Any = scipy_stats().mannwhitneyu(h, b, alternative="two-sided")
    shift = float(np.median(h) / np.median(b) - 1.0)
    return float(res.pvalue), shift


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


def median_variance_factor(n: int) -> float:
    """Variance of (d_i - median(d)) over Var(d_i), for n values: 1 + pi / (2 n)."""
    return 1.0 + math.pi / (2.0 * n)
