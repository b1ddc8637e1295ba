"""Rounds: each specialization is measured R times, each time from a fresh ``run(state)``.

Batches of one round agree to about 0.1 %, yet identical code measured in separate
processes moves by 1 % or more for small or allocation-sensitive kernels: where the
buffers land, what the GPU did just before. Only repetition at the level where that
variation arises measures it, so the executor calls the benchmark's ``run(state)`` afresh
for every round (new buffers, new setup, own warmup and stop rule) and interleaves the
rounds across specializations (round 1 of every specialization, then round 2, ...), so that
a drift of temperature or clocks hits all of them alike. ``compare`` tests changes against
the spread between rounds.

The budget of a specialization is split, not multiplied. Its window of ``batch_window_size``
batches is shared out among the rounds (10 over 3 rounds: 4, 3, 3; at least `MIN_ROUND_WINDOW`
each), and ``--min-secs`` counts over the rounds together: round r stops once the rounds so far
have run (r + 1) / R of it, so that a round that overran (its window of batches took longer
than its share) leaves the later ones less, and only the last round's last batch overshoots.
The noise timeout is split evenly. The first round sizes the batches and spreads ``min_secs``
over the whole window; later rounds keep that size.
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
    """The stopping rule of one round, and what its batch sizing fills."""

    min_secs: float
    noise_timeout_secs: float
    batch_window_size: int
    #: Where this round sizes the batches (the first): the seconds and the number of batches
    #: over which ``min_secs`` is spread (`primbench.measure.fill_window`).
    fill_secs: float
    fill_batches: int


def round_windows(batch_window_size: int, rounds: int) -> list[int]:
    """Each round's window: `batch_window_size` shared out, the first rounds taking what does
    not divide evenly (10 over 3: 4, 3, 3), none below `MIN_ROUND_WINDOW` nor above the user's
    window."""
    r = max(1, rounds)
    if r == 1:
        return [batch_window_size]
    floor = min(MIN_ROUND_WINDOW, batch_window_size)
    base, extra = divmod(batch_window_size, r)
    return [max(floor, base + (1 if i < extra else 0)) for i in range(r)]


def round_budget(min_secs: float, noise_timeout_secs: float, batch_window_size: int, rounds: int,
                 round_index: int = 0, spent_secs: float = 0.0) -> RoundBudget:
    """Round `round_index`'s share of a specialization's budget (the whole budget for one
    round), after its earlier rounds ran for `spent_secs` in all."""
    r = max(1, rounds)
    windows = round_windows(batch_window_size, r)
    i = min(max(0, round_index), r - 1)
    own = max(0.0, min_secs * (i + 1) / r - spent_secs)
    return RoundBudget(own, noise_timeout_secs / r, windows[i], min_secs, sum(windows))


def log_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n-1) of ln(value): the relative spread of positive values
    (for small spreads, their coefficient of variation). None for fewer than two values."""
    logs = [math.log(v) for v in values if v > 0 and math.isfinite(v)]
    n = len(logs)
    if n < 2:
        return None
    mean = math.fsum(logs) / n
    return math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (n - 1))
