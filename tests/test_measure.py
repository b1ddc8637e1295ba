"""The measurement loop's rules, checked exactly against the fake device."""

from __future__ import annotations

import math
import statistics

import pytest

from primbench.errors import StreamBlockingTimeout, UsageError
from primbench.measure import (
    FILL_MARGIN,
    LONG_CALL_WINDOW,
    MAX_FILL_FACTOR,
    MAX_SHRINK_FACTOR,
    SIZE_MARGIN,
    SYNC_EVERY,
    coefficient_of_variation,
    fill_window,
    measure,
    next_size,
    timed_calls,
)
from tests.fakes import FakeDevice

DEFAULTS = dict(
    min_gpu_ms_per_batch=10.0,
    min_secs=0.0,
    noise_timeout_secs=10.0,
    batch_window_size=10,
    noise_tolerance_percent=1.0,
    hot=False,
    sync=False,
)


def run(dev: FakeDevice, **kw):
    opts = {**DEFAULTS, **kw}
    return measure(dev, dev.launch, **opts)


def test_cv_is_sample_std_over_mean():
    values = [1.0, 2.0, 3.0, 4.0]
    assert coefficient_of_variation(values) == pytest.approx(statistics.stdev(values) / 2.5)
    assert coefficient_of_variation([5.0]) == 0.0
    assert coefficient_of_variation([]) == 0.0


@pytest.mark.parametrize(
    ("kernel_ms", "calls", "sizing_calls"),
    # 1 call, then the power of two just below what its time predicts (unless that one call
    # already ran a quarter of the 10 ms), then what a settled batch predicts, 10 % over
    [(3.0, 4, [1, 4]), (2.5, 5, [1, 5]), (1.0, 11, [1, 8, 11]), (11.0, 1, [1]),
     (0.001, 11000, [1, 8192, 11000]),
     # 4.5 µs: 2048 calls (9.2 ms), then 2445 (11 ms), not the 4096 (18.4 ms) doubling reaches
     (0.0045, 2445, [1, 2048, 2445])],
)
def test_batch_size_passes_the_minimum_without_doubling_through_every_power_of_two(kernel_ms, calls, sizing_calls):
    dev = FakeDevice(kernel_ms)
    m = run(dev)
    assert m.kernel_calls_per_batch == calls
    # The last sizing batch already has the final size (nothing to fill with --min-secs 0): it is
    # the first measured batch; the sizing batches before it are discarded.
    assert m.sizing_batches == len(sizing_calls) - 1
    assert all(b.kernel_calls == calls for b in m.batches)
    assert dev.calls == sum(sizing_calls[:-1]) + calls * len(m.batches)


def test_next_size_jumps_only_within_the_sizing_budget():
    assert next_size(1, 0.005, 10.0) == 1024  # 5 µs per call: 2000 predicted, 1024 below it
    assert next_size(1, 0.004, 10.0) == 2048  # a first call faster than the rest: still not 4096
    # a settled batch (at least a quarter of the minimum): its prediction, 10 % over
    assert next_size(1024, 5.0, 10.0) == math.ceil(2048 * SIZE_MARGIN)
    assert next_size(4, 12.0, 10.0) == 5  # never fewer than one more call
    assert next_size(2, 0.0, 10.0) == 4  # no GPU time measured: double
    # 1 ms of wall time per call and 0.5 s left: 2048 calls would take 2 s, so only double
    assert next_size(1, 0.005, 10.0, batch_secs=0.001, secs_left=0.5) == 2
    assert next_size(1, 0.005, 10.0, batch_secs=0.0001, secs_left=0.5) == 1024
    assert next_size(1024, 5.0, 10.0, batch_secs=0.5, secs_left=0.5) == 2048


def test_quiet_kernel_stops_when_window_is_full():
    m = run(FakeDevice(1.0))
    assert len(m.batches) == 10
    assert m.noise_percent == pytest.approx(0.0, abs=1e-9)
    assert not m.noise_timeout


def test_window_size_is_respected():
    assert len(run(FakeDevice(1.0), batch_window_size=4).batches) == 4


def test_tolerance_uses_only_the_last_window():
    # Ten noisy batches, then quiet: stops once the window holds only quiet batches.
    per_call = 1.0
    noisy_batches = 10
    calls_per_batch = 11  # 1 ms kernels: 11 calls > 10 ms

    def kernel(n: int, cold: bool) -> float:
        # 1 call, then 8 (just below the predicted 10), discarded; then 11, the first measured batch
        sizing_calls = 1 + 8
        if n < sizing_calls:
            return per_call
        batch = (n - sizing_calls) // calls_per_batch
        if batch < noisy_batches:
            return per_call * (1.5 if batch % 2 else 1.0)
        return per_call

    m = run(FakeDevice(kernel))
    assert m.kernel_calls_per_batch == calls_per_batch
    assert len(m.batches) == noisy_batches + 10
    assert m.noise_percent == pytest.approx(0.0, abs=1e-9)


