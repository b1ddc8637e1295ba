"""`--metric time|bytes|items` in the history commands, and the direction of each metric read
from `primbench.metrics`: a time per call that grows is a regression, one that shrinks an
improvement, in change points, charts and the report; the default follows bytes where a
benchmark declares them, else items, else time."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from tests import history_data as hd
from tests.history_data import ingest

runner = CliRunner()
CALLS = 320  # kernel calls of every synthetic specialization (32 per batch, 10 batches)


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args])
    return result.exit_code, result.stdout, result.stderr


def _timed(per_call: dict[str, float], *, items: bool, commit: str, hour: int) -> dict[str, Any]:
    """A results document whose specializations took `per_call` GPU seconds per call and declared
    no bytes (and no items unless `items`)."""
    doc = hd.document(dict.fromkeys(per_call, 1.0), commit=hd.sha(commit), date=hd.START + dt.timedelta(hours=hour))
    for spec in doc["specializations"]:
        gpu = per_call[spec["name"]] * CALLS
        spec["elapsed_secs"]["gpu"] = gpu
        spec["bytes_per_second"], spec["bytes_per_item"] = 0, 0
        spec["items_per_second"] = 1000 * CALLS / gpu if items else 0
    return doc


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 commits of main: ``type: slower`` takes 5 % longer per call from commit 8 on,
    ``type: faster`` 5 % less; no bytes or items declared, so time is the default."""
    d = tmp_path_factory.mktemp("timed")
    noise = hd.noisy_levels(16, base=1.0, cv=0.002, specs=2, seed=7)
    files = []
    for i, (a, b) in enumerate(noise):
        step = 1.05 if i >= 8 else 1.0
        per_call = {"type: slower": 4e-6 * a * step, "type: faster": 9e-6 * b / step}
        files.append(hd.write(d / f"{i}.json", _timed(per_call, items=False, commit=f"t{i}", hour=i)))
    db = d / "h.duckdb"
    assert not ingest(files, db).errors
    return db


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hd.standard_history(tmp_path_factory.mktemp("history"))


def test_series_metric_time_is_gpu_seconds_per_call(standard: Path) -> None:
    code, out, _ = run("series", "type: t0", "-a", "copy", "--metric", "time", "--db", str(standard), "-f", "json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 38  # 30 commits on GPU A, 8 on GPU B
    assert {r["metric"] for r in rows} == {"gpu_seconds_per_call"}
    by_bytes = json.loads(run("series", "type: t0", "-a", "copy", "--metric", "bytes", "--db", str(standard),
                              "-f", "json")[1])
    # elapsed_secs.gpu / kernel calls: the bytes of a call over its bytes/s, run by run
    per_run = {(r["gpu_key"], r["commit"]): 2 * 134217728 / r["value"] for r in by_bytes}
    assert all(r["value"] == pytest.approx(per_run[(r["gpu_key"], r["commit"])]) for r in rows)
    code, out, _ = run("series", "type: t0", "-a", "copy", "--metric", "time", "--db", str(standard))
    assert code == 0 and out.startswith("type: t0 on main: gpu_seconds_per_call\n")
    assert " µs" in out  # in its unit, from the registry (about 270 µs a call at 1 TB/s)


def test_the_default_follows_bytes_and_tables_show_units(standard: Path) -> None:
    code, out, _ = run("series", "type: t1", "-a", "copy", "--db", str(standard), "--gpu", hd.H200_A["uuid"])
    assert code == 0 and out.startswith("type: t1 on main: bytes_per_second\n")
    assert " TB/s" in out
    code, out, _ = run("series", "type: t1", "-a", "copy", "--metric", "items", "--db", str(standard), "-f", "json")
    assert code == 0 and {r["metric"] for r in json.loads(out)} == {"items_per_second"}
    code, out, _ = run("regressions", "--db", str(standard), "--gpu", hd.H200_A["uuid"])
    assert code == 0 and "TB/s" in out  # before and after in the metric's unit


def test_an_unknown_metric_is_exit_2_with_the_choices(standard: Path) -> None:
    code, _, err = run("series", "type: t0", "--metric", "speed", "--db", str(standard))
    assert code == 2
    assert "unknown metric 'speed'; choose one of: time, bytes, items, energy, graph, bytes_per_second" in err
    assert run("regressions", "--metric", "noise_percent", "--db", str(standard))[0] == 0  # a stored value


def test_without_bytes_or_items_the_default_is_time_and_a_slower_call_is_a_regression(timed: Path) -> None:
    for extra in ([], ["--metric", "time"]):
        code, out, _ = run("regressions", "--db", str(timed), "-f", "json", *extra)
        rows = {r["name"]: r for r in json.loads(out)}
        assert code == 0 and set(rows) == {"type: slower", "type: faster"}
        slower, faster = rows["type: slower"], rows["type: faster"]
        assert slower["kind"] == "regression" and slower["shift"] == pytest.approx(0.05, abs=0.01)
        assert faster["kind"] == "improvement" and faster["shift"] == pytest.approx(-0.05 / 1.05, abs=0.01)
        assert slower["commit"] == faster["commit"] == hd.sha("t8")
        assert slower["metric"] == "gpu_seconds_per_call"
    code, _, _ = run("regressions", "--db", str(timed), "--fail-on", "regression")
    assert code == 1  # the slower call fails the gate


def test_items_are_the_default_where_only_items_are_declared(tmp_path: Path) -> None:
    doc = _timed({"type: a": 1e-6}, items=True, commit="i", hour=0)
    db = tmp_path / "h.duckdb"
    assert not ingest([hd.write(tmp_path / "i.json", doc)], db).errors
    frame = open_store(db).series(S(branch="main"))
    assert list(frame["metric"]) == ["items_per_second"] and frame["value"].iloc[0] == pytest.approx(1e9)


def test_a_chart_of_time_per_call_has_its_unit_and_red_for_slower(timed: Path, tmp_path: Path) -> None:
    from primbench.history.plots import trend_figure

    frame = open_store(timed).series(S(branch="main", name="type: slower"))
    fig = trend_figure(frame)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "GPU time per call (µs)"
    colors = {line.get_color() for line in ax.get_lines()}
    assert "#d62728" in colors and "#2ca02c" not in colors  # a regression: red
    faster = trend_figure(open_store(timed).series(S(branch="main", name="type: faster"))).axes[0]
    assert "#2ca02c" in {line.get_color() for line in faster.get_lines()}  # an improvement: green
    code, out, _ = run("plot", "--db", str(timed), "--metric", "time", "-o", str(tmp_path / "charts"))
    assert code == 0 and out.count("Wrote ") == 2


def test_the_report_names_the_metric_and_shows_time_in_its_unit(timed: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, said, err = run("report", "--db", str(timed), "--metric", "time", "--no-git", "-o", str(out))
    assert code == 0, err
    assert "2 change points" in said
    text = out.read_text(encoding="utf-8")
    assert "Metric: <code>gpu_seconds_per_call</code>" in text
    assert "<span class='regression'>regression</span>" in text and " µs" in text


def test_the_metric_option_offers_exactly_the_registry_choices():
    from primbench.cli.options import MetricChoice
    from primbench.metrics import CHOICES

    assert [m.value for m in MetricChoice] == list(CHOICES)
