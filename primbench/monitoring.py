"""GPU monitoring: temperatures, identity and clock state through NVML (CUDA) or AMD SMI (HIP).

The monitor reads the same physical GPU the benchmark runs on: it is found by PCI bus id,
never by index. The libraries are imported here, lazily, and only when a run asks for them.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from abc import ABC, abstractmethod
from typing import Any

from primbench.errors import DeviceError, MissingDependencyError


class Monitor(ABC):
    """What the harness reads from a GPU's management library."""

    name: str
    temperature_type: str

    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def temperature(self) -> float: ...

    def identity(self) -> dict[str, str]:
        """Physical identity: ``uuid`` and ``serial`` where the library knows them."""
        return {}

    def default_sm_clock_mhz(self) -> float | None:
        return None

    def clock_event_reasons(self) -> list[str] | None:
        """Why clocks are held down right now (empty list: nothing), None if unsupported."""
        return None

    def slowdown_temperature(self) -> float | None:
        """Temperature at which the GPU starts to throttle, if the library says."""
        return None

    def sm_clock_now_mhz(self) -> float | None:
        """The SM clock now, in MHz, None if unsupported."""
        return None

    def energy_joules(self) -> float | None:
        """The board's cumulative energy counter in joules (`primbench.energy`), None if unsupported."""
        return None

    def power_limit_watts(self) -> float | None:
        """The board's enforced power limit in watts, None if unknown."""
        return None

    def power_watts(self) -> float | None:
        """The board's power draw now, in watts (NVML's averaged sample), None if unsupported."""
        return None

    def close(self) -> None:  # noqa: B027
        pass


# NVML clock-event reason bits (nvml.h, nvmlClocksEventReason*).
NVML_CLOCK_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
#: Reasons that mean the clock was held below what the workload asked for.
NVML_THROTTLING = {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                   "hw_power_brake_slowdown"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_bus_id(cuda_bus_id: str) -> str:
    """NVML writes the PCI domain with 8 hex digits, CUDA with 4: ``00000000:00:06.0``."""
    domain, _, rest = cuda_bus_id.partition(":")
    return f"{int(domain, 16):08x}:{rest}".upper() if rest else cuda_bus_id.upper()


class NvmlMonitor(Monitor):
    """NVML through nvidia-ml-py (`pynvml`); sensor ``gpu``, as the C++ primbench does for CUDA."""

    name = "nvml"
    temperature_type = "gpu"

    def __init__(self, pci_bus_id: str, nvml: Any = None) -> None:
        if nvml is None:
            try:
                nvml = importlib.import_module("pynvml")
            except ImportError:
                raise MissingDependencyError("pynvml", "cuda13", "GPU monitoring (or pass --no-monitoring)") from None
        self.nvml = nvml
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise DeviceError(f"NVML could not start ({exc}); pass --no-monitoring to run without it") from None
        try:
            self.handle = nvml.nvmlDeviceGetHandleByPciBusId(nvml_bus_id(pci_bus_id))
        except nvml.NVMLError as exc:
            raise DeviceError(f"NVML finds no GPU at PCI bus id {pci_bus_id} ({exc})") from None

    def _try(self, fn: str, *args: Any) -> Any:
        try:
            return getattr(self.nvml, fn)(self.handle, *args)
        except (self.nvml.NVMLError, AttributeError):
            return None

    def version(self) -> str:
        return _text(self.nvml.nvmlSystemGetNVMLVersion())

    def driver_version(self) -> str:
        return _text(self.nvml.nvmlSystemGetDriverVersion())

    def temperature(self) -> float:
        return float(self.nvml.nvmlDeviceGetTemperature(self.handle, self.nvml.NVML_TEMPERATURE_GPU))

    def identity(self) -> dict[str, str]:
        out = {}
        for key, fn in (("uuid", "nvmlDeviceGetUUID"), ("serial", "nvmlDeviceGetSerial")):
            value = self._try(fn)
            if value:
                out[key] = _text(value)
        return out

    def default_sm_clock_mhz(self) -> float | None:
        """The default applications SM clock (else the maximum), read once: it does not change
        during a run, and every round asks for it (0.7 ms a read on an H100)."""
        return self._default_sm_clock

    @functools.cached_property
    def _default_sm_clock(self) -> float | None:
        nvml = self.nvml
        for fn in ("nvmlDeviceGetDefaultApplicationsClock", "nvmlDeviceGetMaxClockInfo"):
            value = self._try(fn, nvml.NVML_CLOCK_SM)
            if value:
                return float(value)
        return None

    def sm_clock_now_mhz(self) -> float | None:
        """``nvmlDeviceGetClockInfo(NVML_CLOCK_SM)``: the SM clock now."""
        value = self._try("nvmlDeviceGetClockInfo", self.nvml.NVML_CLOCK_SM)
        return float(value) if value else None

    def clock_event_reasons(self) -> list[str] | None:
        mask = self._try("nvmlDeviceGetCurrentClocksEventReasons")
        if mask is None:
            mask = self._try("nvmlDeviceGetCurrentClocksThrottleReasons")
        if mask is None:
            return None
        return [name for bit, name in NVML_CLOCK_REASONS.items() if mask & bit]

    def slowdown_temperature(self) -> float | None:
        value = self._try("nvmlDeviceGetTemperatureThreshold", self.nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
        return float(value) if value else None

    def energy_joules(self) -> float | None:
        """``nvmlDeviceGetTotalEnergyConsumption``: millijoules since the driver loaded (Volta on)."""
        value = self._try("nvmlDeviceGetTotalEnergyConsumption")
        return float(value) / 1000.0 if value is not None else None

    def power_limit_watts(self) -> float | None:
        """``nvmlDeviceGetEnforcedPowerLimit``, milliwatts (700 W on the H200)."""
        value = self._try("nvmlDeviceGetEnforcedPowerLimit")
        return float(value) / 1000.0 if value else None

    def power_watts(self) -> float | None:
        """``nvmlDeviceGetPowerUsage``, milliwatts."""
        value = self._try("nvmlDeviceGetPowerUsage")
        return float(value) / 1000.0 if value is not None else None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.nvml.nvmlShutdown()
