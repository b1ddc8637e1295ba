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

#: Run-to-run coefficient of variation of a run's mean throughput assumed when no history
#: is given: repeated runs of an unchanged copy kernel on the H200 differed by about 0.1 %
#: (DESIGN.md, GPU-FIGURES.md). It is raised to the noisier side's batch-to-batch CV
#: (see `default_run_to_run_cv`), since a kernel that is noisy within a run is not
#: expected to be steadier between runs.
DEFAULT_RUN_TO_RUN_CV = 0.001

#: Smallest change (a fraction of throughput) that counts as a regression or improvement.
#: Midway between no change and the smallest slowdown CI must catch (1 %): with the H200's
#: run-to-run CV of 0.1 % (0.14 % on a difference of two runs) both an A/A pair and a 1 %
#: slowdown are 3.5 standard deviations away from it.
DEFAULT_THRESHOLD = 0.005

DEFAULT_ALPHA = 0.05

#: Window of the seed's noise estimate, used when a summary-only file does not say.
DEFAULT_BATCH_WINDOW = 10


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


def default_run_to_run_cv(base_cv: float, head_cv: float) -> float:
    """The prior when history gives none: max(DEFAULT_RUN_TO_RUN_CV, either side's batch CV)."""
    return max(DEFAULT_RUN_TO_RUN_CV, base_cv, head_cv)


def run_to_run_cv_from_runs(values: Sequence[float]) -> float | None:
    """Coefficient of variation (SD of ln, n-1) of one specialization's throughput across
    several runs: what a history of baseline runs estimates. None for fewer than 2 runs."""
    v = np.asarray([x for x in values if x > 0], dtype=float)
    if v.size < 2:
        return None
    return float(np.std(np.log(v), ddof=1))


# --------------------------------------------------------------------------- the verdict tests


def log_threshold(threshold: float) -> float:
    """The threshold on the log scale: a change matters when |ln(head/base)| > ln(1 + threshold)."""
    return math.log1p(threshold)


def standard_error(base_se: np.ndarray, head_se: np.ndarray, run_to_run_cv: np.ndarray) -> np.ndarray:
    """SE of d = ln(head/base): each side's within-run SE and each run's own run-to-run deviation."""
    return np.sqrt(base_se**2 + head_se**2 + 2.0 * run_to_run_cv**2)


def z_test_p(d: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Two-sided p-value of H0: d = 0 (no change at all), z-test: 2 sf(|d| / se)."""
    norm = scipy_stats().norm
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * norm.sf(a / se)
    p = np.where(se > 0, p, np.where(a > 0, 0.0, 1.0))
    return np.clip(p, 0.0, 1.0)


#: Smallest number of specializations for the empirical-null check of the noise model.
EMPIRICAL_NULL_MIN = 20


def empirical_null_scale(z: np.ndarray, min_n: int = EMPIRICAL_NULL_MIN) -> float:
    """How much wider than N(0, 1) the z-scores d/se of a suite spread (Efron's empirical
    null, scale only): 1.4826 x their median absolute deviation around their median.

    Most specializations of a suite do not change, so their z-scores should spread like
    N(0, 1); a wider spread means the noise model (within-run SE plus the run-to-run prior)
    is too optimistic. Centred on the median, so a suite-wide shift (every kernel slower)
    does not count as spread. 1 for fewer than `min_n` values or a narrower spread."""
    z = z[np.isfinite(z)]
    if z.size < min_n:
        return 1.0
    mad = float(np.median(np.abs(z - np.median(z))))
    return max(1.0, 1.482602218505602 * mad)


def equivalence_p(d: np.ndarray, se: np.ndarray, delta: float) -> np.ndarray:
    """TOST p-value of H0: |d| >= delta (the change is at least the threshold), z-tests."""
    norm = scipy_stats().norm
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.maximum(norm.sf((d + delta) / se), norm.cdf((d - delta) / se))
    p = np.where(se > 0, p, np.where(np.abs(d) < delta, 0.0, 1.0))
    return np.clip(p, 0.0, 1.0)


def change_interval(d: np.ndarray, se: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - 2 alpha) interval of the change, head/base - 1: the one TOST at `alpha` uses."""
    z = float(scipy_stats().norm.isf(alpha))
    return np.expm1(d - z * se), np.expm1(d + z * se)


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
