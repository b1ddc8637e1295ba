"""The one `Selector` of the history: its checks, and the SQL it becomes, run on real DuckDB."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from primbench.errors import UsageError
from primbench.history import selection
from primbench.history.selector import FILTERS, Selector, Where, gpu_clause, instant
from primbench.history.storage.contract import open_store
from tests import history_data as hd
from tests.history_data import ingest

NO_SERIAL = {"name": "NVIDIA H200", "arch": "sm_90", "pci_bus_id": "00000000:00:07.0"}  # key: name@bus


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five runs: main on GPU A (copy and copy2), main on GPU B, feat on GPU A (holding
    ``type: new``), one without a branch on a GPU with neither uuid nor serial (1 MiB)."""
    d = tmp_path_factory.mktemp("selector")
    at = [hd.START + dt.timedelta(hours=h) for h in range(5)]
    files = [
        hd.write(d / "a.json", hd.document({"type: a": 1e12}, commit=hd.sha("a"), date=at[0])),
        hd.write(d / "c2.json", hd.document({"type: a": 1e12}, algorithm="copy2", commit=hd.sha("a"), date=at[1])),
        hd.write(d / "b.json", hd.document({"type: a": 1e12}, commit=hd.sha("b"), date=at[2], gpu=hd.H200_B)),
        hd.write(d / "f.json", hd.document({"type: a": 1e12, "type: new": 1e12}, branch="feat", commit=hd.sha("f"),
                                           date=at[3])),
        hd.write(d / "n.json", hd.document({"type: a": 1e12}, branch=None, commit=hd.sha("n"), date=at[4],
                                           gpu=NO_SERIAL, settings={"size": 1048576})),
    ]
    db = d / "h.duckdb"
    assert not ingest(files, db).errors
    return db


def _branches(db: Path, selector: Selector, specs: bool = False) -> list[str | None]:
    """The branch of every run the selector's SQL selects (one row per run), by date."""
    where = selector.where("r", "s" if specs else None)
    source = "specializations s JOIN runs r USING (run_id)" if specs else "runs r"
    with open_store(db).read() as r:
        rows = r.con.execute(f"SELECT DISTINCT r.date, r.branch, r.algorithm FROM {source}{where.sql()} ORDER BY 1",
                             list(where.params)).fetchall()
    return [f"{b}/{a}" for _, b, a in rows]


def test_an_unreadable_date_is_refused_when_the_selector_is_made() -> None:
    with pytest.raises(UsageError, match="--since 'yesterday': not an ISO 8601 date"):
        Selector(since="yesterday")
    with pytest.raises(UsageError, match="--until '2026-13-01'"):
        Selector(until="2026-13-01")
    with pytest.raises(UsageError, match="--since 'soon'"):
        dataclasses.replace(Selector(), since="soon")  # a changed copy is checked too


def test_dates_are_instants_and_a_date_without_a_zone_is_utc() -> None:
    s = Selector(since="2026-01-31", until=dt.date(2026, 2, 1))
    assert s.start == dt.datetime(2026, 1, 31, tzinfo=dt.UTC) and s.stop == dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
    plus_one = Selector(since="2026-01-31T12:00+01:00").start
    assert plus_one == dt.datetime(2026, 1, 31, 11, 0, tzinfo=dt.UTC)
    assert Selector().start is None and instant("", "--since") is None


def test_a_selector_is_a_frozen_value_and_labels_only_rename() -> None:
    s = Selector(branch="main", labels=(("branch", "base branch"),))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.branch = "feat"  # type: ignore[misc]
    assert s == Selector(branch="main") and hash(s) == hash(Selector(branch="main"))
    assert s.label("branch") == "base branch" and Selector().label("gpu") == "GPU"
    assert s.describe() == "base branch 'main'"


def test_given_only_and_runs_only() -> None:
    s = Selector(config="size=1MiB", branch="", name="n", gpu="H200", since="2026-01-01")
    assert list(s.given()) == ["branch", "name", "gpu", "config", "since"]  # the order of FILTERS
    assert list(FILTERS) == ["branch", "name", "algorithm", "gpu", "config", "since", "until"]
    assert s.given()["branch"] == ""  # '' is a filter (no branch), None is none
    assert s.only("gpu", "name").given() == {"name": "n", "gpu": "H200"}
    assert s.runs_only() == Selector(config="size=1MiB", branch="", gpu="H200", since="2026-01-01")
    with pytest.raises(ValueError, match="unknown filters: colour"):
        s.only("colour")


