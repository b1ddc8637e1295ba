"""The history commands that read a branch's whole history do it a batch of specializations at
a time, reduced to one point per commit in SQL (issue 28: bounded memory at 100,000 runs).
Their answers must be those of the whole-frame path they replace: `per_commit` of the
`series` frame, and `regressions_of` of it, compared value for value on real DuckDB files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store
from primbench.history.trends import SERIES_KEYS, per_commit, regressions_in, regressions_of
from tests import history_data as hd


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """`history_data.mixed_history`: the standard story, and beside it commits measured 2 and 3 times,
    runs without a commit, a failed specialization, another config."""
    path = hd.mixed_history(tmp_path_factory.mktemp("bounded"))
    return open_store(path)


SELECTORS = [S(branch="main"), S(branch="twice"), S(), S(branch="main", algorithm="copy2"),
             S(branch="twice", since="2026-01-07T00:00:00+00:00")]


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("metric", [None, "time", "bytes", "noise_percent"])
@pytest.mark.parametrize("last", [None, 4])
def test_commit_points_are_per_commit_of_the_series(db: Store, selector: S, metric: str | None,
                                                     last: int | None) -> None:
    columns = [*SERIES_KEYS, "commit", "date", "value", "metric", "noise_percent", "runs", "gpu_name"]
    with db.read() as reader:
        whole = per_commit(reader.series(selector, metric=metric, last=last))
        batches = list(reader.commit_points(selector, metric=metric, last=last, rows=1))
    expected = whole.sort_values(SERIES_KEYS, kind="stable")[columns].reset_index(drop=True)
    got = pd.concat(batches, ignore_index=True)[columns] if batches else expected.iloc[:0]
    assert len(batches) == len(whole[["algorithm", "name"]].drop_duplicates())  # a batch per specialization
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, check_exact=True)


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("metric", [None, "time"])
def test_regressions_a_batch_at_a_time_are_those_of_the_whole_frame(db: Store, selector: S,
                                                                    metric: str | None) -> None:
    with db.read() as reader:
        whole = regressions_of(reader.series(selector, metric=metric), metric=metric, min_size=2)
        for rows in (1, 40, 10**9):
            # read twice, as the commands do: once for the series' pooled noise
            got = regressions_in(lambda rows=rows: reader.commit_points(selector, metric=metric, rows=rows),
                                 metric=metric, min_size=2)
            pd.testing.assert_frame_equal(got, whole, check_exact=True)
    assert not whole.empty or selector.algorithm == "copy2"


def test_settings_are_checked_before_any_query() -> None:
    from primbench.errors import UsageError

    def never() -> list[pd.DataFrame]:
        raise AssertionError("queried")

    with pytest.raises(UsageError, match="--alpha"):
        regressions_in(iter(never, None), alpha=2.0)


def test_the_report_reads_what_the_whole_frame_holds(db: Store, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The report's counts, change points and charts, read without the whole frame, are the frame's."""
    from primbench.history.plots import charts_of
    from primbench.history.report import write_report

    with db.read() as reader:
        frame = reader.series(S(branch="twice"))
        changes = regressions_of(frame)
        overview, groups = reader.overview(S(branch="twice"))
    commits = frame["commit"].fillna("run:" + frame["run_id"].astype(str)).nunique()
    assert overview == (frame["run_id"].nunique(), commits, frame["date"].min(), frame["date"].max())
    assert len(charts_of(frame)) == len({(a, n, c, m) for a, n, c, m, _ in groups})
    out = tmp_path_factory.mktemp("report") / "r.html"
    done = write_report(db, S(branch="twice"), out, max_charts=3)
    assert (done.charts, done.change_points) == (3, len(changes))
    text = out.read_text()
    assert f"{frame['run_id'].nunique()} runs of {commits} commits" in text
    assert f"{len(charts_of(frame))} series" in text


