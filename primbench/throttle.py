"""Throttled batches, handled: a measured batch that ran while the GPU held its SM clock down
is discarded, and the next one waits for the clock to recover.

Per measured batch (`primbench.measure.measure`), `ThrottleGuard` reads the device seam after
it: `Device.sm_clock_now_mhz` (the SM clock as NVML or AMD SMI reads it now) and
`Device.clock_event_reasons` (NVML's clock-event reasons). A batch is throttled when

* the SM clock at its end is below ``--min-clock-fraction`` (0.9) of `Device.default_clock_mhz`, or
* a clock-event reason of `primbench.monitoring.NVML_THROTTLING` (power capping, thermal or
  hardware slowdown, power brake) is set when it ends (NVML's reasons are the state now: read
  at the batch's end, they say whether it ran capped; read before it, they would blame a batch
  for the state its predecessor's recovery delay was meant to clear).

Both are library reads: nothing is launched on the GPU between batches. The guard first sampled
the average clock over each batch with `Device.clock_sample` (a small kernel and a
synchronization before and after every batch), and on the H200 that made the batches of kernels
shorter than about 12 µs alternate between two states about 10 % apart (batch noise 5-7 %
instead of 0.1 %, every round of those kernels on the noise timeout, a specialization 10 s
instead of 1 s; tests/benchmarks/verdicts/h200/diag4: each read switched off in turn, only the
clock sample mattered). The round's average clock is still sampled so, once before and once after
the round (`primbench.state`), where it costs nothing.

A throttled batch is discarded (its times are dropped, not measured again in place), the host
waits a recovery delay, and the loop measures another batch. The delay grows with each
discard in a row: `FIRST_DELAY_SECS` (0.1 s), then doubled each time up to `MAX_DELAY_SECS`
(1.6 s): 0.1, 0.2, 0.4, 0.8, 1.6, 1.6 s. A batch that is not throttled resets it. After
`MAX_DISCARDS_IN_A_ROW` (6) discards in a row the GPU is taken to stay throttled: batches are
kept from then on (until one passes, which re-arms the guard), so a GPU that never recovers
ends its round rather than waiting forever, and its low average clock makes the
specialization's ``sm_clock.below_expected`` true, which ``primbench compare`` reports as
inconclusive, as before. A round that discarded batches averages its SM clock over the
batches it kept (the discarded ones and the delays left out: each kept batch's clock read at
its end, weighted by its duration on the host clock); one that discarded none keeps
the average over the whole round, as before. The discards are counted per round and per specialization
(results 4.5.0 ``throttled_batches``) and in the summary.

Without monitoring (``--no-monitoring``) or where the device reads neither the clock nor reasons,
nothing is checked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from primbench.device import Device
from primbench.monitoring import NVML_THROTTLING

#: The first recovery delay after a throttled batch, seconds.
FIRST_DELAY_SECS = 0.1
#: Each further discard in a row waits this many times longer ...
DELAY_FACTOR = 2.0
#: ... up to this.
MAX_DELAY_SECS = 1.6
#: Discards in a row after which batches are kept (the GPU stays throttled).
MAX_DISCARDS_IN_A_ROW = 6


def recovery_delay(in_a_row: int) -> float:
    """Seconds to wait after the `in_a_row`-th throttled batch in a row (1, 2, ...)."""
    return min(FIRST_DELAY_SECS * DELAY_FACTOR ** max(0, in_a_row - 1), MAX_DELAY_SECS)


@dataclass
class ThrottleGuard:
    """Checks each measured batch of one round (`begin` before it, `throttled` after it)."""

    device: Device
    min_fraction: float
    default_mhz: float | None
    discarded: int = 0
    in_a_row: int = 0
    waited_secs: float = 0.0
    reasons: Counter[str] = field(default_factory=Counter)
    #: (ns, cycles) summed over the batches it checked and kept: the round's clock where it
    #: discarded any (the delays and the discarded batches left out). Each kept batch adds its
    #: host duration and that duration at the clock read at its end.
    kept_clock: tuple[int, int] | None = (0, 0)
    _start: float | None = None
    _end: float | None = None
    _mhz: float | None = None

    def begin(self) -> None:
        """Before a batch: note the host clock."""
        self._start = self.device.now()

    def why(self) -> str | None:
        """After a batch: why it was throttled (``sm_clock`` or the reasons set), else None."""
        self._end = self.device.now()
        mhz = self._mhz = self.device.sm_clock_now_mhz()
        reasons_end = self.device.clock_event_reasons()
        capped = sorted(set(reasons_end or ()) & NVML_THROTTLING)
        if capped:
            return ",".join(capped)
        if mhz is not None and self.default_mhz and mhz < self.min_fraction * self.default_mhz:
            return "sm_clock"
        return None

    def _keep(self) -> None:
        if self.kept_clock is None or self._start is None or self._end is None or self._mhz is None:
            self.kept_clock = None  # a batch without a reading: no clock over the kept ones
            return
        ns = max(0, round((self._end - self._start) * 1e9))
        self.kept_clock = (self.kept_clock[0] + ns, self.kept_clock[1] + round(ns * self._mhz / 1000.0))

    def discard(self) -> bool:
        """After a batch: True to discard it (the recovery delay has been waited), False to keep it."""
        why = self.why()
        if why is None or self.in_a_row >= MAX_DISCARDS_IN_A_ROW:
            # kept; past the limit it stays throttled: keep the batch, sm_clock.below_expected tells
            self.in_a_row = 0 if why is None else self.in_a_row
            self._keep()
            return False
        self.in_a_row += 1
        self.discarded += 1
        self.reasons[why] += 1
        delay = recovery_delay(self.in_a_row)
        self.waited_secs += delay
        self.device.sleep(delay)
        return True
