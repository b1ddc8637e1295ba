"""Energy per call: the board's energy counter read around each round's measured batches.

Through the device seam, `Device.energy_joules` reads the GPU's cumulative energy counter:
NVML's ``nvmlDeviceGetTotalEnergyConsumption`` (millijoules since the driver loaded) on CUDA,
AMD SMI's ``amdsmi_get_energy_count`` (its accumulator times its resolution in microjoules) on
ROCm. `primbench.measure.measure` reads it when the round's measured batches begin and when
they end; the difference over the calls is joules per call, over the window's wall time the
average watts (results 4.5.0 ``energy``, per round and per specialization).

What the number includes: the whole board's energy over the window, not the kernel's alone.
The cache clears between cold calls, the spin kernel that holds the stream, the events, the
host's gaps between batches (and a throttled batch's recovery delay) are in it, as is the
board's idle power. Nothing is subtracted: compare energy between runs of the same benchmark
and settings (``--metric energy``), where those parts are the same on both sides; run with
``--hot`` to leave the cache clears out. Whether a kernel doing twice the work reads twice the
joules per call has to be checked on a GPU (issue 26); it has not been yet.

The counter's resolution: on an H200 NVML's counter moves about every 100 ms
(`COUNTER_UPDATE_SECS`; issue 26 measured 5 changes in 0.5 s of polling), so a window shorter
than `MIN_WINDOW_SECS` (1 s: one step is then at most a tenth of the reading) is flagged
``too_short``, and one where the counter did not move has no joules per call at all.

Beside the counter, where the device reads it (NVML's ``nvmlDeviceGetPowerUsage``), the board's
power draw is sampled after each measured batch: ``power_samples_watts`` (count, mean, min,
max) per round, a check on the counter's average ``watts``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from primbench.rounds import log_sd

#: How often the energy counter moves on an H200 (NVML), seconds.
COUNTER_UPDATE_SECS = 0.1
#: A window shorter than this is too short for the counter: one step is more than 10 % of it.
MIN_WINDOW_SECS = 10 * COUNTER_UPDATE_SECS
#: How long the empty calls of ``--energy-baseline`` run after each round: twice the counter's
#: minimum window, so that one step is at most a twentieth of the reading.
BASELINE_WINDOW_SECS = 2 * MIN_WINDOW_SECS
#: How often `wait_for_tick` reads the counter, and how long it waits for it to move at most.
TICK_POLL_SECS = 0.0005
TICK_TIMEOUT_SECS = 5 * COUNTER_UPDATE_SECS


@dataclass(frozen=True)
class Tick:
    """The counter just after it moved: when the host saw the new value, and the value."""

    secs: float
    joules: float


def counter_resolves(round_secs: float) -> bool:
    """Whether a round planned for `round_secs` is worth reading the counter around: at least one
    of its updates (`COUNTER_UPDATE_SECS`). A shorter window mostly sees no step at all (a
    ``--processes`` worker's default rounds, 31 ms: about 9 of its 28 windows see one step, so
    their sum is off by about 28 %), and a read costs about 4 ms of the round's host time on an
    H100 (0.54 s of a worker's 3.2 s turn, batches the round does not get:
    tests/benchmarks/verdicts/h200/probe8/README.md). Such rounds record no energy, and their
    specialization none."""
    return round_secs >= COUNTER_UPDATE_SECS


def wait_for_tick(read: Callable[[], float | None], now: Callable[[], float], sleep: Callable[[float], object],
                  timeout_secs: float = TICK_TIMEOUT_SECS) -> Tick | None:
    """Read the counter until it moves (every `TICK_POLL_SECS`); the first reading after the move,
    or None where it cannot be read or does not move within `timeout_secs`."""
    first = read()
    if first is None or not math.isfinite(first):
        return None
    start = now()
    while now() - start < timeout_secs:
        sleep(TICK_POLL_SECS)
        value = read()
        if value is None or not math.isfinite(value):
            return None
        if value != first:
            return Tick(now(), value)
    return None


def aligned_window(start: Tick, end_secs: float, after: Tick | None, next_tick: Tick | None, calls: int,
                   power_samples: Sequence[float] = ()) -> EnergyWindow | None:
    """A window whose start is a counter update (`start`, seen as it moved) and whose work ended at
    `end_secs`: its joules are the counter from `start` to the first update after the end
    (`after`) less the idle tail between the end and that update, at the idle power read between
    `after` and the update after it (`next_tick`). So the window's energy is not off by up to a
    step at either end, as a plain `window` between two readings is. None where either tick is
    missing (the caller falls back to a plain window)."""
    if after is None or next_tick is None or next_tick.secs <= after.secs:
        return None
    idle_watts = max(0.0, next_tick.joules - after.joules) / (next_tick.secs - after.secs)
    tail = max(0.0, after.secs - end_secs)
    joules = max(0.0, after.joules - start.joules - idle_watts * tail)
    return EnergyWindow(joules, max(0.0, end_secs - start.secs), calls,
                        tuple(p for p in power_samples if math.isfinite(p) and p >= 0), aligned=True)


@dataclass(frozen=True)
class EnergyWindow:
    """The energy counter over one round's measured batches."""

    joules: float  # the counter's difference
    secs: float  # the window's wall time
    calls: int  # the kernel calls measured in it
    power_samples: tuple[float, ...] = ()  # the board's power draw after each measured batch, watts
    aligned: bool = False  # its ends on the counter's updates (`aligned_window`, --energy-baseline)

    @property
    def moved(self) -> bool:
        return self.joules > 0

    @property
    def too_short(self) -> bool:
        """Shorter than the counter's resolution allows: under `MIN_WINDOW_SECS`, or, for a window
        aligned to its updates (only the host's reading of an update is then in error), under
        one update; or the counter did not move."""
        return self.secs < (COUNTER_UPDATE_SECS if self.aligned else MIN_WINDOW_SECS) or not self.moved

    @property
    def joules_per_call(self) -> float | None:
        return self.joules / self.calls if self.moved and self.calls > 0 else None

    @property
    def watts(self) -> float | None:
        return self.joules / self.secs if self.moved and self.secs > 0 else None

    def record(self) -> dict[str, Any]:
        """``rounds[r].energy`` (results 4.5.0)."""
        samples = self.power_samples
        return {"joules": self.joules, "window_secs": self.secs, "joules_per_call": self.joules_per_call,
                "watts": self.watts, "too_short": self.too_short, **({"aligned": True} if self.aligned else {}),
                "power_samples_watts": {"count": len(samples), "mean": math.fsum(samples) / len(samples),
                                        "min": min(samples), "max": max(samples)} if samples else None}


