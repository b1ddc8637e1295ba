"""Energy per call (and the CUDA-graph column) shown everywhere (issue 26): in `pb.bench`'s
result, in ``history series --metric energy`` / ``graph`` (read from the store's ``extra``
column through the query layer) and in the HTML report, on the fake device."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from tests.fakes import FakeDevice


class Kernel(pb.Benchmark):
    def __init__(self, ms: float) -> None:
        self.ms = ms

    def meta(self) -> dict[str, Any]:
        return {"algo": "k", "type": "a"}

    def run(self, state: pb.State) -> None:
        d = state.device
        assert isinstance(d, FakeDevice)
        state.run(lambda: d.launch(self.ms))


def run(tmp_path: Path, name: str, ms: float, commit: str, *args: str, watts: float | None = 300.0) -> Path:
    path = tmp_path / name
    argv = ["--json-out", str(path), "--min-secs", "3", "--rounds", "3", "--branch", "main", "--commit", commit,
            *args]
    ex = pb.Executor(argv, device=FakeDevice(ms, power_watts=watts), reporter=Reporter(make_console(io.StringIO())),
                     prog="b")
    ex.queue(Kernel(ms))
    assert ex.run().exit_code == 0
    return path


def test_bench_returns_energy_and_the_graph_column() -> None:
    dev = FakeDevice(0.25, power_watts=300.0, launch_gap_ms=0.01)
    res = pb.bench(dev.launch, device=dev, settings=pb.Settings(min_secs=3, rounds=3), graph=True)
    assert res.joules_per_call == pytest.approx(300.0 * 0.27e-3, rel=0.15)
    assert res.watts == pytest.approx(300.0, rel=0.1)
    assert res.energy_rounds_too_short == 0 and res.energy_cv_between_rounds_percent is not None
    assert res.graph_seconds_per_call == pytest.approx(0.25e-3, rel=1e-6)
    assert res.graph_saved_seconds_per_call == pytest.approx(0.01e-3, rel=1e-3)
    assert res.graph_reason is None
    assert "graph 250.00 µs/call" in str(res) and "mJ/call" in str(res)
    plain = pb.bench(dev.launch, device=dev, settings=pb.Settings(min_secs=0, rounds=1))
    assert plain.graph_seconds_per_call is None and plain.graph_reason is None
    synced = pb.bench(dev.launch, device=dev, settings=pb.Settings(min_secs=0, rounds=1), sync=True, graph=True)
    assert synced.graph_seconds_per_call is None and "synchronizes" in (synced.graph_reason or "")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    pytest.importorskip("duckdb")
    from tests.history_data import ingest

    files = [run(tmp_path, "a.json", 1.0, "a" * 40), run(tmp_path, "b.json", 1.1, "b" * 40, "--graph"),
             run(tmp_path, "c.json", 1.0, "c" * 40, watts=None)]  # c: no energy counter
    db = tmp_path / "h.duckdb"
    assert [o.status for o in ingest(files, db).outcomes] == ["stored"] * 3
    return db


def test_history_series_follows_energy_and_the_graph(store: Path, tmp_path: Path) -> None:
    from primbench.history.selector import Selector
    from primbench.history.stores import open_store

    db = open_store(store)
    energy = db.series(Selector(branch="main"), metric="energy")
    files = [json.loads((tmp_path / n).read_text())["specializations"][0] for n in ("a.json", "b.json")]
    def by_commit(frame: Any) -> dict[str, float]:
        return dict(zip(frame["commit"], frame["value"], strict=True))

    a, b = "a" * 40, "b" * 40
    assert set(energy["metric"]) == {"joules_per_call"}
    assert by_commit(energy) == pytest.approx({a: files[0]["energy"]["joules_per_call"],  # c read no counter
                                               b: files[1]["energy"]["joules_per_call"]})
    watts = db.series(Selector(branch="main"), metric="watts")
    assert by_commit(watts) == pytest.approx({a: files[0]["energy"]["watts"], b: files[1]["energy"]["watts"]})
    graph = db.series(Selector(branch="main"), metric="graph")
    assert by_commit(graph) == pytest.approx({b: files[1]["graph"]["seconds_per_call"]})
    time = db.series(Selector(branch="main"), metric="time")
    assert len(time) == 3  # the columns' metrics are as before


def test_the_cli_series_and_the_report_show_energy(store: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from primbench.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["history", "series", "type: a", "--db", str(store), "--branch", "main",
                              "--metric", "energy", "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "joules_per_call" in out.output and out.output.count("\n") == 3  # header and 2 points
    html_path = tmp_path / "r.html"
    rep = runner.invoke(app, ["history", "report", "--db", str(store), "--branch", "main", "--out", str(html_path),
                              "--no-git"])
    assert rep.exit_code == 0, rep.output
    html = html_path.read_text()
    assert "<h2 id='energy'>Energy per call</h2>" in html
    first = json.loads((tmp_path / "a.json").read_text())["specializations"][0]["energy"]["joules_per_call"]
    assert f"{first * 1000:.2f} mJ" in html
    by_energy = tmp_path / "e.html"
    rep = runner.invoke(app, ["history", "report", "--db", str(store), "--branch", "main", "--out", str(by_energy),
                              "--metric", "energy", "--no-git"])
    assert rep.exit_code == 0, rep.output
    assert "joules_per_call" in by_energy.read_text()
