"""Thermal control against the fake device: warming, cooling, their timeouts, the auto
range for datacenter GPUs, and monitoring turned off.

The fake's time is virtual: `heat(s)` and `sleep(s)` advance it by exactly `s`, warming at
`heat_per_sec` (up to `max_temp`), cooling at `cool_per_sec` (down to `idle_temp`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from primbench.errors import ThermalError
from primbench.settings import Settings
from primbench.state import Thermal
from primbench.thermal import (
    AUTO_MARGIN_C,
    AUTO_MAX_FALLBACK_C,
    AUTO_MIN_C,
    COOL_POLL_SECS,
    HEAT_STEP_SECS,
    ThermalControl,
    thermal_for,
)
from tests.fakes import FakeDevice


def explicit(min_c: float = 50, max_c: float = 60, **kw: Any) -> Settings:
    return Settings(min_gpu_temp=min_c, max_gpu_temp=max_c, **kw)


# ----------------------------------------------------------------- explicit range (the seed)


def test_explicit_warming_reaches_the_range_and_stops_there() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=2)
    tc = ThermalControl(dev, explicit(50, 60))
    tc.before_specialization()
    assert 50 <= dev.temp < 50 + 2 * HEAT_STEP_SECS + 1e-9  # stops at the first read in range
    assert dev.heated_secs == pytest.approx(5, abs=2 * HEAT_STEP_SECS)
    assert dev.slept_secs == 0
    assert tc.warming_secs == pytest.approx(dev.heated_secs)
    assert tc.record() == {
        "min_gpu_temp": 50.0, "min_mode": "explicit", "max_gpu_temp": 60.0, "max_mode": "explicit",
        "warming_secs": tc.warming_secs, "cooling_secs": 0.0, "start_gpu_temp": 40,
        "highest_gpu_temp": tc.highest_temp,
    }
    assert tc.highest_temp is not None and tc.highest_temp >= 50


def test_explicit_warming_timeout_names_the_temperature_and_what_to_set() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=2, max_temp=45)  # this GPU levels off at 45 °C
    tc = ThermalControl(dev, explicit(50, 60, max_warming_secs=5))
    with pytest.raises(ThermalError) as err:
        tc.before_specialization()
    msg = str(err.value)
    assert "45 °C" in msg and "--min-gpu-temp 50" in msg
    assert "lower --min-gpu-temp or raise --max-warming-secs" in msg
    assert 5 < dev.heated_secs <= 5 + 2 * HEAT_STEP_SECS  # gave up just after the limit


def test_explicit_warming_within_the_limit_does_not_abort() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=1)
    ThermalControl(dev, explicit(50, 60, max_warming_secs=11)).before_specialization()
    assert dev.temp >= 50


def test_cooling_waits_without_heating_until_in_range() -> None:
    dev = FakeDevice(temperature=70, idle_temp=35, cool_per_sec=2)
    tc = ThermalControl(dev, explicit(50, 60))
    tc.before_specialization()
    assert 60 - 2 * COOL_POLL_SECS <= dev.temp <= 60
    assert dev.heated_secs == 0
    assert dev.slept_secs == pytest.approx(5, abs=2 * COOL_POLL_SECS)
    assert tc.cooling_secs == pytest.approx(dev.slept_secs)


def test_cooling_timeout_names_the_temperature_and_what_to_set() -> None:
    dev = FakeDevice(temperature=70, idle_temp=65, cool_per_sec=2)  # never gets below 65 °C
    tc = ThermalControl(dev, explicit(50, 60, max_cooling_secs=3))
    with pytest.raises(ThermalError) as err:
        tc.before_specialization()
    msg = str(err.value)
    assert "65 °C" in msg and "--max-gpu-temp 60" in msg
    assert "raise --max-gpu-temp or --max-cooling-secs" in msg
    assert 3 < dev.slept_secs <= 3 + 2 * COOL_POLL_SECS


def test_before_batch_only_cools() -> None:
    cold = FakeDevice(temperature=40)
    ThermalControl(cold, explicit(50, 60)).before_batch()
    assert cold.heated_secs == 0 and cold.slept_secs == 0 and cold.temp == 40  # no warming between batches

    hot = FakeDevice(temperature=68, cool_per_sec=2)
    ThermalControl(hot, explicit(50, 60)).before_batch()
    assert hot.temp <= 60 and hot.heated_secs == 0

    hot_timeout = FakeDevice(temperature=68, idle_temp=66)
    with pytest.raises(ThermalError, match="--max-cooling-secs"):
        ThermalControl(hot_timeout, explicit(50, 60, max_cooling_secs=1)).before_batch()


def test_in_range_does_nothing() -> None:
    dev = FakeDevice(temperature=55)
    tc = ThermalControl(dev, explicit(50, 60))
    tc.before_specialization()
    tc.before_batch()
    assert dev.heated_secs == 0 and dev.slept_secs == 0 and dev.t == 0


# ----------------------------------------------------------------- auto range (datacenter GPUs)


def test_auto_minimum_does_not_warm_and_records_the_temperatures() -> None:
    # An H200-like GPU idling at 40 °C: auto never heats it (kernel times hold from the first
    # batch there), and records where the run started and the highest reading.
    dev = FakeDevice(temperature=40, heat_per_sec=2, max_temp=45, cool_per_sec=1)
    tc = ThermalControl(dev, Settings())
    tc.before_specialization()
    assert dev.heated_secs == 0 and tc.warming_secs == 0
    dev.temp = 44  # the measurement itself warmed it
    tc.before_specialization()
    record = tc.record()
    assert record["min_mode"] == "auto" and record["min_gpu_temp"] == AUTO_MIN_C
    assert (record["start_gpu_temp"], record["highest_gpu_temp"]) == (40, 44)


def test_explicit_minimum_still_warms_under_an_auto_maximum() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=2)
    tc = ThermalControl(dev, Settings(min_gpu_temp=50))
    tc.before_specialization()
    assert 50 <= dev.temp < 51 and tc.warming_secs > 0
    assert tc.record()["start_gpu_temp"] == 40 and tc.record()["highest_gpu_temp"] >= 50


@pytest.mark.parametrize(("slowdown", "max_c"), [(89.0, 89.0 - AUTO_MARGIN_C), (None, AUTO_MAX_FALLBACK_C)])
def test_auto_maximum_is_below_the_slowdown_temperature(slowdown: float | None, max_c: float) -> None:
    dev = FakeDevice(temperature=40, slowdown=slowdown)
    tc = thermal_for(dev, Settings())
    assert isinstance(tc, ThermalControl)
    assert tc.max_temp == max_c
    assert tc.record()["max_mode"] == "auto"


def test_auto_maximum_cools_a_gpu_near_its_slowdown() -> None:
    dev = FakeDevice(temperature=85, slowdown=89, cool_per_sec=2)
    tc = thermal_for(dev, Settings())
    tc.before_specialization()
    assert dev.temp <= 79 and dev.heated_secs == 0


def test_explicit_minimum_never_above_a_low_auto_maximum() -> None:
    dev = FakeDevice(temperature=40, slowdown=55)  # maximum 45 °C
    tc = thermal_for(dev, Settings(min_gpu_temp=50))
    assert isinstance(tc, ThermalControl)
    assert tc.max_temp == 45 and tc.min_temp == 45


def test_explicit_maximum_with_auto_minimum() -> None:
    dev = FakeDevice(temperature=40, slowdown=89)
    tc = thermal_for(dev, Settings(max_gpu_temp=70))
    assert isinstance(tc, ThermalControl)
    assert (tc.max_temp, tc.min_temp) == (70, AUTO_MIN_C)
    assert tc.record()["max_mode"] == "explicit" and tc.record()["min_mode"] == "auto"


# ----------------------------------------------------------------- monitoring off


def test_no_thermal_control_without_monitoring_or_sensor() -> None:
    assert type(thermal_for(FakeDevice(temperature=40), Settings(no_monitoring=True))) is Thermal
    assert type(thermal_for(FakeDevice(temperature=None), Settings())) is Thermal
    assert Thermal().record() is None


class MonitoredFake(FakeDevice):
    """The fake with the monitoring fields a real backend reports."""

    def context(self) -> dict[str, Any]:
        return {**super().context(), "monitoring": {"name": "fakesmi", "version": "1.0"}, "temperature_type": "edge"}


class Copy(pb.Benchmark):
    def meta(self) -> dict:
        return {"algo": "copy", "type": "char"}

    def run(self, state: pb.State) -> None:
        state.set_items(1 << 20)
        state.add_reads(np.int8, 1 << 20)
        state.run(state.device.launch)


def run(tmp_path: Path, dev: FakeDevice, *args: str) -> dict:
    out = tmp_path / "results.json"
    ex = pb.Executor(["--json-out", str(out), "--min-secs", "0", *args], device=dev,
                     reporter=Reporter(make_console()))
    ex.queue(Copy())
    ex.run()
    return json.loads(out.read_text())


def test_monitoring_on_records_sensor_range_and_temperatures(tmp_path: Path) -> None:
    dev = MonitoredFake(0.25, temperature=40, heat_per_sec=4, slowdown=89)
    doc = run(tmp_path, dev)
    general = doc["context"]["general"]
    assert general["monitoring"] == {"name": "fakesmi", "version": "1.0"}
    assert general["temperature_type"] == "edge"
    assert general["thermal"]["max_gpu_temp"] == 79 and general["thermal"]["min_mode"] == "auto"
    assert dev.heated_secs == 0  # auto: no warming
    assert general["thermal"]["start_gpu_temp"] == 40
    assert doc["specializations"][0]["gpu_temp_celsius"]["start"] == 40


def test_no_monitoring_writes_no_monitoring_fields_and_never_warms(tmp_path: Path) -> None:
    dev = MonitoredFake(0.25, temperature=40, heat_per_sec=4, slowdown=89)
    doc = run(tmp_path, dev, "--no-monitoring")
    general = doc["context"]["general"]
    for key in ("monitoring", "temperature_type", "thermal"):
        assert key not in general, key
    assert general["gpu"]["name"] == "Fake GPU" and "backend" in general
    assert dev.heated_secs == 0 and dev.slept_secs == 0
    assert "gpu_temp_celsius" not in doc["specializations"][0]
    assert doc["context"]["settings"]["no_monitoring"] is True


def test_explicit_warming_timeout_aborts_the_run_with_the_message(tmp_path: Path) -> None:
    dev = MonitoredFake(0.25, temperature=40, heat_per_sec=2, max_temp=45)
    ex = pb.Executor(["--json-out", str(tmp_path / "results.json"), "--min-secs", "0", "--min-gpu-temp", "50",
                      "--max-gpu-temp", "60", "--max-warming-secs", "2"], device=dev, reporter=Reporter(make_console()))
    ex.queue(Copy())
    report = ex.run()  # the library form returns the aborted run; main() exits 1 with it
    assert report.exit_code == 1 and report.error is not None and report.error.startswith("warming stopped at ")
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["specializations"] == []
    with pytest.raises(pb.BenchmarkFailed, match="aborted: warming stopped"):
        report.check()