def test_where_is_parameters_and_clauses_in_order() -> None:
    assert Selector().where().sql() == "" and Selector().where().params == ()
    w = Selector(branch="main", algorithm="copy", gpu="A100").where("r", "s")
    assert w.sql() == (" WHERE coalesce(r.branch, '') = ? AND " + gpu_clause("r") + " AND s.algorithm = ?")
    assert w.params == ("main", "A100", "A100", "A100", "copy")
    assert w.sql().count("?") == len(w.params)
    assert Where().and_("x = ?", 1).and_("y = ?", 2) == Where(("x = ?", "y = ?"), (1, 2))


def test_the_sql_selects_branches_and_runs_without_one(db: Path) -> None:
    assert _branches(db, Selector()) == ["main/copy", "main/copy2", "main/copy", "feat/copy", "None/copy"]
    assert _branches(db, Selector(branch="main")) == ["main/copy", "main/copy2", "main/copy"]
    assert _branches(db, Selector(branch="")) == ["None/copy"]
    assert _branches(db, Selector(branch="main' OR '1'='1")) == []  # a value, never SQL


@pytest.mark.parametrize(("gpu", "count"), [
    (hd.H200_A["uuid"], 3),  # the uuid (the key)
    (hd.H200_B["serial"], 1),  # the serial
    ("NVIDIA H200", 5),  # the model's name: every run
    ("GPU-5d6e1a0c-aaaa", 3),  # the start of the key
    ("5d6e1a0c-bbbb", 1),  # the start of the uuid without GPU-, as tables show it
    ("NVIDIA H200@00000000:00:07.0", 1),  # the key of a GPU with neither uuid nor serial
    ("H100", 0),
])
def test_the_one_gpu_clause_matches_key_uuid_serial_name_and_starts(db: Path, gpu: str, count: int) -> None:
    assert len(_branches(db, Selector(gpu=gpu))) == count


def test_config_dates_algorithm_and_name(db: Path) -> None:
    assert _branches(db, Selector(config="size=1MiB")) == ["None/copy"]
    since = hd.START + dt.timedelta(hours=2)
    assert _branches(db, Selector(since=since)) == ["main/copy", "feat/copy", "None/copy"]  # both ends included
    assert _branches(db, Selector(since=since, until=since)) == ["main/copy"]
    assert _branches(db, Selector(algorithm="copy2")) == ["main/copy2"]  # the run's algorithm
    assert _branches(db, Selector(algorithm="copy2"), specs=True) == ["main/copy2"]  # the specialization's
    assert _branches(db, Selector(name="type: new")) == ["feat/copy"]  # runs holding it (EXISTS)
    assert _branches(db, Selector(name="type: new"), specs=True) == ["feat/copy"]


def test_check_names_the_filter_that_matches_nothing(db: Path) -> None:
    with open_store(db).read() as r:
        r.check(Selector(branch="main", gpu="5d6e1a0c-b"))  # matches: no error
        with pytest.raises(selection.NoMatchError, match="no runs of branch 'mian'; did you mean 'main'"):
            r.check(Selector(branch="mian"))
        with pytest.raises(selection.NoMatchError, match="no runs of base branch 'nope'"):
            r.check(Selector(branch="nope", labels=(("branch", "base branch"),)))
        with pytest.raises(selection.NoMatchError,
                           match="no runs of specialization 'type: new' with branch 'main'; did you mean 'type: a'"):
            r.check(Selector(branch="main", name="type: new"))  # each filter exists, not the two together
        with pytest.raises(selection.NoMatchError, match="no runs of GPU 'A100'; GPUs stored: 'NVIDIA H200'"):
            r.check(Selector(gpu="A100"))
        r.check(Selector(since="2030-01-01"))  # an empty date range is an empty answer, not an error (issue 22)
