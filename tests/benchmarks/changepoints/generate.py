"""Synthetic performance series with known change points, for comparing change-point detectors.

The generator is deliberately not primbench's own model (independent Gaussian noise of equal
spread on ln(value) around piecewise-constant levels): the noise is relative and additive on the
value, its innovations can be heavy-tailed (Student's t with 5 degrees of freedom, scaled to the
same standard deviation) and autocorrelated (AR(1)), and besides steps there are linear drifts
and bursts of bad runs (a throttled GPU: 2 or 3 consecutive runs 10 % slower).

A `Case` says what a series holds; `series` makes one with its ground truth: the indices where a
level changes (`truth`), the spans of drifts (`drifts`, each one event) and the bursts (never a
change point).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Noise:
    """Relative noise: `cv` its standard deviation; `phi` AR(1) coefficient; `tails` 'normal', 't5'
    or 'laplace'."""

    cv: float
    phi: float = 0.0
    tails: str = "normal"

    def label(self) -> str:
        extra = (f", AR(1) {self.phi:g}" if self.phi else "") + (f", {self.tails}" if self.tails != "normal" else "")
        return f"{self.cv * 100:g} %{extra}"

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.tails == "t5":
            e = rng.standard_t(5, n) / np.sqrt(5 / 3)  # unit variance
        elif self.tails == "laplace":  # the tuning set's heavy tails (the eval set has t5)
            e = rng.laplace(0.0, 1 / np.sqrt(2), n)
        else:
            e = rng.standard_normal(n)
        if self.phi:
            out = np.empty(n)
            out[0] = e[0]
            scale = np.sqrt(1 - self.phi**2)  # stationary: unit variance
            for i in range(1, n):
                out[i] = self.phi * out[i - 1] + scale * e[i]
            e = out
        return np.asarray(self.cv * e)


@dataclass(frozen=True)
class Series:
    values: np.ndarray
    truth: list[int]  # first index at each new level (steps)
    drifts: list[tuple[int, int]] = field(default_factory=list)  # [start, end] of each drift
    bursts: list[tuple[int, int]] = field(default_factory=list)  # [start, stop) of each burst


#: The kinds of series, each drawn at random positions (`series`).
#: A "fixed" regression's length in commits, drawn from [low, high): 5-10 (issue 24's case); a
#: check of other lengths sets ``CP_FIXED_LENGTHS=low,high`` (`length_cost.sh`).
FIXED_LENGTHS = tuple(int(x) for x in os.environ.get("CP_FIXED_LENGTHS", "5,11").split(","))
KINDS = ("flat", "burst2", "burst3", "step", "steps3", "alternating3", "fixed", "drift")


def series(kind: str, n: int, noise: Noise, rng: np.random.Generator, *, size: float = 0.03) -> Series:
    """One series of `n` commits at base 1e12 (bytes per second).

    flat: nothing. burst2 / burst3: 2 or 3 runs 10 % slower somewhere inside. step: one step of
    `size` (random sign). steps3: three steps of `size`, random signs, 5 commits apart (levels may
    or may not return). alternating3: three steps 5 commits apart whose levels return
    (0, +size, 0, +size or the mirror). fixed: a regression of `size` fixed 5 to 10 commits later.
    drift: a linear change of 3 * `size` in total over 20 to 40 commits (at most n / 2)."""
    level = np.zeros(n)
    truth: list[int] = []
    drifts: list[tuple[int, int]] = []
    bursts: list[tuple[int, int]] = []
    burst_factor = np.ones(n)
    if kind == "flat":
        pass
    elif kind in ("burst2", "burst3"):
        k = 2 if kind == "burst2" else 3
        at = int(rng.integers(5, n - 5 - k + 1))
        burst_factor[at:at + k] = 0.9
        bursts.append((at, at + k))
    elif kind == "step":
        at = int(rng.integers(max(5, n // 10), n - max(5, n // 10)))
        level[at:] = size * rng.choice([-1, 1])
        truth = [at]
    elif kind in ("steps3", "alternating3"):
        first = int(rng.integers(5, n - 20 + 1))
        truth = [first, first + 5, first + 10]
        if kind == "steps3":
            signs = rng.choice([-1, 1], 3)
            for t, s in zip(truth, signs, strict=True):
                level[t:] += s * size
        else:
            sign = rng.choice([-1, 1])
            level[truth[0]:truth[1]] = sign * size
            level[truth[2]:] = sign * size
    elif kind == "fixed":
        length = int(rng.integers(*FIXED_LENGTHS))
        at = int(rng.integers(5, n - length - 5 + 1))
        level[at:at + length] = -size
        truth = [at, at + length]
    elif kind == "drift":
        length = int(min(rng.integers(20, 41), n // 2))
        at = int(rng.integers(5, n - length - 5 + 1))
        total = 3 * size * rng.choice([-1, 1])
        level[at:at + length] = total * np.arange(1, length + 1) / length
        level[at + length:] = total
        drifts = [(at, at + length)]
    else:
        raise ValueError(f"unknown kind {kind!r}")
    values = 1e12 * (1 + level) * (1 + noise.draw(rng, n)) * burst_factor
    return Series(values, truth, drifts, bursts)
