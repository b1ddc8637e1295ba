"""A fake GPU at the device seam: programmable kernel times, noise, temperatures and clocks.

Time is virtual and exact: every host operation costs `host_op_secs`, and a synchronize
adds the GPU time enqueued since the last one, so stopping rules can be checked to the call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from primbench.backends.cupy_graph import capture
from primbench.device import Device, GraphReplay
from primbench.errors import StreamBlockingTimeout

KernelTime = Callable[[int, bool], float]  # (kernel call number, cache cold?) -> ms
#: A measured batch's number (1, 2, ... over the device's life) -> (SM clock MHz, clock-event
#: reasons) while it runs: the fake's throttling, programmed per batch.
BatchClock = Callable[[int], tuple[float, list[str]]]


class FakeDevice(Device):
    backend_name = "fake"

    def __init__(
        self,
        kernel_ms: float | KernelTime = 0.25,
        *,
        clear_ms: float = 0.02,
        host_op_secs: float = 2e-6,
        temperature: float | None = 40.0,
        idle_temp: float = 38.0,
        heat_per_sec: float = 1.0,
        cool_per_sec: float = 2.0,
        max_temp: float | None = None,
        sm_clock_mhz: float = 1980.0,
        default_clock_mhz: float = 1980.0,
        slowdown: float | None = None,
        log_ops: bool = True,
        batch_clock: BatchClock | None = None,
        power_watts: float | None = None,
        energy_update_secs: float = 0.1,
        power_limit_watts: float | None = 700.0,
        launch_gap_ms: float = 0.0,
        graph_gap_ms: float = 0.0,
        capture_error: str | None = None,
    ) -> None:
        self._kernel = kernel_ms if callable(kernel_ms) else (lambda n, cold, ms=kernel_ms: ms)
        self.clear_ms = clear_ms
        self.host_op_secs = host_op_secs
        self.t = 0.0  # host seconds
        self.gpu_ms = 0.0  # GPU timeline, ms
        self._unsynced_ms = 0.0
        self.ops: list[str] = []
        self.log_ops = log_ops
        self.calls = 0  # kernel launches
        self.cold = True
        self.blocked = False
        self.block_timed_out = False
        self.blocking_timeout = 10.0
        self.prepared: dict[str, Any] | None = None
        self._starts: dict[int, float] = {}
        self._stops: dict[int, float] = {}
        self.temp = temperature
        self.idle_temp = idle_temp
        self.heat_per_sec = heat_per_sec
        self.cool_per_sec = cool_per_sec
        self.max_temp_reached = max_temp
        self.sm_clock_mhz = sm_clock_mhz
        self.default_mhz = default_clock_mhz
        # The SM clock can change: ticks are counted up to `_clock_since` at the clocks before it.
        self._ticks_before = 0.0
        self._clock_since = 0.0
        self.batch_clock = batch_clock
        self.measured_batches = 0  # "batch N" NVTX ranges opened (the fake knows a batch by its range)
        self.batch_log: list[tuple[int, float, list[str]]] = []  # (batch, MHz, reasons) as programmed
        # The energy counter: constant board power, the counter moving in steps of
        # `energy_update_secs` (NVML's ~100 ms on an H200); None: no counter.
        self.board_watts = power_watts
        self.energy_update_secs = energy_update_secs
        self.power_limit = power_limit_watts
        self.slowdown = slowdown  # °C where the monitor says the GPU slows down; None: not known
        self.reasons: list[str] | None = []
        self.heated_secs = 0.0
        self.slept_secs = 0.0
        self.closed = False
        self.releases = 0
        self.renewals = 0
        self.ranges: list[str] = []  # NVTX: "push NAME" and "pop NAME", in order
        # CUDA graphs (primbench.graph): each stream launch leaves `launch_gap_ms` of GPU idle
        # before its kernel (fetching the launch); a replay leaves `graph_gap_ms` per kernel.
        self.launch_gap_ms = launch_gap_ms
        self.graph_gap_ms = graph_gap_ms
        self.capture_error = capture_error  # end_capture raises this (a runtime's refusal)
        self.capturing = False
        self.capture_invalidated = False
        self.captured: list[float | None] = []  # the launches of the capture under way (their ms, None: the kernel's)
        self.captures = 0
        self.replays = 0

    # ----- helpers for tests
    def _op(self, name: str) -> None:
        self.t += self.host_op_secs
        if self.log_ops:
            self.ops.append(name)

    def _gpu(self, ms: float) -> None:
        self.gpu_ms += ms
        self._unsynced_ms += ms

    def launch(self, ms: float | None = None) -> None:
        """The benchmarked kernel: a test benchmark's fn calls this (captured, not run, while
        the stream is capturing a graph)."""
        self._op("kernel")
        if self.capturing:
            self.captured.append(ms)
            return
        ms = self._kernel(self.calls, self.cold) if ms is None else ms
        self.calls += 1
        self.cold = False
        self._gpu(self.launch_gap_ms + ms)

    def replay(self, kernels: list[float | None]) -> None:
        """One replay of a captured graph: its kernels back to back, `graph_gap_ms` apart."""
        self._op("graph")
        self.replays += 1
        for ms in kernels:
            ms = self._kernel(self.calls, self.cold) if ms is None else ms
            self.calls += 1
            self.cold = False
            self._gpu(self.graph_gap_ms + ms)

    def capture_graph(self, fn: Callable[[], object]) -> GraphReplay:
        """The CuPy backend's capture (`primbench.backends.cupy_graph.capture`) on a fake stream."""
        return capture(FakeStream(self), fn)

    def synchronous_kernel(self) -> None:
        """A kernel that synchronizes inside: deadlocks against a blocked stream."""
        self.launch()
        if self.blocked:
            self.t += self.blocking_timeout
            self.block_timed_out = True
            self.blocked = False
        self.synchronize(check=False)

    # ----- Device
    @property
    def stream(self) -> str:
        return "fake-stream"

    def context(self) -> dict[str, Any]:
        return {
            "gpu": {"name": "Fake GPU", "arch": "sm_00", "pci_bus_id": "0000:00:00.0", "uuid": "GPU-fake"},
            "backend": {"name": "fake", "runtime_version": "0"},
        }

    def now(self) -> float:
        return self.t

    def sleep(self, secs: float) -> None:
        self.t += secs
        self.slept_secs += secs
        if self.temp is not None:
            self.temp = max(self.idle_temp, self.temp - self.cool_per_sec * secs)

    def prepare(self, *, cache_size: int, blocking_timeout_secs: float, slots: int) -> None:
        self.prepared = {"cache_size": cache_size, "blocking_timeout_secs": blocking_timeout_secs, "slots": slots}
        self.blocking_timeout = blocking_timeout_secs

    def clear_cache(self) -> None:
        self._op("clear")
        self._gpu(self.clear_ms)
        self.cold = True

    def block(self) -> None:
        self._op("block")
        self.blocked = True

    def unblock(self) -> None:
        self._op("unblock")
        self.blocked = False

    def record_start(self, slot: int) -> None:
        self._op("start")
        self._starts[slot] = self.gpu_ms

    def record_stop(self, slot: int) -> None:
        self._op("stop")
        self._stops[slot] = self.gpu_ms

    def synchronize(self, check: bool = True) -> None:
        self._op("sync")
        if self.capturing:  # as CUDA: not permitted while capturing, and the capture is invalidated
            self.capture_invalidated = True
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing")
        self.t += self._unsynced_ms / 1000.0
        self._unsynced_ms = 0.0
        if check and self.block_timed_out:
            self.block_timed_out = False
            raise StreamBlockingTimeout(self.blocking_timeout)

    def synchronize_device(self) -> None:
        self._op("device_sync")
        if self.capturing:
            self.capture_invalidated = True
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing")
        self.t += self._unsynced_ms / 1000.0
        self._unsynced_ms = 0.0

    def elapsed_ms(self, slot: int) -> float:
        return self._stops[slot] - self._starts[slot]

    def temperature(self) -> float | None:
        return self.temp

    def heat(self, secs: float) -> None:
        self.t += secs
        self.heated_secs += secs
        if self.temp is not None:
            self.temp += self.heat_per_sec * secs
            if self.max_temp_reached is not None:
                self.temp = min(self.temp, self.max_temp_reached)

    def slowdown_temperature(self) -> float | None:
        return self.slowdown

    def set_clock(self, mhz: float, reasons: list[str] | None = None) -> None:
        """Change the SM clock from now on (ticks so far are kept), and the reasons."""
        self._ticks_before += (self.t - self._clock_since) * self.sm_clock_mhz * 1e6
        self._clock_since = self.t
        self.sm_clock_mhz = mhz
        if reasons is not None:
            self.reasons = list(reasons)

    def clock_sample(self) -> tuple[int, int]:
        ns = round(self.t * 1e9)
        return ns, round(self._ticks_before + (self.t - self._clock_since) * self.sm_clock_mhz * 1e6)

    def default_clock_mhz(self) -> float | None:
        return self.default_mhz

    def sm_clock_now_mhz(self) -> float | None:
        """The clock as NVML reads it now: the programmed one."""
        return self.sm_clock_mhz

    def energy_joules(self) -> float | None:
        if self.board_watts is None:
            return None
        steps = int(self.t / self.energy_update_secs) if self.energy_update_secs > 0 else self.t
        return 1000.0 + self.board_watts * steps * (self.energy_update_secs or 1.0)

    def power_limit_watts(self) -> float | None:
        return self.power_limit if self.board_watts is not None else None

    def power_watts(self) -> float | None:
        return self.board_watts

    def clock_event_reasons(self) -> list[str] | None:
        return None if self.reasons is None else list(self.reasons)

    def renew(self) -> None:
        self._op("renew")
        self.renewals += 1

    @contextlib.contextmanager
    def nvtx_range(self, name: str) -> Iterator[None]:
        if self.batch_clock is not None and name.startswith("batch "):
            self.measured_batches += 1
            mhz, reasons = self.batch_clock(self.measured_batches)
            self.set_clock(mhz, reasons)
            self.batch_log.append((self.measured_batches, mhz, list(reasons)))
        self.ranges.append(f"push {name}")
        try:
            yield
        finally:
            self.ranges.append(f"pop {name}")

    def range_tree(self) -> list[tuple[int, str]]:
        """The NVTX ranges as (depth, name) in push order; AssertionError if a pop does not
        close the innermost open range."""
        stack: list[str] = []
        tree: list[tuple[int, str]] = []
        for entry in self.ranges:
            op, name = entry.split(" ", 1)
            if op == "push":
                tree.append((len(stack), name))
                stack.append(name)
            else:
                assert stack and stack[-1] == name, (name, stack)
                stack.pop()
        assert not stack, stack
        return tree

    def release(self) -> None:
        self.releases += 1

    def close(self) -> None:
        self.closed = True


