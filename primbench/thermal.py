"""Thermal control: warm the GPU into, or let it cool into, the temperature range.

Checked before each specialization (announced, and the time spent is recorded) and again,
silently, before each measured batch, so that a long specialization that heats the GPU
past the range waits for it to cool instead of measuring throttled batches.
"""

from __future__ import annotations

from primbench.device import Device
from primbench.errors import ThermalError
from primbench.settings import Settings
from primbench.state import Thermal

#: Seconds between two temperature reads while cooling.
COOL_POLL_SECS = 0.1
#: Seconds of heating workload between two reads while warming.
HEAT_STEP_SECS = 0.05


class ThermalControl(Thermal):
    """Warming and cooling against a device's temperature sensor."""

    def __init__(self, device: Device, settings: Settings) -> None:
        self.device = device
        self.min_temp = settings.min_gpu_temp
        self.max_temp = settings.max_gpu_temp
        self.max_warming_secs = settings.max_warming_secs
        self.max_cooling_secs = settings.max_cooling_secs
        self.warming_secs = 0.0
        self.cooling_secs = 0.0

    def temperature(self) -> float | None:
        return self.device.temperature()

    def _settle(self) -> None:
        dev = self.device
        temp = dev.temperature()
        if temp is None:
            return
        start = dev.now()
        while temp < self.min_temp:
            waited = dev.now() - start
            if waited > self.max_warming_secs:
                raise ThermalError(
                    f"warming stopped at {temp:g} °C after {waited:.1f} s, below --min-gpu-temp "
                    f"{self.min_temp:g}: lower --min-gpu-temp or raise --max-warming-secs"
                )
            dev.heat(HEAT_STEP_SECS)
            temp = dev.temperature()
            assert temp is not None
        self.warming_secs += dev.now() - start
        start = dev.now()
        while temp > self.max_temp:
            waited = dev.now() - start
            if waited > self.max_cooling_secs:
                raise ThermalError(
                    f"cooling stopped at {temp:g} °C after {waited:.1f} s, above --max-gpu-temp "
                    f"{self.max_temp:g}: raise --max-gpu-temp or --max-cooling-secs"
                )
            dev.sleep(COOL_POLL_SECS)
            temp = dev.temperature()
            assert temp is not None
        self.cooling_secs += dev.now() - start

    def before_specialization(self) -> None:
        self._settle()

    def before_batch(self) -> None:
        self._settle()


def thermal_for(device: Device, settings: Settings) -> Thermal:
    """Thermal control for `device`, or none when monitoring is off or unsupported."""
    if settings.no_monitoring or device.temperature() is None:
        return Thermal()
    return ThermalControl(device, settings)
