"""NvmlMonitor against a fake NVML module with pynvml's names, types and errors.

The fake holds several GPUs, each known only by NVML's own spelling of its PCI bus id
(8-digit domain, upper-case hex, as ``nvmlDeviceGetPciInfo().busId`` gives it): it is
stricter than real NVML, which also parses other spellings, so the monitor is checked to
pass NVML's form rather than rely on that.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from primbench.clocks import clock_record
from primbench.errors import DeviceError, MissingDependencyError
from primbench.monitoring import NVML_CLOCK_REASONS, NvmlMonitor, nvml_bus_id

# pynvml's values
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_DRIVER_NOT_LOADED = 9
_ERROR_TEXT = {
    NVML_ERROR_UNINITIALIZED: "Uninitialized",
    NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
    NVML_ERROR_NOT_SUPPORTED: "Not Supported",
    NVML_ERROR_NOT_FOUND: "Not Found",
    NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
}
NOT_SUPPORTED = object()  # a fake GPU's answer for a query it does not support


class NVMLError(Exception):
    """pynvml's NVMLError: carries `value`; str() is NVML's error string."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _ERROR_TEXT.get(self.value, f"NVML Error with code {self.value}")


@dataclass
class FakeGpu:
    bus_id: str  # NVML's spelling
    temp: int = 40
    reasons: Any = 0  # clock-event reason mask, or NOT_SUPPORTED
    default_app_clock: Any = 1980
    max_clock: Any = 1980
    sm_clock: Any = 1980  # nvmlDeviceGetClockInfo(NVML_CLOCK_SM): the clock now
    slowdown: Any = 89
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    serial: Any = "1650123456789"
    reads: list[str] = field(default_factory=list)


class FakeNvml:
    """The subset of pynvml the monitor uses, with pynvml's constants."""

    NVMLError = NVMLError
    NVML_TEMPERATURE_GPU = 0
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_GRAPHICS = 0

    def __init__(self, gpus: list[FakeGpu], *, init_error: int | None = None) -> None:
        self.gpus = {g.bus_id: g for g in gpus}
        self.init_error = init_error
        self.initialized = 0

    # library
    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialized += 1

    def nvmlShutdown(self) -> None:
        self.initialized -= 1

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "13.580.82"

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.82.07"

    # devices
    def _check(self, handle: FakeGpu) -> FakeGpu:
        if not self.initialized:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        if not isinstance(handle, FakeGpu):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return handle

    @staticmethod
    def _answer(gpu: FakeGpu, what: str, value: Any) -> Any:
        gpu.reads.append(what)
        if value is NOT_SUPPORTED:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return value

    def nvmlDeviceGetHandleByPciBusId(self, pciBusId: str) -> FakeGpu:
        if not self.initialized:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        if not isinstance(pciBusId, str | bytes):
            raise TypeError("bus id must be str or bytes")
        bus = pciBusId.decode() if isinstance(pciBusId, bytes) else pciBusId
        if bus not in self.gpus:
            raise NVMLError(NVML_ERROR_NOT_FOUND)
        return self.gpus[bus]

    def nvmlDeviceGetTemperature(self, handle: FakeGpu, sensor: int) -> int:
        gpu = self._check(handle)
        if sensor != self.NVML_TEMPERATURE_GPU:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._answer(gpu, "temperature", gpu.temp)

    def nvmlDeviceGetTemperatureThreshold(self, handle: FakeGpu, threshold: int) -> int:
        gpu = self._check(handle)
        if threshold != self.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._answer(gpu, "slowdown", gpu.slowdown)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeGpu) -> int:
        gpu = self._check(handle)
        return self._answer(gpu, "event_reasons", gpu.reasons)

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: FakeGpu) -> int:
        gpu = self._check(handle)
        return self._answer(gpu, "throttle_reasons", gpu.reasons)

    def nvmlDeviceGetDefaultApplicationsClock(self, handle: FakeGpu, type: int) -> int:
        gpu = self._check(handle)
        if type != self.NVML_CLOCK_SM:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._answer(gpu, "default_app_clock", gpu.default_app_clock)

    def nvmlDeviceGetClockInfo(self, handle: FakeGpu, type: int) -> int:
        gpu = self._check(handle)
        if type != self.NVML_CLOCK_SM:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._answer(gpu, "sm_clock", gpu.sm_clock)

    def nvmlDeviceGetMaxClockInfo(self, handle: FakeGpu, type: int) -> int:
        gpu = self._check(handle)
        if type != self.NVML_CLOCK_SM:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return self._answer(gpu, "max_clock", gpu.max_clock)

    def nvmlDeviceGetUUID(self, handle: FakeGpu) -> str:
        gpu = self._check(handle)
        return self._answer(gpu, "uuid", gpu.uuid)

    def nvmlDeviceGetSerial(self, handle: FakeGpu) -> str:
        gpu = self._check(handle)
        return self._answer(gpu, "serial", gpu.serial)


