"""Change-point detection: at which commit did a series' level shift, by how much, how surely;
where did it drift; and which few runs were bad (an outlier burst) rather than a change.

Everything works on the logarithm of the values (so shifts are relative and a 5 % drop looks
the same at 1 TB/s and at 10 GB/s).

1. **Noise, first guess.** The point-to-point noise ``sigma`` from the successive differences
   of ``ln x`` less their median (a level shift touches one difference, a bad run two, a steady
   drift only moves the median): ``1.4826 · MAD``, differences beyond 3 spreads dropped and the
   spread recomputed until it settles, ``sigma = spread / √2``.
2. **Where: an optimal segmentation.** PELT (Killick, Fearnhead & Eckley 2012;
   `history.segmentation.pelt`) finds the segmentation that minimises the weighted squared
   error plus ``_PENALTY · ln n`` per change point, exactly (over 1,000 points: coarse to
   fine, `history.segmentation.search`), each point weighted by its own
   inverse variance: ``sigma**2`` plus what its own uncertainty (`uncertainty`: the spread of
   its runs) has beyond the typical one. So a commit whose runs were noisy weighs less, and
   levels that return (0, +3 %, 0, +3 %) are found, which no first split of a greedy binary
   segmentation separates.
3. **Bursts.** `history.segmentation.classify` sorts the short segments: an inner excursion of at
   most 3 points (`DEFAULT_MAX_BURST`) that returns to the level around it, at least 5 of its
   points' noise away (`DEFAULT_BURST_Z`: bad runs, not the worst commits of a small regression
   that lasted longer), is an outlier burst
   (`Changes.bursts`, reported from 2 points on; one bad run is simply left out); its points
   take part in no later level or test. Any other segment shorter than `min_size` joins its
   nearer neighbour. A regression fixed 4 or more commits later is two change points.
4. **Noise, again.** From the residuals about the levels found and, in each segment, its
   strongest short excursion (4-16 points, as step 5b's scan finds it) where that stands out
   at the loose level `_CLEAN_ALPHA` = 0.1 in the noise first measured, its autocorrelation
   included (`_with_excursions`: a regression fixed a few commits later that PELT's penalty
   left uncut is not noise; a flat series loses an interval to this about one time in 10 or less),
   bursts left out, beyond 3 spreads dropped; degrees of freedom: the residuals kept less the
   levels; with the lag-1
   autocorrelation rho of those residuals (less its bias and half a standard error): a mean's
   variance is inflated by ``(1 + rho) / (1 - rho)`` (AR(1) noise wanders like small steps).
   Where sigma fell by a tenth or the inflation passed 1.1, the search of 2-3 runs again.
5. **Whether.** Each change point is tested between its neighbours on the points without the
   bursts: the robust test (difference of the weighted means of the winsorized points, pulled
   to within 3 sigma of their running median of 5, against their variances, Student's t with
   sigma's degrees of freedom) and the classic pooled two-sample t-test (its variance inflated
   alike); twice the smaller p, times the splits of the span (Bonferroni, as the location was
   searched for). The weakest that fails (p >= `alpha`, a median shift below `min_shift`, or
   fewer than `min_size` points on a side) is dropped and the rest re-tested until all pass.
   More than `max_points` that pass: the most significant are kept (`Changes.capped`).
   ``before``, ``after`` and ``shift`` are the medians of the neighbouring segments and their
   relative change; ``confidence`` is 1 - p.
5b. **Short regressions.** A regression fixed 4-16 commits later is too short for two PELT
   cuts at ``3 ln n`` each, but both its sides are at one level: in each segment left, the
   interval of 4-16 points (``min_size`` from either end) whose winsorized weighted mean
   differs most from the rest of the segment (`history.segmentation.scan`, O(n) per length),
   t-tested with the noise re-estimated with it as a level of its own, Bonferroni over every
   interval of every segment times their effective share (`excursion_share`: they overlap;
   0.45 of 66 intervals to 0.25 of 12,800, calibrated on simulated white noise,
   ``tests/benchmarks/changepoints/calibrate_scan.py``), the budget weighted by length
   (`length_prior`: regressions fixed 5-10 commits later get a full share per length, the other
   lengths a tenth, each length's share split over its intervals; the interval tested is the
   one whose p so weighted is smallest), p < `alpha`
   and a shift of medians of at least `min_shift`: two change points, and the pieces on
   either side are searched again. Where the series analysed together are heavy-tailed
   (their pooled kurtosis, each series' less its small-sample bias, over 3.2), the excursion is
   also tested by Huber M-estimates of its two levels (psi at 1.5 noise sds, each side about
   its own level; their variance ``E psi**2 / (E psi')**2`` times a mean's, from the pooled
   residuals), where the clipped means' own p is under twice alpha; the smaller p counts
   (`_SCAN_HUBER`: the clipped means pull a regression's points toward the rest, and t(5)
   noise holds more about a level than its mean does). An excursion of 4-16 points that PELT itself cut out
   between two longer segments is left to this scan too (its two cuts are dropped before the
   tests of 5: tested apart, in the noise the excursion leaves, a cluster of heavy-tailed
   points passed them; `_leave_to_scan`).
6. **Drift.** Neighbouring change points in the same direction (one or more) may be a slow
   drift cut into a staircase. Over the span of their segments, a ramp (a level, a straight
   line, a level: two levels and two knots, fitted in closed form over at most 24 x 24 knot
   pairs near the ends, then again finer around the best) is fitted against the steps; where
   the ramp's BIC is no worse, its change significant (t-test of its size, Bonferroni over the
   knots tried) and at least `min_shift` (and, for a single step, the ramp 10 commits long or
   more), the steps are replaced by one `Drift`. A real staircase stays steps.

7. **Many series together** (`analyse_many`). Series measured alike (one store's: the same
   harness on the same machines) share their noise's shape. Each series' noise about its first
   levels (step 4's residuals: spread, degrees of freedom, lag-1 autocorrelation) is pooled into
   a `NoisePrior` (limma's empirical Bayes for the variance, Smyth 2004; the median
   autocorrelation, its weight from how much more the series' own scatter than sampling
   explains). The moments of the log variances are the median and the MAD (a minority of
   series whose first levels missed a change do not make alike series look unlike), each
   series' degrees of freedom those of its variance given the pooled kurtosis of the residuals
   (``_effective_dof``: heavy tails scatter variances more than a chi-square on as many
   residuals; t(5) noise counts about two thirds). Each series' own estimate is shrunk toward
   the prior before steps 4-5b: its tests
   then use the moderated variance on the pooled degrees of freedom plus its own (the scan's
   too), and its correlation is no longer estimated from 30 points alone. `analyse` of one
   series alone is unchanged; `history regressions` and the report pool the series they read
   (`noise_fit` of each, `pool_noise`, twice, then `analyse(..., prior=)`: `trends.regressions_in`).
   The noise is pooled twice: the second time each series' noise about its levels and its
   short excursions is taken with the excursions' gate in the first pooling's autocorrelation
   where that looks independent (`_clean`, `_GATE_WHITE`: a regression PELT left uncut made its
   own residuals look correlated, hid itself from the gate and made alike series look unlike).

Cost: PELT evaluates each surviving candidate start once per point (numpy, one vector per
point): linear in n while the level keeps moving, at most n (n + 1) / 2 evaluations on a series
that never moves, which is why a series of more than 1,000 points is searched on at most 500
blocks first and each cut then placed exactly (`history.segmentation.search`): linear in n.
The scan is O(n) per length tried. Measured per series (`tests/benchmarks/changepoints/`,
``speed`` section). The search is hand-written rather than ruptures': ruptures' `Pelt` is pure
Python (about 2 s for 1,000 points) and its compiled `KernelCPD` takes no per-point weights.
A series analysed once is not analysed again in the same process with the same settings
(`analyse` keeps its last 4,096 results).

A shift needs `min_size` points after it (default 3) before it can be confirmed: a short
excursion at the tip of a branch cannot yet be told from a burst. (`compare`, with the
run-to-run variability, is the tool for a single new run.)
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from primbench.compare.stats import log_variance_moments, scipy_special, trigamma_inverse
from primbench.errors import MissingDependencyError
from primbench.history.segmentation import DEFAULT_MAX_BURST, Excursion, Segments, classify, scan, search

Array = npt.NDArray[Any]

#: Defaults: the chance that a shift-free series yields a false change point; commits needed
#: on each side of a shift; smallest relative shift of level reported; most change points.
DEFAULT_ALPHA = 0.001
DEFAULT_MIN_SIZE = 3
DEFAULT_MIN_SHIFT = 0.005
DEFAULT_MAX_POINTS = 20

#: Degrees of freedom of the noise estimate per successive difference (simulated with normal
#: noise: 0.44 at 6 points, 0.51 at 10, 0.57 at 20, 0.59 from 100 on; the lowest is the cautious one).
_DOF_PER_DIFF = 0.43
_REJECT = 3.0  # a difference further than this many sds from the median holds a step or a bad run
_CLIP = 3.0  # winsorize at this many sigma from the running median
_MAD = 1.4826  # MAD -> standard deviation for normal data
_NO_NOISE = 1e-6  # the noise assumed where the series has none (identical values): any step is certain
_RHO_SE = 0.5  # standard errors taken off the autocorrelation estimate
_MAX_RHO = 0.6  # the most lag-1 autocorrelation of the noise allowed for (inflation at most 4)
_MIN_RAMP = 10  # a single step is a drift only where the ramp spans this many commits or more
_KNOTS = 24  # ramp knots tried at each end of a drift (so a drift costs the same at any length)
_PENALTY = 3.0  # PELT's penalty per change point, in units of chi-square times ln(n)
_SCAN_CLIP = 2.5  # the short-regression scan pulls points in to this many of their sds from the median
_HEAVY_KURTOSIS = 3.4  # ... where the winsorized residuals' kurtosis exceeds this (normal: about 2.9)
_EXCURSION_MAX = 16  # longest excursion (commits) the short-regression scan looks for
#: The scan's overlapping intervals' effective share of Bonferroni's count, by the count: the
#: true null tail over Bonferroni's at the 0.999 quantile (`calibrate_scan.py`; seed 4242 and a
#: first pass of seed 4243: 0.46 at 66 intervals, 0.38-0.44 at 195, 0.27-0.39 at 585-3,705,
#: 0.22-0.26 at 12,805; the recorded seed-4243 run, ``calibrate_scan.txt``, 0.32 at 12,805, each
#: within the sampling error of 20-60 exceedances), fitted log-linearly (it was 0.25 at every
#: count, too little at small n): ``share = _SHARE_AT_66 - _SHARE_PER_DECADE * log10(count / 66)``.
_SHARE_AT_66 = 0.46
_SHARE_PER_DECADE = 0.092
_SHARE_RANGE = (0.2, 0.5)
#: The noise the tests use is measured about the levels found **and** each segment's strongest
#: short excursion, where that stands out at this loose level (`_with_excursions`: a regression
#: fixed a few commits later that PELT's penalty left uncut is not noise; 0 turns it off, the
#: rule before). Chosen on the tuning set of ``tests/benchmarks/changepoints/tune_scan.py``.
_CLEAN_ALPHA = 0.1
#: The short-regression scan's second test, where the noise is heavy-tailed: the excursion's and
#: the rest's levels as Huber M-estimates, psi at `_SCAN_HUBER` noise sds (each side about its own
#: level, which the clipped means about the segment's median are not: a -2 sd excursion's points
#: are pulled toward the rest), their variance ``E psi**2 / (E psi')**2`` times a mean's, from
#: the residuals (`NoiseFit.huber`, pooled where the series are analysed together). An M-estimate
#: of 4-16 heavy-tailed points has heavier tails than the normal its p-value assumes (a pair of
#: large points moves it), so it counts only where the clipped means' own p is under
#: `_SCAN_HUBER_GATE` times alpha; then the smaller p of the two. And where the series analysed
#: together have a pooled kurtosis (each series' less its small-sample bias) over
#: `_HEAVY_POOLED_KURTOSIS`, every one of them counts as heavy-tailed (30 points of t(5) noise
#: seldom show it alone). Chosen on the tuning set of ``tests/benchmarks/changepoints/tune_scan5.py``
#: (``tune_scan5.txt``, with the variants it rejected: it loads this module as at 2bb5183, where
#: their switches were, the rule before among them).
_SCAN_HUBER = 1.5
_SCAN_HUBER_GATE = 2.0
_HEAVY_POOLED_KURTOSIS = 3.2
#: The excursions' gate (`_clean`, `_CLEAN_ALPHA`) of series analysed together takes its z in
#: their pooled autocorrelation (the series' own moderated by it) where that inflates a mean's
#: variance by at most `_GATE_WHITE` (as `_segment_noise`; the pooled noise looks independent),
#: and the noise is pooled again from the series' noise so gated: a regression PELT left uncut
#: makes its own series' residuals look correlated, which inflated the gate's variance and hid it
#: (t5 -2 % at n = 30: 18 % of series), and the noise pooled from such series then looked unlike
#: and weak (limma's d0 16 where flat series of the same noise give 170). Where the pooled noise
#: is correlated (AR(1)), each series' own autocorrelation still sets its gate: there a larger
#: d0 let the under-estimated correlation of 30 points through (flat AR(1) 0.3: 0.70 -> 0.88
#: false points per 100). Chosen on ``tests/benchmarks/changepoints/tune_scan6.py``'s tuning set
#: (``tune_scan6.txt``; the variants' switches were those of the module at 7742c19, which it loads).
_GATE_WHITE = 1.1
#: The short-regression scan's false-alarm budget by excursion length (a weighted Bonferroni
#: over lengths): a regression fixed `_PRIOR_LENGTHS` commits later (the lengths issue 24 names)
#: gets a full weight per length, every other length the scan tries (4, 11-16) `_PRIOR_OTHER`
#: of one; each length's weight is then split over its intervals in every segment (times
#: `excursion_share` for their overlap, as before). Before (`_LENGTH_PRIOR` False) every interval
#: had an equal share, so the many short intervals took most of the budget. Chosen on
#: simulated Gaussian noise with the scale known (``tests/benchmarks/changepoints/length_prior.py``,
#: ``length_prior.txt``; not the evaluation's generator): a -2 sd excursion 5-10 long at n = 30 /
#: 100 found 72.0 / 77.3 % at 0.108 / 0.122 % false excursions per flat series at alpha 0.001,
#: against 69.7 / 74.7 % at 0.100 / 0.115 % with equal shares (each length's null simulated, at
#: equal false excursions: 72.0 / 75.4 % against 69.7 / 73.5 %; weights that favour the longer
#: intervals, as Dümbgen-Spokoiny's, lose 2-6 points on these regressions);
#: tested on ``tests/benchmarks/changepoints/tune_scan8.py``'s tuning set (``tune_scan8.txt``:
#: -2 % fixed at 1 % t5 noise 72.2 / 73.8 / 66.0 -> 75.5 / 78.5 / 69.5 % at n = 30 / 100 / 1,000,
#: Laplace and Gaussian +2.5-5 points; flat heavy-tailed series at n = 1,000 +0.13-0.27 false
#: points per 100, Laplace at n = 30 0.3 -> 0.7; `_PRIOR_OTHER` 0.3 a third of the gain at n = 30).
#: **Off by default** since the merge (stop 42): it buys 5-10 commit regressions their gain from
#: the lengths it starves. ``tests/benchmarks/changepoints/length_cost.txt`` (the tuning generator,
#: n = 30 / 100): regressions fixed 11-16 commits later at -2 % lose 2.7-4.5 points of recall
#: (t5: 84.2 / 92.8 -> 80.5 / 89.8 %), and 4 commits later at -3 % 84.0 / 74.0 -> 81.2 / 55.2 %:
#: a prior fitted to the benchmark's own lengths, not to what users' regressions are.
_LENGTH_PRIOR = False
_PRIOR_LENGTHS = (5, 10)
_PRIOR_OTHER = 0.1


@dataclass(frozen=True)
class ChangePoint:
    """A level shift: points ``index`` onwards differ from the points before it."""

    index: int  # position of the first point at the new level
    before: float  # median of the segment before
    after: float  # median of the segment after
    shift: float  # after / before - 1
    p_value: float  # Bonferroni-adjusted, two-sided
    confidence: float  # 1 - p_value
    segment: tuple[int, int]  # [start, stop) of the two neighbouring segments together

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "before": self.before, "after": self.after, "shift": self.shift,
                "p_value": self.p_value, "confidence": self.confidence, "segment": list(self.segment)}


@dataclass(frozen=True)
class Drift:
    """A slow, steady change: the level moves along a straight line from ``start`` to ``end``."""

    start: int  # last point at the old level (where the ramp starts)
    end: int  # first point at the new level (where it ends)
    before: float  # fitted level at `start`
    after: float  # fitted level at `end`
    change: float  # after / before - 1, the total change
    slope: float  # relative change per commit (geometric: (1 + slope) ** (end - start) == 1 + change)
    p_value: float  # Bonferroni-adjusted over the knots tried, two-sided
    confidence: float  # 1 - p_value
    segment: tuple[int, int]  # [start, stop) of the span that was fitted
    steps: int  # how many step change points the drift replaces

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "before": self.before, "after": self.after,
                "change": self.change, "slope": self.slope, "p_value": self.p_value,
                "confidence": self.confidence, "segment": list(self.segment), "steps": self.steps}


@dataclass(frozen=True)
class Burst:
    """A short excursion that came back: points ``[start, stop)`` (2 to `DEFAULT_MAX_BURST`
    commits) away from the level around them. Bad runs, not a regression and its fix; they
    are left out of every test of a level."""

    start: int  # first point of the burst
    stop: int  # first point after it (back at the level)
    level: float  # median of the level around it (the points of the neighbouring segments)
    value: float  # median of the burst's points
    shift: float  # value / level - 1

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "stop": self.stop, "level": self.level, "value": self.value,
                "shift": self.shift}


@dataclass(frozen=True)
class Changes:
    """What `analyse` found in one series: level shifts, drifts, and whether the search stopped
    at the cap of `max_points` change points (later shifts may then be missing)."""

    points: list[ChangePoint] = field(default_factory=list)
    drifts: list[Drift] = field(default_factory=list)
    capped: bool = False
    max_points: int = DEFAULT_MAX_POINTS
    noise: float = 0.0  # the robust point-to-point sigma of ln(value)
    bursts: list[Burst] = field(default_factory=list)  # short excursions that came back: bad runs

    def note(self) -> str | None:
        """A one-line note for output when the cap was reached, else None."""
        if not self.capped:
            return None
        return f"stopped at the cap of {self.max_points} change points; further shifts may be missing"

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points], "drifts": [d.to_dict() for d in self.drifts],
                "capped": self.capped, "max_points": self.max_points, "noise": self.noise,
                "bursts": [b.to_dict() for b in self.bursts]}


@dataclass(frozen=True)
class _Series:
    x: Array  # the values
    y: Array  # ln(values) (or the values, where some are not positive)
    w: Array  # y winsorized around its running median
    sigma: float  # robust point-to-point noise of y
    dof: float  # degrees of freedom of sigma
    log: bool
    scale: float = 1.0  # y is the values over this where not ln(values): no square overflows
    inflation: float = 1.0  # variance of a mean over sigma**2 / n: correlated neighbours (AR(1))
    prior_var: float = 0.0  # the pooled noise variance of the series analysed together (`NoisePrior`)
    prior_dof: float = 0.0  # ... and its degrees of freedom (0: this series' noise alone)
    huber: float = 1.0  # E psi**2 / (E psi')**2 of the noise at `_SCAN_HUBER` (`NoiseFit.huber`)
    heavy: bool = False  # the series analysed with it are heavy-tailed (`_HEAVY_POOLED_KURTOSIS`)


def _special() -> Any:
    """The functions of `scipy.special` used here (``ndtr``, ``stdtr``, ``digamma``: scipy's own
    objects), as compare takes them (`compare.stats.scipy_special`): without the package's
    ``__init__`` where nothing imported it yet (its array-API layer imports numpy.f2py,
    numpy.testing and more: some 0.15 s of CPU a history command). No SciPy: the
    MissingDependencyError that names the ``history`` extra."""
    try:
        return scipy_special()
    except MissingDependencyError:
        raise MissingDependencyError("scipy", "history", "primbench history") from None


def _running_median(y: Array) -> Array:
    """The median of the 5 points around each point (fewer at the ends)."""
    n = len(y)
    if n < 5:
        return np.array([np.median(y[max(0, i - 2):i + 3]) for i in range(n)])
    out = np.empty(n)
    out[2:n - 2] = np.median(np.lib.stride_tricks.sliding_window_view(y, 5), axis=1)
    for i in (0, 1, n - 2, n - 1):
        out[i] = np.median(y[max(0, i - 2):i + 3])
    return out


def _noise(y: Array) -> float:
    """The robust point-to-point sigma of y from its successive differences (0: no estimate)."""
    if len(y) < 3:
        return 0.0
    dev = np.diff(y)
    dev = dev - np.median(dev)  # a steady drift moves the median difference only
    spread = _MAD * float(np.median(np.abs(dev)))  # robust sd of one difference
    if spread <= 1e-15 * max(float(np.max(np.abs(y))), 1.0):  # mostly identical steps: no estimate
        return 0.0
    for _ in range(10):  # iterated clipping: drop the differences that hold a step or a bad run
        kept = dev[np.abs(dev) <= _REJECT * spread]
        spread, old = math.sqrt(float(np.sum(kept**2)) / max(len(kept) - 1, 1)), spread
        if abs(spread - old) <= 1e-9 * old:
            break
    return spread / math.sqrt(2)


@dataclass(frozen=True)
class NoiseFit:
    """One series' noise about the levels found (`_segment_fit`), what `NoisePrior` pools and moderates."""

    sigma: float  # the spread of the residuals pulled in to 3 spreads
    dof: float  # residuals less levels
    rho: float  # lag-1 autocorrelation of the residuals, less the bias of centring each segment
    points: int  # residuals it is from
    kurtosis: float = 3.0  # of the residuals pulled in to 3 spreads (normal: about 2.9)
    huber: float = 1.0  # the residuals' E psi**2 / (E psi')**2, Huber's psi at `_SCAN_HUBER` sigmas


