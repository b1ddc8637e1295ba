"""The measurement loop: batch sizing, the per-call protocol and the stopping rules.

Written once against `primbench.device.Device`. The rules, as in the C++ primbench:

* Batch sizing: 1 call per batch, grown until a batch takes more than
  ``min_gpu_ms_per_batch`` of GPU time: to the power of two the first call's time predicts,
  then to what a settled batch's time per call predicts, 10 % over (`next_size`), instead of
  doubling through every power of two; then lengthened so that a full window of batches
  takes about ``min_secs`` of wall time (`fill_window`), since the run lasts that long anyway
  and a batch of more calls has less noise (or shortened, at most by half, where that window of
  sized batches would outlast it: `MAX_SHRINK_FACTOR`). Sizing batches are discarded, except the last
  where the fill left its size as it was: it is then the first measured batch. The size is
  fixed from then on.
* A batch's GPU time is the sum of its calls' event times (start to stop around each call).
  Hot calls are synchronized every `SYNC_EVERY` calls; cold calls one by one (see
  `_cold_calls`).
* Stop when the window (the last ``batch_window_size`` batches) is full, its coefficient of
  variation (sample std, n-1, over mean) is below ``noise_tolerance_percent`` and at least
  ``min_secs`` of wall time have passed since the round's measurement began (its batch
  sizing counts: it is time the benchmark ran). Batches of a single call may stop at
  `LONG_CALL_WINDOW` batches on the same conditions: one call already outlasts its share.
* Noise timeout: more than ``noise_timeout_secs`` passed and the window is still at or
  above tolerance: stop with ``noise_timeout = True``.
* Throttling: with a `primbench.throttle.ThrottleGuard`, a measured batch that ran with the
  SM clock held down is discarded and followed by a growing recovery delay (the module says
  when and how long); the discards are counted in ``Measurement.throttled_batches``.

The host timer (``state.run(fn, timer="host")``, `host_timed_calls`) replaces the per-call
protocol for libraries that launch on streams of their own (JAX): a batch is timed on the host
clock around its calls and one final synchronization; batch sizing and the stopping rules are
the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from primbench.device import Device
from primbench.energy import BASELINE_WINDOW_SECS, EnergyWindow, Tick, aligned_window, wait_for_tick
from primbench.energy import window as energy_window
from primbench.errors import UsageError
from primbench.throttle import ThrottleGuard

#: Calls between two synchronizations (and event pairs in flight) when the cache is hot.
SYNC_EVERY = 64
#: A batch of this many calls that measures no GPU time at all is an error, not a size to double.
EMPTY_CALLS_LIMIT = 1024

#: How calls are timed: GPU events around each call on the harness stream (the default), or the
#: host clock around a batch of calls and one synchronization (`host_timed_calls`).
Timer = Literal["events", "host"]
TIMERS: tuple[Timer, ...] = ("events", "host")


@dataclass(frozen=True)
class BatchRecord:
    batch_ms: float
    kernel_calls: int
    host_secs: float  # since the first measured batch began
    iterations_ms: tuple[float, ...]  # each call's; empty where only the batch was timed (host timer, hot)


@dataclass(frozen=True)
class Measurement:
    batches: tuple[BatchRecord, ...]
    kernel_calls_per_batch: int
    sizing_batches: int
    noise_percent: float
    noise_timeout: bool
    host_secs: float
    #: The round's wall time by the clock its stopping rule reads (from `measure`'s `started`).
    round_secs: float = 0.0
    #: Measured batches discarded because the SM clock was throttled (`primbench.throttle`).
    throttled_batches: int = 0
    #: The energy counter over the measured batches (`primbench.energy`), None if unread.
    energy: EnergyWindow | None = None

    @property
    def gpu_secs(self) -> float:
        return sum(b.batch_ms for b in self.batches) / 1000.0

    @property
    def kernel_calls(self) -> int:
        return self.kernel_calls_per_batch * len(self.batches)

    @property
    def ms_per_batch(self) -> float:
        return self.gpu_secs * 1000.0 / len(self.batches)

    @property
    def secs_per_call(self) -> float:
        return self.gpu_secs / self.kernel_calls


@dataclass(frozen=True)
class Progress:
    """What the loop tells its observer after each measured batch."""

    batch: int
    window_size: int
    noise_percent: float
    host_secs: float
    kernel_calls_per_batch: int
    last_batch_ms: float


def coefficient_of_variation(values: Sequence[float]) -> float:
    """Sample standard deviation (n-1) over the mean; 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = math.fsum(values) / n
    if mean == 0:
        return 0.0
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return math.sqrt(var) / mean


