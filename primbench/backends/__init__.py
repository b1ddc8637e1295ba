"""GPU backends. Imported only when a benchmark runs: this is where CuPy is loaded."""

from __future__ import annotations

from primbench.device import Device
from primbench.errors import DeviceError, MissingDependencyError


def open_backend(index: int | None, *, monitoring: bool) -> Device:
    """The backend for the installed CuPy build (CUDA or ROCm) on device `index`."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "cupy", "cuda13", "running benchmarks on a GPU (extras: cuda12, cuda13 or rocm)"
        ) from None
    from primbench.backends.cupy_backend import CupyDevice

    try:
        return CupyDevice(index, monitoring=monitoring)
    except DeviceError:
        raise
    except Exception as exc:  # the runtime's own errors: no driver, no device, ...
        raise DeviceError(f"no usable GPU: {type(exc).__name__}: {exc}") from exc