def _segment_fit(y: Array, segs: Segments) -> NoiseFit | None:
    """The noise of y around the levels of the segments found (bursts left out), its degrees of
    freedom, and the lag-1 autocorrelation of neighbours in one segment (None: no estimate):
    residuals beyond 3 spreads are dropped and the spread recomputed until it settles, then the
    residuals are pulled in to 3 such spreads and their root mean square (residuals less levels
    as degrees of freedom) is the noise; rho is that of those residuals less its bias,
    ``-(1 + 3 rho) / points`` per segment."""
    keep = np.ones(len(y), dtype=bool)
    for a, b in segs.bursts:
        keep[a:b] = False
    bounds = [0, *segs.points, len(y)]
    pieces = [y[a:b][keep[a:b]] - np.mean(y[a:b][keep[a:b]]) for a, b in itertools.pairwise(bounds)
              if keep[a:b].any()]
    res = np.concatenate(pieces)
    levels = len(bounds) - 1
    spread = _MAD * float(np.median(np.abs(res)))
    if spread <= 0 or len(res) <= levels + 2:
        return None
    kept = res
    for _ in range(10):
        kept = res[np.abs(res) <= _REJECT * spread]
        spread, old = math.sqrt(float(np.sum(kept**2)) / max(len(kept) - levels, 1)), spread
        if abs(spread - old) <= 1e-9 * old:
            break
    clipped = [np.clip(p, -_REJECT * spread, _REJECT * spread) for p in pieces]
    lagged = sum(float(np.dot(p[:-1], p[1:])) for p in clipped)
    power = sum(float(np.dot(p, p)) for p in clipped)
    # The spread the tests use: of the residuals pulled in to 3 spreads, not of those left after
    # dropping the rest. The tests compare means of winsorized points, whose spread this is;
    # with heavy-tailed noise the trimmed spread is too small (t(5): by about a sixth).
    spread = math.sqrt(power / max(len(res) - levels, 1))
    rho = lagged / power if power > 0 else 0.0
    rho = rho + (1 + 3 * rho) * levels / len(res)  # less the bias of centring each segment
    fourth = sum(float(np.sum(p**4)) for p in clipped)
    kurtosis = fourth * len(res) / power**2 if power > 0 else 3.0
    return NoiseFit(spread, max(float(len(res) - levels), 0.0), rho, len(res), kurtosis, _huber_ratio(res / spread))