class OldFakeNvml(FakeNvml):
    """pynvml before 12.535: no ...ClocksEventReasons, only ...ClocksThrottleReasons."""

    def __getattribute__(self, name: str) -> Any:
        if name == "nvmlDeviceGetCurrentClocksEventReasons":
            raise AttributeError(name)
        return super().__getattribute__(name)


def three_gpus() -> list[FakeGpu]:
    return [
        FakeGpu("00000000:06:00.0", temp=35, uuid="GPU-aaaaaaaa-0000-0000-0000-000000000006"),
        FakeGpu("00000000:3B:00.0", temp=47, uuid="GPU-bbbbbbbb-0000-0000-0000-00000000003b"),
        FakeGpu("00000001:83:00.0", temp=61, uuid="GPU-cccccccc-0000-0000-0000-000000000183"),
    ]


# ----------------------------------------------------------------- finding the GPU


@pytest.mark.parametrize(
    ("cuda_bus_id", "nvml"),
    [("0000:06:00.0", "00000000:06:00.0"), ("0000:3b:00.0", "00000000:3B:00.0"), ("0001:83:00.0", "00000001:83:00.0"),
     ("00000000:3b:00.0", "00000000:3B:00.0")],
)
def test_nvml_bus_id_widens_the_domain_to_eight_digits(cuda_bus_id: str, nvml: str) -> None:
    assert nvml_bus_id(cuda_bus_id) == nvml


@pytest.mark.parametrize(("cuda_bus_id", "temp"), [("0000:06:00.0", 35), ("0000:3b:00.0", 47), ("0001:83:00.0", 61)])
def test_the_monitor_reads_the_gpu_at_cudas_bus_id(cuda_bus_id: str, temp: int) -> None:
    nvml = FakeNvml(three_gpus())
    mon = NvmlMonitor(cuda_bus_id, nvml=nvml)
    assert mon.temperature() == temp
    assert isinstance(mon.temperature(), float)
    assert mon.temperature_type == "gpu" and mon.name == "nvml"
    assert mon.identity()["uuid"] == mon.handle.uuid


def test_unknown_bus_id_is_a_clear_error() -> None:
    with pytest.raises(DeviceError, match=r"NVML finds no GPU at PCI bus id 0000:99:00\.0 \(Not Found\)"):
        NvmlMonitor("0000:99:00.0", nvml=FakeNvml(three_gpus()))


def test_nvml_that_cannot_start_says_how_to_run_without_it() -> None:
    with pytest.raises(DeviceError, match=r"NVML could not start \(Driver Not Loaded\).*--no-monitoring"):
        NvmlMonitor("0000:06:00.0", nvml=FakeNvml(three_gpus(), init_error=NVML_ERROR_DRIVER_NOT_LOADED))


def test_missing_pynvml_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(MissingDependencyError) as err:
        NvmlMonitor("0000:06:00.0")
    assert err.value.module == "pynvml" and "pip install cupy-cuda13x nvidia-ml-py" in str(err.value)


