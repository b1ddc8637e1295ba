"""The CUDA-graph column (issue 26, `primbench.graph`) on the fake device: every branch of the
capture (`primbench.backends.cupy_graph.capture`, driven through a fake stream) and of the
replay's measurement, the records in results.json (4.6.0), the terminal, compare's
``--metric graph`` and the upgrade of older files."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import primbench as pb
from primbench import graph as graph_mod
from primbench.backends.cupy_graph import capture
from primbench.compare.core import compare_runs
from primbench.console import Reporter, make_console
from primbench.device import Device, GraphCaptureError
from primbench.measure import Measurement
from primbench.results import RESULTS_VERSION, load_results, results_from_dict, upgrade
from tests.fakes import FakeDevice, FakeStream


class Chain(pb.Benchmark):
    """`kernels` launches of 0.01 ms per call; `how` picks a way to fail a capture."""

    def __init__(self, kernels: int = 10, how: str = "ok", graph: bool = False) -> None:
        self.kernels = kernels
        self.how = how
        self.graph = graph

    def meta(self) -> dict[str, Any]:
        return {"algo": "chain", "kernels": self.kernels, "how": self.how}

    def run(self, state: pb.State) -> None:
        d = state.device
        assert isinstance(d, FakeDevice)

        def fn() -> None:
            if self.how == "nothing" and d.capturing:
                return  # works out that nothing changed since the last call: nothing to capture
            for _ in range(self.kernels):
                d.launch(0.01)
            if self.how == "sync" and d.capturing:
                d.synchronize(check=False)  # a copy back to the host, say: only while capturing here

        if self.how == "host":
            state.run(fn, timer="host")
        else:
            state.run(fn)


def run(tmp_path: Path, device: FakeDevice, *benchmarks: pb.Benchmark, args: tuple[str, ...] = ("--graph",),
        name: str = "r.json", out: io.StringIO | None = None, flags: pb.flags = pb.flags.none) -> dict[str, Any]:
    argv = ["--json-out", str(tmp_path / name), "--min-secs", "0", "--rounds", "2", "--hot", *args]
    ex = pb.Executor(argv, flags=flags, device=device, reporter=Reporter(make_console(out or io.StringIO())), prog="b")
    for b in benchmarks:
        ex.queue(b)
    report = ex.run()
    assert report.exit_code == 0, report.failures
    doc: dict[str, Any] = json.loads((tmp_path / name).read_text())
    return doc


def by_how(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["meta"]["how"]: s for s in doc["specializations"]}


def test_a_replay_is_timed_beside_the_stream_launches_and_saves_the_launch_gaps(tmp_path: Path) -> None:
    # each stream launch leaves 4 µs of idle GPU before its kernel, a replay 1 µs: 10 kernels save 30 µs
    device = FakeDevice(launch_gap_ms=0.004, graph_gap_ms=0.001)
    out = io.StringIO()
    doc = run(tmp_path, device, Chain(), out=out)
    assert doc["context"]["results_version"] == RESULTS_VERSION and doc["context"]["settings"]["graph"] is True
    spec = doc["specializations"][0]
    g = spec["graph"]
    assert g["captured"] is True and "reason" not in g
    assert spec["gpu_seconds_per_call"] == pytest.approx(10 * 0.014e-3)
    assert g["stream_seconds_per_call"] == pytest.approx(spec["gpu_seconds_per_call"])
    assert g["seconds_per_call"] == pytest.approx(10 * 0.011e-3)
    assert g["saved_seconds_per_call"] == pytest.approx(30e-6)
    assert g["saved_percent"] == pytest.approx(30 / 140 * 100)
    assert g["cv_between_rounds_percent"] == pytest.approx(0.0, abs=1e-9)
    assert g["host_seconds_per_call"] > 0 and g["stream_host_seconds_per_call"] > g["host_seconds_per_call"]
    # one capture per round (each round sets up anew), with the round's batch size
    assert device.captures == 2
    for rd in spec["rounds"]:
        assert rd["graph"]["captured"] is True
        assert rd["graph"]["gpu_ms_per_call"] == pytest.approx(0.11)
        assert rd["graph"]["kernel_calls"] == rd["graph"]["batches"] * rd["kernel_calls_per_batch"]
    assert g["kernel_calls"] == sum(rd["graph"]["kernel_calls"] for rd in spec["rounds"])
    line = out.getvalue().splitlines()[-3]
    assert "graph 110 µs/call, saves 30 µs (21.4%)" in line, line
    assert "noise timeouts, graph: 1 replayed, 0." in out.getvalue().splitlines()[-2]  # none not captured
    loaded = load_results(tmp_path / "r.json").specializations[0]
    assert loaded.graph_seconds_per_call == pytest.approx(110e-6)
    assert loaded.rounds[0].graph_seconds_per_call == pytest.approx(110e-6)


def test_without_graph_nothing_is_captured_and_no_key_is_written(tmp_path: Path) -> None:
    device = FakeDevice()
    doc = run(tmp_path, device, Chain(), args=())
    spec = doc["specializations"][0]
    assert "graph" not in spec and all("graph" not in r for r in spec["rounds"])
    assert device.captures == 0 and device.replays == 0
    assert doc["context"]["settings"]["graph"] is False


def test_a_benchmark_can_ask_for_the_graph_itself(tmp_path: Path) -> None:
    device = FakeDevice()
    doc = run(tmp_path, device, Chain(graph=True), Chain(3, how="plain"), args=())
    specs = by_how(doc)
    assert specs["ok"]["graph"]["captured"] is True
    assert "graph" not in specs["plain"]


@pytest.mark.parametrize(("how", "flags", "reason"), [
    ("sync", pb.flags.none, "capture failed: RuntimeError: cudaErrorStreamCaptureUnsupported"),
    ("host", pb.flags.none, graph_mod.HOST_TIMER),
    ("ok", pb.flags.sync, graph_mod.SYNCHRONIZES),
    ("nothing", pb.flags.none, graph_mod.EMPTY),
])
def test_an_impossible_capture_is_recorded_with_its_reason_not_raised(tmp_path: Path, how: str, flags: pb.flags,
                                                                      reason: str) -> None:
    device = FakeDevice()
    doc = run(tmp_path, device, Chain(how=how), flags=flags)
    spec = doc["specializations"][0]
    assert spec.get("error") is None and spec["gpu_seconds_per_call"] >= 0
    g = spec["graph"]
    assert g["captured"] is False and g["reason"].startswith(reason), g["reason"]
    assert "seconds_per_call" not in g
    assert all(r["graph"] == {"captured": False, "reason": g["reason"]} for r in spec["rounds"])
    assert not device.capturing  # the stream is left out of capture mode
    if how == "sync":  # the capture was tried, ended and never replayed
        assert device.captures == 2 and device.replays == 0
    if how in ("host",) or flags & pb.flags.sync:
        assert device.captures == 0  # known before trying


def test_a_capture_error_of_the_runtime_is_the_reason(tmp_path: Path) -> None:
    device = FakeDevice(capture_error="cudaErrorStreamCaptureUnsupported: cudaMalloc during capture")
    out = io.StringIO()
    doc = run(tmp_path, device, Chain(), out=out)
    g = doc["specializations"][0]["graph"]
    assert g == {"captured": False, "reason": "capture failed: RuntimeError: cudaErrorStreamCaptureUnsupported: "
                 "cudaMalloc during capture", "stream_seconds_per_call": pytest.approx(1e-4)}
    assert "graph not captured: capture failed" in out.getvalue()
    assert "graph: 0 replayed, 1 not captured" in out.getvalue()


def test_a_device_without_graphs_says_so() -> None:
    class NoGraphs(FakeDevice):
        capture_graph = Device.capture_graph

    device = NoGraphs()
    stream = Measurement((), 4, 0, 0.0, False, 0.0)
    r = graph_mod.replay_round(device, lambda: None, stream, timer="events", sync=False, hot=True,
                               batch_window_size=2, noise_tolerance_percent=1.0, noise_timeout_secs=1.0)
    assert r.replay is None and r.reason == "capture failed: the fake device does not capture graphs"


def test_the_capture_ends_whatever_fn_does() -> None:
    device = FakeDevice()
    stream = FakeStream(device)

    def interrupted() -> None:
        device.launch(0.01)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        capture(stream, interrupted)
    assert not device.capturing
    with pytest.raises(GraphCaptureError, match="ValueError: bad input"):
        capture(stream, lambda: (_ for _ in ()).throw(ValueError("bad\n input")))
    assert not device.capturing

    class Refusing(FakeStream):
        def begin_capture(self) -> None:
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: legacy stream")

    with pytest.raises(GraphCaptureError, match="begin_capture refused: RuntimeError"):
        capture(Refusing(device), lambda: None)

    class NoUpload(FakeStream):
        def end_capture(self) -> Any:
            g = super().end_capture()
            g.upload = lambda stream: (_ for _ in ()).throw(RuntimeError("out of memory"))
            return g

    with pytest.raises(GraphCaptureError, match="graph upload failed: RuntimeError: out of memory"):
        capture(NoUpload(device), lambda: device.launch(0.01))
    kept = object()
    g = capture(stream, lambda: kept)
    assert g._kept is kept  # what the captured call returned lives as long as the graph
    g.close()
    assert g._kept is None


def test_before_every_iteration_runs_before_each_replay_too(tmp_path: Path) -> None:
    device = FakeDevice()
    count = {"n": 0}

    class Restoring(Chain):
        def run(self, state: pb.State) -> None:
            d = state.device
            assert isinstance(d, FakeDevice)
            state.run_before_every_iteration(lambda: count.__setitem__("n", count["n"] + 1))
            state.run(lambda: d.launch(0.01))

    run(tmp_path, device, Restoring())
    # every kernel run (stream calls with their sizing and warmups, and replays) had it first;
    # the capture, which runs nothing, did not
    assert device.replays > 0 and count["n"] == device.calls


def test_compare_metric_graph_compares_the_replays(tmp_path: Path) -> None:
    base = run(tmp_path, FakeDevice(launch_gap_ms=0.004, graph_gap_ms=0.001), Chain(), name="a.json")
    head = run(tmp_path, FakeDevice(launch_gap_ms=0.004, graph_gap_ms=0.002), Chain(), name="b.json")
    c = compare_runs([results_from_dict(base)], [results_from_dict(head)], metric="graph")
    row = c.rows[0]
    assert row.metric == "graph_seconds_per_call"
    assert row.ratio == pytest.approx(0.12 / 0.11)


def test_a_4_5_0_file_loads_without_a_graph(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(), Chain(), args=())
    doc["context"]["results_version"] = "4.5.0"
    del doc["context"]["settings"]["graph"]
    up = upgrade(doc, "4.5.0")
    assert up["context"]["results_version"] == RESULTS_VERSION
    r = results_from_dict(doc)
    assert r.version == "4.5.0" and r.specializations[0].graph is None
    assert r.specializations[0].graph_seconds_per_call is None


def test_a_replay_the_runtime_refuses_is_recorded(tmp_path: Path) -> None:
    class Refusing(FakeDevice):
        def capture_graph(self, fn: Any) -> Any:
            graph = super().capture_graph(fn)

            def launch() -> None:
                raise RuntimeError("cudaErrorInvalidValue: invalid argument")

            graph.launch = launch
            return graph

    doc = run(tmp_path, Refusing(), Chain())
    g = doc["specializations"][0]["graph"]
    assert g["captured"] is False
    assert g["reason"] == "replay failed: RuntimeError: cudaErrorInvalidValue: invalid argument"
