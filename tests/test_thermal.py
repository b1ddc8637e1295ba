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
    AUTO_PLATEAU_SECS,
    AUTO_SLACK_C,
    AUTO_TARGET_C,
    AUTO_WARMING_SECS,
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
        "warming_secs": tc.warming_secs, "cooling_secs": 0.0,
    }


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


def test_auto_warming_stops_on_a_plateau_without_aborting() -> None:
    # An H200-like GPU: levels off at 45 °C, below the 50 °C target. It gains a whole degree
    # per heating step (sensors read whole degrees), so reaches 45 °C after 5 steps.
    dev = FakeDevice(temperature=40, heat_per_sec=1 / HEAT_STEP_SECS, max_temp=45)
    tc = ThermalControl(dev, Settings())
    tc.before_specialization()
    assert dev.temp == 45
    # Stopped once no degree was gained for the plateau time.
    assert dev.heated_secs == pytest.approx(5 * HEAT_STEP_SECS + AUTO_PLATEAU_SECS, abs=1.01 * HEAT_STEP_SECS)
    assert tc.reached == 45
    assert tc.record()["min_mode"] == "auto" and tc.record()["min_gpu_temp"] == AUTO_TARGET_C


def test_auto_warming_is_capped_and_never_aborts() -> None:
    # Warming slowly but steadily (1 °C every 2 s, so no plateau): the cap ends it.
    dev = FakeDevice(temperature=40, heat_per_sec=0.5)
    tc = ThermalControl(dev, Settings(max_warming_secs=1))  # the explicit-mode limit is not used in auto
    tc.before_specialization()
    assert AUTO_WARMING_SECS <= dev.heated_secs <= AUTO_WARMING_SECS + 2 * HEAT_STEP_SECS
    assert dev.temp == pytest.approx(40 + 0.5 * dev.heated_secs)
    assert dev.temp < AUTO_TARGET_C


def test_auto_floor_for_later_specializations_is_the_level_reached() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=2, max_temp=45, cool_per_sec=1)
    tc = ThermalControl(dev, Settings())
    tc.before_specialization()
    assert tc.reached == 45
    dev.sleep(4)  # cooled to 41 between specializations
    heated = dev.heated_secs
    tc.before_specialization()
    # Warmed back to the reached level minus the slack (43 °C), not toward 50 °C again.
    assert dev.temp == pytest.approx(45 - AUTO_SLACK_C, abs=2 * HEAT_STEP_SECS * 2)
    assert dev.heated_secs - heated == pytest.approx(1.0, abs=2 * HEAT_STEP_SECS)


def test_auto_warming_reaches_the_target_when_it_can() -> None:
    dev = FakeDevice(temperature=40, heat_per_sec=2)
    ThermalControl(dev, Settings()).before_specialization()
    assert AUTO_TARGET_C <= dev.temp < AUTO_TARGET_C + 1


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


def test_auto_minimum_never_above_a_low_maximum() -> None:
    dev = FakeDevice(temperature=40, slowdown=55)  # maximum 45 °C
    tc = thermal_for(dev, Settings())
    assert isinstance(tc, ThermalControl)
    assert tc.max_temp == 45 and tc.min_temp == 45


def test_explicit_maximum_with_auto_minimum() -> None:
    dev = FakeDevice(temperature=40, slowdown=89)
    tc = thermal_for(dev, Settings(max_gpu_temp=70))
    assert isinstance(tc, ThermalControl)
    assert (tc.max_temp, tc.min_temp) == (70, AUTO_TARGET_C)
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
    assert dev.heated_secs > 0
    assert doc["specializations"][0]["gpu_temp_celsius"]["start"] >= AUTO_TARGET_C


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
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, dev, "--min-gpu-temp", "50", "--max-gpu-temp", "60", "--max-warming-secs", "2")
    assert exit_info.value.code == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["specializations"] == []