def test_noise_above_tolerance_runs_until_timeout():
    dev = FakeDevice(lambda n, cold: 1.0 + 0.5 * (n // 16 % 2), host_op_secs=0.0)
    m = run(dev, noise_timeout_secs=2.0)
    assert m.noise_timeout
    assert m.noise_percent >= 1.0
    sizing_secs = dev.now() - m.host_secs  # the round began at 0 with its batch sizing
    assert dev.now() > 2.0
    # It stops at the first batch past the timeout: one batch earlier was not past it.
    assert sizing_secs + m.batches[-2].host_secs <= 2.0


def test_the_rounds_clock_counts_its_batch_sizing():
    # Sizing runs batches of 1, 8 and 11 calls of 1 ms (20 ms); the round stops once
    # 0.5 s have passed since `started`, sizing included, not 0.5 s after it.
    dev = FakeDevice(1.0, host_op_secs=0.0, clear_ms=0.0)
    dev.t = 3.0
    m = run(dev, min_secs=0.5, started=3.0)
    assert m.sizing_batches == 3
    assert dev.now() - 3.0 >= 0.5
    assert dev.now() - 3.0 - m.batches[-1].host_secs + m.batches[-2].host_secs < 0.5
    # Batches were lengthened to fill the 0.48 s that sizing left, not the whole 0.5 s.
    assert m.kernel_calls_per_batch == math.ceil(11 * FILL_MARGIN * (0.48 / 10) / 0.011)


def test_a_round_that_began_earlier_has_less_time_left_to_fill():
    dev = FakeDevice(1.0, host_op_secs=0.0, clear_ms=0.0)
    dev.t = 10.0
    m = run(dev, min_secs=1.0, started=9.5)  # half of min_secs already gone before measuring
    assert m.kernel_calls_per_batch == math.ceil(11 * FILL_MARGIN * ((1.0 - 0.5 - 0.020) / 10) / 0.011)
    assert dev.now() - 9.5 >= 1.0


def test_min_secs_keeps_a_quiet_run_going():
    dev = FakeDevice(1.0, host_op_secs=0.0, clear_ms=0.0)
    m = run(dev, min_secs=1.0)
    assert not m.noise_timeout
    sizing_secs = 0.020  # batches of 1, 8 and 11 calls of 1 ms
    assert dev.now() == pytest.approx(sizing_secs + m.host_secs)
    assert dev.now() >= 1.0
    assert sizing_secs + m.batches[-2].host_secs < 1.0
    # Sizing stops at 11 calls (11 ms of GPU time); batches are then lengthened so that the
    # window of 10 fills the 0.98 s that sizing left, 3 % over: 101 calls (98 without the
    # margin), so the 10th batch ends past 1.0 s, not a hair before it, and no 11th runs.
    assert m.kernel_calls_per_batch == math.ceil(11 * FILL_MARGIN * (0.98 / 10) / 0.011) == 101
    assert len(m.batches) == 10


LONG_ROUND = dict(min_gpu_ms_per_batch=0.31, min_secs=0.0156, batch_window_size=5)  # a p8r2 worker's round


@pytest.mark.parametrize("undone", [False, True])
def test_a_call_longer_than_the_round_stops_at_two_batches_once_its_time_has_run(monkeypatch, undone):
    # cuBLAS sbmv at 4 MiB on an H100 (kernel_rounds14.txt): 19 ms a call against a round's share of 15.6 ms.
    if undone:
        monkeypatch.setattr("primbench.measure.LONG_CALL_WINDOW", 5)
    dev = FakeDevice(19.0, host_op_secs=0.0, clear_ms=0.0)
    m = run(dev, **LONG_ROUND)
    assert m.kernel_calls_per_batch == 1
    assert LONG_CALL_WINDOW == 2
    assert len(m.batches) == (5 if undone else 2)  # the sizing batch (1 call) is the first measured
    assert not m.noise_timeout
    assert dev.now() == pytest.approx(0.019 * len(m.batches))  # 95 ms before, 38 ms now


def test_a_long_call_keeps_measuring_while_its_time_has_not_run():
    # Two 19 ms calls have run 38 ms of a 60 ms round: it goes on, and stops at the first batch past 60 ms.
    dev = FakeDevice(19.0, host_op_secs=0.0, clear_ms=0.0)
    m = run(dev, **{**LONG_ROUND, "min_secs": 0.060})
    assert m.kernel_calls_per_batch == 1
    assert len(m.batches) == 4
    assert 0.060 <= dev.now() < 0.060 + 0.019


def test_a_noisy_long_call_takes_the_whole_window_and_times_out_only_on_it():
    # Single calls alternating 19 and 21 ms (a CV of 7 %): two batches never stop the round.
    dev = FakeDevice(lambda n, cold: 19.0 if n % 2 else 21.0, host_op_secs=0.0, clear_ms=0.0)
    m = run(dev, **{**LONG_ROUND, "noise_timeout_secs": 0.03})
    assert m.kernel_calls_per_batch == 1
    assert m.noise_timeout
    assert len(m.batches) == 5


def test_batches_of_several_calls_fill_the_whole_window():
    dev = FakeDevice(1.0, host_op_secs=0.0, clear_ms=0.0)
    m = run(dev, **LONG_ROUND)
    assert m.kernel_calls_per_batch > 1
    assert len(m.batches) == 5


def test_filling_the_window_shrinks_a_batch_at_most_by_half_and_never_explodes_it():
    assert fill_window(16, 0.016, 1.0, 10) == math.ceil(100 * FILL_MARGIN)
    assert fill_window(16, 0.5, 1.0, 10) == 16 // MAX_SHRINK_FACTOR  # far longer than its share: halved
    assert fill_window(16, 0.13, 1.0, 10) == math.ceil(16 * FILL_MARGIN * 0.1 / 0.13) == 13  # a little: fitted
    assert fill_window(1, 1e-6, 1.0, 10) == MAX_FILL_FACTOR
    assert fill_window(16, 0.016, 0.0, 10) == 16  # --min-secs 0: the size sizing found


def test_timeout_is_not_flagged_for_a_quiet_run():
    dev = FakeDevice(1.0, host_op_secs=0.0)
    m = run(dev, min_secs=3.0, noise_timeout_secs=1.0)
    assert not m.noise_timeout
    assert dev.now() >= 3.0


def test_throughput_fields_come_from_all_measured_batches():
    m = run(FakeDevice(lambda n, cold: 1.0 if n % 2 else 1.001))
    assert m.kernel_calls == m.kernel_calls_per_batch * len(m.batches)
    assert m.gpu_secs == pytest.approx(sum(b.batch_ms for b in m.batches) / 1000)
    assert m.ms_per_batch == pytest.approx(m.gpu_secs * 1000 / len(m.batches))


def test_per_call_protocol_order_cold():
    dev = FakeDevice(1.0)
    timed_calls(dev, dev.launch, 2, hot=False, block=True)
    assert dev.ops == ["clear", "block", "start", "kernel", "stop", "unblock", "sync"] * 2


def test_hot_skips_cache_clearing():
    dev = FakeDevice(1.0)
    timed_calls(dev, dev.launch, 3, hot=True, block=True)
    assert "clear" not in dev.ops


def test_sync_flag_skips_blocking():
    dev = FakeDevice(1.0)
    timed_calls(dev, dev.launch, 3, hot=False, block=False)
    assert "block" not in dev.ops and "unblock" not in dev.ops
    assert dev.ops.count("clear") == 3


def test_cache_clearing_changes_kernel_time():
    dev = FakeDevice(lambda n, cold: 2.0 if cold else 1.0)
    assert sum(timed_calls(dev, dev.launch, 4, hot=False, block=True)) == pytest.approx(8.0)
    assert sum(timed_calls(dev, dev.launch, 4, hot=True, block=True)) == pytest.approx(4.0)


def test_events_exclude_clear_and_spin():
    dev = FakeDevice(1.0, clear_ms=5.0)
    assert timed_calls(dev, dev.launch, 3, hot=False, block=True) == [1.0, 1.0, 1.0]


def test_hot_calls_synchronize_every_so_many_calls_not_each():
    dev = FakeDevice(0.01)
    timed_calls(dev, dev.launch, SYNC_EVERY * 2 + 5, hot=True, block=True)
    assert dev.ops.count("sync") == 3


def test_cold_calls_synchronize_one_by_one():
    dev = FakeDevice(0.01)
    timed_calls(dev, dev.launch, 10, hot=False, block=True)
    assert dev.ops.count("sync") == 10


def test_before_each_runs_before_every_call_outside_the_events():
    dev = FakeDevice(1.0)
    seen = []

    def restore() -> None:
        seen.append(len(dev.ops))
        dev.launch(7.0)  # restoring inputs costs GPU time that must not be counted

    times = timed_calls(dev, dev.launch, 3, hot=False, block=True, before_each=restore)
    assert times == [1.0, 1.0, 1.0]
    assert len(seen) == 3


def test_synchronous_kernel_with_blocking_raises_clear_error():
    dev = FakeDevice(1.0)
    dev.blocking_timeout = 2.0
    with pytest.raises(StreamBlockingTimeout, match=r"flags\.sync"):
        timed_calls(dev, dev.synchronous_kernel, 1, hot=True, block=True)
    assert dev.t >= 2.0


def test_synchronous_kernel_without_blocking_runs():
    dev = FakeDevice(1.0)
    assert timed_calls(dev, dev.synchronous_kernel, 3, hot=True, block=False) == [1.0, 1.0, 1.0]


def test_before_batch_hook_runs_once_before_every_batch_it_times():
    dev = FakeDevice(1.0)
    count = 0

    def hook() -> None:
        nonlocal count
        count += 1

    m = measure(dev, dev.launch, before_batch=hook, **DEFAULTS)
    # sizing batches too: the last of them is the first measured batch (nothing to fill)
    assert m.sizing_batches == 2
    assert count == m.sizing_batches + len(m.batches)


def test_progress_reports_every_batch():
    seen = []
    dev = FakeDevice(1.0)
    m = measure(dev, dev.launch, on_batch=seen.append, **DEFAULTS)
    assert [p.batch for p in seen] == list(range(1, len(m.batches) + 1))


def test_function_that_launches_nothing_on_the_stream_is_an_error():
    dev = FakeDevice(1.0)
    with pytest.raises(UsageError, match=r"state\.stream"):
        measure(dev, lambda: None, **DEFAULTS)


def test_sizing_gives_up_doubling_after_the_noise_timeout():
    dev = FakeDevice(0.001, host_op_secs=0.001)  # enqueueing is far slower than the kernel
    m = run(dev, noise_timeout_secs=0.5)
    assert m.kernel_calls_per_batch < 10 / 0.001


def test_an_exception_in_fn_releases_the_blocked_stream():
    dev = FakeDevice(1.0)

    def boom() -> None:
        raise RuntimeError("kernel exploded")

    with pytest.raises(RuntimeError):
        timed_calls(dev, boom, 3, hot=True, block=True)
    assert dev.ops == ["block", "start", "unblock"]
    assert not dev.blocked


class _ElapsedLogged(FakeDevice):
    def elapsed_ms(self, slot: int) -> float:
        self.ops.append("elapsed")
        return super().elapsed_ms(slot)


def test_cold_calls_start_the_next_clear_before_reading_the_last_events():
    # The GPU idles from a call's synchronization until the next clear is enqueued: nothing but
    # that enqueueing may sit in between; the finished call's events are read while it clears.
    dev = _ElapsedLogged(1.0, clear_ms=5.0)
    assert timed_calls(dev, dev.launch, 3, hot=False, block=True) == [1.0, 1.0, 1.0]
    call = ["start", "kernel", "stop", "unblock", "sync"]
    assert dev.ops == ["clear", "block", *call] + ["clear", "block", "elapsed", *call] * 2 + ["elapsed"]


def test_cold_before_each_still_runs_before_its_calls_clear():
    dev = _ElapsedLogged(1.0)
    timed_calls(dev, dev.launch, 2, hot=False, block=False, before_each=lambda: dev.ops.append("restore"))
    assert dev.ops == ["restore", "clear", "start", "kernel", "stop", "sync",
                       "restore", "clear", "elapsed", "start", "kernel", "stop", "sync", "elapsed"]


def test_an_exception_in_a_cold_call_releases_the_blocked_stream():
    dev = FakeDevice(1.0)
    calls = 0

    def second_fails() -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("kernel exploded")
        dev.launch()

    with pytest.raises(RuntimeError):
        timed_calls(dev, second_fails, 3, hot=False, block=True)
    assert dev.ops[-3:] == ["block", "start", "unblock"]
    assert not dev.blocked


def test_no_cold_calls_enqueue_nothing():
    dev = FakeDevice(1.0)
    assert timed_calls(dev, dev.launch, 0, hot=False, block=True) == []
    assert dev.ops == []


def test_the_settings_record_and_the_earlier_keywords_measure_the_same() -> None:
    from primbench.measure import MeasureHooks, MeasureSettings

    seen: list[object] = []
    first = FakeDevice(0.25)
    by_record = measure(first, first.launch, MeasureSettings(**DEFAULTS), MeasureHooks(on_batch=seen.append))
    dev = FakeDevice(0.25)
    by_keywords = measure(dev, dev.launch, **DEFAULTS)
    assert by_record.kernel_calls_per_batch == by_keywords.kernel_calls_per_batch
    assert [b.batch_ms for b in by_record.batches] == [b.batch_ms for b in by_keywords.batches]
    assert len(seen) == len(by_record.batches)
    with pytest.raises(TypeError, match="either as records or as keywords"):
        measure(dev, dev.launch, MeasureSettings(**DEFAULTS), min_secs=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'min_sec'"):
        measure(dev, dev.launch, **{**DEFAULTS, "min_sec": 1.0})