def test_versions_and_close() -> None:
    nvml = FakeNvml(three_gpus())
    mon = NvmlMonitor("0000:06:00.0", nvml=nvml)
    assert mon.version() == "13.580.82" and mon.driver_version() == "580.82.07"
    mon.close()
    assert nvml.initialized == 0


# ----------------------------------------------------------------- not-supported answers


def test_identity_leaves_out_what_is_not_supported() -> None:
    gpus = three_gpus()
    gpus[0].serial = NOT_SUPPORTED  # GeForce boards have no serial
    mon = NvmlMonitor("0000:06:00.0", nvml=FakeNvml(gpus))
    assert mon.identity() == {"uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000006"}
    assert NvmlMonitor("0000:3b:00.0", nvml=FakeNvml(gpus)).identity()["serial"] == "1650123456789"


def test_default_clock_falls_back_to_the_max_clock_then_none() -> None:
    gpus = three_gpus()
    gpus[0].default_app_clock = 1755
    gpus[1].default_app_clock = NOT_SUPPORTED
    gpus[1].max_clock = 2100
    gpus[2].default_app_clock = gpus[2].max_clock = NOT_SUPPORTED
    nvml = FakeNvml(gpus)
    assert NvmlMonitor("0000:06:00.0", nvml=nvml).default_sm_clock_mhz() == 1755.0
    assert gpus[0].reads == ["default_app_clock"]
    assert NvmlMonitor("0000:3b:00.0", nvml=nvml).default_sm_clock_mhz() == 2100.0
    assert gpus[1].reads == ["default_app_clock", "max_clock"]
    assert NvmlMonitor("0001:83:00.0", nvml=nvml).default_sm_clock_mhz() is None


def test_the_sm_clock_now_is_nvmls_clock_info_or_none() -> None:
    gpus = three_gpus()
    gpus[0].sm_clock = 1410
    gpus[1].sm_clock = NOT_SUPPORTED
    nvml = FakeNvml(gpus)
    assert NvmlMonitor("0000:06:00.0", nvml=nvml).sm_clock_now_mhz() == 1410.0
    assert gpus[0].reads == ["sm_clock"]
    assert NvmlMonitor("0000:3b:00.0", nvml=nvml).sm_clock_now_mhz() is None


def test_slowdown_temperature_or_none() -> None:
    gpus = three_gpus()
    gpus[1].slowdown = NOT_SUPPORTED
    nvml = FakeNvml(gpus)
    assert NvmlMonitor("0000:06:00.0", nvml=nvml).slowdown_temperature() == 89.0
    assert NvmlMonitor("0000:3b:00.0", nvml=nvml).slowdown_temperature() is None


# ----------------------------------------------------------------- clock-event reasons


def test_clock_event_reasons_are_decoded_bit_by_bit() -> None:
    gpus = three_gpus()
    gpus[0].reasons = 0x1 | 0x4 | 0x20 | 0x100
    gpus[1].reasons = 0
    gpus[2].reasons = sum(NVML_CLOCK_REASONS)
    nvml = FakeNvml(gpus)
    assert NvmlMonitor("0000:06:00.0", nvml=nvml).clock_event_reasons() == [
        "gpu_idle", "sw_power_cap", "sw_thermal_slowdown", "display_clock_setting"]
    assert NvmlMonitor("0000:3b:00.0", nvml=nvml).clock_event_reasons() == []
    assert NvmlMonitor("0001:83:00.0", nvml=nvml).clock_event_reasons() == list(NVML_CLOCK_REASONS.values())


def test_unknown_reason_bits_are_ignored() -> None:
    gpus = three_gpus()
    gpus[0].reasons = 0x8 | 0x10000
    assert NvmlMonitor("0000:06:00.0", nvml=FakeNvml(gpus)).clock_event_reasons() == ["hw_slowdown"]


