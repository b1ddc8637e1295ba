"""Trend charts (PNG) and the static HTML report."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from primbench.history.errors import HistoryError
from primbench.history.plots import file_name, plot_series, trend_figure
from primbench.history.report import write_report
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from tests import history_data as hd

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hd.standard_history(tmp_path_factory.mktemp("history"))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_one_trend_chart(db: Path, tmp_path: Path) -> None:
    out = plot_series(db, S(branch="main", name="type: t0", algorithm="copy"), tmp_path / "t0.png")
    assert out == [tmp_path / "t0.png"]
    width, height = _png_size(out[0])
    assert width > 800 and height > 400


def test_one_chart_per_specialization(db: Path, tmp_path: Path) -> None:
    out = plot_series(db, S(branch="main"), tmp_path / "charts")
    names = sorted(p.name for p in out)
    assert names == sorted([file_name("copy", f"type: t{i}") for i in range(3)]
                           + [file_name("copy2", f"type: t{i}") for i in range(2)])
    for p in out:
        _png_size(p)


def test_chart_of_nothing_is_an_error(db: Path, tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no runs of specialization 'nope'"):
        plot_series(db, S(branch="main", name="nope"), tmp_path / "x.png")


def test_chart_draws_the_change_point(db: Path) -> None:
    from primbench.history.plots import trend_figure

    frame = open_store(db).series(S(branch="main", name="type: t0", algorithm="copy", gpu=hd.H200_A["uuid"]))
    fig = trend_figure(frame, title="t0")
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("-5.") and "% at " + hd.sha("main-20")[:8] in t for t in texts), texts
    assert len(ax.get_xticklabels()) > 5


def test_file_names_are_safe() -> None:
    assert file_name("copy", "type: long long / x") == "copy-type_long_long_x.png"
    assert "/" not in file_name("a", "../../etc/passwd")


def test_html_report_for_a_branch(db: Path, tmp_path: Path) -> None:
    report = write_report(db, S(branch="feat"), tmp_path / "report.html", base="main")
    text = report.path.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "Latest verdicts" in text and "Change points" in text and "Trends" in text
    assert "class='regression'" in text  # t1 is 4 % slower on feat
    drawn = len(re.findall(r"<figure class='chart' id='chart-\d+'>", text))
    short = len(re.findall(r"<span id='chart-\d+'>", text))  # series of one or two commits: a table row
    assert drawn + short == report.charts == 4  # feat has two commits: rows, not charts
    assert report.verdicts.get("regression") == 1


def test_html_report_for_main_lists_the_change_point(db: Path, tmp_path: Path) -> None:
    report = write_report(db, S(branch="main", gpu=hd.H200_A["uuid"]), tmp_path / "main.html")
    text = report.path.read_text()
    assert report.change_points == 1
    assert hd.sha("main-20")[:12] in text


def test_html_report_escapes_names(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    files = hd.branch_series(tmp_path / "in", [{evil: 1e12}] * 3, branch=evil)
    from tests.history_data import ingest

    ingest(files, tmp_path / "s.duckdb")
    report = write_report(tmp_path / "s.duckdb", S(branch=evil), tmp_path / "r.html", base=evil)
    text = report.path.read_text()
    assert evil not in text and html.escape(evil) in text


# --------------------------------------------------------------------------- issue 22


def test_png_charts_have_no_offset_axis_and_are_drawn_at_2x(db: Path) -> None:
    """A y axis of 1.0815…1.0825 TB/s reads as those values, never as "+1.082" above the ticks."""
    from primbench.history.plots import _png_bytes

    frame = open_store(db).series(S(branch="main", name="type: t0"))
    fig = trend_figure(frame)
    fig.canvas.draw()
    assert fig.axes[0].yaxis.get_offset_text().get_text() == ""
    png = _png_bytes(trend_figure(frame))
    width = int.from_bytes(png[16:20], "big")
    assert width == 10 * 110 * 2  # figsize 10 in at 110 dpi, saved at 2x


def test_report_headline_and_short_series_and_p_without_variability(tmp_path: Path) -> None:
    """The headline answers first; a series of one or two commits is a table row, not a chart; a
    p-value is — where there was no variability to test against."""
    from primbench.history.report import _p_text, _Verdict
    from tests.history_data import ingest

    files = hd.branch_series(tmp_path / "in", [{"type: a": 1e12}] * 2)
    ingest(files, tmp_path / "s.duckdb")
    report = write_report(tmp_path / "s.duckdb", S(branch="main"), tmp_path / "r.html")
    text = report.path.read_text()
    assert text.index("id='headline'") < text.index("<h2>")
    assert "main: no regression found in the last 2 commits" in text
    assert "<figure class='chart'" not in text and "Series of 2 commits or fewer" in text
    no_noise = _Verdict("copy", "a", "", "inconclusive", 1.0, 1.0, 0.0, 0.0, "no run-to-run variability", None, 0.0)
    assert _p_text(no_noise) == "—"


def test_report_charts_mark_the_report_s_own_change_points_without_a_second_analysis(
        db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each series is analysed once: the charts take the report's step rows, and mark the same
    change as a chart that finds its own (`changes_of`)."""
    from primbench.history import interactive, trends
    from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE

    store = open_store(db)
    frame = store.series(S(branch="main", gpu=hd.H200_A["uuid"], name=hd.spec_name(0), algorithm="copy"))
    kw = {"metric": None, "title": "t", "alpha": DEFAULT_ALPHA, "min_size": DEFAULT_MIN_SIZE,
          "min_shift": DEFAULT_MIN_SHIFT}
    own = interactive.chart_data(frame, **kw)
    calls: list[int] = []
    analyse = trends.changes_of
    monkeypatch.setattr(interactive, "changes_of", lambda *a, **k: calls.append(1) or analyse(*a, **k))
    report = write_report(db, S(branch="main", gpu=hd.H200_A["uuid"]), tmp_path / "main.html")
    assert report.change_points == 1 and calls == []  # no chart analysed its series again
    changes = trends.regressions_of(frame)
    steps = {(c.gpu_key, c.config_key): [(int(c.position), float(c.shift))] for c in changes.itertuples()}
    assert interactive.chart_data(frame, **kw, steps=steps) == own
    assert own["changes"] and hd.sha("main-20")[:7] in own["changes"][0]["text"]
