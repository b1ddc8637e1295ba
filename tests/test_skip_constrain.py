"""Skip, zipped and constrained axes (issue 26) on the fake device: ``state.skip`` records a
specialization as skipped (exit 0, results 4.5.0 ``skipped``, the summary, compare, history),
``pb.axis.zipped`` advances axes together, ``pb.axis.constrain`` excludes combinations and
``--list`` shows them; examples/skip_and_constrain.py runs on the fake device."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.compare.render import summary_line, why
from primbench.console import Reporter, make_console
from primbench.errors import UsageError
from primbench.results import load_results
from tests.fakes import FakeDevice

ROOT = Path(__file__).resolve().parents[1]


def executor(tmp_path: Path, *args: str, out: io.StringIO | None = None, name: str = "r.json") -> pb.Executor:
    argv = ["--json-out", str(tmp_path / name), "--min-secs", "0", "--rounds", "1", *args]
    return pb.Executor(argv, device=FakeDevice(0.01), reporter=Reporter(make_console(out or io.StringIO())),
                       prog="bench")


@pb.axis.sweep(block=pb.axis.ints([64, 128, 256]), items=pb.axis.ints([128, 1024]))
@pb.axis.constrain(lambda c: c["block"] <= c["items"], "block > items")
class Constrained(pb.Benchmark):
    def __init__(self, skip_when: Callable[[dict[str, Any]], str | None] = lambda axes: None) -> None:
        self.skip_when = skip_when
        self.ran: list[dict[str, Any]] = []

    def meta(self) -> dict[str, Any]:
        return {"algo": "tiles"}

    def run(self, state: pb.State) -> None:
        self.ran.append(state.axes)
        if (reason := self.skip_when(state.axes)) is not None:
            state.skip(reason)
        state.run(lambda: state.device.launch(0.001 * state.axis("block")))


def test_constrain_excludes_combinations_which_list_shows(tmp_path: Path) -> None:
    out = io.StringIO()
    ex = executor(tmp_path, "--list", out=out)
    ex.queue(Constrained())
    report = ex.run()
    assert report.exit_code == 0
    assert report.names == ("block: 64, items: 128", "block: 64, items: 1024", "block: 128, items: 128",
                            "block: 128, items: 1024", "block: 256, items: 1024")
    assert report.excluded == {"block: 256, items: 128": "block > items"}
    assert out.getvalue().splitlines()[-1] == "# excluded: block: 256, items: 128: block > items"


def test_an_excluded_combination_is_neither_run_nor_written(tmp_path: Path) -> None:
    bench = Constrained()
    ex = executor(tmp_path)
    ex.queue(bench)
    report = ex.run()
    assert report.exit_code == 0
    assert {"block": 256, "items": 128} not in bench.ran and len(bench.ran) == 5
    assert len(load_results(tmp_path / "r.json").specializations) == 5


def test_skip_records_the_specialization_as_skipped_not_failed(tmp_path: Path) -> None:
    out = io.StringIO()
    bench = Constrained(lambda a: "no tile of 1024 at block 64" if a == {"block": 64, "items": 1024} else None)
    ex = executor(tmp_path, out=out)
    ex.queue(bench)
    report = ex.run()
    assert report.exit_code == 0 and not report.failures
    assert report.skipped == {"block: 64, items: 1024": "no tile of 1024 at block 64"}
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["context"]["results_version"] == pb.RESULTS_VERSION
    skipped = [s for s in doc["specializations"] if "skipped" in s]
    assert [s["name"] for s in skipped] == ["block: 64, items: 1024"]
    assert skipped[0]["skipped"] == "no tile of 1024 at block 64" and skipped[0]["bytes_per_second"] is None
    assert "error" not in skipped[0]
    assert doc["summary"]["skipped"] == 1 and doc["summary"]["failures"] == 0
    text = out.getvalue()
    assert "skipped [2/5] block: 64, items: 1024: no tile of 1024 at block 64" in text
    assert "1 skipped" in text and "1 excluded by constraints" in text
    assert [r.name for r in report.results] == ["block: 64, items: 128", "block: 128, items: 128",
                                                "block: 128, items: 1024", "block: 256, items: 1024"]
    loaded = load_results(tmp_path / "r.json")
    assert [s.measured for s in loaded.specializations].count(False) == 1
    assert "block: 64" not in loaded.csv_text().splitlines()[2]  # the CSV holds the measured ones


def test_skip_with_rounds_is_recorded_once_and_not_run_again(tmp_path: Path) -> None:
    bench = Constrained(lambda a: "skip" if a["block"] == 128 else None)
    ex = executor(tmp_path, "--rounds", "3")
    ex.queue(bench)
    assert ex.run().exit_code == 0
    assert sum(1 for a in bench.ran if a["block"] == 128) == 2  # round 1 only, for its two combinations
    assert sum(1 for a in bench.ran if a["block"] == 64) == 6


def test_skip_needs_a_reason(tmp_path: Path) -> None:
    ex = executor(tmp_path)
    ex.queue(Constrained(lambda a: " "))
    report = ex.run()
    assert report.exit_code == 1 and all("give the reason" in e for e in report.failures.values())


def test_a_benchmark_catching_exception_does_not_swallow_skip(tmp_path: Path) -> None:
    class Catching(pb.Benchmark):
        def meta(self) -> dict[str, Any]:
            return {"algo": "c"}

        def run(self, state: pb.State) -> None:
            try:
                state.skip("not here")
            except Exception:  # the benchmark's own error handling
                state.run(state.device.launch)

    ex = executor(tmp_path)
    ex.queue(Catching())
    assert ex.run().skipped == {"": "not here"}  # the name of a benchmark without axes or meta keys


def test_every_combination_excluded_is_a_usage_error(tmp_path: Path) -> None:
    @pb.axis.sweep(block=pb.axis.ints([256]), items=pb.axis.ints([128]))
    @pb.axis.constrain(lambda c: c["block"] <= c["items"], "block > items")
    class Nothing(pb.Benchmark):
        def meta(self) -> dict[str, Any]:
            return {"algo": "n"}

        def run(self, state: pb.State) -> None:
            state.run(state.device.launch)

    ex = executor(tmp_path)
    ex.queue(Nothing())
    with pytest.raises(UsageError, match="every selected combination is excluded"):
        ex.run()


def test_a_constraint_that_raises_names_itself(tmp_path: Path) -> None:
    @pb.axis.sweep(block=pb.axis.ints([256]))
    @pb.axis.constrain(lambda c: c["missing"] > 0, "needs missing")
    class Broken(pb.Benchmark):
        def meta(self) -> dict[str, Any]:
            return {"algo": "n"}

        def run(self, state: pb.State) -> None:
            state.run(state.device.launch)

    ex = executor(tmp_path)
    ex.queue(Broken())
    with pytest.raises(UsageError, match="the constraint 'needs missing' raised KeyError"):
        ex.run()


@pb.axis.sweep(m=pb.axis.ints([1, 2, 4]), n=pb.axis.ints([8, 16, 32]), dtype=pb.axis.dtypes([np.float32]))
@pb.axis.zipped("m", "n")
class Zipped(pb.Benchmark):
    def meta(self) -> dict[str, Any]:
        return {"algo": "zip"}

    def run(self, state: pb.State) -> None:
        state.run(state.device.launch)


def test_zipped_axes_advance_together(tmp_path: Path) -> None:
    ex = executor(tmp_path, "--list")
    ex.queue(Zipped())
    assert ex.run().names == ("dtype: float32, m: 1, n: 8", "dtype: float32, m: 2, n: 16",
                              "dtype: float32, m: 4, n: 32")


def test_zipped_axes_need_as_many_values_after_axis_overrides(tmp_path: Path) -> None:
    ex = executor(tmp_path, "--list", "--axis", "m=[1,2]")
    ex.queue(Zipped())
    with pytest.raises(UsageError, match="need as many values each, got m 2, n 3"):
        ex.run()
    ex = executor(tmp_path, "--list", "--axis", "m=[1,2]", "--axis", "n=[3,4]")
    ex.queue(Zipped())
    assert ex.run().names == ("dtype: float32, m: 1, n: 3", "dtype: float32, m: 2, n: 4")


def test_zipping_an_unknown_axis_is_an_error(tmp_path: Path) -> None:
    @pb.axis.sweep(m=pb.axis.ints([1]))
    @pb.axis.zipped("m", "k")
    class Bad(pb.Benchmark):
        def meta(self) -> dict[str, Any]:
            return {"algo": "b"}

        def run(self, state: pb.State) -> None:
            state.run(state.device.launch)

    ex = executor(tmp_path)
    ex.queue(Bad())
    with pytest.raises(UsageError, match="names 'k', which is not an axis"):
        ex.run()
    with pytest.raises(UsageError, match="name two axes or more"):
        pb.axis.zipped("m")


def test_compare_says_skipped_neither_regression_nor_inconclusive(tmp_path: Path) -> None:
    def run(name: str, skip: bool) -> Path:
        ex = executor(tmp_path, "--rounds", "3", name=name)
        ex.queue(Constrained(lambda a: "skipped here" if skip and a["block"] == 64 else None))
        assert ex.run().exit_code == 0
        return tmp_path / name

    base, head = run("base.json", False), run("head.json", True)
    c = compare_runs([load_results(base)], [load_results(head)])
    rows = {r.name: r for r in c.rows}
    for name in ("block: 64, items: 128", "block: 64, items: 1024"):
        assert rows[name].verdict is Verdict.SKIPPED
        assert why(rows[name], c) == "skipped in head: skipped here"
    assert c.summary.counts[Verdict.SKIPPED] == 2 and c.summary.counts[Verdict.INCONCLUSIVE] == 0
    assert "2 skipped" in summary_line(c) and c.summary.compared == 3  # the skipped rows compare nothing
    from primbench.compare.render import render_markdown

    text = render_markdown(c)
    assert "| ⏭ skipped | skipped in head: skipped here |" in text
    assert "Worst: ⏭" not in text
    assert not c.failed("regression,inconclusive")


def test_history_ingest_leaves_skipped_specializations_out_of_the_series(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from tests.history_data import ingest, open_for_query

    ex = executor(tmp_path)
    ex.queue(Constrained(lambda a: "skipped here" if a["block"] == 64 else None))
    ex.run()
    db = tmp_path / "h.duckdb"
    assert [o.status for o in ingest([tmp_path / "r.json"], db).outcomes] == ["stored"]
    with open_for_query(db) as con:
        rows = con.execute("SELECT name FROM specializations ORDER BY idx").fetchall()
        assert con.execute("SELECT failures, specialization_count FROM runs").fetchone() == (0, 5)
    assert [r[0] for r in rows] == ["block: 128, items: 128", "block: 128, items: 1024", "block: 256, items: 1024"]


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("skip_and_constrain", ROOT / "examples" / "skip_and_constrain.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["skip_and_constrain"] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_on_the_fake_device(tmp_path: Path) -> None:
    example = _example()

    class OnTheFake(example.TileReverse):  # type: ignore[misc, name-defined]
        def kernel(self, state: pb.State, block: int, items: int, dtype: Any, n: int) -> Callable[[], object]:
            return lambda: state.device.launch(0.001 * items)

    out = io.StringIO()
    ex = executor(tmp_path, "--size", "1MiB", out=out)
    ex.queue(OnTheFake())
    report = ex.run()
    assert report.exit_code == 0
    assert report.excluded == {"block: 1024, dtype: float32, items_per_thread: 16": "a tile of more than 8192 items",
                               "block: 1024, dtype: float64, items_per_thread: 16": "a tile of more than 8192 items"}
    assert report.skipped == {"block: 1024, dtype: float64, items_per_thread: 8":
                              "the tile needs 64 KiB of static shared memory; a block may have 48 KiB"}
    results = load_results(tmp_path / "r.json")
    assert len(results.specializations) == 10 and results.summary is not None and results.summary.skipped == 1
    assert len(report.results) == 9


def test_the_example_lists_what_is_excluded_without_a_gpu() -> None:
    import subprocess

    done = subprocess.run([sys.executable, str(ROOT / "examples" / "skip_and_constrain.py"), "--list"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PATH": ""})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len([x for x in lines if not x.startswith("#")]) == 10
    assert [x for x in lines if x.startswith("# excluded: ")] == [
        "# excluded: block: 1024, dtype: float32, items_per_thread: 16: a tile of more than 8192 items",
        "# excluded: block: 1024, dtype: float64, items_per_thread: 16: a tile of more than 8192 items"]
