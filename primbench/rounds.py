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

The number a comparison uses is the specialization's mean over independent setups: the mean of
ln(time per call) over its rounds (`estimate`). Measured on an H200 (tests/benchmarks/variance/,
8 kernel kinds, 64 KiB to 64 MiB, 5 processes of 12 rounds each): rounds are close to independent
(lag-1 correlation -0.37 to +0.22), but the first round is not like the others (cp.add's first
round 1.7-3.4 % faster than the rest at 64 KiB-4 MiB, CUB's sum and scan up to 2.5 % off), so
from `WARMUP_FROM` rounds on the first is a warm-up: written to results.json like any round, left
out of the estimate. The spread between rounds is 0.3-2.5 % at 64 KiB-4 MiB, so the mean of many
short rounds is worth more than a few long ones: `DEFAULT_ROUNDS` is 10. A specialization whose
estimate is already precise (`PRECISION_STOP`, the standard error of the mean over its measured
rounds, after `MIN_MEASURED_ROUNDS` of them) stops early and leaves its later rounds' time unspent;
one whose rounds have already run ``--min-secs`` (they overran their shares: `budget_spent`) stops
too, after the same number of measured rounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Default number of rounds per specialization (``--rounds``): one warm-up and nine measured
#: (tests/benchmarks/variance/README.md says why; tests/benchmarks/verdicts/ shows the verdicts).
DEFAULT_ROUNDS = 10
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


#: A specialization measured in at least this many rounds has its first as a warm-up: kept in
#: results.json, left out of `estimate` (and so out of compare and the precision stop).
WARMUP_FROM = 4
#: Measured rounds (after the warm-up) before the precision stop may end a specialization.
MIN_MEASURED_ROUNDS = 3
#: The precision stop: a specialization ends once the standard error of its estimate (ln of the
#: time per call, so a fraction) is at or below this: 0.05 %.
PRECISION_STOP = 0.0005


def measured_rounds(count: int) -> slice:
    """The rounds of a specialization of `count` rounds that its estimate uses: all but the
    warm-up (the first) from `WARMUP_FROM` rounds on, else all."""
    return slice(1, None) if count >= WARMUP_FROM else slice(0, None)


@dataclass(frozen=True)
class Estimate:
    """A specialization's mean over independent setups: mean and standard error of ln(value) over
    its measured rounds (`measured_rounds`), and how many rounds that is."""

    log_mean: float
    standard_error: float | None
    rounds: int


def estimate(values: Sequence[float]) -> Estimate | None:
    """The estimate from each round's value (time per call or a throughput, all positive), or
    None without a usable value. The standard error is None for fewer than two measured rounds."""
    logs = [math.log(v) for v in values[measured_rounds(len(values))] if v > 0 and math.isfinite(v)]
    n = len(logs)
    if n == 0:
        return None
    mean = math.fsum(logs) / n
    if n < 2:
        return Estimate(mean, None, n)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (n - 1))
    return Estimate(mean, sd / math.sqrt(n), n)


def budget_spent(round_secs: Sequence[float], planned: int, min_secs: float) -> bool:
    """Whether a specialization planned for `planned` rounds has spent its budget before its last
    round: its rounds so far (`round_secs`, each `primbench.measure.Measurement.round_secs`) ran
    ``--min-secs`` or more, with at least `MIN_MEASURED_ROUNDS` measured. Rounds overrun their
    share where a round's shortest window takes longer than the share (many rounds, a small budget,
    a kernel slow to call); the budget then ends the specialization early, as the precision stop
    does, instead of stretching the run to the planned rounds' floor. ``--min-secs 0`` sets no budget:
    every planned round runs."""
    done = len(round_secs)
    if min_secs <= 0 or planned < WARMUP_FROM or done >= planned or done - 1 < MIN_MEASURED_ROUNDS:
        return False
    return math.fsum(round_secs) >= min_secs


def precise_enough(values: Sequence[float], planned: int) -> bool:
    """Whether a specialization planned for `planned` rounds may stop after the rounds whose values
    are `values`: at least `MIN_MEASURED_ROUNDS` measured ones (after the warm-up, which a
    specialization of `planned` >= `WARMUP_FROM` rounds has) and a standard error at or below
    `PRECISION_STOP`."""
    if planned < WARMUP_FROM or len(values) >= planned:
        return False
    est = estimate(values)
    return (est is not None and est.rounds >= MIN_MEASURED_ROUNDS and len(values) >= WARMUP_FROM
            and est.standard_error is not None and est.standard_error <= PRECISION_STOP)
