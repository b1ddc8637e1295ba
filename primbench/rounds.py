"""Rounds: each specialization is measured R times, each time from a fresh ``run(state)``.

Batches of one round agree to about 0.1 %, yet identical code measured in separate
processes moves by 1 % or more for small or allocation-sensitive kernels: where the
buffers land, what the GPU did just before. Only repetition at the level where that
variation arises measures it, so the executor calls the benchmark's ``run(state)`` afresh
for every round (new buffers, new setup, own warmup and stop rule) and interleaves the
rounds across specializations (round 1 of every specialization, then round 2, ...), so that
a drift of temperature or clocks hits all of them alike. ``compare`` tests changes against
the spread between rounds.

The budget of a specialization is split, not multiplied: each round stops on
``min_secs / R`` and ``noise_timeout_secs / R`` and a window of ``ceil(batch_window_size / R)``
batches (at least `MIN_ROUND_WINDOW`), and later rounds keep the batch size the first found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Default number of rounds per specialization (``--rounds``). Three is the fewest that
#: gives a spread with two degrees of freedom per side; the H200 evaluation
#: (tests/benchmarks/rounds/evaluate.txt) shows the verdicts it supports.
DEFAULT_ROUNDS = 3
#: Fewest batches in a round's noise window.
MIN_ROUND_WINDOW = 3


@dataclass(frozen=True)
class RoundBudget:
    """The stopping rule of one round."""

    min_secs: float
    noise_timeout_secs: float
    batch_window_size: int


def round_budget(min_secs: float, noise_timeout_secs: float, batch_window_size: int, rounds: int) -> RoundBudget:
    """One round's share of a specialization's budget (the whole budget for one round)."""
    r = max(1, rounds)
    if r == 1:
        return RoundBudget(min_secs, noise_timeout_secs, batch_window_size)
    window = max(min(MIN_ROUND_WINDOW, batch_window_size), math.ceil(batch_window_size / r))
    return RoundBudget(min_secs / r, noise_timeout_secs / r, window)


def log_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n-1) of ln(value): the relative spread of positive values
    (for small spreads, their coefficient of variation). None for fewer than two values."""
    logs = [math.log(v) for v in values if v > 0 and math.isfinite(v)]
    n = len(logs)
    if n < 2:
        return None
    mean = math.fsum(logs) / n
    return math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (n - 1))