class FakeGraph:
    """A captured graph of the fake device: the launches it holds."""

    def __init__(self, device: FakeDevice, kernels: list[float | None]) -> None:
        self.device = device
        self.kernels = kernels
        self.uploaded = False

    def upload(self, stream: object) -> None:
        self.uploaded = True

    def launch(self, stream: object) -> None:
        self.device.replay(self.kernels)


class FakeStream:
    """CuPy's stream capture API on the fake device (what `primbench.backends.cupy_graph` calls)."""

    def __init__(self, device: FakeDevice) -> None:
        self.device = device

    def synchronize(self) -> None:
        self.device.synchronize(check=False)

    def begin_capture(self) -> None:
        d = self.device
        if d.capturing:
            raise RuntimeError("cudaErrorIllegalState: the stream is capturing already")
        d.capturing, d.capture_invalidated, d.captured = True, False, []

    def is_capturing(self) -> bool:
        return self.device.capturing

    def end_capture(self) -> FakeGraph:
        d = self.device
        d.capturing = False
        d.captures += 1
        if d.capture_invalidated:
            raise RuntimeError("cudaErrorStreamCaptureInvalidated: operation failed due to a previous error "
                               "during capture")
        if d.capture_error is not None:
            raise RuntimeError(d.capture_error)
        return FakeGraph(d, list(d.captured))
