"""Where a series' level changes: an optimal penalized segmentation (PELT) with a weighted
squared-error cost, the rule that tells a short burst of bad runs from a step, and the scan
that finds a short excursion (a regression fixed a few commits later).

`pelt` is the exact minimiser of ``sum of segment costs + penalty * (segments - 1)``
(Killick, Fearnhead & Eckley 2012), each point weighted by its own inverse variance; its cost
is linear in the number of points when change points keep arriving (the pruning drops every
candidate that can no longer start the last segment), quadratic (n (n + 1) / 2 candidate
evaluations, vectorized) on a series whose level never moves. `search` is `pelt` up to
`EXACT_UP_TO` points and coarse to fine beyond (PELT on at most 500 blocks, then each cut
placed at its exact point), so its cost is linear in n. `classify` then turns the short
segments it found into what they are: an excursion of at most `max_burst` points that
returns to the level around it, at least `burst_z` of its noise away, is an outlier **burst**
(its points are left out of every later test); one that returns but is not that far, and
any other segment shorter than `min_size`, is merged into the neighbour whose level is nearer
(a step cannot be confirmed on fewer points). `scan` finds, in one segment, the interval whose
mean differs most from the rest's (O(n) per interval length).

Why hand-written rather than `ruptures`: ruptures' `Pelt` evaluates each candidate in
Python (measured here: 2.6 s for one 1,000-point series, where the target is 30 ms) and
its fast compiled `KernelCPD` takes no per-point weights (and is quadratic on a flat series:
108-169 ms at 10,000 points). The numbers are in ``tests/benchmarks/changepoints/changepoints.txt``.
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
    cw_at, cwy_at = cw.tolist(), cwy.tolist()
    last = [0] * (n + 1)
    # The candidate starts s, oldest first, in the first `size` entries of parallel buffers.
    # The segment [s, t) costs sum(w y**2 over it) - (cwy[t] - cwy[s])**2 / (cw[t] - cw[s]); the
    # sums of w y**2 add up to the same total in every segmentation of [0, t), so they are left
    # out: base[s] is the optimum of [0, s) less them, and with cwy[s] and cw[s] all a candidate needs.
    # The points go in blocks that end where PELT prunes: the candidates from before a block are
    # evaluated for all its points in one array operation, the block's own (each needs the optimum
    # of the point before it) one by one in Python floats. Every total is the same IEEE operations
    # on the same numbers either way, and ties go as argmin takes them (the oldest candidate).
    start = np.empty(n + 1, dtype=np.int64)
    base = np.empty(n + 1)
    sy = np.empty(n + 1)
    sw = np.empty(n + 1)
    start[0], base[0], sy[0], sw[0] = 0, -penalty, 0.0, 0.0
    size = 1
    evaluated = 0
    t0 = 1
    while t0 <= n:
        t1 = min(n, t0 + (-t0) % _PRUNE_EVERY)  # the block ends where PELT prunes (t a multiple), or at n
        # the candidates from before the block, every t of it at once (the same operations, element by element)
        d = cwy[t0:t1 + 1, None] - sy[None, :size]
        total = base[None, :size] - d * d / (cw[t0:t1 + 1, None] - sw[None, :size])
        firsts = total.argmin(axis=1)
        lowest = total[np.arange(t1 - t0 + 1), firsts].tolist()
        starts = start[firsts].tolist()
        new: list[tuple[int, float, float, float]] = []  # the block's own candidates: start, base, sy, sw
        tail: list[float] = []
        for j, t in enumerate(range(t0, t1 + 1)):
            best, at = lowest[j], starts[j]
            cy, cwt = cwy_at[t], cw_at[t]
            tail = []
            for s, b, y_s, w_s in new:  # later than every candidate above: replaces only a lower total
                dd = cy - y_s
                v = b - dd * dd / (cwt - w_s)
                tail.append(v)
                if v < best or (v != v and best == best):  # argmin's order: the first lowest, a NaN first of all
                    best, at = v, s
            evaluated += size + len(new)
            bt = best + penalty
            last[t] = at
            new.append((t, bt, cy, cwt))
        if t1 % _PRUNE_EVERY == 0:
            # PELT's pruning at t1, over its candidates (those before the block, then the block's but t1)
            bt = new[-1][1]
            alive = np.flatnonzero(total[-1] <= bt)
            kept = len(alive)
            if kept < size:
                start[:kept], base[:kept], sy[:kept], sw[:kept] = start[alive], base[alive], sy[alive], sw[alive]
            size = kept
            survivors = [c for c, v in zip(new[:-1], tail, strict=True) if v <= bt] + [new[-1]]
        else:
            survivors = new
        m = len(survivors)
        if m:
            cols = list(zip(*survivors, strict=True))
            start[size:size + m], base[size:size + m] = cols[0], cols[1]
            sy[size:size + m], sw[size:size + m] = cols[2], cols[3]
            size += m
        t0 = t1 + 1
    if work is not None:
        work.append(evaluated)
    points: list[int] = []
    t = n
    while t > 0:
        t = int(last[t])
        if t > 0:
            points.append(t)
    return points[::-1]


_PRUNE_EVERY = 8  # PELT prunes its candidates every this many points

#: Longest series searched point by point; a longer one is searched on blocks first.
EXACT_UP_TO = 1000


def search(y: Array, weights: Array, penalty: float, *, exact_up_to: int = EXACT_UP_TO,
           work: list[int] | None = None) -> list[int]:
    """`pelt`'s change points where the series has at most `exact_up_to` points; on a longer
    one, coarse to fine, so that its cost stays linear in n however flat the series:

    1. PELT on blocks of ``k = ceil(2 n / exact_up_to)`` consecutive points (their weighted
       means, weighted by their summed weights): the exact optimum among the segmentations
       that cut only between blocks (a block's own spread is the same in all of them);
    2. each cut, left to right, moved to the best split of its two neighbouring segments
       within ``k`` points of it (exact positions; a burst inside a block gets its own edges),
       or dropped where that split no longer saves `penalty` (a block that straddled a step
       made a level of its own), its left neighbour then refined again.

    A few-point excursion diluted in its block may go unseen by step 1 (the caller's
    short-regression scan looks at every point again)."""
    n = len(y)
    if n <= exact_up_to:
        return pelt(y, weights, penalty, work)
    k = -(-2 * n // exact_up_to)
    starts = np.arange(0, n, k)
    bw = np.add.reduceat(weights, starts)
    by = np.add.reduceat(weights * y, starts) / bw
    cuts = [int(starts[c]) for c in pelt(by, bw, penalty, work)]
    cw = np.concatenate([[0.0], np.cumsum(weights)])
    cwy = np.concatenate([[0.0], np.cumsum(weights * y)])
    bounds = [0, *cuts, n]
    i = 1
    while i < len(bounds) - 1:
        lo, hi = bounds[i - 1], bounds[i + 1]
        s = np.arange(max(lo + 1, bounds[i] - k), min(hi - 1, bounds[i] + k) + 1)
        # what splitting [lo, hi) at s saves of its cost
        whole = (cwy[hi] - cwy[lo]) ** 2 / (cw[hi] - cw[lo])
        gain = (cwy[s] - cwy[lo]) ** 2 / (cw[s] - cw[lo]) + (cwy[hi] - cwy[s]) ** 2 / (cw[hi] - cw[s]) - whole
        at = int(np.argmax(gain)) if len(s) else -1
        if at < 0 or gain[at] < penalty:
            # a block that straddled a step made a level of its own; at full resolution the
            # cut no longer pays its penalty
            del bounds[i]
            i = max(i - 1, 1)
            continue
        bounds[i] = int(s[at])
        i += 1
    return bounds[1:-1]


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
    noise from each (``sqrt(mean weight)`` per unit of level). One that went away and came
    back but not that far is merged, however long (up to `max_burst`): an excursion of a few
    commits is bad runs or nothing, never a regression and its fix. Every other segment shorter than `min_size`
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
            returns = False  # away and back, but too close to be bad runs
            if left is not None and right is not None and b - a <= max_burst:
                dl, dr = mid - left, mid - right
                unit = math.sqrt(float(np.mean(w[a:b])))  # 1 / the points' noise
                returns = dl * dr > 0 and min(abs(dl), abs(dr)) >= 2 * abs(left - right)
                if returns and min(abs(dl), abs(dr)) * unit >= burst_z:
                    bursts.append((a, b))  # away and back: an outlier burst; its neighbours join
                    bounds = [c for c in bounds if c not in (a, b)]
                    w[a:b] = 0.0  # and its points count in no level from now on
                    cw = np.concatenate([[0.0], np.cumsum(w)])
                    cwy = np.concatenate([[0.0], np.cumsum(w * y)])
                    settled = True
                    break
            if b - a >= min_size and not returns:
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


def log_tail(z: float) -> float:
    """``ln P(Z > z)`` of a standard normal Z, for z >= 0 (asymptotic where `math.erfc` underflows)."""
    if z < 30:
        return math.log(0.5 * math.erfc(z / math.sqrt(2)))
    return -0.5 * z * z - math.log(z * math.sqrt(2 * math.pi)) + math.log1p(-1 / (z * z))


def scan(y: Array, weights: Array, start: int, stop: int, *, lengths: range, margin: int,
         factors: dict[int, float] | None = None) -> Excursion | None:
    """The interval of `y[start:stop]` whose weighted mean differs most from that of the rest
    of the span, in units of its standard error (``weights`` are inverse variances): every
    interval whose length is in `lengths` and that leaves at least `margin` points of the span
    on each side. A regression fixed a few commits later is such an interval; one PELT cut
    cannot see it when it is shorter than its penalty allows, both its sides at the same level
    can. Vectorized over positions, one pass per length: O((stop - start) * len(lengths)).

    With `factors` (each length's multiplier of a p-value: the intervals of that length a test
    counts, over the share of the false-alarm budget that length is given), the lengths are
    compared by that multiplier times the normal tail of their best z (the interval whose
    p-value would be smallest), not by z alone; within a length the largest z still wins."""
    w = np.asarray(weights[start:stop], dtype=float)
    v = np.asarray(y[start:stop], dtype=float)
    m = len(v)
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cwy = np.concatenate([[0.0], np.cumsum(w * (v - float(np.median(v))))])
    total_w, total_y = cw[-1], cwy[-1]
    best: tuple[float, int, int, float] | None = None
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
        # ranked by z, or by minus the log of the p-value the length's multiplier would give it
        top = float(z[at])
        rank = top if factors is None else -(log_tail(top) + math.log(factors[length]))
        if best is None or rank > best[3]:
            best = (top, int(first[at]), length, rank)
    if best is None:
        return None
    return Excursion(start + best[1], start + best[1] + best[2], best[0], tried)
