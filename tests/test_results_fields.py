"""Two results.json fields: the thermal limits a run applied (numbers, not null for auto), and the
marker of a dry run, which history ingest refuses."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from tests.fakes import FakeDevice
from tests.test_executor import executor, queued

# ----------------------------------------------------------------- results fields: thermal limits, dry marker


class Monitored(FakeDevice):
    def context(self):
        return {**super().context(), "monitoring": {"name": "fakesmi", "version": "1"}, "temperature_type": "gpu"}


@pytest.mark.parametrize(("args", "limits"), [
    ([], (0, 79)),  # auto: no warming (a floor of 0 °C), cool below the slowdown temperature (89) minus 10
    (["--min-gpu-temp", "35", "--max-gpu-temp", "70.5"], (35, 70.5)),
    (["--no-monitoring"], (None, None)),  # no thermal control: nothing was applied
])
def test_the_effective_thermal_limits_are_written_as_numbers(tmp_path, args, limits):
    dev = Monitored(0.25, temperature=60.0, slowdown=89.0)
    queued(executor(tmp_path, *args, device=dev)).run()
    settings = json.loads((tmp_path / "results.json").read_text())["context"]["settings"]
    assert (settings["min_gpu_temp"], settings["max_gpu_temp"]) == limits


def test_dry_runs_are_marked_and_history_refuses_them(tmp_path):
    report = queued(executor(tmp_path, "--dry")).run()
    assert report.mode == "dry" and report.results == ()
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [s["dry"] for s in doc["specializations"]] == [True, True]
    queued(executor(tmp_path / "real")).run()
    result = CliRunner().invoke(app, ["history", "ingest", str(tmp_path / "results.json"),
                                      str(tmp_path / "real" / "results.json"), "--db", str(tmp_path / "h.duckdb")])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [f"primbench history: error: {tmp_path / 'results.json'}: context.settings.dry: a dry run "
                      "(--dry): nothing was measured, its zeros are not stored"]
    assert "1 run(s) stored" in result.stderr