def timed_calls(
    device: Device,
    fn: Callable[[], object],
    calls: int,
    *,
    hot: bool,
    block: bool,
    before_each: Callable[[], object] | None = None,
) -> list[float]:
    """Run `fn` `calls` times under the per-call protocol; each call's GPU ms."""
    if not hot:
        return _cold_calls(device, fn, calls, block=block, before_each=before_each)
    out: list[float] = []
    pending = 0
    for i in range(calls):
        slot = i % SYNC_EVERY
        if before_each is not None:
            before_each()
        if block:
            device.block()
            try:
                device.record_start(slot)
                fn()
                device.record_stop(slot)
            finally:  # an exception or Ctrl-C in fn must not leave the stream held
                device.unblock()
        else:
            device.record_start(slot)
            fn()
            device.record_stop(slot)
        pending += 1
        if pending == SYNC_EVERY or i == calls - 1:
            device.synchronize()
            out.extend(device.elapsed_ms(s) for s in range(pending))
            pending = 0
    return out


def _cold_calls(
    device: Device,
    fn: Callable[[], object],
    calls: int,
    *,
    block: bool,
    before_each: Callable[[], object] | None,
) -> list[float]:
    """Cold calls, synchronized one by one: on the H200 a small kernel queued right behind the
    previous call's cache clear read up to 15 % slower than one started from an idle GPU, as
    NVBench's cold measurement does (tests/benchmarks/protocol_variants.md).

    The GPU sees, per call: (`before_each`), clear, spin, start, `fn`, stop; then it idles
    until the host has synchronized. To keep that idle gap short, the next call's clear and
    spin are enqueued as soon as the synchronization returns, and the finished call's events
    are read while the GPU clears (tests/benchmarks/loop/host_cost.py)."""
    out: list[float] = []
    if calls <= 0:
        return out
    blocked = False

    def open_call() -> None:
        nonlocal blocked
        if before_each is not None:
            before_each()
        device.clear_cache()
        if block:
            device.block()
            blocked = True

    try:
        open_call()
        for i in range(calls):
            device.record_start(0)
            fn()
            device.record_stop(0)
            if blocked:
                device.unblock()
                blocked = False
            device.synchronize()
            if i + 1 < calls:
                open_call()
            out.append(device.elapsed_ms(0))
    finally:  # an exception or Ctrl-C must not leave the stream held
        if blocked:
            device.unblock()
    return out


def host_timed_calls(
    device: Device,
    fn: Callable[[], Any],
    calls: int,
    *,
    hot: bool,
    sync: Callable[[Any], object] | None = None,
    before_each: Callable[[], object] | None = None,
) -> tuple[float, tuple[float, ...]]:
    """The host timer: a batch of `calls` calls of `fn` timed on the host clock (`Device.now`);
    returns the batch's milliseconds and each call's, where each call was timed alone.

    `sync(out)` waits for the work of the call that returned `out` (``jax.block_until_ready``);
    without it the whole device is synchronized. Hot, the whole device is synchronized first,
    then the calls run back to back and one `sync` of the last call's result ends the batch (no
    per-call times). Cold (or with a function run before every call), each call is timed alone:
    clear the cache on the harness stream, synchronize the whole device, start the clock, call,
    `sync`, stop. No stream is blocked and no event is recorded: the library's streams are not
    the harness's, so launch and synchronization overhead are part of every time."""

    def wait(out: Any) -> None:
        if sync is not None:
            sync(out)
        else:
            device.synchronize_device()

    if hot and before_each is None:
        device.synchronize_device()
        start = device.now()
        out: Any = None
        for _ in range(calls):
            out = fn()
        wait(out)
        return (device.now() - start) * 1000.0, ()
    times: list[float] = []
    for _ in range(calls):
        if before_each is not None:
            before_each()
        if not hot:
            device.clear_cache()
        device.synchronize_device()
        start = device.now()
        wait(fn())
        times.append((device.now() - start) * 1000.0)
    return math.fsum(times), tuple(times)


#: A sizing batch with at least this fraction of ``min_gpu_ms_per_batch`` has run long enough
#: for its time per call to predict the size that passes the minimum (`next_size`).
SETTLED_FRACTION = 0.25
#: How far past that prediction the next sizing batch aims, so that one batch passes.
SIZE_MARGIN = 1.1


