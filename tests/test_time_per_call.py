"""GPU time per call, first class (results 4.4.0): what the harness writes, what the loader reads
from new and old files, the CSV column and the progress line; benchmarks that declare neither
items nor bytes."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from primbench.results import (
    KNOWN_VERSIONS,
    RESULTS_VERSION,
    ResultsFileError,
    Specialization,
    TimePerCall,
    load_results,
    results_from_dict,
    time_per_call_fields,
    time_per_call_stats,
)
from tests.compare_data import document, spec
from tests.fakes import FakeDevice


class Sleepy(pb.Benchmark):
    """Declares neither items nor bytes: only time can describe it."""

    def meta(self) -> dict[str, Any]:
        return {"algo": "sleep", "kind": "plain"}

    def run(self, state: pb.State) -> None:
        state.run(state.device.launch)


class Counted(pb.Benchmark):
    def meta(self) -> dict[str, Any]:
        return {"algo": "sleep", "kind": "counted"}

    def run(self, state: pb.State) -> None:
        state.set_items(1000)
        state.add_reads(np.float32, 1000)
        state.run(state.device.launch)


def _wobbly(n: int, cold: bool) -> float:
    """Kernel times that differ from call to call (0.20 to 0.26 ms, a 7-call cycle)."""
    return 0.20 + (n % 7) * 0.01


def run(tmp_path: Path, bench: pb.Benchmark, *args: str, device: FakeDevice | None = None,
        out: io.StringIO | None = None) -> Any:
    argv = ["--json-out", str(tmp_path / "r.json"), "--min-secs", "0", *args]
    reporter = Reporter(make_console(out)) if out is not None else Reporter(make_console(io.StringIO()))
    ex = pb.Executor(argv, device=device or FakeDevice(_wobbly), reporter=reporter)
    ex.queue(bench)
    return ex.run()


# --------------------------------------------------------------------------- the harness


def test_the_version_is_4_11_0_and_the_loader_knows_every_earlier_one() -> None:
    assert RESULTS_VERSION == "4.11.0"  # 4.11.0: settings.runs, several runs of --processes workers (issue 30)
    assert KNOWN_VERSIONS == ("4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0", "4.5.0", "4.6.0", "4.7.0", "4.8.0",
                              "4.9.0", "4.10.0", "4.11.0")


def test_time_per_call_is_written_from_every_batch_of_every_round(tmp_path: Path) -> None:
    doc = run(tmp_path, Counted(), "--output-batches", "--rounds", "3")
    s = doc["specializations"][0]
    assert doc["context"]["results_version"] == RESULTS_VERSION
    per_call = [b["batch_ms"] / 1000 / b["kernel_calls"] for b in s["batches"]]
    assert {b["round"] for b in s["batches"]} == {0, 1, 2}  # every round's batches
    assert s["gpu_seconds_per_call"] == pytest.approx(s["elapsed_secs"]["gpu"] / s["calls"]["kernel_calls"])
    t = s["time_per_call"]
    assert list(t) == ["mean", "median", "min", "q1", "q3"]
    assert t["mean"] == s["gpu_seconds_per_call"]
    assert t["median"] == pytest.approx(float(np.median(per_call)))
    assert t["min"] == pytest.approx(min(per_call))
    assert t["q1"] == pytest.approx(float(np.percentile(per_call, 25)))
    assert t["q3"] == pytest.approx(float(np.percentile(per_call, 75)))
    assert t["min"] <= t["q1"] <= t["median"] <= t["q3"]
    # the kernel takes 0.20 to 0.26 ms a call: the batches' means lie in between
    assert t["min"] > 0.20e-3 and t["q3"] < 0.26e-3


def test_the_fields_round_trip_through_the_loader(tmp_path: Path) -> None:
    doc = run(tmp_path, Counted())
    s = load_results(tmp_path / "r.json").specializations[0]
    written = doc["specializations"][0]["time_per_call"]
    assert s.gpu_seconds_per_call == written["mean"]
    assert s.time_per_call == TimePerCall(**written)


def test_a_benchmark_that_declares_neither_items_nor_bytes_runs_and_is_timed(tmp_path: Path) -> None:
    out = io.StringIO()
    doc = run(tmp_path, Sleepy(), "--csv-out", str(tmp_path / "r.csv"), device=FakeDevice(0.125), out=out)
    s = doc["specializations"][0]
    assert s["bytes_per_second"] == 0 and s["items_per_second"] == 0
    assert s["gpu_seconds_per_call"] == pytest.approx(0.125e-3)
    line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("ok"))
    assert "125 µs/call" in line
    assert "B/s" not in line and "items/s" not in line  # no rates it never declared
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0].endswith(",gpu_seconds_per_call")
    assert rows[1].split(",")[2] == "0" and rows[1].split(",")[-1] == "0.000125"


def test_the_progress_line_shows_rates_and_time_per_call(tmp_path: Path) -> None:
    out = io.StringIO()
    run(tmp_path, Counted(), device=FakeDevice(0.25), out=out)
    line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("ok"))
    assert "16.00 MB/s  4.00 Mitems/s  250 µs/call" in line  # 4000 bytes, 1000 items per 0.25 ms


def test_the_bold_figure_is_the_default_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    record = {"index": 0, "name": "x", "calls": {"kernel_calls": 10, "kernel_calls_per_batch": 10, "batches": 1},
              "noise_timeout": False, "noise_percent": 0.1, "bytes_per_second": 0, "items_per_second": 0,
              "bytes_per_item": 0, "items": 0, "meta": {"algo": "a"},
              "gpu_seconds_per_call": 2e-6, "elapsed_secs": {"host": 1.0, "gpu": 2e-5}}
    out = io.StringIO()
    Reporter(make_console(out)).finished(0, 1, msgspec.convert(record, Specialization))
    assert "\x1b[1m2 µs/call" in out.getvalue()
    out = io.StringIO()
    Reporter(make_console(out)).finished(0, 1, msgspec.convert({**record, "bytes_per_second": 5e9}, Specialization))
    assert "\x1b[1m5.00 GB/s" in out.getvalue() and "\x1b[1m2 µs/call" not in out.getvalue()


def test_failed_and_dry_records_carry_no_time(tmp_path: Path) -> None:
    class Broken(Sleepy):
        def run(self, state: pb.State) -> None:
            raise RuntimeError("no")

    assert run(tmp_path, Broken()).exit_code == 1  # a failed specialization
    failed = load_results(tmp_path / "r.json").specializations[0]
    assert failed.failed and failed.gpu_seconds_per_call is None and failed.time_per_call is None
    run(tmp_path, Sleepy(), "--dry")
    dry = load_results(tmp_path / "r.json").specializations[0]
    assert dry.gpu_seconds_per_call is None and dry.time_per_call is None


# --------------------------------------------------------------------------- the statistics


def test_quartiles_interpolate_as_numpy_does() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    got = time_per_call_stats(values)
    assert got["median"] == pytest.approx(np.median(values))
    assert got["q1"] == pytest.approx(np.percentile(values, 25))
    assert got["q3"] == pytest.approx(np.percentile(values, 75))
    assert got["min"] == 1.0
    assert time_per_call_stats([7.0]) == {"mean": 7.0, "median": 7.0, "min": 7.0, "q1": 7.0, "q3": 7.0}


def test_the_written_mean_is_gpu_time_over_calls() -> None:
    fields = time_per_call_fields([1e-3, 3e-3], gpu_secs=0.5, calls=250)
    assert fields["gpu_seconds_per_call"] == 0.002 and fields["time_per_call"]["mean"] == 0.002
    assert fields["time_per_call"]["median"] == pytest.approx(2e-3)
    assert time_per_call_fields([], 0.0, 0) == {"gpu_seconds_per_call": None, "time_per_call": None}


# --------------------------------------------------------------------------- older files


@pytest.mark.parametrize("version", ["4.0.0", "4.1.0", "4.2.0", "4.3.0"])
def test_older_files_get_the_mean_derived_and_nothing_invented(version: str) -> None:
    doc = document([spec("a", 1e12)], version=version)
    s = results_from_dict(doc).specializations[0]
    raw = doc["specializations"][0]
    expected = raw["elapsed_secs"]["gpu"] / raw["calls"]["kernel_calls"]
    assert s.gpu_seconds_per_call == pytest.approx(expected)
    assert s.time_per_call == TimePerCall(mean=s.gpu_seconds_per_call)
    assert s.time_per_call.median is None and s.time_per_call.q1 is None


def test_older_files_with_batches_get_every_statistic() -> None:
    batches = [64 * 0.2, 64 * 0.3, 64 * 0.25, 64 * 0.21]  # ms per batch of 64 calls
    doc = document([spec("a", 1e12, batches=batches, kernel_calls_per_batch=64)])
    for b in doc["specializations"][0]["batches"]:
        del b["kernel_calls"]  # 4.0.0 batches: the calls come from calls.kernel_calls_per_batch
    s = results_from_dict(doc).specializations[0]
    per_call = [ms / 64 / 1000 for ms in batches]
    assert s.time_per_call is not None
    assert s.time_per_call.min == pytest.approx(0.2e-3)
    assert s.time_per_call.median == pytest.approx(float(np.median(per_call)))
    assert s.time_per_call.q3 == pytest.approx(float(np.percentile(per_call, 75)))


def test_a_file_without_gpu_time_has_no_time_per_call() -> None:
    doc = document([spec("a", 0, items_per_second=0, time_ms=0)])
    doc["specializations"][0]["calls"]["kernel_calls"] = 0
    s = results_from_dict(doc).specializations[0]
    assert s.gpu_seconds_per_call is None and s.time_per_call is None


@pytest.mark.parametrize(("path", "value", "expected"), [
    (("gpu_seconds_per_call",), -1.0, "specializations[0].gpu_seconds_per_call: must not be negative"),
    (("gpu_seconds_per_call",), "fast", "specializations[0].gpu_seconds_per_call: must be a number"),
    (("time_per_call",), [1], "specializations[0].time_per_call: must be an object"),
    (("time_per_call", "q1"), True, "specializations[0].time_per_call.q1: must be a number, got a boolean"),
])
def test_bad_time_fields_are_named(path: tuple[str, ...], value: Any, expected: str) -> None:
    doc = document([spec("a", 1e12)], version="4.4.0")
    raw = doc["specializations"][0]
    raw.update(time_per_call_fields([2e-4, 3e-4], 0.5, 2000))
    target = raw
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ResultsFileError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        results_from_dict(json.loads(json.dumps(copy.deepcopy(doc))), "f.json")
