"""Where a series' level changes: an optimal penalized segmentation (PELT) with a weighted
squared-error cost, and the rule that tells a short burst of bad runs from a step.

`pelt` is the exact minimiser of ``sum of segment costs + penalty * (segments - 1)``
(Killick, Fearnhead & Eckley 2012), each point weighted by its own inverse variance; its cost
is linear in the number of points when change points keep arriving (the pruning drops every
candidate that can no longer start the last segment), quadratic (n (n + 1) / 2 candidate
evaluations, vectorized) on a series whose level never moves. `classify` then turns the short
segments it found into what they are: an excursion of at most `max_burst` points that
returns to the level around it is an outlier **burst** (its points are left out of every
later test); any other segment shorter than `min_size` is merged into the neighbour whose
level is nearer (a step cannot be confirmed on fewer points).

Why hand-written rather than `ruptures`: ruptures' `Pelt` evaluates each candidate in
Python (measured here: 1.7 s for one 1,000-point series, where the target is 30 ms) and
its fast compiled `KernelCPD` takes no per-point weights. The numbers are in
``tests/benchmarks/changepoints/changepoints.txt``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

#: Longest excursion that is an outlier burst rather than a regression fixed later.
DEFAULT_MAX_BURST = 3
#: How far a burst's points must lie from the level around them, on average, in units of their
#: own noise (weights are inverse variances): bad runs (a throttled GPU: 10 % at 0.5-1 % noise
#: is 10-20 noise units) rather than the worst few commits of a small regression that lasted
#: longer (2-4 units), which stay in the series for the short-regression scan.
DEFAULT_BURST_Z = 5.0


def pelt(y: Array, weights: Array, penalty: float, work: list[int] | None = None) -> list[int]:
    """The change points (first index of each new segment, ascending) that minimise
    ``sum_i w_i (y_i - level of its segment)**2 + penalty * (number of change points)``.

    Segments may be one point long (the caller decides what short segments are). `work`, where
    given, gets the number of candidate segment starts evaluated appended (the search's cost)."""
    n = len(y)
    if n < 2:
        return []
    cw = np.concatenate([[0.0], np.cumsum(weights)])
    cwy = np.concatenate([[0.0], np.cumsum(weights * y)])
    cwyy = np.concatenate([[0.0], np.cumsum(weights * y * y)])
    best = np.empty(n + 1)
    best[0] = -penalty
    last = np.zeros(n + 1, dtype=np.int64)
    cands = np.array([0], dtype=np.int64)
    evaluated = 0
    for t in range(1, n + 1):
        evaluated += len(cands)
        sw = cw[t] - cw[cands]
        swy = cwy[t] - cwy[cands]
        cost = (cwyy[t] - cwyy[cands]) - swy * swy / sw
        total = best[cands] + cost
        at = int(np.argmin(total))
        best[t] = total[at] + penalty
        last[t] = cands[at]
        # PELT's pruning (K = 0 for this cost): a start that is already no better than the
        # optimum at t can never be the optimal start of a later last segment.
        cands = np.append(cands[total <= best[t]], t)
    if work is not None:
        work.append(evaluated)
    points: list[int] = []
    t = n
    while t > 0:
        t = int(last[t])
        if t > 0:
            points.append(t)
    return points[::-1]


@dataclass(frozen=True)
class Segments:
    """The result of `classify`: the change points between the segments kept, and the bursts
    (``[start, stop)``, each returning to the level around it), all on the original indices."""

    points: list[int]
    bursts: list[tuple[int, int]]


def _level(cw: Array, cwy: Array, start: int, stop: int) -> float:
    return float((cwy[stop] - cwy[start]) / (cw[stop] - cw[start]))


def classify(y: Array, weights: Array, points: list[int], *, min_size: int,
             max_burst: int = DEFAULT_MAX_BURST, burst_z: float = DEFAULT_BURST_Z) -> Segments:
    """Sort the short segments of a segmentation of `y` (change points `points`) into bursts
    and merges.

    A burst is an inner segment of at most `max_burst` points whose level lies on the same
    side of both neighbours' levels and at least twice as far from each as the neighbours are
    from each other (it went away and came back), and at least `burst_z` of its points' own
    noise from each (``sqrt(mean weight)`` per unit of level). Every other segment shorter than `min_size`
    (at an end, or a transition between two levels) is merged into the neighbour whose level is
    nearer. The shortest segment is settled first and levels are recomputed after each change."""
    n = len(y)
    w = np.array(weights, dtype=float)
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cwy = np.concatenate([[0.0], np.cumsum(w * y)])
    bounds = [0, *points, n]
    bursts: list[tuple[int, int]] = []
    while True:
        segs = list(itertools.pairwise(bounds))
        short = [i for i, (a, b) in enumerate(segs) if b - a < min_size or
                 (0 < i < len(segs) - 1 and b - a <= max_burst)]
        if len(segs) < 2 or not short:
            break
        settled = False
        for i in sorted(short, key=lambda k: (segs[k][1] - segs[k][0], k)):
            a, b = segs[i]
            mid = _level(cw, cwy, a, b)
            left = _level(cw, cwy, *segs[i - 1]) if i > 0 else None
            right = _level(cw, cwy, *segs[i + 1]) if i < len(segs) - 1 else None
            if left is not None and right is not None and b - a <= max_burst:
                dl, dr = mid - left, mid - right
                unit = math.sqrt(float(np.mean(w[a:b])))  # 1 / the points' noise
                if (dl * dr > 0 and min(abs(dl), abs(dr)) >= 2 * abs(left - right)
                        and min(abs(dl), abs(dr)) * unit >= burst_z):
                    bursts.append((a, b))  # away and back: an outlier burst; its neighbours join
                    bounds = [c for c in bounds if c not in (a, b)]
                    w[a:b] = 0.0  # and its points count in no level from now on
                    cw = np.concatenate([[0.0], np.cumsum(w)])
                    cwy = np.concatenate([[0.0], np.cumsum(w * y)])
                    settled = True
                    break
            if b - a >= min_size:
                continue  # long enough to stand as a segment (a short step of a staircase)
            # too short to confirm a step: join the neighbour at the nearer level
            if right is None or (left is not None and abs(mid - left) <= abs(mid - right)):
                bounds.remove(a)
            else:
                bounds.remove(b)
            settled = True
            break
        if not settled:
            break
    return Segments([c for c in bounds if 0 < c < n], sorted(bursts))


@dataclass(frozen=True)
class Excursion:
    """The strongest short excursion `scan` found in one segment: points ``[start, stop)``
    against the rest of the segment, ``z`` its standardized difference of weighted means, and
    ``tried`` the number of intervals compared (the search's multiplicity)."""

    start: int
    stop: int
    z: float
    tried: int


def scan(y: Array, weights: Array, start: int, stop: int, *, lengths: range, margin: int) -> Excursion | None:
    """The interval of `y[start:stop]` whose weighted mean differs most from that of the rest
    of the span, in units of its standard error (``weights`` are inverse variances): every
    interval whose length is in `lengths` and that leaves at least `margin` points of the span
    on each side. A regression fixed a few commits later is such an interval; one PELT cut
    cannot see it when it is shorter than its penalty allows, both its sides at the same level
    can. Vectorized over positions, one pass per length: O((stop - start) * len(lengths))."""
    w = np.asarray(weights[start:stop], dtype=float)
    v = np.asarray(y[start:stop], dtype=float)
    m = len(v)
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cwy = np.concatenate([[0.0], np.cumsum(w * (v - float(np.median(v))))])
    total_w, total_y = cw[-1], cwy[-1]
    best: tuple[float, int, int] | None = None
    tried = 0
    for length in lengths:
        first = np.arange(margin, m - margin - length + 1)
        if len(first) == 0:
            continue
        tried += len(first)
        w_in = cw[first + length] - cw[first]
        y_in = cwy[first + length] - cwy[first]
        w_out = total_w - w_in
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.abs(y_in / w_in - (total_y - y_in) / w_out) / np.sqrt(1 / w_in + 1 / w_out)
        z = np.where(np.isfinite(z), z, 0.0)
        at = int(np.argmax(z))
        if best is None or z[at] > best[0]:
            best = (float(z[at]), int(first[at]), length)
    if best is None:
        return None
    return Excursion(start + best[1], start + best[1] + best[2], best[0], tried)
