"""The statistics of `primbench compare`: the one home of each.

All effects are measured on the log scale: ``d = ln(head / base)`` of a throughput, so a
change and its inverse weigh the same and variances of relative quantities add.

* Round variance: the sample variances of each specialization's rounds, moderated toward a
  prior fitted across the suite (Smyth 2004, limma's ``squeezeVar``; robustly, Phipson et al.
  2016: winsorized moments, outlying variances keep their own).
* t-tests of "no change" and of equivalence (TOST: is |d| smaller than a margin?), both on
  ``d`` with Welch-Satterthwaite degrees of freedom; the threshold itself is applied to the
  point estimate; the smallest change a row finds with 80 % power.
* A suite-wide shift: the change most rows share (`suite_centre`), tested against what A/A suites share, and taken out
  for the relative test of each specialization.
* Benjamini–Hochberg false-discovery control across specializations.

SciPy is imported on first use; without it `MissingDependencyError` names the extra.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from primbench.errors import MissingDependencyError

#: Smallest change (a fraction of throughput) that counts as a regression or improvement.
#: A practical floor: a statistically sure change smaller than this is reported as unchanged
#: or inconclusive, never as a regression. 0.3 %: at 64 MiB and above a run's value moves by
#: 0.02-0.2 % between processes (tests/benchmarks/variance/), so a 0.5 % floor alone would keep
#: the smallest detectable change (which cannot be below the floor) above 0.5 %.
DEFAULT_THRESHOLD = 0.003

DEFAULT_ALPHA = 0.05


#: The functions of `scipy.special` that compare uses: `scipy_special` returns them.
SPECIAL_FUNCTIONS = ("polygamma", "digamma", "chdtrc", "chdtri", "fdtrc", "ndtr", "ndtri", "stdtr", "stdtrit")

@functools.cache
def scipy_special() -> ModuleType:
    """`scipy.special`'s `SPECIAL_FUNCTIONS` (the very same objects), or MissingDependencyError naming
    the `compare` extra. Where `scipy.special` is not imported yet they come from its compiled ufuncs
    and `_basic` alone (`_special_functions`): the package's ``__init__`` imports SciPy's array-API
    layer, whose copy of NumPy's namespace touches every attribute of ``numpy`` and so imports
    numpy.f2py, numpy.testing and more (0.2 s of a two-file compare's 0.6 s)."""
    try:
        return sys.modules.get("scipy.special") or _special_functions()
    except ImportError:
        raise MissingDependencyError("scipy", "compare", "primbench compare") from None


def _special_functions() -> ModuleType:
    """`SPECIAL_FUNCTIONS` from ``scipy.special._ufuncs`` and ``scipy.special._basic``, imported
    under a not yet executed ``scipy.special`` package (its spec's bare module, taken out of
    `sys.modules` again): a later ``import scipy.special`` runs the package as ever and reuses
    those two modules. Any other layout of SciPy: ``from scipy import special``."""
    import importlib
    import importlib.util

    try:
        spec = importlib.util.find_spec("scipy.special")
        if spec is None or "scipy.special" in sys.modules:
            raise ImportError("scipy.special")
        sys.modules["scipy.special"] = importlib.util.module_from_spec(spec)
        try:
            ufuncs = importlib.import_module("scipy.special._ufuncs")
            basic = importlib.import_module("scipy.special._basic")
        finally:
            del sys.modules["scipy.special"]
        found = {"polygamma": basic.polygamma, "digamma": ufuncs.psi,
                 **{name: getattr(ufuncs, name) for name in SPECIAL_FUNCTIONS[2:]}}
    except (ImportError, AttributeError):
        from scipy import special

        return special
    out = ModuleType("scipy.special", "compare's functions of scipy.special (`SPECIAL_FUNCTIONS`)")
    out.__dict__.update(found)
    return out


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


#: Winsorizing of the log variances when the prior is fitted robustly: the lowest and highest
#: this fraction are pulled in to the quantile (Phipson et al. 2016 winsorize the same way).
WINSOR = 0.1
#: A variance above its prior's upper tail at this level is an outlier: it keeps its own
#: variance (no prior df) instead of being shrunk toward the suite's (robust moderation).
OUTLIER_P = 0.01


def median_of(x: Any, axis: int | None = None) -> Any:
    """``np.median(x, axis)`` of a float array: the same floats by numpy's own steps (`_median` of
    numpy.lib._function_base_impl: the partition at the same indices, the mean of the middle, its
    NaN check), without the masked-array check that imports numpy.ma (25 ms of every compare's
    start-up). An empty or non-float array is numpy's."""
    a = np.asanyarray(x)
    size = a.size if axis is None else a.shape[axis]
    if size == 0 or a.dtype.kind != "f":
        return np.median(a, axis=axis)
    if size > 2 and type(a) is np.ndarray and a.dtype == np.float64 and not (np.isnan(a).any() or (a == 0).any()):
        return _median_without_nan_or_zero(a, axis, size)
    kth = [size // 2 - 1, size // 2, -1] if size % 2 == 0 else [(size - 1) // 2, -1]
    part = np.partition(a, kth, axis=axis)
    at = 0 if axis is None else axis
    index = part.shape[at] // 2
    indexer: list[slice] = [slice(None)] * part.ndim
    indexer[at] = slice(index, index + 1) if part.shape[at] % 2 == 1 else slice(index - 1, index + 1)
    out = np.mean(part[tuple(indexer)], axis=at)
    last = part.take(-1, axis=at)
    nan = np.isnan(last)
    if nan.any():
        if isinstance(out, np.generic):
            return last
        np.copyto(out, last, where=nan)
    return out


def _median_without_nan_or_zero(a: np.ndarray, axis: int | None, size: int) -> Any:
    """`median_of` of a float64 array with no NaN and no zero: one partition, at the upper middle
    (numpy's partition at both middles and the end takes four times as long: 0.3 s of the 200
    medians of 100,000 draws in `suite_centre`). The lower middle is the largest value below it;
    with no signed zero, values that compare equal are the same float, so whichever of them a
    partition puts there, the middle values are numpy's, and so is their mean (their sum over 2).
    Without a NaN, numpy's NaN check changes nothing."""
    half = size // 2
    part = np.partition(a, half, axis=axis)
    at = 0 if axis is None else axis
    upper = part.take(half, axis=at)
    if size % 2 == 1:
        return upper / 1.0  # numpy's mean of the one middle value (a sum over its count)
    below: list[slice] = [slice(None)] * part.ndim
    below[at] = slice(0, half)
    return (part[tuple(below)].max(axis=at) + upper) / 2.0


def quantiles(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(x, q)`` of a 1-d float array (its default, linear method): the same floats by
    numpy's own steps (`_quantile`, `_get_indexes`, `_get_gamma`, `_lerp` of
    numpy.lib._function_base_impl), its partition of a copy at the same indices included, but
    the indices put in order without `np.unique`, whose masked-array check imports numpy.ma (25 ms
    of every compare's start-up). An empty array, or one with a NaN, is numpy's."""
    n = x.size
    if n == 0 or np.isnan(x).any():
        return np.asarray(np.quantile(x, q))
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above, below = virtual >= n - 1, virtual < 0
    previous[above] = following[above] = -1
    previous[below] = following[below] = 0
    previous_at, following_at = previous.astype(np.intp), following.astype(np.intp)
    arr = x.flatten()
    arr.partition(np.array(sorted({0, -1, *previous_at.tolist(), *following_at.tolist()}), dtype=np.intp))
    gamma = virtual - previous
    a, b = arr[previous_at], arr[following_at]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def log_variance_moments(s_sq: np.ndarray, df: np.ndarray, *, winsor: float | None = None,
                         median: bool = False) -> tuple[float, float]:
    """Smyth's (2004) moments of sample variances `s_sq` on `df` degrees of freedom: the mean of
    e = ln s^2 - digamma(df / 2) + ln(df / 2), and e's variance beyond what sampling gives
    (its sample variance less the mean trigamma(df / 2)), the two a scaled inverse-chi-square
    prior is fitted to. `winsor`: the lowest and highest fraction of e pulled in to its quantiles
    first (5 or more values; Phipson et al. 2016). `median`: e's median and its MAD (as a normal
    SD) in place of its mean and SD, so that a minority of outlying variances moves neither."""
    sp = scipy_special()
    e = np.log(s_sq) - sp.digamma(df / 2) + np.log(df / 2)
    if winsor is not None and e.size >= 5:
        lo, hi = quantiles(e, np.array([winsor, 1 - winsor]))
        e = np.clip(e, lo, hi)
    if median:
        centre = float(median_of(e))
        spread = MAD_TO_SD * float(median_of(np.abs(e - centre)))
        return centre, spread**2 - float(np.mean(trigamma(df / 2)))
    emean = float(e.mean())
    return emean, float(np.sum((e - emean) ** 2) / (e.size - 1) - np.mean(trigamma(df / 2)))


#: A median absolute deviation as the standard deviation of normal data.
MAD_TO_SD = 1.4826


def fit_prior(s_sq: np.ndarray, df: np.ndarray, *, robust: bool = True) -> Prior | None:
    """Fit a scaled inverse-chi-square prior to per-specialization sample variances (Smyth
    2004, moment estimates on log variances). With `robust` (the default) the log variances are
    winsorized at `WINSOR` before the moments, so that a few noisy specializations do not set the
    prior of the quiet ones (Phipson et al. 2016). None with fewer than `PRIOR_MIN` usable ones."""
    ok = (df > 0) & (s_sq > 0) & np.isfinite(s_sq)
    if int(ok.sum()) < PRIOR_MIN:
        return None
    sp = scipy_special()
    d = df[ok]
    emean, evar = log_variance_moments(s_sq[ok], d, winsor=WINSOR if robust else None)
    if evar > 0:
        df0 = 2.0 * trigamma_inverse(evar)
        s0_sq = math.exp(emean + float(sp.digamma(df0 / 2)) - math.log(df0 / 2))
    else:
        df0 = math.inf
        s0_sq = math.exp(emean)
    # never worth more data than exists: at most the residual df of the whole suite
    return Prior(min(df0, float(d.sum())), s0_sq)


def outlying(s_sq: np.ndarray, df: np.ndarray, prior: Prior) -> np.ndarray:
    """Which variances lie beyond their prior's upper tail (`OUTLIER_P`): s^2/s0^2 against
    F(df, df0). They keep their own variance in `moderated_variance`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.nan_to_num(s_sq / prior.s0_sq, nan=0.0)
        if math.isinf(prior.df0):
            p = scipy_special().chdtrc(df, df * ratio)
        else:
            p = scipy_special().fdtrc(df, prior.df0, ratio)
    return (df > 0) & (np.nan_to_num(p, nan=1.0) < OUTLIER_P)


def moderated_over(s_sq: np.ndarray, df: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Variances moderated across the suite relative to what was predicted for each
    (`predicted`, positive): `fit_prior` on ``s_sq / predicted``, `moderated_variance` of that
    ratio, scaled back; with their degrees of freedom. None where no prior could be fitted (the
    variances then stand as they are)."""
    ratio = s_sq / predicted
    fit = fit_prior(ratio, df)
    if fit is None:
        return None
    post, post_df = moderated_variance(ratio, df, fit)
    return post * predicted, post_df


def moderated_variance(s_sq: np.ndarray, df: np.ndarray, prior: Prior | None) -> tuple[np.ndarray, np.ndarray]:
    """Posterior variances and their degrees of freedom: ``(df0 s0^2 + df s^2) / (df0 + df)``;
    an outlying variance (`outlying`) keeps its own. Without a prior, the sample variances as
    they are (df 0 where there is none)."""
    if prior is None:
        return np.where(df > 0, s_sq, np.nan), df.astype(float)
    out = outlying(s_sq, df, prior)
    own = np.nan_to_num(s_sq)
    if math.isinf(prior.df0):
        return np.where(out, own, prior.s0_sq), np.where(out, df, math.inf)
    total = np.where(out, df, prior.df0 + df).astype(float)
    post = np.where(out, own, (prior.df0 * prior.s0_sq + df * own) / (prior.df0 + df))
    return post, total


#: The unit roundoff of a float (2^-53): an addition's error is at most this times its result.
_UNIT = 2.0**-53


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a + b rounded, and the error of that rounding, exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def exact_sums(parts: np.ndarray) -> np.ndarray:
    """`math.fsum` of each row of `parts` (rows x terms), vectorised: the sum of the terms rounded
    once, so the same float as ``math.fsum(row)`` whatever the order. A row's float sum and the
    exact errors of its additions (TwoSum) give the sum to within far less than half a unit in the
    last place, and exactly where the errors' own sum did not round (then even a sum on the
    midpoint between two floats is rounded as fsum rounds it, to even); a row whose sum lies too
    near such a midpoint to tell, is zero, or is not finite is summed by `math.fsum` itself."""
    parts = np.asarray(parts, dtype=float)
    rows, k = parts.shape
    if k == 0:
        return np.zeros(rows)
    if k == 1:
        return parts[:, 0] + 0.0  # fsum([x]) is x, but 0.0 for -0.0
    s, error = parts[:, 0], np.zeros(rows)
    spread = np.zeros(rows)
    exact = np.ones(rows, dtype=bool)  # the errors' sum is exact: s + error is the row's sum itself
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(1, k):
            s, e = _two_sum(s, parts[:, j])
            error, lost = _two_sum(error, e)  # error + e, and what that rounding lost
            exact &= lost == 0
            spread = spread + np.abs(e)
        out, rest = _two_sum(s, error)
        gap = np.minimum(np.nextafter(out, np.inf) - out, out - np.nextafter(out, -np.inf))
        # where the errors' sum is exact, out = s + error rounded once (to even on a tie, as fsum
        # rounds) is fsum's value even on a midpoint (a quarter of the rows of 3 rounds' logs)
        unsure = ~exact & (np.abs(rest) + 2.0 * k * _UNIT * spread + k * 5e-324 >= gap / 2)
    fallback = ~np.isfinite(out) | ~np.isfinite(spread) | (out == 0) | unsure
    zeros = fallback & ~(parts != 0).any(axis=1)
    if k < 63 and zeros.any():  # rows of zeros alone (rounds of equal values: lag products of 0)
        fallback &= ~zeros
        out[zeros] = _sums_of_zeros(parts[zeros])
    for i in np.flatnonzero(fallback):
        out[i] = math.fsum(parts[i].tolist())
    return out


def _sums_of_zeros(zeros: np.ndarray) -> np.ndarray:
    """`math.fsum` of each row of `zeros` (rows x terms, every term 0.0 or -0.0, fewer than 63):
    what it gives depends on the terms' signs alone, so it is asked once per pattern of signs
    (133,000 rows of a comparison of 100,000 specializations had one of two patterns)."""
    codes = (np.signbit(zeros).astype(np.int64) << np.arange(zeros.shape[1], dtype=np.int64)).sum(axis=1)
    first = dict(zip(codes[::-1].tolist(), range(len(codes) - 1, -1, -1), strict=True))  # each pattern's first row
    patterns = np.array(sorted(first), dtype=np.int64)
    sums = np.array([math.fsum(zeros[first[c]].tolist()) for c in patterns.tolist()])
    return sums[np.searchsorted(patterns, codes)]


def grouped_sums(values: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """`math.fsum` of the `values` of each group (`group`: each value's group, 0 to groups - 1),
    through `exact_sums` (0.0 for a group without values)."""
    values = np.asarray(values, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    counts = np.bincount(group, minlength=groups)
    width = int(counts.max()) if counts.size else 0
    if width <= 1:
        out = np.zeros(groups)
        out[group] = values
        return out + 0.0
    order = np.argsort(group, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    sorted_group = group[order]
    position = np.arange(group.size) - starts[sorted_group]
    table = np.zeros((groups, width))
    table[sorted_group, position] = values[order]
    return exact_sums(table)


def satterthwaite(terms: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance estimates, each
    (variance, df); a term without df (0) counts as known exactly."""
    total = math.fsum(v for v, _ in terms)
    denom = math.fsum(v * v / d for v, d in terms if d > 0 and math.isfinite(d) and v > 0)
    if total <= 0:
        return 0.0
    return math.inf if denom <= 0 else total * total / denom


def satterthwaite_rows(v: np.ndarray, df: np.ndarray) -> np.ndarray:
    """`satterthwaite` of each row of terms, ``v`` and ``df`` (rows x terms), for arrays of them
    (the same floats: its sums are `exact_sums`); a term of variance 0 is a term left out."""
    v, df = np.asarray(v, dtype=float), np.asarray(df, dtype=float)
    total = exact_sums(v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ok = (df > 0) & np.isfinite(df) & (v > 0)
        denom = exact_sums(np.where(ok, v * v / np.where(ok, df, 1.0), 0.0))
        out = np.where(denom <= 0, math.inf, total * total / np.where(denom <= 0, 1.0, denom))
    return np.where(total <= 0, 0.0, out)


def satterthwaite_pair(v1: np.ndarray, df1: np.ndarray, v2: np.ndarray, df2: np.ndarray) -> np.ndarray:
    """`satterthwaite` of two terms per element, (v1, df1) and (v2, df2), for arrays of them."""
    v1, v2 = np.asarray(v1, dtype=float), np.asarray(v2, dtype=float)
    df1, df2 = np.asarray(df1, dtype=float), np.asarray(df2, dtype=float)
    total = v1 + v2

    def part(v: np.ndarray, d: np.ndarray) -> np.ndarray:
        ok = (d > 0) & np.isfinite(d) & (v > 0)
        return np.where(ok, np.divide(v * v, d, out=np.zeros_like(v), where=ok), 0.0)

    denom = part(v1, df1) + part(v2, df2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(denom > 0, total * total / np.where(denom > 0, denom, 1.0), np.inf)
    return np.where(total > 0, out, 0.0)


# --------------------------------------------------------------------------- the verdict tests


def log_threshold(threshold: float) -> float:
    """The threshold on the log scale: a change matters when |ln(head/base)| > ln(1 + threshold)."""
    return math.log1p(threshold)


def t_sf(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Upper tail of Student's t (the normal where df is infinite), through `scipy.special`."""
    sp = scipy_special()
    x, df = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(df, dtype=float))
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(df), sp.ndtr(-x), sp.stdtr(np.where(np.isinf(df), 1.0, df), -x))


def t_isf(q: float | np.ndarray, df: np.ndarray) -> np.ndarray:
    """The x with upper tail `q` (Student's t; the normal where df is infinite)."""
    sp = scipy_special()
    q, df = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(df, dtype=float))
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(df), -sp.ndtri(q), sp.stdtrit(np.where(np.isinf(df), 1.0, df), 1.0 - q))


def t_test_p(d: np.ndarray, se: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Two-sided p-value of H0: d = 0, Student's t with `df` degrees of freedom."""
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * t_sf(a / se, df)
    p = np.where(se > 0, p, np.where(a > 0, 0.0, 1.0))
    return np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)


def equivalence_p(d: np.ndarray, se: np.ndarray, df: np.ndarray, delta: float | np.ndarray) -> np.ndarray:
    """TOST p-value of H0: |d| >= delta (the change is at least the threshold), t-tests."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.maximum(t_sf((d + delta) / se, df), t_sf(-(d - delta) / se, df))
    p = np.where(se > 0, p, np.where(np.abs(d) < delta, 0.0, 1.0))
    return np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)


def change_interval(d: np.ndarray, se: np.ndarray, df: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - 2 alpha) interval of the change, head/base - 1: the one TOST at `alpha` uses."""
    q = t_isf(alpha, df)
    return np.expm1(d - q * se), np.expm1(d + q * se)


#: The power at which the smallest detectable change is quoted (the usual minimum detectable effect).
POWER = 0.8


def min_detectable_change(se: np.ndarray, df: np.ndarray, alpha: float, tested: int, delta: float) -> np.ndarray:
    """The smallest change these runs find with `POWER` (80 %): a lone change among `tested` must
    pass the critical value of BH's first step (Bonferroni's, alpha / tested, two-sided) and the
    threshold `delta`; it does so 80 % of the time when it lies t_0.8 standard errors beyond
    both."""
    crit = _quantiles(alpha / (2 * max(1, tested)), df)
    beyond = _quantiles(1.0 - POWER, df)
    return np.expm1(np.maximum(delta, crit * se) + beyond * se)


#: The last quantiles `_quantiles` computed: (q, the df's bytes, the quantiles).
_LAST_QUANTILES: list[tuple[float, bytes, np.ndarray]] = []


def _quantiles(q: float, df: np.ndarray) -> np.ndarray:
    """`t_isf(q, df)`, the last few kept: a comparison asks `min_detectable_change` for the same df
    three times (the change it finds, the noise's part of it, the absolute test's), and Student's
    inverse is the slowest of its functions (0.05 s a call at 100,000 specializations)."""
    df = np.asarray(df, dtype=float)
    key = df.tobytes()
    for known_q, known_df, quantiles in _LAST_QUANTILES:
        if known_q == q and known_df == key:
            return quantiles
    quantiles = t_isf(q, df)
    _LAST_QUANTILES[:] = [(q, key, quantiles), *_LAST_QUANTILES[:3]]
    return quantiles


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """BH-adjusted p-values (q-values) across the specializations tested."""
    if p.size == 0:
        return p
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty_like(q)
    out[order] = np.clip(q, 0.0, 1.0)
    return out


def geometric_mean(ratios: Sequence[float]) -> float | None:
    r = np.asarray([x for x in ratios if x > 0 and math.isfinite(x)], dtype=float)
    if r.size == 0:
        return None
    return float(np.exp(np.mean(np.log(r))))


# --------------------------------------------------------------------------- suite-wide shifts

#: Fewest specializations for a suite-wide shift to be estimated, tested and taken out.
SUITE_MIN = 5


#: Normal draws behind `centred_standard_errors` (fewer per draw for large suites).
CENTRING_DRAWS = 4000
#: Largest suite whose centre is its changes' densest point (`suite_centre`); a larger one takes the
#: median (the density costs the square of the rows, every draw of `centred_standard_errors`).
CENTRE_MODE_MAX = 64
#: The density's bandwidth, in each row's own standard errors (`suite_centre`). 2, not 1: chosen on
#: the first evaluation's files and the second's 64 MiB (in-sample); at 1 the simulated no-change
#: suites with unequal sides or correlated rounds failed 5-6 %, at 2 as often as with the median.
CENTRE_BANDWIDTH = 2.0
#: Mean-shift steps that refine the densest candidate (`suite_centre`).
CENTRE_STEPS = 3


def shift_tail_p(shift: float, quantiles: Sequence[float], levels: Sequence[float], pairs: int,
                 scale: float = 1.0) -> float:
    """How often identical processes moved apart at least as far as `shift` as a whole: P(|S| >=
    |shift| / scale) under the measured A/A suite shifts S, given by their `quantiles` at `levels`
    (the empirical distribution function between them linear, from 0 at 0) over `pairs` pairs;
    never below 1 / (pairs + 1), what that many pairs can tell. `scale` < 1 for sides of several
    runs (their means move less). No quantiles: 0 (nothing measured, no constraint)."""
    if not quantiles or pairs <= 0:
        return 0.0
    x = abs(shift) / scale
    cdf = float(np.interp(x, np.concatenate([[0.0], np.asarray(quantiles, dtype=float)]),
                          np.concatenate([[0.0], np.asarray(levels, dtype=float)])))
    return max(1.0 - cdf, 1.0 / (pairs + 1))


def suite_centre(x: np.ndarray, se: np.ndarray) -> np.ndarray:
    """The change most of a suite's rows share, for each row of `x` (draws x rows): the densest point
    of the rows' changes, a kernel density in which every row is one vote, spread over
    `CENTRE_BANDWIDTH` times its own standard error `se`; the median for more than `CENTRE_MODE_MAX`
    rows. Where most rows moved, by different amounts (a change to shared code, six of ten kernels
    planted), the median moves with them and every unchanged row reads as changed; the densest point
    stays with the largest group that agrees. The candidate with most rows near it (ties: the first),
    then `CENTRE_STEPS` mean-shift steps (each row weighted by its density term over its variance)."""
    x = np.atleast_2d(x)
    if x.shape[1] > CENTRE_MODE_MAX:
        # a few draws at a time: the median partitions a copy of what it is given
        return np.concatenate([median_of(x[i:i + 16], axis=1) for i in range(0, x.shape[0], 16)])
    width = CENTRE_BANDWIDTH * se
    out = np.empty(x.shape[0])
    for i in range(0, x.shape[0], 64):
        block = x[i:i + 64]
        z = (block[:, None, :] - block[:, :, None]) / width  # draw x candidate x row
        at = np.argmax(np.exp(-0.5 * z * z).sum(axis=2), axis=1)
        s = np.take_along_axis(block, at[:, None], axis=1)[:, 0]
        for _ in range(CENTRE_STEPS):
            w = np.exp(-0.5 * ((block - s[:, None]) / width) ** 2) / (se * se)
            total = w.sum(axis=1)
            s = np.where(total > 0, (w * block).sum(axis=1) / np.where(total > 0, total, 1.0), s)
        out[i:i + 64] = s
    return out


def centred_standard_errors(se: np.ndarray, family: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Standard errors of d_i - c, c the suite's centre (`suite_centre` of d over `family`), for
    specializations of unequal noise.

    Var(d_i - c) = se_i^2 - 2 Cov(d_i, c) + Var(c); the centre's variance and its covariance
    with each member are simulated from independent normal changes with the family's standard
    errors (a quiet specialization carries the noise the noisy ones put into the centre, which
    large-sample formulas get wrong for small, mixed suites). Seeded: the same inputs give the
    same answer. Non-members get Cov = 0."""
    usable = family & np.isfinite(se) & (se > 0)
    members = se[usable]
    n = members.size
    if n == 0:
        return se
    z, centre = _centre_draws(members, seed)
    draws = z.shape[0]
    deviation = centre - centre.mean()
    var_centre = float(np.mean(deviation**2))
    cov = np.zeros(se.shape)
    z -= z.mean(axis=0)  # in place: at 100,000 specializations z is 160 MB
    cov[usable] = z.T @ deviation / draws
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.maximum(se**2 - 2 * cov + var_centre, 0.0))


def centre_variance(se: np.ndarray, *, seed: int = 0) -> float:
    """Variance of the centre (`suite_centre`) of independent normal changes with standard errors
    `se` (simulated, seeded as `centred_standard_errors`): what a suite's shift varies by from its
    members' own noise alone."""
    members = se[np.isfinite(se) & (se > 0)]
    if members.size == 0:
        return 0.0
    return float(np.var(_draw_centres(members, seed)))


#: The centres of the last draws of `_centre_draws`, with their arguments.
_LAST_CENTRES: list[tuple[bytes, int, np.ndarray]] = []


def _centre_draws(members: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded normal changes with standard errors `members` (draws x members) and the centre of
    each draw, for `centred_standard_errors` and `centre_variance`; the centres are kept
    (`_draw_centres`)."""
    n = members.size
    draws = int(min(CENTRING_DRAWS, max(200, 2_000_000 // n)))
    z = np.random.default_rng(seed).standard_normal((draws, n))
    z *= members
    centre = suite_centre(z, members)
    _LAST_CENTRES[:] = [(members.tobytes(), seed, centre)]
    return z, centre


def _draw_centres(members: np.ndarray, seed: int) -> np.ndarray:
    """The centres of `_centre_draws`: a comparison asks for the same ones twice (the suite's own
    standard errors, where the empirical null does not widen them), so the last are kept (at
    100,000 specializations the draws take 0.4 s)."""
    if _LAST_CENTRES and _LAST_CENTRES[0][1] == seed and _LAST_CENTRES[0][0] == members.tobytes():
        return _LAST_CENTRES[0][2]
    return _centre_draws(members, seed)[1]


#: Fewest specializations for the suite's empirical check of the noise model.
EMPIRICAL_NULL_MIN = 10


def empirical_null_spread(d: np.ndarray, se: np.ndarray, df: np.ndarray, min_n: int = EMPIRICAL_NULL_MIN) -> float:
    """How much wider than the noise model predicts a suite's changes spread (Efron's empirical
    null, scale only, never below 1). The standard errors are widened by it up to `WIDEN_MAX`;
    beyond that the model is off by more than the suite can correct.

    Most specializations of a suite do not change, so their t-scores d/se, mapped to normal
    scores through their own t distributions, should spread like N(0, 1). A wider robust spread
    (1.4826 x their median absolute deviation) means the rounds saw less of the run-to-run
    variance than there is (in simulation: rounds that see 70 % of it failed a third to all of
    the no-change suites); every standard error is then widened by that factor."""
    ok = np.isfinite(d) & np.isfinite(se) & (se > 0) & (df > 0)
    if int(ok.sum()) < min_n:
        return 1.0
    # each t-score's normal score, from its own tail (the upper tail of a large negative score
    # rounds to 1 and would read as -8.2 whatever its size)
    t = d[ok] / se[ok]
    u = np.sign(t) * -scipy_special().ndtri(np.clip(t_sf(np.abs(t), df[ok]), 1e-300, 0.5))
    mad = float(median_of(np.abs(u - median_of(u))))
    return max(1.0, 1.482602218505602 * mad)


#: The empirical null widens the standard errors at most this much (`empirical_null_spread`, capped):
#: a large minority of the suite that moved together (a simulated -3 % on 4 of 10 kernels) pulls
#: the spread wide, 4-5x, which would hide the change it is made of.
WIDEN_MAX = 3.0


#: The confidence level of `prior_upper_ratio`.
PRIOR_BOUND_LEVEL = 0.95


def prior_upper_ratio(df: float, level: float = PRIOR_BOUND_LEVEL) -> float:
    """How much larger than a variance's estimate its standard deviation may be, at `level`
    (one-sided, chi-square with `df` degrees of freedom): sqrt(df / chi2 lower quantile). A
    prior measured with 6.6 df (64 MiB's for a run without rounds) may be 2.1x too small at 95 %,
    one with 12.5 df 1.6x. `WIDEN_MAX` for no or infinite df."""
    if not (df > 0 and math.isfinite(df)):
        return WIDEN_MAX
    low = float(scipy_special().chdtri(df, level))  # P(chi2 > low) = level
    return min(WIDEN_MAX, math.sqrt(df / low)) if low > 0 else WIDEN_MAX


#: Successive rounds count as correlated when their pooled lag-1 correlation is this many
#: standard errors above what independent rounds give (a one-sided test at about 2.3 %).
AUTOCORRELATION_Z = 2.0
#: The largest lag-1 correlation `round_autocorrelation` returns.
AUTOCORRELATION_MAX = 0.9


def _ar1_moments(rho: float, n: int) -> tuple[float, float]:
    """For n AR(1) rounds of unit variance and lag-1 correlation rho, deviations from their mean:
    E[sum of squares] and E[sum of successive products] (traces of the centred covariance)."""
    idx = np.arange(n)
    cov = rho ** np.abs(idx[:, None] - idx[None, :])
    centre = np.eye(n) - 1.0 / n
    centred = centre @ cov @ centre
    return float(np.trace(centred)), float(np.trace(centred, offset=1))


def round_autocorrelation(lag_sum: float, ss_sum: float, counts: Sequence[int]) -> float:
    """The lag-1 correlation of successive rounds, pooled over runs of (typically) n rounds: the
    sum over runs of the products of successive deviations from the run's mean over their sum of
    squares is, for AR(1) rounds, biased low (-1/n for independent rounds, about 0.22 for rho 0.5
    at n = 9), so rho is the value whose expected ratio (`_ar1_moments`) matches it. Rounds measured
    on an H200 are near independent (lag-1 -0.37 to +0.22, tests/benchmarks/variance/), so this is
    0 unless the ratio is `AUTOCORRELATION_Z` standard errors (1/sqrt(pairs)) above -1/n."""
    # the sum of max(0, n - 1), in NumPy (200,000 runs): the same integer
    pairs = int(np.maximum(np.asarray(counts, dtype=np.int64) - 1, 0).sum())
    if not (ss_sum > 0 and pairs > 0):
        return 0.0
    n = max(2, round(pairs / len(counts) + 1))
    ratio = lag_sum / ss_sum
    if ratio + 1 / n <= AUTOCORRELATION_Z / math.sqrt(pairs):
        return 0.0

    def expected(rho: float) -> float:
        ss, lag = _ar1_moments(rho, n)
        return lag / ss

    if ratio >= expected(AUTOCORRELATION_MAX):
        return AUTOCORRELATION_MAX
    low, high = 0.0, AUTOCORRELATION_MAX
    for _ in range(40):  # the expected ratio rises with rho
        mid = (low + high) / 2
        low, high = (mid, high) if expected(mid) < ratio else (low, mid)
    return (low + high) / 2


def autocorrelation_inflation(rho: float, n: np.ndarray | float) -> np.ndarray:
    """For an AR(1) sequence of n rounds with lag-1 correlation rho: the variance of their mean
    over what s^2 / n says, n Var(mean) / E[s^2] (1 for rho = 0 or n < 2)."""
    n_arr = np.atleast_1d(np.asarray(n, dtype=float))
    out = np.ones_like(n_arr)
    if rho == 0:
        return out
    for m in sorted(set(np.rint(n_arr).tolist())):  # not np.unique: its masked-array check imports numpy.ma
        if m < 2:
            continue
        k = int(m)
        ss, _ = _ar1_moments(rho, k)
        idx = np.arange(k)
        var_mean = float(np.sum(rho ** np.abs(idx[:, None] - idx[None, :]))) / k  # n Var(mean)
        out[np.rint(n_arr) == m] = var_mean / (ss / (k - 1))
    return out
