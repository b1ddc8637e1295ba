"""AmdSmiMonitor against a fake ``amdsmi`` module with the real package's names and types.

The fake follows amdsmi 7.0 (py-interface/amdsmi_interface.py): IntEnum sensor types and
metrics (HOTSPOT and JUNCTION share a value), parameter checks that reject plain ints,
BDFs spelled "0000:83:00.0", temperatures in whole °C, AmdSmiLibraryException with the
library's status code (2: not supported) for a sensor the GPU lacks, and the lib version
as a dict. Several GPUs, listed in an order that differs from HIP's device order.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from primbench.errors import DeviceError, MissingDependencyError
from primbench.monitoring_amd import SENSORS, AmdSmiMonitor, parse_bdf

AMDSMI_STATUS_INVAL = 1
AMDSMI_STATUS_NOT_SUPPORTED = 2
AMDSMI_STATUS_NOT_INIT = 32
AMDSMI_STATUS_DRIVER_NOT_LOADED = 48


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int) -> None:
        super().__init__(err_code)
        self.err_code = err_code
        self.err_info = {AMDSMI_STATUS_NOT_SUPPORTED: "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported",
                         AMDSMI_STATUS_DRIVER_NOT_LOADED: "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded",
                         AMDSMI_STATUS_NOT_INIT: "AMDSMI_STATUS_NOT_INIT - Device not initialized"}.get(err_code, "?")

    def __str__(self) -> str:
        return f"Error code:\n\t{self.err_code} | {self.err_info}"


class AmdSmiParameterException(AmdSmiException):
    pass


class AmdSmiInitFlags(IntEnum):
    INIT_ALL_PROCESSORS = 0xFFFFFFFF
    INIT_AMD_CPUS = 1 << 0
    INIT_AMD_GPUS = 1 << 1


class AmdSmiTemperatureType(IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2
    HBM_0 = 3
    PLX = 7


class AmdSmiTemperatureMetric(IntEnum):
    CURRENT = 0
    MAX = 1
    MIN = 2
    MAX_HYST = 3
    MIN_HYST = 4
    CRITICAL = 5
    CRITICAL_HYST = 6
    EMERGENCY = 7


class ProcessorHandle:
    """amdsmi's processor handles are opaque ctypes pointers."""

    def __init__(self, gpu: FakeGpu) -> None:
        self.gpu = gpu


@dataclass
class FakeGpu:
    bdf: str
    #: sensor -> {"current": °C, "critical": °C}; a missing sensor is "not supported"
    sensors: dict[str, dict[str, int]] = field(default_factory=lambda: {
        "EDGE": {"current": 41, "critical": 100}, "HOTSPOT": {"current": 48, "critical": 110}})
    uuid: str = "a4ff74a1-0000-1000-80c9-ab1d7e5d4e3b"
    serial: str = "0x7F28C4A1D1E5B3AA"


class FakeAmdSmi:
    """The subset of the amdsmi package the monitor uses."""

    __version__ = "7.0.2"
    AmdSmiException = AmdSmiException
    AmdSmiLibraryException = AmdSmiLibraryException
    AmdSmiParameterException = AmdSmiParameterException
    AmdSmiInitFlags = AmdSmiInitFlags
    AmdSmiTemperatureType = AmdSmiTemperatureType
    AmdSmiTemperatureMetric = AmdSmiTemperatureMetric

    def __init__(self, gpus: list[FakeGpu], *, init_error: int | None = None,
                 lib_version: dict[str, Any] | None = None) -> None:
        self.handles = [ProcessorHandle(g) for g in gpus]
        self.init_error = init_error
        self.init_flags: list[Any] = []
        self.shut_down = 0
        self.calls: list[tuple[str, str, str]] = []
        self.lib_version = lib_version if lib_version is not None else {
            "major": 25, "minor": 3, "release": 0, "build": "25.3.0.0"}

    def _handle(self, h: Any) -> FakeGpu:
        if not self.init_flags:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_INIT)
        if not isinstance(h, ProcessorHandle):
            raise AmdSmiParameterException(h)
        return h.gpu

    def amdsmi_init(self, flag: AmdSmiInitFlags = AmdSmiInitFlags.INIT_AMD_GPUS) -> None:
        if not isinstance(flag, AmdSmiInitFlags):
            raise AmdSmiParameterException(flag)
        if self.init_error is not None:
            raise AmdSmiLibraryException(self.init_error)
        self.init_flags.append(flag)

    def amdsmi_shut_down(self) -> None:
        self.shut_down += 1

    def amdsmi_get_lib_version(self) -> dict[str, Any]:
        if isinstance(self.lib_version, Exception):
            raise self.lib_version
        return self.lib_version

    def amdsmi_get_processor_handles(self) -> list[ProcessorHandle]:
        if not self.init_flags:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_INIT)
        return list(self.handles)

    def amdsmi_get_gpu_device_bdf(self, h: Any) -> str:
        return self._handle(h).bdf

    def amdsmi_get_temp_metric(self, h: Any, sensor_type: Any, metric: Any) -> int:
        gpu = self._handle(h)
        if not isinstance(sensor_type, AmdSmiTemperatureType):
            raise AmdSmiParameterException(sensor_type)
        if not isinstance(metric, AmdSmiTemperatureMetric):
            raise AmdSmiParameterException(metric)
        self.calls.append((gpu.bdf, sensor_type.name, metric.name))
        values = gpu.sensors.get(sensor_type.name)
        if values is None or metric.name.lower() not in values:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED)
        return values[metric.name.lower()]

    def amdsmi_get_gpu_device_uuid(self, h: Any) -> str:
        return self._handle(h).uuid

    def amdsmi_get_gpu_asic_info(self, h: Any) -> dict[str, Any]:
        gpu = self._handle(h)
        return {"market_name": "AMD Instinct MI210", "vendor_id": "0x1002", "asic_serial": gpu.serial,
                "target_graphics_version": "gfx90a", "num_compute_units": 104}

    def amdsmi_get_gpu_driver_info(self, h: Any) -> dict[str, str]:
        self._handle(h)
        return {"driver_name": "amdgpu", "driver_version": "6.12.12", "driver_date": "2015/01/01 00:00"}