def next_size(calls: int, batch_ms: float, min_gpu_ms_per_batch: float, batch_secs: float = 0.0,
              secs_left: float = math.inf) -> int:
    """The next batch size while sizing, from what this batch's GPU time per call predicts would
    pass `min_gpu_ms_per_batch`. A batch of at least `SETTLED_FRACTION` of the minimum is trusted:
    the next size is the prediction, `SIZE_MARGIN` over (so that a 4.4 µs kernel runs batches of
    about 2500 calls, 11 ms, not the 4096 calls, 18 ms, that doubling reaches). A shorter batch
    (the first, single call) is not: the next size is the power of two at or just below the
    prediction, so that a first call that ran faster than the steady state does not overshoot.
    It doubles where no GPU time was measured, or where the jump would take longer in wall time
    (at this batch's `batch_secs` per `calls`) than the `secs_left` of the sizing budget."""
    doubled = calls * 2
    if batch_ms <= 0:
        return doubled
    predicted = calls * min_gpu_ms_per_batch / batch_ms
    if batch_ms >= SETTLED_FRACTION * min_gpu_ms_per_batch:
        jump, least = math.ceil(predicted * SIZE_MARGIN), calls + 1
    else:
        jump, least = 1 << max(0, math.floor(math.log2(predicted))), doubled
    if batch_secs > 0 and jump * batch_secs / calls > secs_left:
        return doubled
    return max(least, jump)


#: A window-filling batch is at most this many times the size batch sizing found.
MAX_FILL_FACTOR = 64
#: A window-filling batch is at least the size batch sizing found over this: where launching a short kernel
#: takes many times its GPU time, a window of sized batches outlasts a short round's share of ``min_secs``
#: (a `--processes 8 --rounds 2 --min-secs 0.25` worker's 64 KiB rounds: 1.5x their share, a tenth of them
#: 2.8x, tests/benchmarks/verdicts/round_wall13.txt), so the batches are shortened to fit, to at most this
#: factor: a batch's GPU time is the sum of its calls' own event times, so its resolution does not suffer.
MAX_SHRINK_FACTOR = 2
#: A window of single-call batches stops at this many (not the whole window) once its time has run and its
#: noise is under tolerance: the call alone outlasts the window's share of the round, and more calls would
#: only overrun it. Measured on an H100 (tests/benchmarks/verdicts/kernel_rounds14.txt): cuBLAS sbmv of
#: half-bandwidth 1 takes 19 ms a call at 4 MiB, so a `--processes 8 --rounds 2 --min-secs 0.25` worker's
#: round (a share of 15.6 ms) took 5 calls and 121 ms; this makes it 2 calls.
LONG_CALL_WINDOW = 2
#: A window-filling batch is this much longer than its share, so that the window's last batch
#: ends past ``min_secs`` rather than a hair before it (which would cost one more batch).
FILL_MARGIN = 1.03


def fill_window(calls: int, batch_secs: float, min_secs: float, window: int) -> int:
    """Calls per batch such that `window` batches take about `min_secs` of wall time (`FILL_MARGIN`
    more), given that `calls` calls took `batch_secs`; at least `calls` over `MAX_SHRINK_FACTOR` (a batch
    that already outlasts its share is shortened), at most `MAX_FILL_FACTOR` times `calls`. With no
    time left (``min_secs`` at or under 0) the size sizing found.

    Measured on an H200 (tests/benchmarks/loop/h200/noise_variants.md): the 128 MiB long long copy's
    single calls vary by about 0.95 %, so its batches' noise falls as one over the square root
    of their calls: 0.068 % with 10 ms batches, 0.028 % with 40 ms."""
    if batch_secs <= 0 or window <= 0 or min_secs <= 0:
        return calls
    wanted = math.ceil(calls * FILL_MARGIN * (min_secs / window) / batch_secs)
    return max(math.ceil(calls / MAX_SHRINK_FACTOR), min(wanted, calls * MAX_FILL_FACTOR))


#: At most this many empty calls per baseline window (`empty_calls_energy`), whatever the clock says.
EMPTY_BASELINE_CALLS_LIMIT = 1_000_000


def _launch_nothing() -> None:
    """The function of `empty_calls_energy`'s calls: it launches nothing."""