def _huber_ratio(r: Array) -> float:
    """``E psi(r)**2 / (E psi'(r))**2`` of residuals `r` in units of their noise, Huber's psi at
    `_SCAN_HUBER`: the variance of an M-estimate of a level over that of a mean (1 without residuals)."""
    if len(r) == 0:
        return 1.0
    inside = float(np.mean(np.abs(r) < _SCAN_HUBER))
    if inside <= 0:
        return 1.0
    return float(np.mean(np.clip(r, -_SCAN_HUBER, _SCAN_HUBER) ** 2)) / inside**2


def _segment_noise(fit: NoiseFit | None, prior: NoisePrior | None = None) -> tuple[float, float, float]:
    """The noise the tests use, its degrees of freedom, and the factor by which the variance of
    a mean exceeds sigma**2 / n because neighbouring points are correlated, from one series'
    `fit` alone or moderated by the `prior` of the series analysed with it (`NoisePrior.moderate`):
    ``(1 + rho) / (1 - rho)`` (AR(1); never below 1), rho less half a standard error
    (``1 / sqrt(points)`` alone) so that independent noise is seldom inflated."""
    if fit is None:
        return 0.0, 0.0, 1.0
    if prior is None:
        sigma, dof, rho = fit.sigma, fit.dof, fit.rho - _RHO_SE / math.sqrt(fit.points)
    else:
        sigma, dof, rho, se = prior.moderate(fit)
        rho -= _RHO_SE * se
    rho = min(rho, _MAX_RHO)
    return sigma, dof, max(1.0, (1 + rho) / (1 - rho))


def _prepare(x: Array) -> _Series:
    log = bool(np.all(x > 0))
    scale = 1.0 if log else max(1.0, float(np.max(np.abs(x))))  # values near 1e308 would overflow a square
    y = np.log(x) if log else x.astype(float) / scale
    n = len(y)
    sigma = _noise(y)
    if sigma <= 0:
        return _Series(x, y, y, 0.0, 0.0, log, scale)
    dof = _DOF_PER_DIFF * (n - 1) - 1  # minus one: a split's own difference is among those clipped
    return _Series(x, y, _winsorize(y, sigma), sigma, dof if dof >= 1 else 0.0, log, scale)


def _winsorize(y: Array, sigma: float) -> Array:
    running = _running_median(y)
    return np.asarray(running + np.clip(y - running, -_CLIP * sigma, _CLIP * sigma))


def _subset(s: _Series, keep: Array) -> _Series:
    """`s` without the points of bursts: noise and its degrees of freedom from the whole series."""
    y = s.y[keep]
    w = _winsorize(y, s.sigma) if s.sigma > 0 else y
    return replace(s, x=s.x[keep], y=y, w=w)


def _relative_shift(values: Array, start: int, split: int, stop: int) -> tuple[float, float, float]:
    before = float(np.median(values[start:split]))
    after = float(np.median(values[split:stop]))
    if before == 0:
        return before, after, math.inf if after > 0 else -math.inf if after < 0 else 0.0
    return before, after, after / before - 1


def _check(values: Sequence[float], alpha: float, min_size: int, max_points: int) -> Array:
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("values must be a flat sequence of finite numbers")
    return x