def two_gpus() -> list[FakeGpu]:
    # AMD SMI lists c3 first; HIP's device 0 is 83.
    return [FakeGpu("0000:c3:00.0", uuid="uuid-c3", serial="0x00000000000000C3"),
            FakeGpu("0000:83:00.0", uuid="uuid-83", serial="0x0000000000000083")]


# ----------------------------------------------------------------- the PCI address


@pytest.mark.parametrize(("text", "bdf"), [
    ("0000:83:00.0", (0, 0x83, 0, 0)), ("00000000:83:00.0", (0, 0x83, 0, 0)), ("0000:C3:1F.7", (0, 0xC3, 0x1F, 7)),
    ("83:00.0", (0, 0x83, 0, 0)), ("0001:03:00.1", (1, 3, 0, 1)), (" 0000:83:00.0\n", (0, 0x83, 0, 0)),
])
def test_parse_bdf_reads_every_spelling(text: str, bdf: tuple[int, int, int, int]) -> None:
    assert parse_bdf(text) == bdf


@pytest.mark.parametrize("text", ["", "gpu0", "0000:83:00", "0000:83:00.8", "0000:183:00.0"])
def test_parse_bdf_rejects_what_is_not_one(text: str) -> None:
    with pytest.raises(ValueError, match="not a PCI bus id"):
        parse_bdf(text)


@pytest.mark.parametrize("bus_id", ["0000:83:00.0", "00000000:83:00.0", "0000:83:00.0".upper()])
def test_the_gpu_is_found_by_pci_address_not_index(bus_id: str) -> None:
    smi = FakeAmdSmi(two_gpus())
    mon = AmdSmiMonitor(bus_id, amdsmi=smi)
    assert mon.handle is smi.handles[1]
    assert mon.identity() == {"uuid": "uuid-83", "serial": "0x0000000000000083"}
    assert smi.calls[0][0] == "0000:83:00.0"


def test_no_gpu_at_the_address_lists_what_amd_smi_sees() -> None:
    smi = FakeAmdSmi(two_gpus())
    with pytest.raises(DeviceError) as err:
        AmdSmiMonitor("0000:44:00.0", amdsmi=smi)
    msg = str(err.value)
    assert "no GPU at PCI bus id 0000:44:00.0" in msg and "0000:c3:00.0, 0000:83:00.0" in msg
    assert "--no-monitoring" in msg
    assert smi.shut_down == 1  # the library is not left initialized


def test_init_asks_for_amd_gpus_and_failure_is_clear() -> None:
    smi = FakeAmdSmi(two_gpus())
    AmdSmiMonitor("0000:83:00.0", amdsmi=smi)
    assert smi.init_flags == [AmdSmiInitFlags.INIT_AMD_GPUS]
    bad = FakeAmdSmi(two_gpus(), init_error=AMDSMI_STATUS_DRIVER_NOT_LOADED)
    with pytest.raises(DeviceError, match=r"AMD SMI could not start .*Driver not loaded.*--no-monitoring"):
        AmdSmiMonitor("0000:83:00.0", amdsmi=bad)


# ----------------------------------------------------------------- sensor probing (seed: edge, then hotspot)


def test_probe_order_is_the_seeds() -> None:
    assert [name for name, _ in SENSORS] == ["edge", "hotspot"]


def test_edge_is_kept_when_it_reads() -> None:
    smi = FakeAmdSmi([FakeGpu("0000:83:00.0")])
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=smi)
    assert mon.temperature_type == "edge"
    assert smi.calls[0] == ("0000:83:00.0", "EDGE", "CURRENT")
    assert "HOTSPOT" not in [c[1] for c in smi.calls]  # probing stops at the first that reads
    smi.handles[0].gpu.sensors["EDGE"]["current"] = 57
    assert mon.temperature() == 57.0 and isinstance(mon.temperature(), float)
    assert mon.slowdown_temperature() == 100.0