def empty_calls_energy(device: Device, calls_per_batch: int, energy: Callable[[], float | None], *, hot: bool,
                       block: bool, before_each: Callable[[], object] | None = None,
                       min_secs: float = BASELINE_WINDOW_SECS, aligned: bool = True) -> EnergyWindow | None:
    """``--energy-baseline`` (`primbench.energy`): batches of `calls_per_batch` calls of a function
    that launches nothing, under the per-call protocol of `timed_calls` (the cache clear unless
    `hot`, the events, the stream blocking unless not `block`, `before_each`), until `min_secs`
    have passed, with the energy counter read around them (its window `aligned` to the counter's
    updates: `energy_window_end`): the fixed energy every call pays besides its kernel. None
    where the counter is not read."""
    tick = wait_for_tick(energy, device.now, device.sleep) if aligned else None
    start_joules = tick.joules if tick is not None else energy()
    start = tick.secs if tick is not None else device.now()
    calls = 0
    batch = max(1, calls_per_batch)
    while True:
        timed_calls(device, _launch_nothing, batch, hot=hot, block=block, before_each=before_each)
        calls += batch
        if device.now() - start >= min_secs or calls >= EMPTY_BASELINE_CALLS_LIMIT:
            break
    return energy_window_end(device, energy, tick, start_joules, start, calls)


def energy_window_end(device: Device, energy: Callable[[], float | None], tick: Tick | None,
                      start_joules: float | None, start: float, calls: int,
                      power_samples: Sequence[float] = ()) -> EnergyWindow | None:
    """The energy counter's window from `start` (where it was read: `start_joules`, or `tick`
    where the start waited for the counter to move) to now. With a tick the end waits for the
    counter's next two updates and takes out the idle tail (`primbench.energy.aligned_window`);
    else, or where the counter stops moving, the plain difference of two readings."""
    end = device.now()
    if tick is not None:
        after = wait_for_tick(energy, device.now, device.sleep)
        following = wait_for_tick(energy, device.now, device.sleep) if after is not None else None
        if (aligned := aligned_window(tick, end, after, following, calls, power_samples)) is not None:
            return aligned
        return energy_window(start_joules, after.joules if after is not None else energy(), end - start, calls,
                             power_samples)
    return energy_window(start_joules, energy(), end - start, calls, power_samples)


@dataclass(frozen=True)
class MeasureSettings:
    """What the measurement loop is told to do (`measure`): the minimum GPU time of a batch, the
    round's budget (``min_secs``, ``noise_timeout_secs``), the window and its tolerance, the cache
    (``hot``) and stream (``sync``: no blocking) modes, a batch size an earlier round found
    (``calls_per_batch``), the timer, and what the batch sizing fills (``fill_secs`` over
    ``fill_batches``; default ``min_secs`` over the window)."""

    min_gpu_ms_per_batch: float
    min_secs: float
    noise_timeout_secs: float
    batch_window_size: int
    noise_tolerance_percent: float
    hot: bool = False
    sync: bool = False
    calls_per_batch: int | None = None
    timer: Timer = "events"
    fill_secs: float | None = None
    fill_batches: int | None = None
    #: ``--energy-baseline``: the energy counter's window starts when the counter moves and ends
    #: at its next updates (`energy_window_end`), so its steps do not err at either end.
    energy_ticks: bool = False


@dataclass(frozen=True)
class MeasureHooks:
    """What the loop calls, each optional: before every call and every batch, after every measured
    batch (`Progress`), the host timer's wait for a library's result (``host_sync``), the throttle
    guard, and the board's energy counter (joules) and power draw (watts)."""

    before_each: Callable[[], object] | None = None
    before_batch: Callable[[], object] | None = None
    on_batch: Callable[[Progress], object] | None = None
    host_sync: Callable[[Any], object] | None = None
    throttle: ThrottleGuard | None = None
    energy: Callable[[], float | None] | None = None
    power: Callable[[], float | None] | None = None


_SETTINGS = frozenset(f.name for f in fields(MeasureSettings))
_HOOKS = frozenset(f.name for f in fields(MeasureHooks))

#: A batch's GPU milliseconds and each call's (empty where only the batch was timed).
_Timed = tuple[float, tuple[float, ...]]


