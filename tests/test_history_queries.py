"""Every query, on a real DuckDB file with a known story (tests/history_data.standard_history),
through the store's interface (`history.storage.contract.Store`) and one `Selector`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primbench.errors import UsageError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store
from primbench.history.trends import per_commit
from tests import history_data as hd


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return open_store(hd.standard_history(tmp_path_factory.mktemp("history")))


def test_runs_filters(db: Store) -> None:
    all_runs = db.runs()
    assert len(all_runs) == 30 + 8 + 2 + 6
    assert list(all_runs["date"]) == sorted(all_runs["date"], reverse=True)
    assert len(db.runs(S(branch="feat"))) == 2
    assert len(db.runs(S(algorithm="copy2"))) == 6
    assert len(db.runs(S(gpu=hd.H200_B["uuid"]))) == 8
    assert len(db.runs(S(gpu=hd.H200_B["serial"]))) == 8
    assert len(db.runs(S(gpu="GPU-5d6e1a0c-bbbb"))) == 8  # a prefix of the uuid
    assert len(db.runs(S(gpu="5d6e1a0c-bbbb"))) == 8  # ... without GPU-, as tables show it
    assert len(db.runs(S(gpu="NVIDIA H200"))) == 46
    assert len(db.runs(S(branch="main", since="2026-01-01T10:00:00+00:00", until="2026-01-01T12:30Z",
                         algorithm="copy", gpu=hd.H200_A["uuid"]))) == 3
    assert len(db.runs(S(name="type: new"))) == 2  # the runs that hold that specialization
    assert len(db.runs(limit=5)) == 5
    assert {"run_id", "date", "branch", "commit", "gpu_name", "host", "specializations"} <= set(all_runs.columns)


def test_user_strings_are_parameters_not_sql(db: Store) -> None:
    evil = "main' OR '1'='1"
    assert db.runs(S(branch=evil)).empty
    assert db.series(S(branch="main", name="x'; DROP TABLE runs; --")).empty
    assert len(db.runs()) == 46


def test_bad_dates_and_metrics_are_usage_errors(db: Store) -> None:
    with pytest.raises(UsageError, match="--since 'yesterday'"):
        db.runs(S(since="yesterday"))
    with pytest.raises(UsageError, match="unknown metric 'speed'; choose one of: time, bytes, items"):
        db.series(S(name="type: t0"), metric="speed")
    with pytest.raises(UsageError, match="--limit"):
        db.runs(limit=0)


def test_series_of_one_specialization_on_a_branch(db: Store) -> None:
    assert len(db.series(S(name="type: t0", branch="main", gpu=hd.H200_A["uuid"]))) == 36  # copy and copy2
    s = db.series(S(name="type: t0", branch="main", gpu=hd.H200_A["uuid"], algorithm="copy"))
    assert len(s) == 30
    assert list(s["commit"]) == [hd.sha(f"main-{i}") for i in range(30)]
    assert s["value"].iloc[25] == pytest.approx(0.95e12, rel=0.01)
    assert set(s["metric"]) == {"bytes_per_second"}  # the default where bytes are declared
    assert {"noise_percent", "gpu_temp_start", "gpu_temp_end", "sm_clock_mhz", "host"} <= set(s.columns)
    both = db.series(S(name="type: t0", branch="main", algorithm="copy"))
    assert set(both["gpu_key"]) == {hd.H200_A["uuid"], hd.H200_B["uuid"]}  # physical GPUs kept apart
    assert db.series(S(name="type: t0", branch="main"), metric="gpu_temp_end")["value"].eq(42.0).all()


def test_series_follows_the_chosen_metric(db: Store) -> None:
    sel = S(name="type: t0", branch="main", gpu=hd.H200_A["uuid"], algorithm="copy")
    time = db.series(sel, metric="time")
    rate = db.series(sel, metric="bytes")
    # the synthetic runs: the GPU time of 320 calls of 2 x 134217728 bytes at their bytes/s
    assert time["value"].tolist() == pytest.approx([2 * 134217728 / v for v in rate["value"]])
    assert set(time["metric"]) == {"gpu_seconds_per_call"}
    items = db.series(sel, metric="items")
    assert items["value"].tolist() == pytest.approx((db.series(sel, metric="bytes")["value"] / 2).tolist())
    assert set(db.series(sel, metric="noise_percent")["metric"]) == {"noise_percent"}


def test_per_commit_takes_the_median_of_repeated_runs(tmp_path: Path) -> None:
    frame = pd.DataFrame({
        "algorithm": ["a"] * 5, "name": ["n"] * 5, "gpu_key": ["g"] * 5, "gpu_name": ["G"] * 5,
        "branch": ["main"] * 5, "commit": ["c1", "c1", "c1", "c2", None],
        "run_id": ["r1", "r2", "r3", "r4", "r5"], "date": pd.to_datetime([1, 2, 3, 4, 5], unit="h", utc=True),
        "value": [1.0, 10.0, 2.0, 5.0, 6.0], "noise_percent": [0.1] * 5,
    })
    pc = per_commit(frame)
    assert list(pc["commit"]) == ["c1", "c2", "run:r5"]
    assert list(pc["value"]) == [2.0, 5.0, 6.0]
    assert list(pc["runs"]) == [3, 1, 1]
    assert list(pc["position"]) == [0, 1, 2]


def test_branches_with_their_latest_run(db: Store) -> None:
    b = db.branches()
    assert len(b) == 4  # (main, copy, GPU A), (main, copy, GPU B), (main, copy2), (feat, copy)
    feat = b[b["branch"] == "feat"].iloc[0]
    assert feat["latest_commit"] == hd.sha("feat-1") and feat["runs"] == 2
    main_a = b[(b["branch"] == "main") & (b["algorithm"] == "copy") & (b["gpu_key"] == hd.H200_A["uuid"])].iloc[0]
    assert main_a["latest_commit"] == hd.sha("main-29") and main_a["commits"] == 30
    assert b.iloc[0]["branch"] == "feat"  # newest first


def test_regressions_finds_the_planted_shift_at_its_commit(db: Store) -> None:
    r = db.regressions(S(branch="main"))
    assert len(r) == 1
    row = r.iloc[0]
    assert (row["algorithm"], row["name"], row["gpu_key"]) == ("copy", "type: t0", hd.H200_A["uuid"])
    assert row["commit"] == hd.sha("main-20") and row["previous_commit"] == hd.sha("main-19")
    assert row["kind"] == "regression" and row["metric"] == "bytes_per_second"
    assert row["shift"] == pytest.approx(-0.05, abs=0.005)
    assert row["confidence"] > 0.999
    assert db.regressions(S(branch="main"), last=5).empty  # the shift is 10 commits old
    assert len(db.regressions(S(branch="main"), last=10)) == 1
    assert db.regressions(S(branch="main", name="type: t1")).empty
    assert db.regressions(S(branch="main", gpu=hd.H200_B["uuid"])).empty


def test_names(db: Store) -> None:
    with db.read() as r:
        assert r.names(S(branch="feat")) == ["type: new", "type: t0", "type: t1", "type: t2"]


def test_a_reader_runs_every_query_on_one_connection(db: Store) -> None:
    from primbench.history.storage.contract import reading
    from tests.history_data import open_for_query

    with db.read() as r:
        assert len(r.runs(S(branch="feat"))) == 2
        assert len(r.series(S(name="type: t1", branch="feat"))) == 2
        assert r.gpu_key(S(gpu="5d6e1a0c-b")) == hd.H200_B["uuid"]  # a short id, as tables show it
    with open_for_query(db.path) as con, reading(con) as r:  # an open connection, e.g. for direct SQL
        assert len(r.runs(S(branch="feat"))) == 2


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(branch=st.text(min_size=1, max_size=30), name=st.text(min_size=1, max_size=30))
def test_any_branch_and_name_round_trip_as_parameters(tmp_path: Path, branch: str, name: str) -> None:
    """Quotes, semicolons, SQL keywords, NULs, emoji: what goes in comes back, nothing else."""
    db = tmp_path / f"h{abs(hash((branch, name)))}.duckdb"
    files = hd.branch_series(tmp_path / f"in{abs(hash((branch, name)))}", [{name: 1e12}, {name: 1.1e12}],
                             branch=branch, prefix="x")
    from tests.history_data import ingest

    assert not ingest(files, db).errors
    store = open_store(db)
    assert len(store.runs(S(branch=branch))) == 2
    got = store.series(S(name=name, branch=branch))
    assert list(got["name"]) == [name, name] and list(got["branch"]) == [branch, branch]
    assert store.series(S(name=name + "x", branch=branch)).empty


def test_a_sweep_reads_in_the_natural_order_of_its_names(tmp_path: Path) -> None:
    names = ["size: 1048576", "size: 256", "size: 65536", "size: 1024"]  # as a text sort would not have them
    doc = hd.document({n: 1e12 for n in names}, commit=hd.sha("main-0"))
    path = hd.write(tmp_path / "sweep.json", doc)
    store = open_store(tmp_path / "h.duckdb")
    store.ingest([path])
    got = per_commit(store.series(S(branch="main")))["name"].tolist()
    assert got == ["size: 256", "size: 1024", "size: 65536", "size: 1048576"]


@pytest.mark.parametrize("metric", [None, "time", "noise_percent", "ms_per_batch"])
def test_series_newest_keeps_each_series_newest_rows_in_sql(db: Store, metric: str | None) -> None:
    """``newest=N``: per (algorithm, name, GPU, config), the N newest rows of the whole series,
    in the same order and with the same values and metric (the default metric is still decided
    over every selected row)."""
    whole = db.series(S(branch="main"), metric=metric)
    with db.read() as reader:
        from primbench.history import queries

        window = queries.series(reader.con, S(branch="main"), metric=metric, newest=4)
        with pytest.raises(UsageError):
            queries.series(reader.con, S(branch="main"), newest=0)
    keys = ["algorithm", "name", "gpu_key", "config_key"]
    expected = whole.groupby(keys, sort=False, dropna=False).tail(4)
    assert len(window) == len(expected) < len(whole)
    assert window.reset_index(drop=True).equals(expected.reset_index(drop=True))
    assert set(window.groupby(keys, dropna=False).size()) == {4}
