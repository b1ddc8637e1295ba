"""Change-point detection: at which commit did a series' level shift, by how much, how surely.

Method: binary segmentation on the logarithm of the values (so shifts are relative and a
5 % drop looks the same at 1 TB/s and at 10 GB/s), then a pruning pass.

1. **Where.** In a segment, the candidate split is the one that removes the most squared
   error when the segment is modelled as two constant levels instead of one (the classic
   least-squares / CUSUM statistic ``k (n-k) / n * (mean_left - mean_right)**2``), with at
   least `min_size` points on each side.
2. **Whether.** A two-sample t-test (pooled variance, SciPy) of the two sides at that split.
   Because the split was chosen as the best of ``m`` candidates, its p-value is multiplied
   by ``m`` (Bonferroni): the chance that a segment with no shift yields a "significant"
   split stays below `alpha`. The split is kept if the adjusted p-value is below `alpha`
   and the relative change of the median level is at least `min_shift` (a statistically
   sure 0.05 % drift is not worth a CI failure); binary segmentation then recurses into
   both sides of every significant split.
3. **Pruning.** Each change point is re-tested on the segment between its neighbours
   (the final segmentation, not the one it was found in); points that no longer pass are
   dropped until none changes. ``before``, ``after`` and ``shift`` are the medians of the
   neighbouring segments and their relative change; ``confidence`` is ``1 - p``.

A shift needs `min_size` points after it (default 3) before it can be confirmed: one
low point at the tip of a branch is indistinguishable from a bad run. (`compare`, with the
run-to-run variability, is the tool for a single new run.) The test assumes the points
within a segment are independent with equal spread; a steady drift will be cut into steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from history.deps import require

#: Defaults: the chance that a shift-free series yields a false change point; commits needed
#: on each side of a shift; smallest relative shift of level reported.
DEFAULT_ALPHA = 0.001
DEFAULT_MIN_SIZE = 3
DEFAULT_MIN_SHIFT = 0.01


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


def _transform(values: np.ndarray) -> np.ndarray:
    return np.log(values) if np.all(values > 0) else values.astype(float)


def _best_split(y: np.ndarray, start: int, stop: int, min_size: int) -> int | None:
    """The least-squares two-level split of y[start:stop], or None if the segment is too short."""
    seg = y[start:stop]
    n = len(seg)
    if n < 2 * min_size:
        return None
    csum = np.cumsum(seg)
    total = csum[-1]
    k = np.arange(min_size, n - min_size + 1)
    left_mean = csum[k - 1] / k
    right_mean = (total - csum[k - 1]) / (n - k)
    gain = k * (n - k) / n * (left_mean - right_mean) ** 2
    return start + int(k[int(np.argmax(gain))])


def _test(y: np.ndarray, start: int, split: int, stop: int, min_size: int) -> float:
    """Bonferroni-adjusted two-sided p-value of a level difference at `split` within [start, stop)."""
    stats = require("scipy.stats")
    left, right = y[start:split], y[split:stop]
    n1, n2 = len(left), len(right)
    candidates = max(1, (stop - start) - 2 * min_size + 1)
    diff = float(np.mean(right) - np.mean(left))
    dof = n1 + n2 - 2
    ss = float(np.sum((left - left.mean()) ** 2) + np.sum((right - right.mean()) ** 2))
    scale = max(abs(float(np.mean(y[start:stop]))), 1.0)
    if dof <= 0:
        return 1.0
    var = ss / dof
    if var <= (1e-15 * scale) ** 2:  # no spread at all: any difference is certain, none is nothing
        return 0.0 if abs(diff) > 1e-12 * scale else 1.0
    t = diff / math.sqrt(var * (1 / n1 + 1 / n2))
    p = 2 * float(stats.t.sf(abs(t), dof))
    return min(1.0, p * candidates)


def _relative_shift(values: np.ndarray, start: int, split: int, stop: int) -> tuple[float, float, float]:
    before = float(np.median(values[start:split]))
    after = float(np.median(values[split:stop]))
    if before == 0:
        return before, after, math.inf if after > 0 else -math.inf if after < 0 else 0.0
    return before, after, after / before - 1


def detect(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
           min_shift: float = DEFAULT_MIN_SHIFT, max_points: int = 20) -> list[ChangePoint]:
    """The change points of a series (ordered oldest first), oldest change first.

    `alpha`: the chance a shift-free segment yields a false change point; `min_size`: points
    needed on each side of a change; `min_shift`: smallest relative change of level reported."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("values must be a flat sequence of finite numbers")
    y = _transform(x)
    n = len(y)
    found: set[int] = set()
    stack = [(0, n)]
    while stack and len(found) < max_points:
        start, stop = stack.pop()
        split = _best_split(y, start, stop, min_size)
        if split is None:
            continue
        p = _test(y, start, split, stop, min_size)
        if p >= alpha:
            continue
        if abs(_relative_shift(x, start, split, stop)[2]) >= min_shift:
            found.add(split)
        stack.append((start, split))
        stack.append((split, stop))
    return _prune(x, y, sorted(found), alpha, min_size, min_shift)


def _prune(x: np.ndarray, y: np.ndarray, points: list[int], alpha: float, min_size: int,
           min_shift: float) -> list[ChangePoint]:
    while True:
        bounds = [0, *points, len(y)]
        kept: list[ChangePoint] = []
        weakest: tuple[float, int] | None = None
        for i, cp in enumerate(points):
            start, stop = bounds[i], bounds[i + 2]
            p = _test(y, start, cp, stop, min_size)
            before, after, shift = _relative_shift(x, start, cp, stop)
            ok = p < alpha and abs(shift) >= min_shift
            if not ok:
                score = p if p >= alpha else alpha + (min_shift - abs(shift))
                if weakest is None or score > weakest[0]:
                    weakest = (score, cp)
            kept.append(ChangePoint(cp, before, after, shift, p, 1.0 - p, (start, stop)))
        if weakest is None:
            return kept
        points = [p for p in points if p != weakest[1]]  # drop the weakest, then re-test the rest


def confidence_text(confidence: float) -> str:
    """1 - p as a percentage that never rounds up to 100 %."""
    if confidence >= 0.999999:
        return "> 99.9999 %"
    if confidence >= 0.999:
        return f"{confidence * 100:.4f} %"
    return f"{confidence * 100:.4g} %"
