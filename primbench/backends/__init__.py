"""GPU backends. Imported only when a benchmark runs: this is where CuPy is loaded."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from primbench.device import Device
from primbench.errors import DeviceError, MissingDependencyError

if TYPE_CHECKING:
    from primbench.backends.hip import PlatformProbe


#: What CuPy is needed for, in the error that names the packages to install.
_PURPOSE = "running benchmarks on a GPU (CUDA 12: cupy-cuda12x; ROCm: cupy-rocm-7-0 amdsmi)"


def _cupy(probe: PlatformProbe | None = None) -> ModuleType:
    """CuPy, imported; where it cannot be, the one-line error that says what to install, or that the
    CuPy installed is built for the other platform than this machine's (seen through `probe`)."""
    from primbench.backends import hip

    try:
        import cupy
    except ImportError as exc:
        dist = hip.installed_cupy()
        if dist is None:
            raise MissingDependencyError("cupy", "cuda13", _PURPOSE) from None
        raise DeviceError(
            hip.mismatch_message(hip.cupy_build(dist), probe, dist)
            or f"CuPy ({dist}) is installed but does not load: {hip.import_failure(exc)}"
        ) from None
    return cupy


def _runtime_failure(cupy: ModuleType, exc: Exception, probe: PlatformProbe | None) -> DeviceError:
    """The error for the GPU runtime's own failure (no driver, no device, ...): a CuPy built for the
    other platform named as the cause where it is one."""
    from primbench.backends import hip

    build = "rocm" if getattr(cupy.cuda.runtime, "is_hip", False) else "cuda"
    mismatch = hip.mismatch_message(build, probe, hip.installed_cupy())
    if mismatch:
        return DeviceError(mismatch)
    if isinstance(exc, DeviceError):
        return exc
    return DeviceError(f"no usable GPU: {type(exc).__name__}: {exc}")


def open_backend(index: int | None, *, monitoring: bool, probe: PlatformProbe | None = None) -> Device:
    """The backend for the installed CuPy build (CUDA or ROCm) on device `index`.

    When CuPy cannot start, a CuPy built for the other platform than this machine's (seen
    through `probe`: device nodes, driver files, vendor tools) is named as the cause.
    """
    cupy = _cupy(probe)
    from primbench.backends.cupy_backend import CupyDevice

    try:
        return CupyDevice(index, monitoring=monitoring)
    except Exception as exc:  # the runtime's own errors: no driver, no device, ...
        raise _runtime_failure(cupy, exc, probe) from exc


def open_device(index: int | None = None, *, monitoring: bool = True) -> Device:
    """The GPU backend that the installed CuPy supports (CUDA or ROCm), on device `index`."""
    return open_backend(index, monitoring=monitoring)


def device_count(probe: PlatformProbe | None = None) -> int:
    """The GPUs the installed CuPy sees on this host (``--devices all``)."""
    cupy = _cupy(probe)
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # the runtime's own errors: no driver, no device, ...
        raise _runtime_failure(cupy, exc, probe) from exc


def require_cupy() -> None:
    """What the parent of worker processes (``--processes``, ``--devices``, the default protocol) checks before it
    starts any: that CuPy is installed, without importing it (the import would add to every run's wall). Raises the
    one-line error a single process gives, once, not once from each worker; a CuPy that is there but cannot start
    fails in the workers, whose run then ends with the first one's error (`primbench.executor`)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is None:
        raise MissingDependencyError("cupy", "cuda13", _PURPOSE)