def window(start: float | None, end: float | None, secs: float, calls: int,
           power_samples: Sequence[float] = ()) -> EnergyWindow | None:
    """The window between two counter readings (None where either is missing; a counter that
    went backwards, a reset, reads as not moved)."""
    if start is None or end is None or not (math.isfinite(start) and math.isfinite(end)):
        return None
    return EnergyWindow(max(0.0, end - start), max(0.0, secs), calls,
                        tuple(p for p in power_samples if math.isfinite(p) and p >= 0))


def baseline_record(empty: EnergyWindow) -> dict[str, Any]:
    """``rounds[r].energy_baseline`` (results 4.7.0): the counter over the round's empty calls."""
    return {"joules": empty.joules, "window_secs": empty.secs, "calls": empty.calls,
            "joules_per_call": empty.joules_per_call, "too_short": empty.too_short, "aligned": empty.aligned}


def net_over_rounds(windows: Sequence[EnergyWindow], empties: Sequence[EnergyWindow]) -> dict[str, Any]:
    """A specialization's ``energy_baseline`` (results 4.7.0): the empty calls' joules per call
    over every round (the counter's differences summed over their calls), the joules per call
    less it (``net_joules_per_call``: every round's window, as `over_rounds`), the rounds' net
    values' spread, the fixed part's share of the gross joules per call, and how many empty
    windows were too short for the counter."""
    gross = _per_call(windows)
    empty = _per_call(empties)
    net = gross - empty if gross is not None and empty is not None else None
    per_round = [g - e for w, b in zip(windows, empties, strict=True)
                 if (g := w.joules_per_call) is not None and (e := b.joules_per_call) is not None and g > e]
    spread = log_sd(per_round) if len(per_round) > 1 else None
    return {
        "joules_per_call": empty,
        "net_joules_per_call": net,
        "net_cv_between_rounds_percent": spread * 100.0 if spread is not None else None,
        "share_percent": 100.0 * empty / gross if empty is not None and gross else None,
        "window_secs": math.fsum(b.secs for b in empties),
        "rounds_too_short": sum(1 for b in empties if b.too_short),
    }


def _per_call(windows: Sequence[EnergyWindow]) -> float | None:
    """The counter's differences over the windows' calls (None where it did not move)."""
    joules = math.fsum(w.joules for w in windows)
    calls = sum(w.calls for w in windows)
    return joules / calls if joules > 0 and calls > 0 else None


def over_rounds(windows: Sequence[EnergyWindow], power_limit_watts: float | None) -> dict[str, Any]:
    """A specialization's ``energy`` (results 4.5.0): joules per call and average watts over
    every round's window (the counter's differences summed over the calls and the time), the
    spread of the rounds' joules per call (``cv_between_rounds_percent``, as for time; null with
    fewer than two rounds that moved the counter), how many rounds were too short, and the
    board's enforced power limit."""
    joules = math.fsum(w.joules for w in windows)
    secs = math.fsum(w.secs for w in windows)
    per_round = [v for w in windows if (v := w.joules_per_call) is not None]
    spread = log_sd(per_round) if len(per_round) > 1 else None
    return {
        "joules_per_call": _per_call(windows),
        "watts": joules / secs if joules > 0 and secs > 0 else None,
        "cv_between_rounds_percent": spread * 100.0 if spread is not None else None,
        "rounds_too_short": sum(1 for w in windows if w.too_short),
        "window_secs": secs,
        "power_limit_watts": power_limit_watts,
    }
