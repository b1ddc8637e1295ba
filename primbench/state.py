"""The state handed to ``Benchmark.run``: stream, size, seed, counters and ``run(fn)``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from primbench.device import Device
from primbench.energy import EnergyWindow, counter_resolves
from primbench.errors import Skipped, UsageError
from primbench.graph import GraphRound, replay_round
from primbench.measure import (
    TIMERS,
    MeasureHooks,
    Measurement,
    MeasureSettings,
    Progress,
    Timer,
    empty_calls_energy,
    measure,
)
from primbench.rounds import round_budget
from primbench.settings import Settings
from primbench.throttle import ThrottleGuard
from primbench.typenames import itemsize


class Thermal:
    """What the state asks of thermal control; this one does nothing (no monitoring)."""

    def before_specialization(self) -> None:
        """Bring the GPU into its temperature range (may warm or cool)."""

    def before_batch(self) -> None:
        """Check the range again between batches."""

    def temperature(self) -> float | None:
        return None

    def record(self) -> dict[str, object] | None:
        """What to write to ``context.general.thermal``; None without thermal control."""
        return None


@dataclass(frozen=True)
class RunOutcome:
    """What ``state.run`` measured, with the temperatures around it."""

    measurement: Measurement
    temp_start: float | None
    temp_end: float | None
    clock_start: tuple[int, int] | None
    clock_end: tuple[int, int] | None
    reasons_start: list[str] | None = None
    reasons_end: list[str] | None = None
    timer: Timer = "events"  # "host": times on the host clock (state.run(fn, timer="host"))
    graph: GraphRound | None = None  # --graph: the function captured and replayed (primbench.graph)
    #: --energy-baseline: the energy counter over empty calls after the round (`primbench.energy`).
    energy_baseline: EnergyWindow | None = None


class State:
    """The state of one round of a specialization (each round calls ``run(state)`` with a new
    one). Create it through the executor, not by hand."""

    def __init__(
        self,
        device: Device,
        settings: Settings,
        *,
        sync: bool,
        thermal: Thermal | None = None,
        on_batch: Callable[[Progress], object] | None = None,
        round_index: int = 0,
        rounds: int = 1,
        calls_per_batch: int | None = None,
        spent_secs: float = 0.0,
        axes: Mapping[str, Any] | None = None,
        profile_range: str | None = None,
        graph: bool = False,
        energy_baseline: bool = False,
    ) -> None:
        self._device = device
        self._axes = dict(axes or {})
        # --profile: `run` calls fn once, inside an NVTX range of this name, and measures nothing.
        self._profile_range = profile_range
        self._graph = graph  # --graph or the benchmark's graph = True: replay a capture beside (primbench.graph)
        self._energy_baseline = energy_baseline  # --energy-baseline: empty calls after each round (primbench.energy)
        self.profiled = False
        # perf_counter at run()'s entry and where its measuring begins (the round's wall, results 4.10.0)
        self.entered_at: float | None = None
        self.measuring_at: float | None = None
        self.round_index = round_index
        self.rounds = rounds
        self._calls_per_batch = calls_per_batch
        self._spent_secs = spent_secs  # the earlier rounds' time (their Measurement.round_secs)
        self.settings = settings
        self._sync = sync
        self._thermal = thermal or Thermal()
        self._on_batch = on_batch
        self._test: Callable[[], object] | None = None
        self._before_each: Callable[[], object] | None = None
        self.items = 0
        self._items_set = False
        self.bytes_read = 0
        self.bytes_written = 0
        self.outcome: RunOutcome | None = None

    # ----- what the benchmark reads

    @property
    def stream(self) -> Any:
        """The stream to launch on; it is also current while `run` calls `fn`."""
        return self._device.stream

    @property
    def size(self) -> int:
        """The input size in bytes: this specialization's value of the ``size`` axis where the
        benchmark declares one, else ``--size``."""
        return self.settings.size

    def axis(self, name: str) -> Any:
        """This specialization's value of the axis `name` (`primbench.axis`): an int, float,
        str or ``np.dtype``."""
        try:
            return self._axes[name]
        except KeyError:
            known = ", ".join(self._axes) or "none"
            raise UsageError(f"state.axis({name!r}): the benchmark declares no such axis (its axes: {known})") \
                from None

    @property
    def axes(self) -> dict[str, Any]:
        """Every axis value of this specialization, by name (a copy)."""
        return dict(self._axes)

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def device(self) -> Device:
        return self._device

    # ----- what the benchmark declares

    # The C++ primbench's contract: set_items() once, before add_reads() / add_writes() (bytes per
    # item divides by it). Unlike C++, declaring nothing at all is allowed: GPU time per call only.

    def set_items(self, items: int) -> None:
        """Items processed per call (for items per second); once, before `add_reads` / `add_writes`."""
        if self._items_set:
            raise UsageError(f"state.set_items() was called twice (with {self.items}, then {items}): "
                             "declare the items per call once")
        self._items_set = True
        self.items = int(items)

    def _need_items(self, method: str) -> None:
        if not self._items_set:
            raise UsageError(f"state.{method}() before state.set_items(): declare the items per call first "
                             "(bytes per item needs them), or neither items nor bytes to record GPU time only")

    def add_reads(self, dtype: Any, count: int) -> None:
        """`count` elements of `dtype` read from device memory per call (after `set_items`)."""
        self._need_items("add_reads")
        self.bytes_read += itemsize(dtype) * int(count)

    def add_writes(self, dtype: Any, count: int) -> None:
        """`count` elements of `dtype` written to device memory per call (after `set_items`)."""
        self._need_items("add_writes")
        self.bytes_written += itemsize(dtype) * int(count)

    @property
    def bytes_per_call(self) -> int:
        return self.bytes_read + self.bytes_written

    def skip(self, reason: str) -> NoReturn:
        """Skip this specialization: ``state.skip("block > items")`` where a combination of the
        axes makes no sense. It raises (so nothing after it runs); the specialization is then
        recorded as skipped with `reason` (results.json ``"skipped"``), which is not a failure:
        the run exits 0. A combination known to be invalid before ``run()`` is better excluded by
        `primbench.axis.constrain`, which ``--list`` shows."""
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError("state.skip(reason): give the reason, a non-empty string")
        raise Skipped(" ".join(reason.split()))

    def test(self, fn: Callable[[], object]) -> None:
        """Check the output once, right after the first round's warmup call (skipped with --no-test
        and --profile)."""
        if self.outcome is not None:
            # Registered after the measurement: run it now rather than never.
            if not self.settings.no_test:
                with self._device.activate():
                    fn()
            return
        self._test = fn

    def run_before_every_iteration(self, fn: Callable[[], object]) -> None:
        """Restore inputs before every call (not timed: it runs before the start event)."""
        self._before_each = fn

    def run(self, fn: Callable[[], Any], *, timer: Timer = "events",
            sync: Callable[[Any], object] | None = None) -> None:
        """Warm up, test, then measure `fn` until a stopping rule fires.

        `timer="host"` is for libraries that launch on streams of their own, which the harness's
        events and spin kernel cannot see (JAX): each batch is timed on the host clock around its
        calls and one final `sync(out)` of the last call's result (``sync=jax.block_until_ready``;
        without `sync`, the whole device is synchronized); cold calls are timed one by one after a
        cache clear on the harness stream and a synchronization of the whole device. Times then
        include launch and synchronization overhead, and results.json marks the specialization
        ``"timer": "host"`` (`primbench.measure.host_timed_calls`)."""
        if self.outcome is not None or self.profiled:
            raise UsageError("state.run() was called twice in one specialization")
        if timer not in TIMERS:
            raise UsageError(f"state.run(timer={timer!r}): the timer is one of {', '.join(map(repr, TIMERS))}")
        if sync is not None and timer != "host":
            raise UsageError("state.run(sync=...) goes with timer='host' (with GPU events, a function that "
                             "synchronizes needs the executor's flags.sync)")
        self.entered_at = time.perf_counter()
        device = self._device
        s = self.settings
        if self._profile_range is not None:
            self._profile_once(fn, self._profile_range, timer, sync)
            return
        with device.activate():
            # Setup may have used other streams (the runtime's default stream, PyTorch's):
            # let it all finish before anything runs on the harness stream.
            device.synchronize_device()
            # Unblocked warmup: lazy compilation and module loading must not happen
            # under a blocked stream.
            with device.nvtx_range("warmup"):
                if self._before_each is not None:
                    self._before_each()
                self._finish(fn(), timer, sync)
            if self._test is not None and not s.no_test and self.round_index == 0:
                self._test()
                device.synchronize()
            self._thermal.before_specialization()
            self.measuring_at = time.perf_counter()
            started = device.now()  # the round's time: its batch sizing counts, warming does not
            temp_start = self._thermal.temperature()
            reasons_start = device.clock_event_reasons()
            clock_start = device.clock_sample()
            guard = None if s.no_monitoring else ThrottleGuard(device, s.min_clock_fraction, device.default_clock_mhz())
            reads_energy = self._reads_energy()
            budget = round_budget(s.min_secs, s.noise_timeout_secs, s.batch_window_size, self.rounds,
                                  self.round_index, self._spent_secs)
            m = measure(
                device,
                fn,
                MeasureSettings(
                    min_gpu_ms_per_batch=s.min_gpu_ms_per_batch,
                    min_secs=budget.min_secs,
                    noise_timeout_secs=budget.noise_timeout_secs,
                    batch_window_size=budget.batch_window_size,
                    noise_tolerance_percent=s.noise_tolerance_percent,
                    hot=s.hot,
                    sync=self._sync,
                    calls_per_batch=self._calls_per_batch,
                    timer=timer,
                    fill_secs=budget.fill_secs,
                    fill_batches=budget.fill_batches,
                    energy_ticks=self._energy_baseline,  # --energy-baseline: windows on the counter's updates
                ),
                MeasureHooks(
                    before_each=self._before_each,
                    before_batch=self._thermal.before_batch,
                    on_batch=self._on_batch,
                    host_sync=sync,
                    throttle=guard,
                    energy=device.energy_joules if reads_energy else None,
                    power=device.power_watts if reads_energy else None,  # its samples serve the energy window only
                ),
                started=started,
            )
            clock_end = device.clock_sample()
            if guard is not None and guard.discarded and guard.kept_clock is not None and clock_start is not None:
                clock_start, clock_end = (0, 0), guard.kept_clock  # the kept batches' clock (primbench.throttle)
            reasons_end = device.clock_event_reasons()
            temp_end = self._thermal.temperature()
            empty = None if not self._energy_baseline or m.energy is None else empty_calls_energy(
                device, m.kernel_calls_per_batch, device.energy_joules, hot=s.hot, block=not self._sync,
                before_each=self._before_each)
            replayed = None if not self._graph else replay_round(
                device, fn, m, timer=timer, sync=self._sync, hot=s.hot, batch_window_size=budget.batch_window_size,
                noise_tolerance_percent=s.noise_tolerance_percent, noise_timeout_secs=budget.noise_timeout_secs,
                before_each=self._before_each)
        self.outcome = RunOutcome(m, temp_start, temp_end, clock_start, clock_end, reasons_start, reasons_end, timer,
                                  replayed, empty)

    def _reads_energy(self) -> bool:
        """Whether this round reads the energy counter: with monitoring, where a round's planned
        share of ``--min-secs`` lets the counter move (`primbench.energy.counter_resolves`;
        ``--energy-baseline`` always)."""
        s = self.settings
        planned = s.min_secs / max(1, self.rounds)
        return not s.no_monitoring and (self._energy_baseline or counter_resolves(planned))

    def _finish(self, out: Any, timer: Timer, sync: Callable[[Any], object] | None) -> None:
        """Wait for an unmeasured call that returned `out`: the harness stream, and with the host
        timer the library's work too (`sync(out)`, then the whole device)."""
        if timer == "host":
            if sync is not None:
                sync(out)
            self._device.synchronize_device()
        self._device.synchronize()

    def _profile_once(self, fn: Callable[[], Any], range_name: str, timer: Timer,
                      sync: Callable[[Any], object] | None) -> None:
        """--profile: one call of `fn` on the harness stream, after its setup has finished, in an
        NVTX range that holds nothing else. No warmup, test, before-every-iteration, cache clear,
        stream blocking, events or thermal control: a profiler sees the user's kernels only."""
        device = self._device
        with device.activate():
            device.synchronize_device()
            with device.nvtx_range(range_name):
                self._finish(fn(), timer, sync)
        self.profiled = True
