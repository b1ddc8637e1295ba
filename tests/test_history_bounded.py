"""The history commands that read a branch's whole history do it a batch of specializations at
a time, reduced to one point per commit in SQL (issue 28: bounded memory at 100,000 runs).
Their answers must be those of the whole-frame path they replace: `per_commit` of the
`series` frame, and `regressions_of` of it, compared value for value on real DuckDB files."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store
from primbench.history.trends import SERIES_KEYS, per_commit, regressions_in, regressions_of
from tests import history_data as hd


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The standard story, and beside it commits measured 2 and 3 times (medians of an even and
    an odd count), runs without a commit, a failed specialization, another config."""
    root = tmp_path_factory.mktemp("bounded")
    path = hd.standard_history(root)
    start = hd.START + dt.timedelta(days=5)
    files = hd.branch_series(root / "twice", hd.noisy_levels(12, specs=3, seed=21, shifts={6: -0.04}),
                             branch="twice", runs_per_commit=2, start=start)
    files += hd.branch_series(root / "thrice", hd.noisy_levels(9, specs=2, seed=22, shifts={5: 0.05}),
                              branch="twice", prefix="thrice", runs_per_commit=3, start=start + dt.timedelta(days=1),
                              settings={"size": 1024}, failed=["type: t1"])
    for i, row in enumerate(hd.noisy_levels(8, specs=2, seed=23)):
        doc = hd.document(row, branch="twice", commit=None, date=start + dt.timedelta(days=2, hours=i))
        files.append(hd.write(root / "nocommit" / f"{i}.json", doc))
    report = hd.ingest(files, path)
    assert not report.errors, report.errors
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
            got = regressions_in(reader.commit_points(selector, metric=metric, rows=rows), metric=metric,
                                 min_size=2)
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
