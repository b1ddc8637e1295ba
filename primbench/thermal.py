"""Thermal control: warm the GPU into, or let it cool into, the temperature range.

When: warming before each specialization; cooling before each specialization and again,
silently, before each measured batch. Batches run back to back, so a GPU warmed at the
start of a specialization is kept warm by the measurement itself, and a heating workload
between measured batches would only disturb them; a GPU that overheats mid-run must wait,
because throttled batches are exactly the noise this avoids.

Defaults ("auto") come from measurements on an H200 (tests/benchmarks/loop/README.md): from
an idle GPU at 43 °C, a 1 MiB copy's and a 1 MiB ``cp.sum``'s time per call held within
0.1 % of their plateau from the first batch on, while the load took the GPU to 47 °C; the
former auto warming (toward 50 °C, stopping on a plateau) spent 3.6-8.7 s per run and
bought nothing measurable, and A/A suites without it pass compare as often. Auto:

* minimum: no warming (a floor of `AUTO_MIN_C`); the temperature at the start of the run
  and the highest one reached are recorded.
* maximum: `AUTO_MARGIN_C` below the GPU's slowdown temperature when the monitor knows it
  (89 °C on the H200, so 79 °C), else `AUTO_MAX_FALLBACK_C`.

Explicit ``--min-gpu-temp`` / ``--max-gpu-temp`` behave as the C++ primbench says: reach the range
or abort after ``--max-warming-secs`` / ``--max-cooling-secs`` with a message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from primbench.device import Device
from primbench.errors import ThermalError
from primbench.settings import Settings
from primbench.state import Thermal

COOL_POLL_SECS = 0.1
HEAT_STEP_SECS = 0.05
AUTO_MIN_C = 0.0  # auto: no warming
AUTO_MARGIN_C = 10.0
AUTO_MAX_FALLBACK_C = 80.0


class ThermalControl(Thermal):
    """Warming and cooling against a device's temperature sensor."""

    def __init__(self, device: Device, settings: Settings, slowdown_c: float | None = None,
                 notify: Callable[[str], object] | None = None) -> None:
        self.device = device
        self.notify = notify  # told when warming or cooling starts and ends (the terminal shows it)
        self.auto_min = settings.min_gpu_temp is None
        self.auto_max = settings.max_gpu_temp is None
        self.min_temp = AUTO_MIN_C if self.auto_min else float(settings.min_gpu_temp)  # type: ignore[arg-type]
        if self.auto_max:
            self.max_temp = slowdown_c - AUTO_MARGIN_C if slowdown_c else AUTO_MAX_FALLBACK_C
        else:
            self.max_temp = float(settings.max_gpu_temp)  # type: ignore[arg-type]
        self.min_temp = min(self.min_temp, self.max_temp)
        self.max_warming_secs = settings.max_warming_secs
        self.max_cooling_secs = settings.max_cooling_secs
        self.warming_secs = 0.0
        self.cooling_secs = 0.0
        self.start_temp: float | None = None  # the first reading
        self.highest_temp: float | None = None  # the highest reading before a specialization

    def temperature(self) -> float | None:
        return self.device.temperature()

    def _step(self, wait: Callable[[float], object], secs: float, temp: float) -> float:
        """Heat or idle for `secs`, then read the temperature (the last one if it cannot)."""
        wait(secs)
        return self.device.temperature() or temp

    def _gave_up(self, kind: str, temp: float, waited: float) -> ThermalError:
        """The error once warming or cooling ran past its limit: where it stopped, what to set."""
        if kind == "warming":
            bound = f"below --min-gpu-temp {self.min_temp:g}"
            advice = "lower --min-gpu-temp or raise --max-warming-secs"
        else:
            bound = f"above --max-gpu-temp {self.max_temp:g}"
            advice = "raise --max-gpu-temp or --max-cooling-secs"
        return ThermalError(f"{kind} stopped at {temp:g} °C after {waited:.1f} s, {bound}: {advice}")

    def _warm(self, temp: float) -> float:
        dev = self.device
        start = dev.now()
        target = self.min_temp
        if temp < target and self.notify is not None:
            self.notify(f"warming from {temp:.0f} °C to {target:.0f} °C")
        first = temp
        while temp < target:
            waited = dev.now() - start
            if waited > self.max_warming_secs:
                raise self._gave_up("warming", temp, waited)
            temp = self._step(dev.heat, HEAT_STEP_SECS, temp)
        self.warming_secs += dev.now() - start
        if first < target and self.notify is not None:
            self.notify(f"warmed to {temp:.0f} °C in {dev.now() - start:.1f} s")
        return temp

    def _cool(self, temp: float) -> None:
        dev = self.device
        start = dev.now()
        if temp > self.max_temp and self.notify is not None:
            self.notify(f"cooling from {temp:.0f} °C to {self.max_temp:.0f} °C")
        while temp > self.max_temp:
            waited = dev.now() - start
            if waited > self.max_cooling_secs:
                raise self._gave_up("cooling", temp, waited)
            temp = self._step(dev.sleep, COOL_POLL_SECS, temp)
        self.cooling_secs += dev.now() - start

    def before_specialization(self) -> None:
        temp = self.device.temperature()
        if temp is None:
            return
        if self.start_temp is None:
            self.start_temp = temp
        temp = self._warm(temp)
        self.highest_temp = temp if self.highest_temp is None else max(self.highest_temp, temp)
        self._cool(temp)

    def before_batch(self) -> None:
        temp = self.device.temperature()
        if temp is not None and temp > self.max_temp:
            self._cool(temp)

    def record(self) -> dict[str, Any]:
        """``context.general.thermal``: the effective range and the time spent in it."""
        return {
            "min_gpu_temp": self.min_temp,
            "min_mode": "auto" if self.auto_min else "explicit",
            "max_gpu_temp": self.max_temp,
            "max_mode": "auto" if self.auto_max else "explicit",
            "warming_secs": self.warming_secs,
            "cooling_secs": self.cooling_secs,
            "start_gpu_temp": self.start_temp,
            "highest_gpu_temp": self.highest_temp,
        }


def thermal_for(device: Device, settings: Settings, notify: Callable[[str], object] | None = None) -> Thermal:
    """Thermal control for `device`, or none when monitoring is off or unsupported; `notify`
    hears when warming or cooling starts and ends."""
    if settings.no_monitoring or device.temperature() is None:
        return Thermal()
    return ThermalControl(device, settings, device.slowdown_temperature(), notify)