def _variances(s: _Series, uncertainty: Array | None) -> Array:
    """Each point's variance in the units of y: the series' noise plus what its own uncertainty
    (a relative standard deviation: the spread of its runs' batches, say) has beyond the typical
    one (the median), which the series' noise, estimated from the points, already holds."""
    n = len(s.y)
    base = s.sigma if s.sigma > 0 else _NO_NOISE
    if uncertainty is None:
        return np.full(n, base**2)
    u = np.asarray(uncertainty, dtype=float)
    if u.shape != (n,):
        raise ValueError("uncertainty must give one value per point")
    u = np.where(np.isfinite(u) & (u > 0), u, 0.0)
    extra = np.sqrt(np.maximum(u**2 - float(np.median(u)) ** 2, 0.0))
    own = extra if s.log else extra * np.abs(s.y)
    return np.asarray(base**2 + own**2)


@dataclass(frozen=True)
class NoisePrior:
    """The noise of many series measured alike (one store: the same harness on the same
    machines), pooled, that each series' own estimate is shrunk toward (`analyse_many`).

    Variance: empirical Bayes as limma's (Smyth 2004): each series' residual variance s**2 on d
    degrees of freedom is taken as a scaled chi-square draw around a prior variance
    `variance` (s0**2) on `dof` (d0) degrees of freedom, both fitted to the spread of the
    ln s**2 by the method of moments; a series then uses ``(d0 s0**2 + d s**2) / (d0 + d)`` on
    ``d0 + d`` degrees of freedom. Where the series' variances scatter no more than their
    sampling alone explains, d0 is the sum of their own degrees of freedom (the most the data
    hold). Lag-1 autocorrelation: `rho` is the median of the series' own (each less its
    centring bias); where they scatter more than sampling (``1 / points`` each) explains, by
    tau**2, the pooled one weighs as ``rho_points = 1 / tau**2`` points (else as all of theirs
    together) and a series' own rho on m points becomes ``(m rho_i + k rho) / (m + k)``, its
    standard error ``1 / sqrt(m + k)``."""

    variance: float  # s0**2, the pooled noise variance of ln(value)
    dof: float  # d0
    rho: float  # the pooled lag-1 autocorrelation
    rho_points: float  # k: the points the pooled rho weighs as
    series: int  # the series it was pooled from
    kurtosis: float = 3.0  # the pooled kurtosis of the series' residuals (`NoiseFit.kurtosis`)
    huber: float = 1.0  # the pooled `NoiseFit.huber`
    corrected_kurtosis: float = 3.0  # the pooled kurtosis, each series' less its small-sample bias

    def moderate(self, fit: NoiseFit) -> tuple[float, float, float, float]:
        """One series' noise, degrees of freedom, rho and rho's standard error, moderated."""
        own = _effective_dof(fit.dof, self.kurtosis)
        dof = self.dof + own
        sigma = math.sqrt((self.dof * self.variance + own * fit.sigma**2) / dof)
        weight = fit.points + self.rho_points
        return sigma, dof, (fit.points * fit.rho + self.rho_points * self.rho) / weight, 1 / math.sqrt(weight)


#: Fewest series with a noise estimate that `analyse_many` pools (fewer: each alone).
MIN_POOLED = 5


def pool_noise(fits: Sequence[NoiseFit | None]) -> NoisePrior | None:
    """The `NoisePrior` of many series' first fits (`noise_fit`), or None where fewer than
    `MIN_POOLED` have one: what `analyse(..., prior=)` shrinks each series' own noise toward."""
    special = _special()
    usable = [f for f in fits if f is not None and f.sigma > 0 and f.dof >= 1]
    if len(usable) < MIN_POOLED:
        return None
    d = np.array([f.dof for f in usable])
    m = np.array([float(f.points) for f in usable])
    kurtosis = float(np.sum(m * np.array([f.kurtosis for f in usable])) / np.sum(m))
    d = np.array([_effective_dof(f.dof, kurtosis) for f in usable])
    # robust moments: a minority of series whose first segmentation missed a change (their
    # variance inflated by it) do not make alike series look unlike
    mean, excess = log_variance_moments(np.array([f.sigma**2 for f in usable]), d, median=True)
    if excess > 0:
        d0 = min(2 * trigamma_inverse(excess), float(np.sum(d)))
        s0 = math.exp(mean + float(special.digamma(d0 / 2)) - math.log(d0 / 2))
    else:
        d0, s0 = float(np.sum(d)), math.exp(mean)
    m = np.array([float(f.points) for f in usable])
    r = np.array([f.rho for f in usable])
    rho = float(np.median(r))
    tau2 = float(np.var(r, ddof=1)) - float(np.mean(1 / m))
    total = float(np.sum(m))
    k = min(1 / tau2, total) if tau2 > 0 else total
    huber = float(np.sum(m * np.array([f.huber for f in usable])) / np.sum(m))
    corrected = float(np.sum(m * np.array([_fisher_kurtosis(f.kurtosis, f.points) for f in usable])) / np.sum(m))
    return NoisePrior(s0, d0, rho, k, len(usable), kurtosis, huber, corrected)


def _fisher_kurtosis(kurtosis: float, m: int) -> float:
    """A sample kurtosis of `m` points less its small-sample bias (Fisher's G2, plus 3)."""
    if m < 4:
        return kurtosis
    return 3 + ((m + 1) * (kurtosis - 3) + 6) * (m - 1) / ((m - 2) * (m - 3))


def _effective_dof(dof: float, kurtosis: float) -> float:
    """The degrees of freedom of a variance from `dof` residuals of noise with this `kurtosis`:
    those of the scaled chi-square with the same relative variance (``(kurtosis - 1) / dof``;
    ``2 / dof`` for normal noise), never more than `dof` (lighter tails than normal)."""
    return dof * min(1.0, 2.0 / max(kurtosis - 1.0, 1e-9))


#: Results of `analyse` kept, newest last (`_CACHE_SIZE` at most), by a digest of the values,
#: the uncertainties and the settings: a command that needs a series' changes twice (the
#: report's table and its chart) analyses it once.
_CACHE: OrderedDict[tuple[bytes, float, int, float, int, NoisePrior | None], Changes] = OrderedDict()
_CACHE_SIZE = 4096


def clear_cache() -> None:
    """Forget every kept result of `analyse`."""
    _CACHE.clear()


def analyse(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
            min_shift: float = DEFAULT_MIN_SHIFT, max_points: int = DEFAULT_MAX_POINTS,
            uncertainty: Sequence[float] | None = None, prior: NoisePrior | None = None,
            segments: Segments | None = None, prepared: Prepared | None = None) -> Changes:
    """Level shifts, drifts and outlier bursts of a series (ordered oldest first), each oldest first.

    `alpha`: the chance a shift-free segment yields a false change point; `min_size`: points
    needed on each side of a change; `min_shift`: smallest relative change of level reported;
    `max_points`: at most this many change points, the most significant (`Changes.capped`);
    `uncertainty`: each point's own relative standard deviation, where known (a point with a
    large one weighs less). The same values and settings again give the kept result (a copy:
    its lists are the caller's), not a second analysis. `prior`: the pooled noise of the series
    analysed with this one (`pool_noise` of their `noise_fit`s), as `analyse_many` uses it.
    `segments`: the first segmentation `noise_fit_and_segments` returned for the same values,
    uncertainty and `min_size` (it depends on nothing else), so that a command that pooled the
    noise first (`trends.regressions_in`) does not search each series again; the result is the same.
    `prepared`: `prepare` of the same values, uncertainty and `min_size` (in place of `segments`):
    nor is anything else about the series that no pooling changes computed again; the same result."""
    x = _check(values, alpha, min_size, max_points)
    u = None if uncertainty is None else np.asarray(uncertainty, dtype=float)
    if prepared is not None:
        prepared.check(x, min_size)
    digest = hashlib.blake2b(x.tobytes(), digest_size=20)
    digest.update(b"-" if u is None else u.tobytes())
    key = (digest.digest(), float(alpha), int(min_size), float(min_shift), int(max_points), prior)
    found = _CACHE.get(key)
    if found is None:
        found = _analyse(x, alpha, min_size, min_shift, max_points, u, prior, segments, prepared)
        _CACHE[key] = found
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return replace(found, points=list(found.points), drifts=list(found.drifts), bursts=list(found.bursts))


@dataclass(frozen=True)
class _Start:
    """A series' first segmentation and the noise about it: what `analyse_many` pools before
    each series' analysis goes on (`_finish`). `first`: the noise about the segmentation's
    levels alone; `fit`: about them and the short excursions that stand out (`_clean`).
    `gated`: what `_clean` found for this series by (min_size, the gate's variance inflation),
    shared by every `_Start` made from this one (`replace` keeps it): the gate is applied once
    per inflation, however many poolings ask for it (`analyse_many`, `trends.regressions_in`)."""

    s: _Series
    var: Array
    segs: Segments
    fit: NoiseFit | None
    uncertainty: Array | None
    first: NoiseFit | None = None
    gated: dict[tuple[int, float], NoiseFit] = field(default_factory=dict, compare=False, repr=False)


def _start(x: Array, min_size: int, uncertainty: Array | None, prior: NoisePrior | None = None,
           segs: Segments | None = None) -> _Start:
    """`x`'s first segmentation (`segs` where an earlier `_start` of the same values found it) and
    its noise, the excursions' gate as `_clean` with `prior`."""
    return _clean(_first(x, min_size, uncertainty, segs), min_size, prior)