def measure(
    device: Device,
    fn: Callable[[], object],
    settings: MeasureSettings | None = None,
    hooks: MeasureHooks | None = None,
    *,
    started: float | None = None,
    **keywords: Any,
) -> Measurement:
    """Size the batches (unless ``settings.calls_per_batch`` is given: a later round of a
    specialization keeps the size its first round found), then measure batches until a stopping
    rule fires. The timer ``"host"`` times each batch with `host_timed_calls` (and
    ``hooks.host_sync``) instead of events; ``sync`` (no stream blocking) then does not matter: the
    host timer never blocks.

    ``min_secs`` and ``noise_timeout_secs`` count from `started` (``device.now()`` when the round's
    measurement began: `State.run` passes the time after its warmup, test and thermal control,
    so the batch sizing is part of the round's time, not added to it), or from this call.
    Sizing then lengthens the batches so that ``fill_batches`` of them (default: the window) take
    what is left of ``fill_secs`` (default: ``min_secs``): with rounds, the whole specialization's
    window and ``--min-secs`` (`primbench.rounds.round_budget`).

    The earlier form, every field of `MeasureSettings` and `MeasureHooks` as a keyword
    (``measure(device, fn, min_gpu_ms_per_batch=10, min_secs=1, ..., on_batch=f)``), still works
    where `settings` and `hooks` are not given."""
    settings, hooks = _records(settings, hooks, keywords)
    run_batch = _batch_runner(device, fn, settings, hooks)
    s = settings
    calls = s.calls_per_batch if s.calls_per_batch is not None and s.calls_per_batch > 0 else 1
    sizing_start = device.now()
    began = sizing_start if started is None else started
    sized = _size(device, run_batch, s, hooks, calls, sizing_start)
    calls, sizing = sized.calls, sized.batches
    start = device.now()
    joules_start = hooks.energy() if hooks.energy is not None else None
    kept = None  # the last sizing batch, measured as batch 1 where the fill keeps its size
    if s.calls_per_batch is None:
        filled = fill_window(calls, start - sized.batch_start,
                             (s.min_secs if s.fill_secs is None else s.fill_secs) - (start - began),
                             s.batch_window_size if s.fill_batches is None else s.fill_batches)
        if filled == calls and sized.last is not None and not (s.energy_ticks and hooks.energy is not None):
            kept, start, sizing = sized.last, sized.batch_start, sizing - 1
            joules_start = sized.joules_before
        calls = filled
    tick = None
    # with energy_ticks the window begins as the counter moves (at most one update's wait, the GPU idle)
    if (s.energy_ticks and hooks.energy is not None and kept is None
            and (tick := wait_for_tick(hooks.energy, device.now, device.sleep)) is not None):
        start, joules_start = tick.secs, tick.joules
    return _measure_batches(device, run_batch, s, hooks, _Window(calls, sizing, start, began, joules_start, tick),
                            kept)


def _records(settings: MeasureSettings | None, hooks: MeasureHooks | None,
             keywords: dict[str, Any]) -> tuple[MeasureSettings, MeasureHooks]:
    """`measure`'s records, from the keywords of its earlier form where they were not given."""
    if unknown := sorted(set(keywords) - _SETTINGS - _HOOKS):
        raise TypeError(f"measure() got an unexpected keyword argument {unknown[0]!r}")
    if (settings is not None and set(keywords) & _SETTINGS) or (hooks is not None and set(keywords) & _HOOKS):
        raise TypeError("measure(): give the settings and hooks either as records or as keywords, not both")
    if settings is None:
        settings = MeasureSettings(**{k: v for k, v in keywords.items() if k in _SETTINGS})
    if hooks is None:
        hooks = MeasureHooks(**{k: v for k, v in keywords.items() if k in _HOOKS})
    return settings, hooks


def _batch_runner(device: Device, fn: Callable[[], object], s: MeasureSettings,
                  hooks: MeasureHooks) -> Callable[[int], _Timed]:
    """One batch of `calls` calls, timed by the settings' timer."""
    block = not s.sync

    def run_batch(calls: int) -> _Timed:
        if s.timer == "host":
            return host_timed_calls(device, fn, calls, hot=s.hot, sync=hooks.host_sync, before_each=hooks.before_each)
        times = timed_calls(device, fn, calls, hot=s.hot, block=block, before_each=hooks.before_each)
        return math.fsum(times), tuple(times)

    return run_batch


@dataclass
class _Sized:
    """Where the batch sizing ended: the size, the sizing batches run, when the last one began,
    its times where it passed the minimum, and the energy counter before it."""

    calls: int
    batches: int
    batch_start: float
    last: _Timed | None = None
    joules_before: float | None = None


