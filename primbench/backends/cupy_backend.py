"""The GPU backend on CuPy: CUDA, or ROCm/HIP with CuPy's ROCm builds.

Per call (driven by `primbench.measure`): a memset of the cache-clearing buffer, a spin
kernel on a flag in mapped pinned host memory, start event, the user's launch, stop event,
and the host's release of the flag. Runtime calls go straight to ``cupy.cuda.runtime`` with
cached raw pointers, to keep the host's cost per call low.
"""

from __future__ import annotations

import contextlib
import ctypes
import platform
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import cupy
import numpy as np

from primbench.backends.device_code import SOURCE
from primbench.device import Device, GraphReplay
from primbench.errors import DeviceError, StreamBlockingTimeout
from primbench.monitoring import Monitor

#: Steps of the heating kernel per thread: a few milliseconds per launch on a large GPU.
HEAT_STEPS = 20000


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def _uuid(raw: Any) -> str | None:
    if not raw:
        return None
    b = bytes(raw)[:16] if not isinstance(raw, str) else raw.encode()[:16]
    h = b.hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _nvtx_functions() -> tuple[Callable[[str], object], Callable[[], object]] | None:
    """Range push and pop: CuPy's NVTX binding (rocTX in CuPy's ROCm builds), else None
    (ranges do nothing)."""
    try:
        from cupy.cuda import nvtx

        if getattr(nvtx, "available", True):
            return nvtx.RangePush, nvtx.RangePop
    except Exception:  # an NVTX library that CuPy was built without or cannot load
        pass
    return None


def open_monitor(is_hip: bool, pci_bus_id: str) -> Monitor:
    if is_hip:
        from primbench.monitoring_amd import AmdSmiMonitor

        return AmdSmiMonitor(pci_bus_id)
    from primbench.monitoring import NvmlMonitor

    return NvmlMonitor(pci_bus_id)