def _first(x: Array, min_size: int, uncertainty: Array | None, segs: Segments | None = None) -> _Start:
    """`_start` before the excursions' gate (`_clean`): what depends on the values, their
    uncertainty and `min_size` alone, the same for every pooling (`Prepared`)."""
    s = _prepare(x)
    var = _variances(s, uncertainty)
    if len(x) < 2:
        return _Start(s, var, Segments([], []), None, uncertainty)
    if segs is None:
        centred = s.y - float(np.median(s.y))
        penalty = _PENALTY * math.log(max(len(x), 3))
        segs = classify(centred, 1.0 / var, search(centred, 1.0 / var, penalty), min_size=min_size)
    if s.sigma <= 0:
        return _Start(s, var, segs, None, uncertainty)
    fit = _segment_fit(s.y, segs)
    return _Start(s, var, segs, fit, uncertainty, fit)


def _clean(st: _Start, min_size: int, prior: NoisePrior | None) -> _Start:
    """`st` with its noise measured about its levels and each segment's strongest short
    excursion that stands out (`_with_excursions`), the gate's z in the noise first measured,
    its autocorrelation included: moderated by the `prior` of the series analysed together where
    there is one (a regression PELT left uncut makes its own residuals look correlated, which
    inflated the gate's variance and hid it: the noise pooled from such series then looked
    unlike and weak) where the pooled noise looks independent (`_white`), the series' own less
    half a standard error where not. The gate depends on the prior only through the inflation
    it gives: each inflation's result is kept in `st.gated`, so that the same series gated again
    (a second pooling, its analysis) is not searched for excursions again."""
    if _CLEAN_ALPHA <= 0 or st.first is None:
        return st
    pooled = prior is not None and _white(prior)
    inflation = _segment_noise(st.first, prior if pooled else None)[2]
    fit = st.gated.get((min_size, inflation))
    if fit is None:
        edges = _with_excursions(st.s, st.var * inflation, st.segs, min_size)
        clean = _segment_fit(st.s.y, Segments(edges, st.segs.bursts))
        # the spread and the autocorrelation about the levels and the excursions
        fit = st.first if clean is None else clean
        st.gated[(min_size, inflation)] = fit
    return replace(st, fit=fit)


def _white(prior: NoisePrior) -> bool:
    """Whether the pooled noise looks independent: its autocorrelation, less half a standard
    error, inflates a mean's variance by at most `_GATE_WHITE` (as `_segment_noise`)."""
    rho = min(prior.rho - _RHO_SE / math.sqrt(max(prior.rho_points, 1.0)), _MAX_RHO)
    return (1 + rho) / (1 - rho) <= _GATE_WHITE


def _with_excursions(s: _Series, var: Array, segs: Segments, min_size: int) -> list[int]:
    """`segs`' change points and the edges of each segment's strongest short excursion where
    it stands out at the loose level `_CLEAN_ALPHA` (the normal tail of its z in the
    series' first noise, Bonferroni over the segment's intervals times `excursion_share`): the
    levels about which the noise is measured, so that a regression PELT missed does not count
    as noise (which hides it from the tests, and makes alike series look unlike where their
    noise is pooled). A flat series loses an interval to this about `_CLEAN_ALPHA` of the time."""
    special = _special()
    lmin = max(min_size, DEFAULT_MAX_BURST + 1)
    weights = 1.0 / var
    cuts = [0, *segs.points, len(s.y)]
    out = list(segs.points)
    for a, b in itertools.pairwise(cuts):
        ex = _best_interval(s.w, weights, a, b, lmin, min_size)
        if ex is None:
            continue
        if 2 * float(special.ndtr(-ex.z)) * ex.tried * excursion_share(ex.tried) < _CLEAN_ALPHA:
            out += [ex.start, ex.stop]
    return sorted(set(out))


def analyse_many(series: Sequence[Sequence[float]], *, alpha: float = DEFAULT_ALPHA,
                 min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT,
                 max_points: int = DEFAULT_MAX_POINTS,
                 uncertainties: Sequence[Sequence[float] | None] | None = None) -> list[Changes]:
    """`analyse` of each of many series measured alike (one store's, one command's), their
    noise pooled: each series' first segmentation gives its noise about its levels; from all of
    them a `NoisePrior` (variance and lag-1 autocorrelation, `pool_noise`), toward which each
    series' own estimate is shrunk before its tests (so that 30 points need not estimate the
    noise's correlation alone). Fewer than `MIN_POOLED` series with a noise estimate: each as
    `analyse` alone; so is a series with a value at or below zero (its noise is not relative).
    A series' result depends on the series analysed with it; the results are not kept
    (`analyse`'s are)."""
    if uncertainties is not None and len(uncertainties) != len(series):
        raise ValueError("uncertainties must give one entry per series")
    starts = []
    for i, values in enumerate(series):
        x = _check(values, alpha, min_size, max_points)
        u = None if uncertainties is None or uncertainties[i] is None else np.asarray(uncertainties[i], dtype=float)
        starts.append(_start(x, min_size, u))
    # relative noise only: a series with a value at or below zero is analysed on its values, in
    # its own units, and keeps its own noise
    prior = pool_noise([st.fit for st in starts if st.s.log])
    if prior is not None:
        # pooled again from the noise with the excursions' gate moderated by the first pooling
        # (`_clean`); each series' own noise then gated as its analysis alone with this prior is
        prior = pool_noise([_clean(st, min_size, prior).fit for st in starts if st.s.log])
        starts = [_clean(st, min_size, prior) if st.s.log else st for st in starts]
    return [_finish(st, prior if st.s.log else None, alpha, min_size, min_shift, max_points) for st in starts]


def _analyse(x: Array, alpha: float, min_size: int, min_shift: float, max_points: int,
             uncertainty: Array | None, prior: NoisePrior | None = None,
             segments: Segments | None = None, prepared: Prepared | None = None) -> Changes:
    """`analyse` of checked values (a `prior` for relative noise only, as `analyse_many`;
    `segments` its first segmentation where already found; `prepared` all of `_first`)."""
    if prepared is not None:
        start = _clean(prepared.start, min_size, prior)
    else:
        start = _start(x, min_size, uncertainty, prior, segments)
    return _finish(start, prior if start.s.log else None, alpha, min_size, min_shift, max_points)


def noise_fit(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
              max_points: int = DEFAULT_MAX_POINTS, uncertainty: Sequence[float] | None = None,
              prior: NoisePrior | None = None) -> NoiseFit | None:
    """A series' noise about its first segmentation, as `analyse_many` pools it: None for a
    series with a value at or below zero (its noise is not relative) or without noise. `prior`:
    a first pooling of the series' noise, which gates their short excursions (`_clean`): the
    fits `analyse_many` pools the second time."""
    return noise_fit_and_segments(values, alpha=alpha, min_size=min_size, max_points=max_points,
                                  uncertainty=uncertainty, prior=prior)[0]


def noise_fit_and_segments(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA,
                           min_size: int = DEFAULT_MIN_SIZE, max_points: int = DEFAULT_MAX_POINTS,
                           uncertainty: Sequence[float] | None = None, prior: NoisePrior | None = None,
                           segments: Segments | None = None,
                           prepared: Prepared | None = None) -> tuple[NoiseFit | None, Segments]:
    """`noise_fit`, and the first segmentation it took the noise about. `segments`: what an
    earlier call returned for the same values, so that pooling twice (`trends.regressions_in`,
    which reads its series again rather than keep them) searches each series once. `prepared`:
    `prepare` of the same values, uncertainty and `min_size` (in place of `segments`): the series'
    logarithm, weights, segmentation and noise about it are not computed again, and the gate of
    its excursions not applied again where the `prior` leaves it as it was; the same result."""
    x = _check(values, alpha, min_size, max_points)
    if prepared is not None:
        prepared.check(x, min_size)
        start = _clean(prepared.start, min_size, prior)
    else:
        start = _start(x, min_size, None if uncertainty is None else np.asarray(uncertainty, dtype=float), prior,
                       segments)
    return (start.fit if start.s.log else None), start.segs


@dataclass(frozen=True)
class Prepared:
    """A series made ready once for the passes of a pooled analysis (`prepare`): its first
    segmentation, the noise about it, and the excursions' gate for each inflation asked so far.
    `noise_fit_and_segments` and `analyse` take it for the same values, uncertainty and `min_size`
    (a pooling changes none of it), with the same results as without it."""

    start: _Start
    min_size: int

    @property
    def uncertainty(self) -> Array | None:
        """The uncertainty it was prepared with, as an array (what `analyse` is given with it)."""
        return self.start.uncertainty

    def check(self, x: Array, min_size: int) -> None:
        """A `ValueError` where `x` and `min_size` are plainly not those it was prepared for."""
        if min_size != self.min_size or len(x) != len(self.start.s.x):
            raise ValueError("prepared for other values or another min_size")


def prepare(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
            max_points: int = DEFAULT_MAX_POINTS, uncertainty: Sequence[float] | None = None) -> Prepared:
    """`values` (and their `uncertainty`) made ready for `noise_fit_and_segments` and `analyse`
    (their `prepared`): what their analysis computes before any pooled noise counts, computed once."""
    x = _check(values, alpha, min_size, max_points)
    return Prepared(_first(x, min_size, None if uncertainty is None else np.asarray(uncertainty, dtype=float)),
                    int(min_size))


