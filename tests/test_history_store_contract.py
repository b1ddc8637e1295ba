"""The `Store` contract: every backend (a DuckDB file, a folder of Parquet parts, a database
server), given the same results files, takes them and answers every query the same way (real
files in tmp_path, real DuckDB, a real server). Each backend's case is in its module of
tests/backends/ (`tests.backends.cases`): a new backend adds no line here."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from primbench.history.errors import StoreMissingError
from primbench.history.reader import Reader
from primbench.history.selection import NoMatchError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store, reading
from primbench.history.storage.schema import SCHEMA_VERSION
from tests import backends
from tests import history_data as hd

#: Every backend's case, by the name the tests give it: each runs every test of this file.
CASES = backends.cases()
KINDS = list(CASES)


def _make(kind: str, where: Path, request: pytest.FixtureRequest) -> Store:
    return CASES[kind].make(where, request)


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def test_every_store_of_the_product_is_in_this_contract_test() -> None:
    from primbench.history.storage.contract import backends

    product = {c for c in _subclasses(Store) if c.__module__.startswith("primbench.")}
    assert set(backends()) == product == {c.store for c in CASES.values()}


def _files(directory: Path) -> list[Path]:
    """main: 12 commits of two specializations, both 5 % slower from commit 6; feat: 2 commits on GPU B."""
    main = hd.branch_series(directory / "main", hd.noisy_levels(12, specs=2, cv=0.002, shifts={6: -0.05}, seed=5))
    feat = hd.branch_series(directory / "feat", hd.noisy_levels(2, specs=2, cv=0.002, seed=6), branch="feat",
                            start=hd.START + dt.timedelta(days=1), gpu=hd.H200_B)
    return main + feat


@pytest.fixture(params=KINDS)
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return _make(request.param, tmp_path, request)


@pytest.fixture(scope="module", params=KINDS)
def full(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Store:
    where = tmp_path_factory.mktemp(request.param)
    store = _make(request.param, where, request)
    report = store.ingest(_files(where / "in"))
    assert len(report.stored) == 14 and not report.errors
    return store


def test_a_store_that_holds_nothing_yet_cannot_be_read(empty: Store) -> None:
    with pytest.raises(StoreMissingError), empty.read():
        pass


def test_ingest_is_idempotent_and_names_a_bad_file(empty: Store, tmp_path: Path) -> None:
    files = _files(tmp_path / "in")[:3]
    bad = hd.document([1e12], commit=hd.sha("bad"))
    bad["specializations"][0]["noise_percent"] = "high"
    report = empty.ingest([*files, hd.write(tmp_path / "bad.json", bad)])
    assert len(report.stored) == 3 and len(report.errors) == 1
    assert "specializations[0].noise_percent" in (report.errors[0].message or "")
    again = empty.ingest(files)
    assert len(again.duplicates) == 3 and not again.stored
    assert len(empty.runs()) == 3


def test_open_store_finds_the_kind_from_the_path(full: Store) -> None:
    found = open_store(full.location)
    assert type(found) is type(full) and found.kind == full.kind
    assert len(found.runs()) == 14


def test_runs_newest_first_and_filtered(full: Store) -> None:
    runs = full.runs()
    assert len(runs) == 14 and list(runs["date"]) == sorted(runs["date"], reverse=True)
    assert len(full.runs(S(branch="feat"))) == 2
    assert len(full.runs(S(gpu="5d6e1a0c-b"))) == 2
    assert len(full.runs(limit=4)) == 4


def test_series_per_run_with_the_metric_it_follows(full: Store) -> None:
    s = full.series(S(branch="main", name=hd.spec_name(0)))
    assert len(s) == 12 and set(s["metric"]) == {"bytes_per_second"}
    assert s["value"].iloc[8] == pytest.approx(0.95e12, rel=0.02)  # after the shift
    time = full.series(S(branch="main", name=hd.spec_name(0)), metric="time")
    assert set(time["metric"]) == {"gpu_seconds_per_call"} and time["value"].notna().all()
    assert len(full.series(S(branch="main"), last=3)) == 3 * 2


def test_branches_and_change_points(full: Store) -> None:
    b = full.branches()
    assert sorted(b["branch"]) == ["feat", "main"]
    changes = full.regressions(S(branch="main"))
    assert list(changes["name"]) == [hd.spec_name(0), hd.spec_name(1)]
    assert set(changes["commit"]) == {hd.sha("main-6")} and set(changes["kind"]) == {"regression"}


def test_one_reader_checks_and_queries(full: Store) -> None:
    with full.read() as r:
        assert isinstance(r, Reader)
        r.check(S(branch="main"), S(branch="feat", gpu="5d6e1a0c-b"))
        with pytest.raises(NoMatchError, match="did you mean 'main'"):
            r.check(S(branch="mian"))
        run_id = str(r.runs(S(branch="feat"), limit=1)["run_id"].iloc[0])
        assert r.results(run_id).general.branch_name == "feat"
        assert r.gpu_key(S(branch="feat")) == hd.H200_B["uuid"]
    with reading(full) as r:  # a store, read once
        assert len(r.runs()) == 14


def test_info_migrate_and_export(full: Store, tmp_path: Path) -> None:
    info = full.info()
    assert info["kind"] == full.kind and info["schema_version"] == SCHEMA_VERSION
    assert (info["runs"], info["specializations"]) == (14, 28)
    assert full.migrate() == []  # at this primbench's schema already
    written = full.export_parquet(tmp_path / "export")
    assert written["runs"][1] == 14 and written["specializations"][1] == 28
    with open_store(full.location).read() as r:  # any DuckDB reads the export
        assert r.con.execute("SELECT count(DISTINCT run_id) FROM read_parquet(?)", [str(written["runs"][0])]
                             ).fetchone() == (14,)


def test_each_kind_keeps_its_applied_migrations_alike(full: Store) -> None:
    """Every backend has its table of applied migrations (a DuckDB file's and a server's
    ``schema_migrations`` table, a Parquet folder's ``schema_migrations`` parts), seen the same way."""
    applied = full.migrations()
    versions = [m.version for m in applied]
    assert versions == sorted(set(versions)) and versions[-1] == SCHEMA_VERSION
    assert all(m.description and m.applied_at.tzinfo is not None for m in applied)
    assert full.info()["migrations"] == [str(m) for m in applied]
    assert full.migrate() == [] and full.migrations() == applied


def test_migrate_makes_a_new_store_and_records_what_it_applied(empty: Store) -> None:
    assert empty.migrations() == []
    applied = empty.migrate()
    assert applied and applied == [m.version for m in empty.migrations()] and applied[-1] == SCHEMA_VERSION
    assert empty.migrate() == []
    assert empty.info()["schema_version"] == SCHEMA_VERSION


def test_every_kind_answers_alike(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    files = _files(tmp_path / "in")
    stores = [_make(kind, tmp_path, request) for kind in KINDS]
    for store in stores:
        store.ingest(files)
    frames = [(s.runs(), s.series(S(branch="main")), s.branches(), s.regressions(S(branch="main"))) for s in stores]
    for other in frames[1:]:
        for a, b in zip(frames[0], other, strict=True):  # the time of each store's ingest aside (its own)
            pd.testing.assert_frame_equal(a.drop(columns=["ingested_at"], errors="ignore"),
                                          b.drop(columns=["ingested_at"], errors="ignore"))
