"""GPU monitoring on AMD: temperatures and identity through AMD SMI (the ``amdsmi`` module).

As the C++ primbench says: at startup the sensors are probed in priority order, edge then hotspot,
and the first that returns a reading is kept for warming, cooling and reporting
(``context.general.temperature_type``); if none can be read, monitoring stops with an
error. The GPU is found by its PCI address (bus/device/function), never by index: HIP's
device order and AMD SMI's need not agree.

``amdsmi`` is imported here, lazily, and only when a run asks for monitoring on HIP. Tests
pass a fake module with the same names (`AmdSmiMonitor(bus_id, amdsmi=fake)`).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from primbench.errors import DeviceError, MissingDependencyError
from primbench.monitoring import Monitor

#: Sensors in the order they are probed, with their ``AmdSmiTemperatureType`` member names.
SENSORS: tuple[tuple[str, str], ...] = (("edge", "EDGE"), ("hotspot", "HOTSPOT"))

_BDF = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def parse_bdf(bus_id: str) -> tuple[int, int, int, int]:
    """(domain, bus, device, function) of a PCI address in any of HIP's, NVML's or AMD SMI's
    spellings: "0000:83:00.0", "00000000:83:00.0", "83:00.0" (domain 0), any case."""
    m = _BDF.match(bus_id.strip())
    if not m:
        raise ValueError(f"not a PCI bus id: {bus_id!r}")
    domain, bus, dev, fn = m.groups()
    return int(domain or "0", 16), int(bus, 16), int(dev, 16), int(fn, 16)


def _load_amdsmi() -> Any:
    try:
        import amdsmi
    except ImportError:
        raise MissingDependencyError("amdsmi", "rocm", "GPU monitoring on AMD (or pass --no-monitoring)") from None
    except Exception as exc:  # amdsmi raises KeyError or OSError when libamd_smi.so is missing
        raise DeviceError(
            f"the amdsmi module is installed but cannot load AMD SMI's library libamd_smi.so "
            f"({type(exc).__name__}: {exc}): install ROCm's amd-smi (or match the amdsmi package to the "
            f"ROCm release), or pass --no-monitoring"
        ) from None
    return amdsmi


class AmdSmiMonitor(Monitor):
    """AMD SMI on the GPU at `pci_bus_id`; sensor ``edge`` or ``hotspot`` after probing."""

    name = "amdsmi"

    def __init__(self, pci_bus_id: str, amdsmi: Any = None) -> None:
        self.amdsmi = amdsmi if amdsmi is not None else _load_amdsmi()
        self.pci_bus_id = pci_bus_id
        self._error = getattr(self.amdsmi, "AmdSmiException", Exception)
        smi = self.amdsmi
        flags = getattr(smi, "AmdSmiInitFlags", None)
        try:
            if flags is not None and hasattr(flags, "INIT_AMD_GPUS"):
                smi.amdsmi_init(flags.INIT_AMD_GPUS)
            else:
                smi.amdsmi_init()
        except self._error as exc:
            raise DeviceError(
                f"AMD SMI could not start ({_one_line(exc)}); pass --no-monitoring to run without it"
            ) from None
        try:
            self.handle = self._find(pci_bus_id)
            self.temperature_type, self._sensor = self._probe()
        except BaseException:
            self.close()
            raise

    # ----- setup

    def _find(self, pci_bus_id: str) -> Any:
        smi = self.amdsmi
        try:
            want = parse_bdf(pci_bus_id)
        except ValueError as exc:
            raise DeviceError(f"AMD SMI cannot look up the GPU: {exc}") from None
        try:
            handles = list(smi.amdsmi_get_processor_handles())
        except self._error as exc:
            raise DeviceError(
                f"AMD SMI lists no GPUs ({_one_line(exc)}); pass --no-monitoring to run without it"
            ) from None
        seen = []
        for handle in handles:
            try:
                bdf = str(smi.amdsmi_get_gpu_device_bdf(handle))
            except self._error:
                continue
            seen.append(bdf)
            try:
                if parse_bdf(bdf) == want:
                    return handle
            except ValueError:
                continue
        raise DeviceError(
            f"AMD SMI finds no GPU at PCI bus id {pci_bus_id} (it sees {', '.join(seen) or 'none'}); "
            "pass --no-monitoring to run without it"
        )

    def _read(self, sensor: Any, metric: str) -> float:
        smi = self.amdsmi
        return float(smi.amdsmi_get_temp_metric(self.handle, sensor, getattr(smi.AmdSmiTemperatureMetric, metric)))

    def _probe(self) -> tuple[str, Any]:
        """The first sensor, in the C++ primbench's order, that returns a reading."""
        types = self.amdsmi.AmdSmiTemperatureType
        why: list[str] = []
        for name, member in SENSORS:
            sensor = getattr(types, member, None)
            if sensor is None:
                why.append(f"{name}: this amdsmi has no AmdSmiTemperatureType.{member}")
                continue
            try:
                value = self._read(sensor, "CURRENT")
            except self._error as exc:
                why.append(f"{name}: {_one_line(exc)}")
                continue
            if value <= 0:
                why.append(f"{name}: reads {value:g} °C (no sensor)")
                continue
            # amd-smi's own rule: a sensor whose limit reads 0 is not there (edge on MI300).
            if self._limit(sensor) == 0:
                why.append(f"{name}: its limit reads 0 (no sensor)")
                continue
            return name, sensor
        raise DeviceError(
            f"AMD SMI reads no temperature sensor of the GPU at {self.pci_bus_id} ({'; '.join(why)}): "
            "pass --no-monitoring to run without temperature control"
        )

    def _limit(self, sensor: Any) -> float | None:
        try:
            return self._read(sensor, "CRITICAL")
        except (self._error, AttributeError):
            return None

    # ----- Monitor

    def version(self) -> str:
        smi = self.amdsmi
        try:
            v = smi.amdsmi_get_lib_version()
        except (self._error, AttributeError):
            v = None
        if isinstance(v, dict) and "major" in v:
            return ".".join(str(v[k]) for k in ("major", "minor", "release") if k in v)
        return str(getattr(smi, "__version__", "unknown"))

    def driver_version(self) -> str:
        """The amdgpu kernel driver's version (``backend.kernel_driver_version``)."""
        try:
            info = self.amdsmi.amdsmi_get_gpu_driver_info(self.handle)
        except (self._error, AttributeError):
            return "unknown"
        value = info.get("driver_version") if isinstance(info, dict) else None
        return str(value) if value and value != "N/A" else "unknown"

    def temperature(self) -> float:
        try:
            return self._read(self._sensor, "CURRENT")
        except self._error as exc:
            raise DeviceError(
                f"AMD SMI stopped reading the {self.temperature_type} temperature ({_one_line(exc)})"
            ) from None

    def slowdown_temperature(self) -> float | None:
        """The chosen sensor's critical limit, which amd-smi reports as its slowdown limit."""
        value = self._limit(self._sensor)
        return value if value else None

    def identity(self) -> dict[str, str]:
        smi = self.amdsmi
        out: dict[str, str] = {}
        try:
            uuid = smi.amdsmi_get_gpu_device_uuid(self.handle)
        except (self._error, AttributeError):
            uuid = None
        if uuid:
            out["uuid"] = str(uuid)
        try:
            asic = smi.amdsmi_get_gpu_asic_info(self.handle)
        except (self._error, AttributeError):
            asic = None
        serial = asic.get("asic_serial") if isinstance(asic, dict) else None
        if serial and serial != "N/A":
            out["serial"] = str(serial)
        return out

    def energy_joules(self) -> float | None:
        """``amdsmi_get_energy_count``: its accumulator (``energy_accumulator``; ``power`` in older
        AMD SMI) times ``counter_resolution`` (microjoules per count), in joules."""
        try:
            info = self.amdsmi.amdsmi_get_energy_count(self.handle)
        except (self._error, AttributeError):
            return None
        if not isinstance(info, dict):
            return None
        count: Any = info.get("energy_accumulator", info.get("power"))
        resolution: Any = info.get("counter_resolution")
        try:
            return float(count) * float(resolution) / 1e6
        except (TypeError, ValueError):
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # shutting down is best effort
            self.amdsmi.amdsmi_shut_down()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