def _finish(start: _Start, prior: NoisePrior | None, alpha: float, min_size: int, min_shift: float,
            max_points: int) -> Changes:
    """The analysis of a series from its first segmentation, its noise from its own residuals
    or moderated by a `prior` (`analyse_many`)."""
    s, var, segs, uncertainty = start.s, start.var, start.segs, start.uncertainty
    n = len(s.x)
    if n < 2:
        return Changes(max_points=max_points)
    centred = s.y - float(np.median(s.y))
    penalty = _PENALTY * math.log(max(n, 3))
    if s.sigma > 0:
        # The noise about the levels found (steps close together inflate the noise seen in
        # successive differences) and how much correlated neighbours inflate a mean's variance;
        # segmented again where either changes clearly.
        sigma, dof, inflation = _segment_noise(start.fit, prior)
        if sigma > 0 and dof >= 1 and (sigma < 0.9 * s.sigma or inflation > 1.1):
            s = replace(s, sigma=sigma, w=_winsorize(s.y, sigma))
            var = _variances(s, uncertainty) * inflation
            segs = classify(centred, 1.0 / var, search(centred, 1.0 / var, penalty), min_size=min_size)
            sigma, dof, again = _segment_noise(_segment_fit(s.y, segs), prior)
            inflation = max(inflation, again)
        if sigma > 0 and dof >= 1:
            s = replace(s, sigma=sigma, dof=dof, w=_winsorize(s.y, sigma), inflation=inflation)
            if prior is not None:
                s = replace(s, prior_var=prior.variance, prior_dof=prior.dof, huber=prior.huber,
                            heavy=prior.corrected_kurtosis > _HEAVY_POOLED_KURTOSIS)
            elif start.fit is not None:
                s = replace(s, huber=start.fit.huber)
            var = _variances(s, uncertainty) * inflation
    keep = np.ones(n, dtype=bool)
    for a, b in segs.bursts:
        keep[a:b] = False
    kept_at = np.flatnonzero(keep)  # cleaned index -> original index
    clean = _subset(s, keep)
    inner = [int(np.searchsorted(kept_at, p)) for p in segs.points]  # the same cuts on the cleaned points
    inner = _leave_to_scan(clean, var[keep], inner, min_size)
    points = _prune(clean, var[keep], inner, alpha, min_size, min_shift)
    capped = len(points) > max_points
    if capped:
        strongest = sorted(points, key=lambda cp: cp.p_value)[:max_points]
        points = _prune(clean, var[keep], sorted(cp.index for cp in strongest), alpha, min_size, min_shift)
    if not capped:
        points = _excursions(clean, var[keep], points, alpha, min_size, min_shift, max_points)
    points, drifts = _drifts(clean, points, alpha, min_shift)
    bursts = [_burst(s, keep, a, b) for a, b in segs.bursts if b - a >= 2]
    return Changes([_moved(cp, kept_at, n) for cp in points], [_moved_drift(d, kept_at, n) for d in drifts],
                   capped, max_points, s.sigma * s.scale, bursts)


def _burst(s: _Series, keep: Array, a: int, b: int) -> Burst:
    """A burst with the median level of the kept points around it (up to 10 on each side)."""
    around = np.concatenate([s.x[:a][keep[:a]][-10:], s.x[b:][keep[b:]][:10]])
    level = float(np.median(around)) if len(around) else float("nan")
    value = float(np.median(s.x[a:b]))
    return Burst(a, b, level, value, value / level - 1 if level else math.inf)


def _original(kept_at: Array, n: int, i: int) -> int:
    return int(kept_at[i]) if i < len(kept_at) else n


def _moved(cp: ChangePoint, kept_at: Array, n: int) -> ChangePoint:
    """`cp` with its positions in the series with its bursts (they were found without them)."""
    start, stop = cp.segment
    return ChangePoint(_original(kept_at, n, cp.index), cp.before, cp.after, cp.shift, cp.p_value, cp.confidence,
                       (_original(kept_at, n, start), _original(kept_at, n, stop)))


def _moved_drift(d: Drift, kept_at: Array, n: int) -> Drift:
    return Drift(_original(kept_at, n, d.start), _original(kept_at, n, d.end), d.before, d.after, d.change,
                 d.slope, d.p_value, d.confidence,
                 (_original(kept_at, n, d.segment[0]), _original(kept_at, n, d.segment[1])), d.steps)


def detect(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
           min_shift: float = DEFAULT_MIN_SHIFT, max_points: int = DEFAULT_MAX_POINTS,
           uncertainty: Sequence[float] | None = None) -> list[ChangePoint]:
    """The level shifts of a series (ordered oldest first), oldest first: `analyse` without the
    drifts (steps that make up a drift are not listed), the bursts and the cap flag."""
    return analyse(values, alpha=alpha, min_size=min_size, min_shift=min_shift, max_points=max_points,
                   uncertainty=uncertainty).points


