"""The host timer (`state.run(fn, timer="host", sync=...)`, `primbench.measure.host_timed_calls`):
for libraries on streams of their own (JAX). Checked exactly against the fake device, whose host
clock advances by each host operation and, at a synchronization, by the GPU time enqueued since
the last one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import primbench as pb
from primbench.compare.comparability import NotComparableError
from primbench.compare.core import compare_runs
from primbench.console import Reporter, make_console
from primbench.measure import host_timed_calls, measure
from primbench.results import ResultsFileError, load_results, results_from_dict
from tests.compare_data import document, spec
from tests.fakes import FakeDevice

HOST_OP = 1e-5  # seconds per host operation of the fake (a launch, a clear, a synchronization)
EVENT_OPS = {"block", "unblock", "start", "stop"}


class Library:
    """A stream-opaque library on the fake device: each call launches one kernel and returns a
    token; `block_until_ready(token)` waits for the device (as ``jax.block_until_ready``)."""

    def __init__(self, dev: FakeDevice) -> None:
        self.dev = dev
        self.made = 0
        self.waited: list[int] = []

    def call(self) -> int:
        self.dev.launch()
        self.made += 1
        return self.made

    def block_until_ready(self, token: int) -> int:
        self.waited.append(token)
        self.dev.synchronize_device()
        return token


# --------------------------------------------------------------------------- one batch


def test_a_hot_batch_is_timed_around_its_calls_and_one_sync_of_the_last_result() -> None:
    dev = FakeDevice(0.25, host_op_secs=HOST_OP)
    lib = Library(dev)
    dev.ops.clear()
    batch_ms, per_call = host_timed_calls(dev, lib.call, 8, hot=True, sync=lib.block_until_ready)
    # 8 launches and one synchronization on the host clock, then the 8 kernels' GPU time
    assert batch_ms == pytest.approx(8 * 0.25 + 9 * HOST_OP * 1000)
    assert per_call == ()  # only the batch was timed
    assert lib.waited == [8]  # once, with the last call's result
    assert dev.ops == ["device_sync"] + ["kernel"] * 8 + ["device_sync"]


def test_cold_calls_are_timed_one_by_one_after_a_clear_and_a_device_sync() -> None:
    dev = FakeDevice(lambda n, cold: 0.5 if cold else 0.25, host_op_secs=HOST_OP, clear_ms=0.02)
    lib = Library(dev)
    dev.ops.clear()
    batch_ms, per_call = host_timed_calls(dev, lib.call, 3, hot=False, sync=lib.block_until_ready)
    # each call: the launch and its sync on the host clock plus the cold kernel; the clear and the
    # device sync that waits for it come before the clock starts
    assert per_call == pytest.approx((0.5 + 2 * HOST_OP * 1000,) * 3)
    assert batch_ms == pytest.approx(sum(per_call))
    assert lib.waited == [1, 2, 3]
    assert dev.ops == ["clear", "device_sync", "kernel", "device_sync"] * 3


def test_without_sync_the_whole_device_is_synchronized() -> None:
    dev = FakeDevice(1.0, host_op_secs=0.0)
    batch_ms, _ = host_timed_calls(dev, dev.launch, 4, hot=True)
    assert batch_ms == pytest.approx(4.0)
    assert dev.ops[-1] == "device_sync"


def test_a_function_run_before_every_call_is_outside_the_time() -> None:
    dev = FakeDevice(1.0, host_op_secs=0.0)
    restored: list[float] = []

    def restore() -> None:
        restored.append(dev.now())
        dev.launch(5.0)  # a slow restore: not timed

    batch_ms, per_call = host_timed_calls(dev, dev.launch, 3, hot=True, before_each=restore)
    assert len(restored) == 3
    assert per_call == pytest.approx((1.0, 1.0, 1.0))  # timed one by one, even hot
    assert batch_ms == pytest.approx(3.0)


def test_the_loop_sizes_and_stops_on_host_times_without_a_spin_kernel_or_events() -> None:
    dev = FakeDevice(0.25, host_op_secs=0.0)
    lib = Library(dev)
    m = measure(dev, lib.call, min_gpu_ms_per_batch=10.0, min_secs=0.0, noise_timeout_secs=10.0,
                batch_window_size=10, noise_tolerance_percent=1.0, hot=True, sync=False, timer="host",
                host_sync=lib.block_until_ready)
    # 1 call, then 32 (the power of two below the 40 it predicts: 8 ms), then 40 calls 10 % over
    assert m.kernel_calls_per_batch == 44
    assert [b.batch_ms for b in m.batches] == pytest.approx([11.0] * 10)
    assert all(b.iterations_ms == () for b in m.batches)
    assert not EVENT_OPS & set(dev.ops)
    assert lib.waited[-10:] == [lib.made - 44 * k for k in range(9, -1, -1)]  # each batch's last result


# --------------------------------------------------------------------------- through the executor


class Opaque(pb.Benchmark):
    def __init__(self, timer: str = "host", sync: bool = True) -> None:
        self.timer = timer
        self.sync = sync

    def meta(self) -> dict[str, Any]:
        return {"algo": "opaque", "timer": self.timer}

    def run(self, state: pb.State) -> None:
        dev = state.device
        assert isinstance(dev, FakeDevice)
        lib = Library(dev)
        state.set_items(1000)
        if self.timer == "host":
            state.run(lib.call, timer="host", sync=lib.block_until_ready if self.sync else None)
        else:
            state.run(lib.call)


def run(tmp_path: Path, *benches: pb.Benchmark, device: FakeDevice | None = None, args: tuple[str, ...] = (),
        out: io.StringIO | None = None, exit_code: int = 0) -> dict[str, Any]:
    """Run `benches` on the fake device; the results.json written (the run exits `exit_code`)."""
    path = tmp_path / "r.json"
    ex = pb.Executor(["--json-out", str(path), "--min-secs", "0", "--rounds", "1", *args],
                     device=device or FakeDevice(0.25), reporter=Reporter(make_console(out or io.StringIO())))
    for b in benches:
        ex.queue(b)
    assert ex.run().exit_code == exit_code
    return json.loads(path.read_text())


def test_results_mark_host_timed_specializations_and_only_them(tmp_path: Path) -> None:
    doc = run(tmp_path, Opaque("host"), Opaque("events"), args=("--hot",))
    host, events = (next(s for s in doc["specializations"] if s["meta"]["timer"] == t) for t in ("host", "events"))
    assert host["timer"] == "host"
    assert "timer" not in events
    loaded = {s.meta["timer"]: s for s in load_results(tmp_path / "r.json").specializations}
    assert loaded["host"].timer == "host" and loaded["events"].timer == "events"
    # the same fake kernel: the host time per call is the kernel's plus the fake's host operations
    assert host["gpu_seconds_per_call"] > events["gpu_seconds_per_call"] == pytest.approx(0.25e-3)
    assert host["items_per_second"] == pytest.approx(1000 / host["gpu_seconds_per_call"])


def test_a_host_timed_run_blocks_no_stream_and_records_no_event(tmp_path: Path) -> None:
    dev = FakeDevice(0.25)
    run(tmp_path, Opaque("host"), device=dev)
    assert not EVENT_OPS & set(dev.ops)
    assert "clear" in dev.ops  # cold by default: the cache is still cleared on the harness stream
    clears = [i for i, op in enumerate(dev.ops) if op == "clear"]
    assert all(dev.ops[i + 1] == "device_sync" for i in clears)


def test_the_warmup_waits_for_the_library(tmp_path: Path) -> None:
    dev = FakeDevice(0.25)
    run(tmp_path, Opaque("host", sync=False), device=dev)
    first = dev.ops.index("kernel")
    assert dev.ops[first + 1] == "device_sync"  # without sync=, the whole device


def test_the_progress_line_says_host_timer(tmp_path: Path) -> None:
    out = io.StringIO()
    run(tmp_path, Opaque("host"), Opaque("events"), out=out)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("ok")]
    assert len(lines) == 2
    assert "host timer" in next(line for line in lines if "timer: host" in line)
    assert "host timer" not in next(line for line in lines if "timer: events" in line)


class BadRun(pb.Benchmark):
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def meta(self) -> dict[str, Any]:
        return {"algo": "bad"}

    def run(self, state: pb.State) -> None:
        state.run(state.device.launch, **self.kwargs)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"timer": "wall"}, "state.run(timer='wall'): the timer is one of 'events', 'host'"),
    ({"sync": print}, "state.run(sync=...) goes with timer='host'"),
])
def test_bad_timer_arguments_fail_the_specialization_in_one_line(tmp_path: Path, kwargs: dict[str, Any],
                                                                 message: str) -> None:
    error = run(tmp_path, BadRun(**kwargs), exit_code=1)["specializations"][0]["error"]
    assert message in error and "\n" not in error


# --------------------------------------------------------------------------- loader and compare


def test_the_loader_rejects_an_unknown_timer_naming_the_field() -> None:
    doc = document([{**spec("a", 1e12), "timer": "sundial"}])
    with pytest.raises(ResultsFileError, match=r"specializations\[0\]\.timer: must be one of events, host"):
        results_from_dict(doc, "x.json")


def test_compare_refuses_one_side_host_timed_and_the_other_not() -> None:
    """A host-timer time includes launch and synchronization overhead: not the same measurement."""
    events = [results_from_dict(document([spec("a", 1e12), spec("b", 1e12)]), "base.json")]
    host = [results_from_dict(document([{**spec("a", 1e12), "timer": "host"}, spec("b", 1e12)]), "head.json")]
    with pytest.raises(NotComparableError) as err:
        compare_runs(events, host)
    assert err.value.comparability.lines() == ["timer differs ('a'): base GPU events, head host timer"]
    assert not [w for w in compare_runs(host, host).warnings if "timer" in w]
    assert not [w for w in compare_runs(events, events).warnings if "timer" in w]