class CupyDevice(Device):
    """One GPU through CuPy; `backend_name` is "cuda" or "hip" after the installed CuPy."""

    def __init__(self, index: int | None = None, *, monitoring: bool = True) -> None:
        rt = cupy.cuda.runtime
        self.rt = rt
        self.is_hip = bool(getattr(rt, "is_hip", False))
        self.backend_name = "hip" if self.is_hip else "cuda"
        count = rt.getDeviceCount()
        if count == 0:
            raise DeviceError("CuPy sees no GPU: check the driver (nvidia-smi / amd-smi)")
        if index is None:
            index = rt.getDevice()
        if not 0 <= index < count:
            raise DeviceError(f"--device {index} does not exist: this machine has {count} GPU(s), 0..{count - 1}")
        self.index = index
        self._cupy_device = cupy.cuda.Device(index)
        self._cupy_device.use()
        self.props = rt.getDeviceProperties(index)
        self.pci_bus_id = _text(rt.deviceGetPCIBusId(index)).lower()
        self._stream = cupy.cuda.Stream(non_blocking=True)
        self._stream_ptr = self._stream.ptr
        self.monitor: Monitor | None = open_monitor(self.is_hip, self.pci_bus_id) if monitoring else None
        self._module: Any = None
        self._prepared = False
        self._ticket = 0
        self._host_ptr = 0
        self._nvtx = _nvtx_functions()

    # ----- identity

    @property
    def stream(self) -> cupy.cuda.Stream:
        return self._stream

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        with self._cupy_device, self._stream:
            yield

    def arch(self) -> str:
        if self.is_hip:
            from primbench.backends.hip import gfx_arch

            return gfx_arch(self.props)
        return f"sm_{self.props['major']}{self.props['minor']}"

    def context(self) -> dict[str, Any]:
        rt = self.rt
        gpu: dict[str, Any] = {
            "name": _text(self.props["name"]),
            "arch": self.arch(),
            "pci_bus_id": self.pci_bus_id,
        }
        identity = self.monitor.identity() if self.monitor else {}
        uuid = identity.get("uuid") or (None if self.is_hip else _uuid(self.props.get("uuid")))
        if uuid:
            gpu["uuid"] = uuid
        if identity.get("serial"):
            gpu["serial"] = identity["serial"]
        gpu["multiprocessors"] = int(self.props["multiProcessorCount"])
        gpu["l2_cache_bytes"] = int(self.props.get("l2CacheSize", 0))
        gpu["memory_bytes"] = int(self.props["totalGlobalMem"])
        runtime = rt.runtimeGetVersion()
        driver = rt.driverGetVersion()
        backend: dict[str, Any]
        if self.is_hip:
            from primbench.backends.hip import backend_context, rocm_path

            backend = backend_context(rt, rocm_path(cupy))
        else:
            try:
                from cupy_backends.cuda.libs import nvrtc as _nvrtc

                major, minor = _nvrtc.getVersion()
                nvrtc = f"{major}.{minor}"
            except Exception:
                nvrtc = "unknown"
            backend = {
                "name": "cuda",
                "runtime_version": _cuda_version(runtime),
                "driver_version": _cuda_version(driver),
                "compiler": {"name": "nvrtc", "version": nvrtc},
            }
        backend["cupy_version"] = cupy.__version__
        backend["python_version"] = platform.python_version()
        out: dict[str, Any] = {"gpu": gpu, "backend": backend}
        if self.monitor is not None:
            out["monitoring"] = {"name": self.monitor.name, "version": self.monitor.version()}
            out["temperature_type"] = self.monitor.temperature_type
            kernel_driver = getattr(self.monitor, "driver_version", None)
            if callable(kernel_driver):
                backend["kernel_driver_version"] = kernel_driver()
        return out

    # ----- setup

    def _wall_ticks_per_sec(self) -> float:
        """Rate of the timer the spin kernel reads: %globaltimer is in ns on NVIDIA."""
        if self.is_hip:
            from primbench.backends.hip import wall_clock_rate_hz

            return wall_clock_rate_hz(self.rt, self.index)
        return 1e9

    def prepare(self, *, cache_size: int, blocking_timeout_secs: float, slots: int) -> None:
        rt = self.rt
        self._prepared_with = (cache_size, blocking_timeout_secs, slots)
        with self._cupy_device:
            if self._module is None:  # code, not state: loaded once, kept when rounds renew the rest
                self._module = cupy.RawModule(code=SOURCE, options=("-std=c++14",))
                self._spin = self._module.get_function("primbench_spin")
                self._stamp = self._module.get_function("primbench_timestamps")
                self._heat = self._module.get_function("primbench_heat")
            self._cache = cupy.empty(cache_size, dtype=cupy.uint8) if cache_size > 0 else None
            self._cache_ptr = self._cache.data.ptr if self._cache is not None else 0
            self._cache_size = cache_size
            self._starts = [cupy.cuda.Event() for _ in range(slots)]
            self._stops = [cupy.cuda.Event() for _ in range(slots)]
            self._start_ptrs = [e.ptr for e in self._starts]
            self._stop_ptrs = [e.ptr for e in self._stops]
            # Mapped pinned host memory: [0] the released ticket, [1] the timed-out ticket.
            self._host_ptr = rt.hostAlloc(64, rt.hostAllocMapped | rt.hostAllocPortable)
            self._host = np.ctypeslib.as_array((ctypes.c_int32 * 16).from_address(self._host_ptr))
            self._host[:] = 0
            # With unified addressing (every 64-bit CUDA and ROCm platform) the mapped host
            # pointer is also the device pointer.
            mem = cupy.cuda.UnownedMemory(self._host_ptr, 64, owner=self)
            self._host_dev = cupy.ndarray((16,), dtype=cupy.int32, memptr=cupy.cuda.MemoryPointer(mem, 0))
            self._flag_arg = self._host_dev[0:1]
            self._timeout_arg = self._host_dev[1:2]
            self._timeout_ticks = np.uint64(blocking_timeout_secs * self._wall_ticks_per_sec())
            self._timeout_secs = blocking_timeout_secs
            self._stamps = cupy.zeros(2, dtype=cupy.uint64)
            self._heat_sink = cupy.zeros(1, dtype=cupy.float32)
            # Load every kernel now, unblocked: lazy module loading under a blocked stream
            # would wait for the block.
            self._ticket = 0
            self.block()
            self.unblock()
            self.clock_sample()
            self._stream.synchronize()
            self._host[1] = 0
        self._prepared = True

    def renew(self) -> None:
        if not self._prepared:
            return
        self._release()
        self._stream = cupy.cuda.Stream(non_blocking=True)
        self._stream_ptr = self._stream.ptr
        cache_size, timeout, slots = self._prepared_with
        self.prepare(cache_size=cache_size, blocking_timeout_secs=timeout, slots=slots)

    def _release(self) -> None:
        """Free what `prepare` allocated (the stream stays until it is replaced)."""
        if self._host_ptr:
            with contextlib.suppress(Exception):
                self._stream.synchronize()
                self.rt.freeHost(self._host_ptr)
            self._host_ptr = 0
        self._cache = None
        self._cache_ptr = 0
        self._prepared = False

    def free_cached_memory(self) -> None:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
        torch = sys.modules.get("torch")  # PyTorch's caching allocator, where the program uses it
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    def release(self) -> None:
        self._release()

    def close(self) -> None:
        self._release()
        if self.monitor is not None:
            self.monitor.close()

    @contextlib.contextmanager
    def nvtx_range(self, name: str) -> Iterator[None]:
        if self._nvtx is None:
            yield
            return
        push, pop = self._nvtx
        push(name)
        try:
            yield
        finally:
            pop()

    def capture_graph(self, fn: Callable[[], object]) -> GraphReplay:
        from primbench.backends.cupy_graph import capture

        with self.activate():
            return capture(self._stream, fn)

    # ----- the per-call protocol

    def clear_cache(self) -> None:
        if self._cache_ptr:
            self.rt.memsetAsync(self._cache_ptr, 0, self._cache_size, self._stream_ptr)

    def block(self) -> None:
        self._ticket += 1
        self._spin((1,), (1,), (self._flag_arg, np.int32(self._ticket), self._timeout_ticks, self._timeout_arg),
                   stream=self._stream)

    def unblock(self) -> None:
        self._host[0] = self._ticket

    def record_start(self, slot: int) -> None:
        self.rt.eventRecord(self._start_ptrs[slot], self._stream_ptr)

    def record_stop(self, slot: int) -> None:
        self.rt.eventRecord(self._stop_ptrs[slot], self._stream_ptr)

    def synchronize(self) -> None:
        self.rt.streamSynchronize(self._stream_ptr)
        if self._prepared and self._host[1]:
            self._host[1] = 0
            raise StreamBlockingTimeout(self._timeout_secs)

    def synchronize_device(self) -> None:
        self._cupy_device.synchronize()

    def elapsed_ms(self, slot: int) -> float:
        return self.rt.eventElapsedTime(self._start_ptrs[slot], self._stop_ptrs[slot])

    # ----- monitoring and clocks

    def temperature(self) -> float | None:
        return self.monitor.temperature() if self.monitor is not None else None

    def slowdown_temperature(self) -> float | None:
        return self.monitor.slowdown_temperature() if self.monitor is not None else None

    def default_clock_mhz(self) -> float | None:
        return self.monitor.default_sm_clock_mhz() if self.monitor is not None else None

    def clock_event_reasons(self) -> list[str] | None:
        return self.monitor.clock_event_reasons() if self.monitor is not None else None

    def sm_clock_now_mhz(self) -> float | None:
        return self.monitor.sm_clock_now_mhz() if self.monitor is not None else None

    def energy_joules(self) -> float | None:
        return self.monitor.energy_joules() if self.monitor is not None else None

    def power_limit_watts(self) -> float | None:
        return self.monitor.power_limit_watts() if self.monitor is not None else None

    def power_watts(self) -> float | None:
        return self.monitor.power_watts() if self.monitor is not None else None

    def heat(self, secs: float) -> None:
        sms = int(self.props["multiProcessorCount"])
        end = time.perf_counter() + secs
        with self.activate():
            while True:
                self._heat((sms * 8,), (256,), (self._heat_sink, np.int32(HEAT_STEPS)), stream=self._stream)
                self._stream.synchronize()
                if time.perf_counter() >= end:
                    return

    def clock_sample(self) -> tuple[int, int] | None:
        sms = int(self.props["multiProcessorCount"])
        with self.activate():
            self._stamps.fill(0)
            self._stamp((sms,), (32,), (self._stamps,), stream=self._stream)
            self._stream.synchronize()
            wall, cycles = (int(v) for v in self._stamps.get(stream=self._stream))
        if wall == 0:
            return None
        ns = wall if not self.is_hip else int(wall * 1e9 / self._wall_ticks_per_sec())
        return ns, cycles