def _size(device: Device, run_batch: Callable[[int], _Timed], s: MeasureSettings, hooks: MeasureHooks,
          calls: int, sizing_start: float) -> _Sized:
    """Grow the batch until it passes ``min_gpu_ms_per_batch`` (`next_size`), unless the size is given."""
    sized = _Sized(calls, 0, sizing_start)
    while s.calls_per_batch is None:
        sized.batches += 1
        if hooks.before_batch is not None:
            hooks.before_batch()
        sized.joules_before = hooks.energy() if hooks.energy is not None else None
        sized.batch_start = device.now()
        with device.nvtx_range(f"sizing batch {sized.batches} ({sized.calls} calls)"):
            total, times = run_batch(sized.calls)
        if total > s.min_gpu_ms_per_batch:
            sized.last = (total, times)
            break
        if total <= 0.0 and sized.calls >= EMPTY_CALLS_LIMIT:
            raise UsageError(
                f"{sized.calls} calls of the benchmarked function took no GPU time between the events: "
                "launch the kernel on state.stream (it is the current stream inside state.run)"
            )
        now = device.now()
        if now - sizing_start > s.noise_timeout_secs:
            break  # enqueueing is slower than the GPU: keep this size rather than grow forever
        sized.calls = next_size(sized.calls, total, s.min_gpu_ms_per_batch, now - sized.batch_start,
                                s.noise_timeout_secs - (now - sizing_start))
    return sized


@dataclass(frozen=True)
class _Window:
    """The measured batches' size and what they count from: the sizing batches discarded, when
    the first measured batch began, when the round's measurement began, the energy counter then."""

    calls: int
    sizing: int
    start: float
    began: float
    joules_start: float | None
    tick: Tick | None = None  # where the window waited for the counter to move (energy_ticks)


def _one_batch(device: Device, run_batch: Callable[[int], _Timed], hooks: MeasureHooks, calls: int,
               number: int) -> _Timed | None:
    """Measured batch `number` (from 1); None where the throttle guard discarded it (and waited)."""
    if hooks.before_batch is not None:
        hooks.before_batch()
    if hooks.throttle is not None:
        hooks.throttle.begin()
    with device.nvtx_range(f"batch {number}"):
        timed = run_batch(calls)
    if hooks.throttle is not None and hooks.throttle.discard():
        return None  # throttled: dropped, and the recovery delay waited; measure another
    return timed


def _measure_batches(device: Device, run_batch: Callable[[int], _Timed], s: MeasureSettings, hooks: MeasureHooks,
                     w: _Window, kept: _Timed | None) -> Measurement:
    """Measure batches of the window's size (`kept` first, where given) until a stopping rule fires."""
    batches: list[BatchRecord] = []
    watts: list[float] = []  # the board's power draw after each measured batch (`power`)
    while True:
        if kept is not None:
            (batch_ms, times), kept = kept, None
        elif (timed := _one_batch(device, run_batch, hooks, w.calls, len(batches) + 1)) is not None:
            batch_ms, times = timed
        else:
            continue
        elapsed = device.now() - w.start
        discarded = hooks.throttle.discarded if hooks.throttle is not None else 0
        batches.append(BatchRecord(batch_ms, w.calls, elapsed, times))
        if hooks.power is not None and (sample := hooks.power()) is not None:
            watts.append(sample)
        window = [b.batch_ms for b in batches[-s.batch_window_size:]]
        noise = coefficient_of_variation(window) * 100.0
        if hooks.on_batch is not None:
            hooks.on_batch(Progress(len(batches), s.batch_window_size, noise, elapsed, w.calls, batches[-1].batch_ms))
        full = len(batches) >= s.batch_window_size
        if full or (w.calls == 1 and len(batches) >= LONG_CALL_WINDOW):
            ran = device.now() - w.began
            timeout = full and noise >= s.noise_tolerance_percent and ran > s.noise_timeout_secs
            if (noise < s.noise_tolerance_percent and ran >= s.min_secs) or timeout:
                joules = (None if hooks.energy is None else
                          energy_window_end(device, hooks.energy, w.tick, w.joules_start, w.start,
                                            w.calls * len(batches), watts))
                return Measurement(tuple(batches), w.calls, w.sizing, noise, timeout, elapsed, ran, discarded, joules)