def test_hotspot_when_edge_is_not_supported() -> None:
    gpu = FakeGpu("0000:83:00.0", sensors={"HOTSPOT": {"current": 52, "critical": 110}})
    smi = FakeAmdSmi([gpu])
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=smi)
    assert mon.temperature_type == "hotspot"
    assert [c[1:] for c in smi.calls[:2]] == [("EDGE", "CURRENT"), ("HOTSPOT", "CURRENT")]
    gpu.sensors["HOTSPOT"]["current"] = 66
    assert mon.temperature() == 66.0
    assert mon.slowdown_temperature() == 110.0


@pytest.mark.parametrize("edge", [{"current": 0, "critical": 100}, {"current": 38, "critical": 0}])
def test_an_edge_sensor_that_reads_zero_is_skipped(edge: dict[str, int]) -> None:
    """MI300-class GPUs have no edge sensor: it reads 0, or its limit reads 0 (amd-smi's rule)."""
    gpu = FakeGpu("0000:83:00.0", sensors={"EDGE": edge, "HOTSPOT": {"current": 45, "critical": 105}})
    assert AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi([gpu])).temperature_type == "hotspot"


def test_no_readable_sensor_is_an_error_naming_each() -> None:
    gpu = FakeGpu("0000:83:00.0", sensors={"EDGE": {"current": 0}})
    smi = FakeAmdSmi([gpu])
    with pytest.raises(DeviceError) as err:
        AmdSmiMonitor("0000:83:00.0", amdsmi=smi)
    msg = str(err.value)
    assert "reads no temperature sensor of the GPU at 0000:83:00.0" in msg
    assert "edge: reads 0 °C" in msg
    assert "hotspot: Error code: 2 | AMDSMI_STATUS_NOT_SUPPORTED" in msg
    assert "--no-monitoring" in msg
    assert smi.shut_down == 1


def test_slowdown_unknown_when_the_limit_is_not_supported() -> None:
    gpu = FakeGpu("0000:83:00.0", sensors={"EDGE": {"current": 40}})
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi([gpu]))
    assert mon.temperature_type == "edge" and mon.slowdown_temperature() is None


def test_a_sensor_that_stops_reading_is_a_device_error() -> None:
    gpu = FakeGpu("0000:83:00.0")
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi([gpu]))
    del gpu.sensors["EDGE"]
    with pytest.raises(DeviceError, match="stopped reading the edge temperature"):
        mon.temperature()


# ----------------------------------------------------------------- versions, identity, shutdown


def test_versions() -> None:
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi(two_gpus()))
    assert mon.name == "amdsmi"
    assert mon.version() == "25.3.0"  # as the seed's results.json shows it
    assert mon.driver_version() == "6.12.12"
    old = FakeAmdSmi(two_gpus(), lib_version={"year": 24, "major": 6, "minor": 1, "release": 2, "build": "x"})
    assert AmdSmiMonitor("0000:83:00.0", amdsmi=old).version() == "6.1.2"
    failing = FakeAmdSmi(two_gpus(), lib_version=AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED))  # type: ignore[arg-type]
    assert AmdSmiMonitor("0000:83:00.0", amdsmi=failing).version() == "7.0.2"  # the package's own version


def test_serial_not_available_is_left_out() -> None:
    gpus = [FakeGpu("0000:83:00.0", serial="N/A")]
    assert AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi(gpus)).identity() == {
        "uuid": "a4ff74a1-0000-1000-80c9-ab1d7e5d4e3b"}


def test_close_shuts_the_library_down() -> None:
    smi = FakeAmdSmi(two_gpus())
    AmdSmiMonitor("0000:83:00.0", amdsmi=smi).close()
    assert smi.shut_down == 1


def test_no_clock_reference_on_amd() -> None:
    """No AMD reference clock is claimed (unverified), so the clock check never flags on AMD."""
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=FakeAmdSmi(two_gpus()))
    assert mon.default_sm_clock_mhz() is None and mon.clock_event_reasons() is None
    assert mon.sm_clock_now_mhz() is None  # nor a clock now: the throttle guard checks nothing on AMD


# ----------------------------------------------------------------- loading the module


def test_missing_amdsmi_names_the_rocm_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    with pytest.raises(MissingDependencyError) as err:
        AmdSmiMonitor("0000:83:00.0")
    assert err.value.module == "amdsmi" and "pip install cupy-rocm-7-0 amdsmi" in str(err.value)


def test_amdsmi_without_its_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The real package raises KeyError('libamd_smi.so') on import when ROCm's library is absent.
    pkg = tmp_path / "amdsmi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("_libraries = {}\n_libraries['libamd_smi.so'].amdsmi_init\n")
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DeviceError, match=r"cannot load AMD SMI's library libamd_smi\.so \(KeyError"):
        AmdSmiMonitor("0000:83:00.0")


def test_the_installed_fake_module_is_used_when_none_is_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    smi = FakeAmdSmi(two_gpus())
    monkeypatch.setitem(sys.modules, "amdsmi", smi)
    assert AmdSmiMonitor("0000:83:00.0").amdsmi is smi
