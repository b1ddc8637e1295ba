"""compare on GPU time per call (``--metric time``, and the default for benchmarks that declare
neither items nor bytes): lower is better, so a regression is the time going up; the change
keeps the sign of the time, the suite-wide shift and the geometric mean say which way they read."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.compare.core import compare_runs
from primbench.compare.model import FailOn, Verdict
from primbench.compare.render import render_json, render_markdown, render_terminal, summary_line, why
from primbench.console import make_console
from primbench.errors import UsageError
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec, write

TB = 1.0e12
MS = 0.25  # a quarter of a millisecond per call


def timed(name: str, ms: float, **kw: Any) -> dict[str, Any]:
    """A specialization that declares neither items nor bytes: only its time per call."""
    return spec(name, 0, items_per_second=0, time_ms=ms, **kw)


def side(*specs: dict[str, Any], source: str) -> list[Results]:
    return [results_from_dict(document(specs), source)]


def test_a_benchmark_without_items_or_bytes_is_compared_on_time() -> None:
    c = compare_runs(side(timed("a", MS), source="b"), side(timed("a", MS * 1.03), source="h"))
    row = c.rows[0]
    assert row.metric == "gpu_seconds_per_call" and row.higher_is_better is False
    assert row.base_value == pytest.approx(MS / 1000) and row.head_value == pytest.approx(MS * 1.03 / 1000)
    assert row.verdict is Verdict.REGRESSION  # 3 % slower
    assert row.change == pytest.approx(0.03)  # the time went up: a positive change
    assert row.change_low is not None and row.change_high is not None
    assert row.change_low < 0.03 < row.change_high
    assert row.min_detectable_change is not None and 0 < row.min_detectable_change < 0.03
    assert c.failed(FailOn.REGRESSION)


def test_a_shorter_time_is_an_improvement() -> None:
    c = compare_runs(side(timed("a", MS), source="b"), side(timed("a", MS * 0.97), source="h"))
    row = c.rows[0]
    assert row.verdict is Verdict.IMPROVEMENT
    assert row.change == pytest.approx(-0.03)
    assert not c.failed(FailOn.REGRESSION) and c.failed(FailOn.CHANGE)


def test_a_small_change_of_time_is_unchanged() -> None:
    row = compare_runs(side(timed("a", MS), source="b"), side(timed("a", MS * 1.001), source="h")).rows[0]
    assert row.verdict is Verdict.UNCHANGED


@pytest.mark.parametrize(("metric", "field"), [("time", "gpu_seconds_per_call"), ("bytes", "bytes_per_second"),
                                               ("items", "items_per_second")])
def test_metric_chooses_the_field(metric: str, field: str) -> None:
    c = compare_runs(side(spec("a", TB), source="b"), side(spec("a", TB * 0.97), source="h"), metric=metric)
    row = c.rows[0]
    assert row.metric == field and c.method.metric == metric
    assert row.verdict is Verdict.REGRESSION  # 3 % less throughput is 3.1 % more time: a regression either way
    expected = 1 / 0.97 - 1 if metric == "time" else -0.03
    assert row.change == pytest.approx(expected)


def test_time_and_throughput_give_mirrored_verdicts_and_statistics() -> None:
    base, head = side(spec("a", TB), source="b"), side(spec("a", TB * 0.99), source="h")
    rate, time = compare_runs(base, head).rows[0], compare_runs(base, head, metric="time").rows[0]
    assert rate.verdict is time.verdict is Verdict.REGRESSION
    assert math.log1p(rate.change or 0) == pytest.approx(-math.log1p(time.change or 0))
    assert rate.p_value == pytest.approx(time.p_value)
    assert rate.min_detectable_change == pytest.approx(time.min_detectable_change)
    assert time.change_low == pytest.approx(1 / (1 + (rate.change_high or 0)) - 1)
    assert time.change_high == pytest.approx(1 / (1 + (rate.change_low or 0)) - 1)


def test_a_metric_one_side_lacks_is_inconclusive_and_named() -> None:
    c = compare_runs(side(timed("a", MS), source="b"), side(timed("a", MS), source="h"), metric="bytes")
    row = c.rows[0]
    assert row.verdict is Verdict.INCONCLUSIVE
    assert "no positive value on both sides (bytes_per_second)" in row.reason


def test_an_unknown_metric_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--metric must be one of time, bytes, items"):
        compare_runs(side(timed("a", MS), source="b"), side(timed("a", MS), source="h"), metric="latency")


def test_added_and_removed_rows_show_their_time() -> None:
    c = compare_runs(side(timed("a", MS), timed("gone", 0.5), source="b"),
                     side(timed("a", MS), timed("new", 0.125), source="h"))
    assert c.row("copy", "gone").metric == "gpu_seconds_per_call"
    assert c.row("copy", "gone").base_value == pytest.approx(0.5e-3)
    assert c.row("copy", "new").head_value == pytest.approx(0.125e-3)


# --------------------------------------------------------------------------- the suite


def _suite(factor: float, n: int = 6) -> tuple[list[Results], list[Results]]:
    names = [f"n: {i}" for i in range(n)]
    return (side(*(timed(x, MS) for x in names), source="b"),
            side(*(timed(x, MS * factor) for x in names), source="h"))


def test_a_suite_wide_slowdown_in_time_reads_as_time_and_counts_as_a_regression() -> None:
    c = compare_runs(*_suite(1.08), suite_shift_limit=0.05)
    shift = c.suite_shift
    assert shift is not None and shift.detected and shift.higher_is_better is False
    assert shift.change == pytest.approx(0.08)  # time up 8 %
    assert shift.verdict is Verdict.REGRESSION
    assert "suite-wide shift of GPU time per call +8.00 %" in shift.describe()
    assert c.failed(FailOn.REGRESSION)
    assert json.loads(render_json(c))["suite_shift"]["of"] == "time"


def test_a_suite_wide_speedup_in_time_is_an_improvement() -> None:
    c = compare_runs(*_suite(0.92), suite_shift_limit=0.05)
    assert c.suite_shift is not None and c.suite_shift.verdict is Verdict.IMPROVEMENT
    assert c.suite_shift.change == pytest.approx(-0.08)
    assert not c.failed(FailOn.REGRESSION)


def test_rows_are_judged_relative_to_the_suite_in_their_own_direction() -> None:
    names = [f"n: {i}" for i in range(6)]
    base = side(*(timed(x, MS) for x in names), source="b")
    head = side(*(timed(x, MS * (1.10 if x == "n: 0" else 1.02)) for x in names), source="h")
    c = compare_runs(base, head, suite_shift_limit=1.0)  # a suite shift never counts: rows judged relative
    row = c.row("copy", "n: 0")
    assert row.relative_change == pytest.approx(1.10 / 1.02 - 1)
    assert row.verdict is Verdict.REGRESSION
    assert "relative to the suite's +2.00 %" in row.reason


def test_a_mixed_suite_shift_is_taken_on_the_throughput_scale() -> None:
    # everything 4 % slower: three throughputs down, three times up
    rates = [f"r: {i}" for i in range(3)]
    times = [f"t: {i}" for i in range(3)]
    base = side(*(spec(x, TB) for x in rates), *(timed(x, MS) for x in times), source="b")
    head = side(*(spec(x, TB / 1.04) for x in rates), *(timed(x, MS * 1.04) for x in times), source="h")
    c = compare_runs(base, head, suite_shift_limit=0.02)
    shift = c.suite_shift
    assert shift is not None and shift.higher_is_better is True
    assert shift.same_direction == 6
    assert shift.change == pytest.approx(1 / 1.04 - 1)
    assert shift.verdict is Verdict.REGRESSION
    assert c.summary.higher_is_better and c.summary.geomean_ratio == pytest.approx(1 / 1.04)
    # each row's "why" states the shift in its own direction: time up 4 %, throughput down 3.85 %
    assert why(c.row("copy", "t: 0"), c).startswith("judged relative to the suite-wide shift +4.00 %")
    assert why(c.row("copy", "r: 0"), c).startswith("judged relative to the suite-wide shift -3.85 %")


def test_the_geometric_mean_of_a_time_suite_is_of_time() -> None:
    c = compare_runs(*_suite(1.03))
    assert not c.summary.higher_is_better
    assert c.summary.geomean_ratio == pytest.approx(1.03)
    assert "geometric mean of head/base GPU time per call 1.0300 (+3.00 %)" in summary_line(c)
    assert json.loads(render_json(c))["summary"]["geomean_of"] == "time"


# --------------------------------------------------------------------------- renderers and the CLI


def _files(tmp_path: Path) -> tuple[str, str]:
    b = write(tmp_path / "b.json", document([timed("n: 256", MS), timed("n: 1024", 0.005)]))
    h = write(tmp_path / "h.json", document([timed("n: 256", MS * 1.03), timed("n: 1024", 0.005)]))
    return str(b), str(h)


def test_renderers_show_times_in_seconds_with_prefixes(tmp_path: Path) -> None:
    b, h = _files(tmp_path)
    from primbench.compare.core import load_side

    c = compare_runs(load_side(b), load_side(h))
    md = render_markdown(c)
    assert "| n: 256 | 250.00 µs | 257.50 µs | +3.00 % |" in md
    assert "| n: 1024 | 5.00 µs | 5.00 µs | +0.00 % |" in md
    import io

    out = io.StringIO()
    render_terminal(c, make_console(out))
    line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("n: 256"))
    assert "250.00 µs" in line and "257.50 µs" in line and "+3.00 %" in line and "regression" in line
    row = json.loads(render_json(c))["specializations"][0]
    assert row["metric"] == "gpu_seconds_per_call" and row["higher_is_better"] is False
    assert row["base"]["value"] == pytest.approx(0.25e-3) and row["change"] == pytest.approx(0.03)
    assert json.loads(render_json(c))["method"]["metric"] == "auto"


def test_cli_metric_option(tmp_path: Path) -> None:
    b, h = _files(tmp_path)
    r = CliRunner().invoke(app, ["compare", b, h, "--metric", "time", "-f", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["method"]["metric"] == "time"
    assert doc["specializations"][0]["verdict"] == "regression"
    r = CliRunner().invoke(app, ["compare", b, h, "-m", "bytes"])
    assert r.exit_code == 0  # nothing declares bytes: inconclusive, not a regression
    assert "2 inconclusive" in r.stdout


def test_cli_rejects_an_unknown_metric_with_exit_2(tmp_path: Path) -> None:
    b, h = _files(tmp_path)
    r = CliRunner().invoke(app, ["compare", b, h, "--metric", "latency"])
    assert r.exit_code == 2
    assert "latency" in r.output
