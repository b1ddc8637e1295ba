"""GPU backends. Imported only when a benchmark runs: this is where CuPy is loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from primbench.device import Device
from primbench.errors import DeviceError, MissingDependencyError

if TYPE_CHECKING:
    from primbench.backends.hip import PlatformProbe


def open_backend(index: int | None, *, monitoring: bool, probe: PlatformProbe | None = None) -> Device:
    """The backend for the installed CuPy build (CUDA or ROCm) on device `index`.

    When CuPy cannot start, a CuPy built for the other platform than this machine's (seen
    through `probe`: device nodes, driver files, vendor tools) is named as the cause.
    """
    from primbench.backends import hip

    try:
        import cupy
    except ImportError as exc:
        dist = hip.installed_cupy()
        if dist is None:
            raise MissingDependencyError(
                "cupy", "cuda13", "running benchmarks on a GPU (CUDA 12: cupy-cuda12x; ROCm: cupy-rocm-7-0 amdsmi)"
            ) from None
        raise DeviceError(
            hip.mismatch_message(hip.cupy_build(dist), probe, dist)
            or f"CuPy ({dist}) is installed but does not load: {hip.import_failure(exc)}"
        ) from None
    from primbench.backends.cupy_backend import CupyDevice

    try:
        return CupyDevice(index, monitoring=monitoring)
    except Exception as exc:  # the runtime's own errors: no driver, no device, ...
        build = "rocm" if getattr(cupy.cuda.runtime, "is_hip", False) else "cuda"
        mismatch = hip.mismatch_message(build, probe, hip.installed_cupy())
        if mismatch:
            raise DeviceError(mismatch) from exc
        if isinstance(exc, DeviceError):
            raise
        raise DeviceError(f"no usable GPU: {type(exc).__name__}: {exc}") from exc


def open_device(index: int | None = None, *, monitoring: bool = True) -> Device:
    """The GPU backend that the installed CuPy supports (CUDA or ROCm), on device `index`."""
    return open_backend(index, monitoring=monitoring)


def device_count() -> int:
    """The GPUs the installed CuPy sees on this host (``--devices all``); 0 where it cannot start."""
    try:
        import cupy
    except ImportError:
        raise MissingDependencyError(
            "cupy", "cuda13", "running benchmarks on a GPU (CUDA 12: cupy-cuda12x; ROCm: cupy-rocm-7-0 amdsmi)"
        ) from None
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # the runtime's own errors: no driver, no device, ...
        raise DeviceError(f"no usable GPU: {type(exc).__name__}: {exc}") from exc