def test_export_writes_bounded_row_groups_and_restores_the_settings(db: Store,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    import duckdb

    from primbench.history.export import DEFAULT_ROW_GROUP_ROWS, ROW_GROUP_ROWS, export_tables

    out = tmp_path_factory.mktemp("export")
    with db.read() as reader:
        before = reader.con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
        written = export_tables(reader.con, out)
        after = reader.con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
        stored = {t: reader.con.execute(f"SELECT count(*) FROM {t}").fetchone() for t in written}
    assert before == after
    con = duckdb.connect()
    for table, (path, rows) in written.items():
        assert (rows,) == stored[table]
        groups = con.execute("SELECT max(row_group_num_rows) FROM parquet_metadata(?)", [str(path)]).fetchone()
        assert groups is not None and (groups[0] or 0) <= ROW_GROUP_ROWS.get(table, DEFAULT_ROW_GROUP_ROWS)
    assert "documents" in written


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("window", [3, 5, 10**6])
def test_regressions_of_a_window_are_those_of_the_windowed_frame(db: Store, selector: S, window: int) -> None:
    """`regressions --window N` (a batch at a time, from SQL) answers as the whole-frame path on
    `series(last=N)`: the newest N commits, nothing older read."""
    with db.read() as reader:
        whole = regressions_of(reader.series(selector, last=window), min_size=1)
        got = reader.regressions(selector, min_size=1, window=window)
        whole_all = regressions_of(reader.series(selector), min_size=1)
        got_all = reader.regressions(selector, min_size=1)
    pd.testing.assert_frame_equal(got, whole, check_exact=True)
    pd.testing.assert_frame_equal(got_all, whole_all, check_exact=True)
    if window == 3 and selector.algorithm is None:
        assert got.empty or got["commits"].max() <= 3  # each series at most the window's 3 commits


@pytest.mark.parametrize("selector", [S(branch="main"), S(branch="twice"), S(branch="twice", algorithm="copy1")])
@pytest.mark.parametrize("metric", [None, "time", "energy"])
@pytest.mark.parametrize("last", [None, 4])
def test_series_of_several_names_are_each_names_series(db: Store, selector: S, metric: str | None,
                                                       last: int | None) -> None:
    """`series(names=...)`: in one query, each name's rows as its own `series` call gives them,
    in the same order; an empty list selects nothing."""
    from dataclasses import replace

    with db.read() as reader:
        every = sorted(reader.names(selector))
        together = reader.series(selector, metric=metric, last=last, names=every[:3])
        none = reader.series(selector, metric=metric, last=last, names=[])
        for name in every[:3]:
            alone = reader.series(replace(selector, name=name), metric=metric, last=last)
            part = together[together["name"] == name]
            pd.testing.assert_frame_equal(part.reset_index(drop=True), alone.reset_index(drop=True),
                                          check_dtype=False, check_exact=True)
    assert none.empty and list(none.columns) == list(together.columns)


def test_the_report_draws_its_charts_a_batch_at_a_time_as_one_by_one(db: Store,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """A batch of charts per query (`report._Drawing.rows`) draws the page one query per chart drew."""
    import primbench.history.report as report_module

    out = tmp_path_factory.mktemp("batches")
    pages = []
    for rows in (1, report_module.CHART_ROWS):
        was, report_module.CHART_ROWS = report_module.CHART_ROWS, rows
        try:
            report_module.write_report(db, S(branch="twice"), out / f"{rows}.html", max_charts=10)
        finally:
            report_module.CHART_ROWS = was
        pages.append((out / f"{rows}.html").read_text().split("Generated", 1)[1].split(".</p>", 1)[1])
    assert pages[0] == pages[1]
    assert pages[0].count("<script type='application/json'>") >= 3  # charts drawn: with 1 row a batch, a query each


def test_selected_date_flags_are_the_flags_of_the_selected_runs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The date flags of a selection, found from the runs table first, are `date_flags` of the
    run ids of its `series` frame, for the whole history and for a window; `date_flags` of many
    run ids (the flagged runs read first) is that of few (each run tested against the list)."""
    from primbench.history import queries

    rows = hd.noisy_levels(6, specs=2, seed=31)
    files = hd.branch_series(tmp_path / "a", rows, branch="main", start=hd.START)
    path = tmp_path / "h.duckdb"
    assert not hd.ingest(files, path).errors
    late = hd.document(rows[0], branch="main", commit="f" * 40, date=hd.START - dt.timedelta(days=30))
    assert not hd.ingest([hd.write(tmp_path / "late.json", late)], path).errors  # older than the branch's runs
    store = open_store(path)
    with store.read() as reader:
        for sel in (S(branch="main"), S(branch="main", algorithm="nothing-such"), S(branch="other")):
            for last in (None, 1, 3):
                frame = reader.series(sel, last=last)
                expected = reader.date_flags(list(dict.fromkeys(frame["run_id"])))
                assert reader.selected_date_flags(sel, last=last) == expected
        assert reader.selected_date_flags(S(branch="main")), "the late run is flagged"
        every = list(reader.runs(S())["run_id"])
        for ids in (every, every[:1], every[1:], []):
            few = reader.date_flags(ids)
            monkeypatch.setattr(queries, "_FEW_RUNS", 0)
            assert reader.date_flags(ids) == few and list(reader.date_flags(ids)) == list(few)
            monkeypatch.setattr(queries, "_FEW_RUNS", 1000)


@pytest.mark.parametrize("selector", [S(branch="main"), S(branch="twice"), S()])
@pytest.mark.parametrize("metric", [None, "time"])
@pytest.mark.parametrize("per_row", [0, 1, 10])
def test_newest_rows_among_the_newest_runs_are_each_series_newest(
        db: Store, selector: S, metric: str | None, per_row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`series(newest=N)` looks among the newest runs first (`NEWEST_RUNS_PER_ROW` x N of them) and
    takes a series short of rows there from all its rows: every series' N newest rows either way
    (0: every series from all its rows; 1: most of them short of rows)."""
    from primbench.history import queries

    monkeypatch.setattr(queries, "NEWEST_RUNS_PER_ROW", per_row)
    whole = db.series(selector, metric=metric)
    with db.read() as reader:
        for n in (1, 2, 5, 100):
            got = queries.series(reader.con, selector, metric=metric, newest=n)
            expected = whole.groupby(SERIES_KEYS, sort=False, dropna=False).tail(n)
            pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                          check_exact=True)


@pytest.mark.parametrize("n", [1, 3, 30])
def test_newest_commits_are_those_a_filtered_series_frame_keeps(db: Store, n: int) -> None:
    """`queries.newest_commits` (every chart's reference commits in one query) names, for each
    specialization, config, GPU model and latest date, the newest `n` distinct commits of the
    base's `series` frame of that specialization filtered so (`report._reference`'s choice)."""
    from dataclasses import replace

    from primbench.history import queries
    from primbench.history.labels import model

    base = S(branch="main")
    with db.read() as reader:
        frame = reader.series(S())
        keys = sorted({(a, nm, c or "", model(g)) for a, nm, c, g in
                       zip(frame["algorithm"], frame["name"], frame["config_key"], frame["gpu_name"], strict=True)})
        dates = sorted(frame["date"].unique())
        wanted = [(*k, d.to_pydatetime()) for k in keys for d in (dates[len(dates) // 3], dates[-1])]
        got = queries.newest_commits(reader.con, base, wanted, model, n)
        for i, (algorithm, name, config, gpu_model, latest) in enumerate(wanted):
            ref = reader.series(replace(base, algorithm=algorithm, name=name))
            ref = ref[(ref["config_key"].fillna("") == config) & (ref["gpu_name"].map(model) == gpu_model)
                      & (ref["date"] <= latest)]
            expected = list(ref["commit"].dropna().drop_duplicates().iloc[-n:])
            assert got.get(i, []) == expected, (algorithm, name, config, latest)
    assert any(len(v) >= min(n, 3) for v in got.values())  # some with commits to choose among


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("metric", [None, "time"])
def test_a_batch_of_charts_gets_the_points_each_chart_alone_gets(db: Store, selector: S, metric: str | None) -> None:
    """`report._points_of` (one `per_commit` call a batch of charts) gives each chart exactly what
    `per_commit` of its own rows gives: the same frame, columns, order and index; None where a chart
    has no rows (its own reduction then)."""
    from primbench.history.plots import charts_of
    from primbench.history.report import _points_of

    with db.read() as reader:
        frame = reader.series(selector, metric=metric)
    charts = charts_of(frame)
    parts = [chart.rows(frame) for chart in charts] + [frame.iloc[:0]]
    got = _points_of([*parts, None])
    assert len(got) == len(parts) + 1 and got[-1] is None and got[-2] is None
    assert len(charts) >= (0 if selector.algorithm == "copy2" else 2)
    for part, points in zip(parts[:-1], got, strict=False):
        assert points is not None
        pd.testing.assert_frame_equal(points, per_commit(part), check_exact=True)