def _p_values(s: _Series, var: Array, bounds: list[int], min_size: int) -> Array:
    """Adjusted p of each inner cut of `bounds` between its neighbours: twice the smaller p of
    the robust test (weighted means of the winsorized points against their own variances,
    Student's t with the noise estimate's degrees of freedom) and the classic pooled-variance
    two-sample t-test, times the number of splits of the span (Bonferroni)."""
    special = _special()
    b = np.asarray(bounds)
    lo, mid, hi = b[:-2], b[1:-1], b[2:]
    y = s.y - float(np.median(s.y))
    cy = np.concatenate([[0.0], np.cumsum(y)])
    cyy = np.concatenate([[0.0], np.cumsum(y * y)])
    n1, n2 = (mid - lo).astype(float), (hi - mid).astype(float)
    s1, s2 = cy[mid] - cy[lo], cy[hi] - cy[mid]
    diff = s2 / n2 - s1 / n1
    ss = (cyy[mid] - cyy[lo] - s1 * s1 / n1) + (cyy[hi] - cyy[mid] - s2 * s2 / n2)
    dof = n1 + n2 - 2
    tiny = 1e-12 * max(float(np.max(np.abs(s.y))), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pvar = np.maximum(ss, 0.0) / np.maximum(dof, 1)
        t = np.abs(diff) / np.sqrt(pvar * (1 / n1 + 1 / n2) * s.inflation)
        pooled = np.where(dof > 0, 2 * special.stdtr(np.maximum(dof, 1), -t), 1.0)
        flat = pvar <= tiny**2  # no spread at all: any difference is certain, none is nothing
        pooled = np.where(flat, np.where(np.abs(diff) > tiny, 0.0, 1.0), pooled)
        if s.sigma > 0 and s.dof > 0:
            inv = 1.0 / var
            cw = np.concatenate([[0.0], np.cumsum(inv)])
            cwy = np.concatenate([[0.0], np.cumsum(inv * (s.w - float(np.median(s.y))))])
            w1, w2 = cw[mid] - cw[lo], cw[hi] - cw[mid]
            rdiff = (cwy[hi] - cwy[mid]) / w2 - (cwy[mid] - cwy[lo]) / w1
            robust = 2 * special.stdtr(s.dof, -np.abs(rdiff) / np.sqrt(1 / w1 + 1 / w2))
        else:
            robust = np.ones(len(mid))
    candidates = np.maximum(hi - lo - 2 * min_size + 1, 1)
    return np.asarray(np.minimum(1.0, 2 * np.minimum(pooled, robust) * candidates))


def _prune(s: _Series, var: Array, points: list[int], alpha: float, min_size: int,
           min_shift: float) -> list[ChangePoint]:
    """Re-test each change point between its neighbours; drop the weakest that fails (too
    unlikely or a shift below `min_shift`, or fewer than `min_size` points on a side) until
    all pass."""
    while True:
        if not points:
            return []
        bounds = [0, *points, len(s.y)]
        p = _p_values(s, var, bounds, min_size)
        kept: list[ChangePoint] = []
        weakest: tuple[float, int] | None = None
        for i, cp in enumerate(points):
            start, stop = bounds[i], bounds[i + 2]
            before, after, shift = _relative_shift(s.x, start, cp, stop)
            pi = float(p[i])
            if cp - start < min_size or stop - cp < min_size:
                score = 2.0 + min_size - min(cp - start, stop - cp)  # a side too short: first to go
            elif not (pi < alpha and abs(shift) >= min_shift):
                score = pi if pi >= alpha else alpha + (min_shift - abs(shift))
            else:
                score = -1.0
            if score >= 0 and (weakest is None or score > weakest[0]):
                weakest = (score, cp)
            kept.append(ChangePoint(cp, before, after, shift, pi, 1.0 - pi, (start, stop)))
        if weakest is None:
            return kept
        points = [q for q in points if q != weakest[1]]  # drop the weakest, then re-test the rest


# --------------------------------------------------------------------------- short regressions


def _excursions(s: _Series, var: Array, points: list[ChangePoint], alpha: float, min_size: int,
                min_shift: float, max_points: int) -> list[ChangePoint]:
    """`points` with the short excursions (a regression fixed a few commits later) that the
    segments between them hold: in each segment, the interval of 4 (`DEFAULT_MAX_BURST` + 1, or
    `min_size`) to `_EXCURSION_MAX` points, `min_size` from either end, whose winsorized mean
    differs most from the rest of the segment (`history.segmentation.scan`), tested against
    the rest (both sides are at one level, so both count): Student's t with the noise's
    degrees of freedom, Bonferroni over the intervals tried (times `excursion_share`, for
    their overlap), a shift of medians of at least `min_shift`. A found one becomes two change
    points and the segments on either side are searched again."""
    if s.sigma <= 0 or s.dof < 1:
        return points
    special = _special()
    lmin = max(min_size, DEFAULT_MAX_BURST + 1)
    n = len(s.y)
    cuts = [0, *(cp.index for cp in points), n]
    queue = list(itertools.pairwise(cuts))
    weights = 1.0 / var
    # The residual sum of squares about the levels, in units of each point's noise, and its
    # degrees of freedom: the noise the test uses is re-estimated with the excursion as a level
    # of its own (a two-sample t-test's within-group variance), so that the excursion being
    # tested does not inflate it.
    # Where the noise is heavy-tailed (the kurtosis of the winsorized residuals over
    # `_HEAVY_KURTOSIS`; normal noise gives about 2.9), the points are first pulled in to
    # `_SCAN_CLIP` of their own noise from their segment's median (Huber's winsorizing: a few
    # heavy-tailed points cannot make an excursion; the test, with the noise of the pulled-in
    # points, stays a t-test). Normal noise keeps its points: pulling them in costs power.
    # The kurtosis is of the residuals with each segment's best interval as a level of its own:
    # a real excursion left in them is a second level, not a heavy tail (it made Gaussian
    # series with a -2 % regression look heavy-tailed, and the clip then cut the regression).
    unit = weights * s.inflation
    v = np.array(s.w, dtype=float)
    sd = 1.0 / np.sqrt(unit)
    rss, dof = 0.0, float(n - len(queue))
    middles = [float(np.median(v[a:b])) for a, b in queue]
    best = {(a, b): _best_interval(s.w, weights, a, b, lmin, min_size) for a, b in queue}
    heavy = s.heavy or _heavy(v, sd, best)
    clip = _SCAN_CLIP if heavy else math.inf
    for (a, b), middle in zip(queue, middles, strict=True):
        v[a:b] = middle + np.clip(v[a:b] - middle, -clip * sd[a:b], clip * sd[a:b])
        level = float(np.sum(unit[a:b] * v[a:b]) / np.sum(unit[a:b]))
        rss += float(np.sum(unit[a:b] * (v[a:b] - level) ** 2))
    # Bonferroni over every interval of every segment (the scan looks in each of them); with
    # `_LENGTH_PRIOR`, over each length's intervals at that length's share of the budget
    tried = sum(_intervals(b - a, lmin, min_size) for a, b in queue)
    factors = _length_factors([b - a for a, b in queue], lmin, min_size) if _LENGTH_PRIOR else None
    found: list[ChangePoint] = []
    while queue and len(points) + len(found) + 2 <= max_points:
        a, b = queue.pop()
        if factors is not None:  # the interval whose weighted p is smallest, not the largest z
            best.pop((a, b), None)
            ex = _best_interval(s.w, weights, a, b, lmin, min_size, factors)
        else:
            ex = best.pop((a, b)) if (a, b) in best else _best_interval(s.w, weights, a, b, lmin, min_size)
        if ex is None or dof < 3:
            continue
        # located on the winsorized points (the pulled-in ones blur a large excursion's edges),
        # tested on the pulled-in ones
        inner = weights[ex.start:ex.stop]
        outer = np.concatenate([weights[a:ex.start], weights[ex.stop:b]])
        gap = (float(np.sum(inner * v[ex.start:ex.stop]) / np.sum(inner))
               - float((np.sum(weights[a:ex.start] * v[a:ex.start]) + np.sum(weights[ex.stop:b] * v[ex.stop:b]))
                       / np.sum(outer)))
        z_clipped = abs(gap) / math.sqrt(1 / float(np.sum(inner)) + 1 / float(np.sum(outer)))
        left = rss - z_clipped**2 * s.inflation
        if s.heavy:  # the M-estimate test where the block is heavy-tailed
            # the two levels' Huber M-estimates, their variance from the noise's moments
            gap = (_m_level(s.w[ex.start:ex.stop], sd[ex.start:ex.stop])
                   - _m_level(np.concatenate([s.w[a:ex.start], s.w[ex.stop:b]]),
                              np.concatenate([sd[a:ex.start], sd[ex.stop:b]])))
            z_m = abs(gap) / math.sqrt(s.huber * (1 / float(np.sum(inner)) + 1 / float(np.sum(outer))))
        else:
            z_m = 0.0
        if left <= 0:
            continue
        # the noise of the series analysed together, where pooled (`NoisePrior`): its degrees
        # of freedom and sum of squares, in this series' units, join this series' own
        pooled = s.prior_dof * s.prior_var / s.sigma**2
        z = z_clipped / math.sqrt((left + pooled) / (dof - 1 + s.prior_dof))
        count = max(tried, ex.tried)
        # the multiplier: the intervals of the test's family over the budget's share they get
        times = count if factors is None else factors[ex.stop - ex.start]
        p = min(1.0, 2 * float(special.stdtr(dof - 1 + s.prior_dof, -z)) * times * excursion_share(count))
        if z_m > 0:
            zm = z_m / math.sqrt((left + pooled) / (dof - 1 + s.prior_dof))
            pm = min(1.0, 2 * float(special.stdtr(dof - 1 + s.prior_dof, -zm)) * times * excursion_share(count))
            if p < _SCAN_HUBER_GATE * alpha:
                p = min(p, pm)
        inside = float(np.median(s.x[ex.start:ex.stop]))
        level = float(np.median(np.concatenate([s.x[a:ex.start], s.x[ex.stop:b]])))
        shift = inside / level - 1 if level else math.inf
        if p >= alpha or abs(shift) < min_shift:
            continue
        back = level / inside - 1 if inside else math.inf
        found.append(ChangePoint(ex.start, level, inside, shift, p, 1.0 - p, (a, ex.stop)))
        found.append(ChangePoint(ex.stop, inside, level, back, p, 1.0 - p, (ex.start, b)))
        queue += [(a, ex.start), (ex.stop, b)]
        rss, dof = left, dof - 1
    return sorted([*points, *found], key=lambda cp: cp.index)


def _m_level(x: Array, sd: Array) -> float:
    """Huber's M-estimate of the level of points `x` (noise `sd` each), psi at `_SCAN_HUBER` sds."""
    m = float(np.median(x))
    for _ in range(20):
        r = (x - m) / sd
        inside = np.abs(r) < _SCAN_HUBER
        slope = float(np.sum(inside / sd**2))
        if slope <= 0:
            break
        step = float(np.sum(np.clip(r, -_SCAN_HUBER, _SCAN_HUBER) / sd)) / slope
        m += step
        if abs(step) <= 1e-9 * float(np.min(sd)):
            break
    return m


def _best_interval(w: Array, weights: Array, a: int, b: int, lmin: int, margin: int,
                   factors: dict[int, float] | None = None) -> Excursion | None:
    """`scan`'s strongest interval of `lmin` to `_EXCURSION_MAX` points in ``[a, b)``, if there
    is room (its lengths compared by `factors` where given: `_length_factors`)."""
    top = min(_EXCURSION_MAX, b - a - 2 * margin)
    if top < lmin:
        return None
    return scan(w, weights, a, b, lengths=range(lmin, top + 1), margin=margin, factors=factors)


def length_prior(lmin: int) -> dict[int, float]:
    """The scan's false-alarm budget by excursion length, `lmin` to `_EXCURSION_MAX` (summing to
    1): `_PRIOR_LENGTHS` weigh 1 each, every other length `_PRIOR_OTHER`."""
    lo, hi = _PRIOR_LENGTHS
    raw = {n: 1.0 if lo <= n <= hi else _PRIOR_OTHER for n in range(lmin, _EXCURSION_MAX + 1)}
    total = sum(raw.values())
    return {n: weight / total for n, weight in raw.items()}


def _length_factors(sizes: Sequence[int], lmin: int, margin: int) -> dict[int, float]:
    """Each length's p-value multiplier in segments of `sizes` points: the intervals of that
    length the scan compares in all of them over the length's share (`length_prior`). A flat
    Bonferroni over every interval is the prior proportional to those counts."""
    prior = length_prior(lmin)
    factors = {}
    for n, weight in prior.items():
        count = sum(max(m - 2 * margin - n + 1, 0) for m in sizes)
        factors[n] = max(count, 1) / weight
    return factors


def _heavy(v: Array, sd: Array, best: dict[tuple[int, int], Excursion | None]) -> bool:
    """Whether points `v` (noise `sd` each) are heavy-tailed about their segments' levels (the
    keys of `best`), each segment's best interval (its value) a level of its own: the kurtosis
    of the residuals about the medians, in units of `sd`, over `_HEAVY_KURTOSIS`."""
    pieces = []
    for (a, b), ex in best.items():
        spans = [(a, b)] if ex is None else [(a, ex.start), (ex.start, ex.stop), (ex.stop, b)]
        for lo, hi in spans:
            if hi > lo:
                pieces.append((v[lo:hi] - float(np.median(v[lo:hi]))) / sd[lo:hi])
    res = np.concatenate(pieces) if pieces else np.zeros(1)
    power = float(np.mean(res**2))
    return power > 0 and float(np.mean(res**4)) / power**2 > _HEAVY_KURTOSIS


def _leave_to_scan(s: _Series, var: Array, cuts: list[int], min_size: int) -> list[int]:
    """`cuts` without the two cuts of each excursion of 4 to `_EXCURSION_MAX` points that goes
    away and comes back (its level beyond both neighbours' on one side) between two segments
    longer than `_EXCURSION_MAX` (not one of levels that alternate every few commits): it is a
    short regression and its fix, which the scan (`_excursions`) tests with its own multiplicity
    and heavy-tail clip (two cuts tested apart in the noise the excursion itself leaves let a
    cluster of heavy-tailed points through). Only where it returns: where its two neighbours are
    one level by PELT's own penalty (what one level would cost over two does not pay a cut),
    the scan's model of it (both sides at one level). A piece between two levels (a rise that
    partly returns, a staircase's middle step) keeps PELT's cuts: the scan had tested and
    placed it against the mixed level of both neighbours, and reported a change that returned
    to where it started (the seventh pass, ``tune_scan7.py``; before it, where PELT cut a
    staircase of steps 5 commits apart at 1 % noise into such a piece, the scan placed the
    pieces worse: tuning seed 214, t5 1 %, 9 -> 30 false points per 100 such series at n = 1,000)."""
    lmin = max(min_size, DEFAULT_MAX_BURST + 1)
    bounds = [0, *cuts, len(s.y)]
    inv = 1.0 / var
    cw, cwy = _cum(inv), _cum(inv * s.y)
    penalty = _PENALTY * math.log(max(len(s.y), 3))
    levels = [(cwy[b] - cwy[a]) / (cw[b] - cw[a]) for a, b in itertools.pairwise(bounds)]
    sizes = [b - a for a, b in itertools.pairwise(bounds)]
    drop: set[int] = set()
    for i in range(1, len(levels) - 1):
        if not lmin <= sizes[i] <= _EXCURSION_MAX or min(sizes[i - 1], sizes[i + 1]) <= _EXCURSION_MAX:
            continue
        if (levels[i] - levels[i - 1]) * (levels[i] - levels[i + 1]) <= 0:
            continue
        # the two neighbours one level: what merging them would save does not pay PELT's penalty
        left, right = cw[bounds[i]] - cw[bounds[i - 1]], cw[bounds[i + 2]] - cw[bounds[i + 1]]
        if (levels[i - 1] - levels[i + 1]) ** 2 / (1 / left + 1 / right) <= penalty:
            drop.update((bounds[i], bounds[i + 1]))
    return [c for c in cuts if c not in drop]


def excursion_share(count: int) -> float:
    """The effective share of Bonferroni's `count` for the scan's overlapping intervals: what a
    p-value times `count` is further multiplied by (`_SHARE_AT_66`, `_SHARE_PER_DECADE`)."""
    share = _SHARE_AT_66 - _SHARE_PER_DECADE * math.log10(max(count, 1) / 66)
    return min(max(share, _SHARE_RANGE[0]), _SHARE_RANGE[1])


def _intervals(m: int, lmin: int, margin: int) -> int:
    """How many intervals `_excursions` compares in a segment of `m` points."""
    top = min(_EXCURSION_MAX, m - 2 * margin)
    return sum(m - 2 * margin - length + 1 for length in range(lmin, top + 1))


# --------------------------------------------------------------------------- drifts


def _drifts(s: _Series, points: list[ChangePoint], alpha: float,
            min_shift: float) -> tuple[list[ChangePoint], list[Drift]]:
    """Replace each run of same-direction steps (one or more) by a drift where a ramp fits as well."""
    kept: list[ChangePoint] = []
    drifts: list[Drift] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and (points[j + 1].shift > 0) == (points[i].shift > 0):
            j += 1
        group = points[i:j + 1]
        drift = _ramp(s, group, alpha, min_shift)
        if drift is None:
            kept.extend(group)
        else:
            drifts.append(drift)
        i = j + 1
    return kept, drifts


_Fit = tuple[int, int, float, float, float, float, int]  # k0, k1, rss, a, b, unit se, pairs tried


def _ramp(s: _Series, group: list[ChangePoint], alpha: float, min_shift: float) -> Drift | None:
    """The best ramp over the span of `group`'s segments, if it beats the steps by BIC."""
    special = _special()
    start, stop = group[0].segment[0], group[-1].segment[1]
    y = s.w[start:stop]
    n = len(y)
    cuts = [0, *(cp.index - start for cp in group), n]
    rss_steps = sum(float(np.sum((y[a:b] - y[a:b].mean()) ** 2)) for a, b in itertools.pairwise(cuts))
    if n <= 4:
        return None
    # Knots where a ramp can start (at or before the first step) and end (at or after the last),
    # within the widest spacing of the steps of those ends (anywhere, for one step): at most
    # _KNOTS of each, evenly spread, then as many again around the best pair at the finer spacing.
    reach = max(10, max(b - a for a, b in itertools.pairwise(cuts[1:-1]))) if len(cuts) > 3 else n
    first = np.arange(max(0, cuts[1] - reach), cuts[1])
    last = np.arange(max(cuts[-2] - 1, 1), min(n, cuts[-2] + reach))
    centre = float(np.mean(y))
    yc = y - centre
    fit = _ramp_fit(yc, _spread(first), _spread(last))
    if fit is None:
        return None
    tried = fit[-1]
    gap0, gap1 = max(1, -(-len(first) // _KNOTS)), max(1, -(-len(last) // _KNOTS))
    if gap0 > 1 or gap1 > 1:
        k0c, k1c = fit[0], fit[1]
        finer = _ramp_fit(yc, _spread(first[np.abs(first - k0c) <= gap0]), _spread(last[np.abs(last - k1c) <= gap1]))
        if finer is not None:
            tried += finer[-1]
            if finer[2] <= fit[2]:
                fit = finer
    k0, k1, rss, a, b, unit_se, _ = fit
    a, b = a + centre, b + centre
    if len(group) == 1 and k1 - k0 < _MIN_RAMP:
        return None  # one step, and the best "ramp" is a step again
    tiny = 1e-300
    bic_steps = n * math.log(max(rss_steps / n, tiny)) + (2 * len(group) + 1) * math.log(n)
    bic_ramp = n * math.log(max(rss / n, tiny)) + 4 * math.log(n)
    if bic_ramp > bic_steps:
        return None
    se = math.sqrt(rss / (n - 4)) * unit_se
    p = 0.0 if se <= 0 else min(1.0, 2 * float(special.stdtr(n - 4, -abs(b - a) / se)) * tried)
    before, after = (math.exp(a), math.exp(b)) if s.log else (a * s.scale, b * s.scale)
    change = after / before - 1 if before else math.inf
    if p >= alpha or abs(change) < min_shift:
        return None
    slope = (1 + change) ** (1 / (k1 - k0)) - 1 if change > -1 else -1.0
    return Drift(start + k0, start + k1, before, after, change, slope, p, 1.0 - p, (start, stop), len(group))


def _ramp_fit(yc: Array, k0s: Array, k1s: Array) -> _Fit | None:
    """The least-squares ramp ``a + (b - a) clip((i - k0) / (k1 - k0), 0, 1)`` of yc over the knot
    pairs of k0s x k1s (k1 > k0): k0, k1, rss, a, b, se of (b - a) per unit residual sd, pairs tried."""
    n = len(yc)
    grid0, grid1 = np.meshgrid(k0s, k1s, indexing="ij")
    ok = grid1 > grid0
    k0: Array = grid0[ok]
    k1: Array = grid1[ok]
    if len(k0) == 0:
        return None
    # sums over r = clip((i - k0) / (k1 - k0), 0, 1) from cumulative sums: O(1) per knot pair
    i = np.arange(n, dtype=float)
    c1, c2 = _cum(i), _cum(i * i)
    cy, ciy = _cum(yc), _cum(i * yc)
    lo_i, hi_i = k0 + 1, k1
    span: Array = (k1 - k0).astype(float)
    cnt = (hi_i - lo_i).astype(float)
    m1, m2 = c1[hi_i] - c1[lo_i], c2[hi_i] - c2[lo_i]
    tail = (n - k1).astype(float)
    sr = (m1 - k0 * cnt) / span + tail
    srr = (m2 - 2 * k0 * m1 + k0 * k0 * cnt) / span**2 + tail
    sry = ((ciy[hi_i] - ciy[lo_i]) - k0 * (cy[hi_i] - cy[lo_i])) / span + (cy[n] - cy[hi_i])
    s11, s12, s22 = n - 2 * sr + srr, sr - srr, srr
    b1, b2 = float(yc.sum()) - sry, sry
    det = s11 * s22 - s12 * s12
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = (s22 * b1 - s12 * b2) / det
        hi = (s11 * b2 - s12 * b1) / det
        rss_all = np.where(det > 1e-12 * n * n, float(yc @ yc) - lo * b1 - hi * b2, np.inf)
    at = int(np.argmin(rss_all))
    if not math.isfinite(float(rss_all[at])):
        return None
    return (int(k0[at]), int(k1[at]), max(float(rss_all[at]), 0.0), float(lo[at]), float(hi[at]),
            math.sqrt(n / float(det[at])), len(k0))


def _cum(v: Array) -> Array:
    """Cumulative sums with a leading zero: ``_cum(v)[j] == v[:j].sum()``."""
    return np.concatenate([[0.0], np.cumsum(v)])


def _spread(knots: Array) -> Array:
    """At most `_KNOTS` of `knots`, evenly spread, both ends included."""
    if len(knots) <= _KNOTS:
        return knots
    return np.unique(knots[np.linspace(0, len(knots) - 1, _KNOTS).round().astype(int)])


def confidence_text(confidence: float) -> str:
    """1 - p as a percentage that never rounds up to 100 %."""
    if confidence >= 0.999999:
        return "> 99.9999 %"
    if confidence >= 0.999:
        return f"{confidence * 100:.4f} %"
    return f"{confidence * 100:.4g} %"