def test_older_pynvml_uses_the_throttle_reasons_call() -> None:
    gpus = three_gpus()
    gpus[0].reasons = 0x40
    nvml = OldFakeNvml(gpus)
    assert NvmlMonitor("0000:06:00.0", nvml=nvml).clock_event_reasons() == ["hw_thermal_slowdown"]
    assert gpus[0].reads == ["throttle_reasons"]


def test_reasons_not_supported_is_none() -> None:
    gpus = three_gpus()
    gpus[0].reasons = NOT_SUPPORTED
    assert NvmlMonitor("0000:06:00.0", nvml=FakeNvml(gpus)).clock_event_reasons() is None


# ----------------------------------------------------------------- throttle detection (the average-SM-clock check)


def sample(secs: float, mhz: float) -> tuple[int, int]:
    return round(secs * 1e9), round(secs * mhz * 1e6)


def test_clock_record_from_the_monitor_flags_throttling() -> None:
    gpus = three_gpus()
    nvml = FakeNvml(gpus)
    mon = NvmlMonitor("0000:06:00.0", nvml=nvml)
    gpus[0].reasons = 0x1  # idle at the start
    start_reasons = mon.clock_event_reasons()
    gpus[0].reasons = 0x20 | 0x4 | 0x2  # thermal and power capped at the end
    end_reasons = mon.clock_event_reasons()
    # 1500 MHz on average over 30 s against the 1980 MHz default.
    start, end = (10**9, 0), (31 * 10**9, 30 * 1500 * 10**6)
    rec = clock_record(start, end, mon.default_sm_clock_mhz(), start_reasons, end_reasons, 0.9)
    assert rec is not None
    assert rec["average_mhz"] == pytest.approx(1500)
    assert rec["default_mhz"] == 1980
    assert rec["fraction_of_default"] == pytest.approx(1500 / 1980)
    assert rec["below_expected"] is True
    assert rec["clock_event_reasons"] == {"start": ["gpu_idle"],
                                          "end": ["applications_clocks_setting", "sw_power_cap", "sw_thermal_slowdown"]}
    # Idle and application clocks are not throttling; power and thermal caps are.
    assert rec["throttle_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]


def test_clock_record_at_the_default_clock_is_not_flagged() -> None:
    rec = clock_record(sample(1.0, 1978), sample(11.0, 1978), 1980.0, [], [], 0.9)
    assert rec is not None
    assert rec["average_mhz"] == pytest.approx(1978, abs=1e-6)
    assert rec["below_expected"] is False and rec["throttle_reasons"] == []


def test_clock_record_without_reasons_or_default() -> None:
    rec = clock_record(sample(1.0, 1500), sample(2.0, 1500), None, None, None, 0.9)
    assert rec is not None
    assert rec["fraction_of_default"] is None and rec["below_expected"] is False
    assert rec["clock_event_reasons"] == {"start": None, "end": None} and rec["throttle_reasons"] == []
    assert clock_record(None, sample(1, 1), 1980.0, [], [], 0.9) is None
    # No time passed (or a counter that went backwards): no average.
    assert clock_record(sample(1.0, 1500), sample(1.0, 1500), 1980.0, [], [], 0.9)["average_mhz"] is None


def test_the_default_clock_is_read_once_per_monitor() -> None:
    """Every round asks for the default clock (0.7 ms a read on an H100): NVML is asked once,
    an unsupported answer (None) included."""
    gpus = three_gpus()
    gpus[0].default_app_clock = 1755
    gpus[2].default_app_clock = gpus[2].max_clock = NOT_SUPPORTED
    nvml = FakeNvml(gpus)
    mon = NvmlMonitor("0000:06:00.0", nvml=nvml)
    assert [mon.default_sm_clock_mhz() for _ in range(3)] == [1755.0] * 3
    assert gpus[0].reads == ["default_app_clock"]
    none = NvmlMonitor("0001:83:00.0", nvml=nvml)
    assert none.default_sm_clock_mhz() is None and none.default_sm_clock_mhz() is None
    assert gpus[2].reads == ["default_app_clock", "max_clock"]
