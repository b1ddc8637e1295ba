"""primbench.bench: a function measured with the executor's protocol, against the fake device."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import primbench as pb
from primbench.results import load_results
from tests.fakes import FakeDevice

ROOT = Path(__file__).resolve().parents[1]


class Monitored(FakeDevice):
    def context(self):
        return {**super().context(), "monitoring": {"name": "fakesmi", "version": "1"}, "temperature_type": "gpu"}


# ----------------------------------------------------------------- primbench.bench


def test_bench_measures_a_function_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dev = FakeDevice(0.25)
    result = pb.bench(dev.launch, items=1000, bytes=8000, device=dev, settings=pb.Settings(min_secs=0, rounds=2))
    assert isinstance(result, pb.BenchResult) and result.name == "name: launch"
    assert result.seconds_per_call == pytest.approx(0.25e-3)
    assert result.bytes_per_second == pytest.approx(8000 / 0.25e-3)
    assert result.items_per_second == pytest.approx(1000 / 0.25e-3)
    assert result.rounds == 2 and result.noise_percent >= 0 and not result.noise_timeout
    assert result.json_path is None and result.document is not None
    assert result.document["context"]["settings"]["json_out"] == ""
    assert "clear" in dev.ops and "block" in dev.ops  # the executor's protocol
    assert list(tmp_path.iterdir()) == []
    assert dev.releases == 1 and not dev.closed  # the caller's device is left open
    assert str(result).startswith("name: launch  250.00 µs/call  32.00 MB/s  4.00 Mitems/s  noise 0.000 %")


def test_bench_writes_json_out_when_asked(tmp_path):
    dev = FakeDevice(0.25)
    result = pb.bench(dev.launch, device=dev, name="copy", json_out=tmp_path / "b.json",
                      settings=pb.Settings(min_secs=0))
    assert result.json_path == str(tmp_path / "b.json")
    loaded = load_results(tmp_path / "b.json")
    assert loaded.algorithm == "bench" and [s.name for s in loaded.specializations] == ["name: copy"]


def test_bench_passes_setup_to_the_function_and_the_test_and_honours_hot_and_sync(tmp_path):
    dev = FakeDevice(0.25)
    seen: list[str] = []

    def setup():
        seen.append("setup")
        return "inputs"

    def fn(inputs):
        assert inputs == "inputs"
        dev.launch()

    pb.bench(fn, setup=setup, test=lambda inputs: seen.append(f"test {inputs}"), hot=True, sync=True, device=dev,
             settings=pb.Settings(min_secs=0, rounds=2))
    assert seen == ["setup", "test inputs", "setup"]  # setup per round, the test once
    assert "clear" not in dev.ops and "block" not in dev.ops


def test_bench_raises_the_functions_own_exception_and_usage_errors(tmp_path):
    dev = FakeDevice(0.25)

    def broken():
        raise ValueError("bad launch")

    with pytest.raises(ValueError, match="bad launch"):
        pb.bench(broken, device=dev)
    with pytest.raises(pb.UsageError, match="bytes= needs items="):
        pb.bench(dev.launch, bytes=10, device=dev)
    with pytest.raises(pb.UsageError, match="--batch-window-size must be at least 2"):
        pb.bench(dev.launch, device=dev, settings=pb.Settings(batch_window_size=1))
    with pytest.raises(pb.UsageError, match="items= must be a whole number"):
        pb.bench(dev.launch, items=-1, device=dev)


def test_bench_raises_the_thermal_abort(tmp_path):
    dev = Monitored(0.25, temperature=40, heat_per_sec=2, max_temp=45)
    with pytest.raises(pb.ThermalError, match="warming stopped"):
        pb.bench(dev.launch, device=dev, settings=pb.Settings(min_gpu_temp=50, max_warming_secs=1))


def test_bench_without_a_gpu_is_a_primbench_error_not_an_exit():
    pytest.importorskip("numpy")
    if __import__("importlib").util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: this checks the machine without it")
    with pytest.raises(pb.MissingDependencyError, match="cuda13"):
        pb.bench(lambda: None)


def test_import_primbench_leaves_the_library_module_for_first_use():
    code = "import sys, primbench; print('primbench.library' in sys.modules); primbench.bench; " \
           "print('primbench.library' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "True"]
