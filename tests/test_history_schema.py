"""Schema versions and migrations, on real DuckDB files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from primbench.history.errors import SchemaError
from primbench.history.storage import schema
from primbench.history.storage.contract import open_store
from primbench.history.storage.duckdb_file import connect
from primbench.results import load_results
from tests import history_data as hd
from tests.history_data import ingest, open_for_query


def _runs(tmp_path: Path, n: int = 2) -> list[Path]:
    return hd.branch_series(tmp_path / "r", hd.noisy_levels(n, specs=2))


def test_fresh_store_is_at_the_latest_version(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest(_runs(tmp_path), db)
    info = open_store(db).info()
    assert info["schema_version"] == schema.SCHEMA_VERSION == len(schema.MIGRATIONS)
    assert len(info["migrations"]) == schema.SCHEMA_VERSION
    assert info["runs"] == 2 and info["specializations"] == 4


def _fill_as_old_writer(db: Path, files: list[Path]) -> None:
    """Store runs as a writer of schema 1 or 2 did: the tables' rows without runs.config_key (and
    specializations.gpu_seconds_per_call, which came with schema 5)."""
    from primbench.history.storage.ingest import Staged

    staged = Staged()
    for f in files:
        staged.add(load_results(f), str(f), dt.datetime.now(dt.UTC))
    con = connect(db, read_only=False)
    try:
        rows = staged.rows()
        for table in schema.TABLES:
            df = rows.frame(table)
            if df.empty:
                continue
            con.register("_old", df.drop(columns=["config_key", "gpu_seconds_per_call"], errors="ignore"))
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _old")
            con.unregister("_old")
    finally:
        con.close()


def _at_version(db: Path, version: int) -> None:
    con = connect(db, read_only=False)
    try:
        assert schema.migrate(con, target=version) == list(range(1, version + 1))
    finally:
        con.close()


def test_migrating_an_old_store_keeps_its_data(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _at_version(db, 1)
    # a version-1 store is refused by read-only queries, with the way out
    with pytest.raises(SchemaError, match=r"version 1, older .*primbench history migrate"), open_for_query(db):
        pass
    # ... and fill it as a version-1 writer would have: tables only
    _fill_as_old_writer(db, _runs(tmp_path, 3))
    assert open_store(db).migrate() == [2, 3, 4, 5, 6, 7]
    assert open_store(db).migrate() == []
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM measurements").fetchone()[0] == 6  # the view of migration 2
    assert len(open_store(db).runs()) == 3


def test_migrating_a_version_2_store_fills_in_the_config_keys(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _at_version(db, 2)
    plain = _runs(tmp_path, 2)
    small = hd.document([1e12], commit=hd.sha("small"), date=hd.START + dt.timedelta(hours=5))
    small["context"]["settings"].update(size=1048576, hot=True)
    small["context"]["custom_settings"] = {"extra_percent": 1.0}
    old = hd.document([1e12], commit=hd.sha("old"), version="4.0.0", date=hd.START + dt.timedelta(hours=6))
    del old["context"]["flags"]  # an old file: no flags, no cache_size (then 256 MiB)
    files = [*plain, hd.write(tmp_path / "small.json", small), hd.write(tmp_path / "old.json", old)]
    _fill_as_old_writer(db, files)
    con = connect(db, read_only=False)
    try:
        before = con.execute("SELECT * EXCLUDE (document) FROM runs ORDER BY run_id").fetchall()
        documents = dict(con.execute("SELECT run_id, CAST(document AS VARCHAR) FROM runs").fetchall())
        specs = con.execute("SELECT * FROM specializations ORDER BY run_id, idx").fetchall()
    finally:
        con.close()
    assert open_store(db).migrate() == [3, 4, 5, 6, 7]
    with open_for_query(db) as con:
        rows = con.execute("SELECT * EXCLUDE (config_key) FROM runs ORDER BY run_id").fetchall()
        assert rows == before  # the data is kept; the documents apart, as they were (migration 6)
        assert schema.document_texts(con, list(documents)) == documents
        assert con.execute("SELECT * EXCLUDE (gpu_seconds_per_call) FROM specializations ORDER BY run_id, idx"
                           ).fetchall() == specs
        keys = dict(con.execute("SELECT source_path, config_key FROM runs").fetchall())
        assert con.execute("SELECT count(*) FROM measurements WHERE config_key = 'size=1MiB hot extra_percent=1'"
                           ).fetchone()[0] == 1  # the view has the column
        versions = con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
        assert versions == [(1,), (2,), (3,), (4,), (5,), (6,), (7,)]
    assert keys == {str(plain[0]): "size=128MiB", str(plain[1]): "size=128MiB",
                    str(files[2]): "size=1MiB hot extra_percent=1", str(files[3]): "size=128MiB"}
    # the backfill and ingest agree: ingesting the same files again finds them all stored
    report = ingest(files, db)
    assert len(report.duplicates) == 4 and not report.stored
    # and a new run of the small configuration is keyed like the migrated one
    again = dict(small)
    again["context"] = {**small["context"], "general": {**small["context"]["general"], "commit_hash": hd.sha("s2")}}
    ingest([hd.write(tmp_path / "small2.json", again)], db)
    assert (open_store(db).runs()["config_key"] == "size=1MiB hot extra_percent=1").sum() == 2


def test_ingest_migrates_an_old_store(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = connect(db, read_only=False)
    try:
        schema.migrate(con, target=1)
    finally:
        con.close()
    ingest(_runs(tmp_path), db)
    assert open_store(db).info()["schema_version"] == schema.SCHEMA_VERSION


def test_a_failing_migration_is_rolled_back_with_its_record(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    broken = (*schema.MIGRATIONS, schema.Migration(
        schema.SCHEMA_VERSION + 1, "half-done", ("CREATE TABLE extra_notes (note VARCHAR)",
                                                 "SELECT * FROM no_such_table")))
    con = connect(db, read_only=False)
    try:
        schema.migrate(con)
        latest = schema.SCHEMA_VERSION
        with pytest.raises(SchemaError, match=rf"migration {latest + 1} \(half-done\) failed and was rolled back"
                                              rf".*version {latest}"):
            schema.migrate(con, migrations=broken)
        assert schema.stored_version(con) == latest
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert "extra_notes" not in tables  # the DDL went with the failed transaction

        def step(c: object) -> None:
            raise RuntimeError("the Python step failed")

        python_step = (*schema.MIGRATIONS, schema.Migration(
            latest + 1, "column, then a failing step", ("ALTER TABLE runs ADD COLUMN note VARCHAR",), step))
        with pytest.raises(SchemaError, match="the Python step failed"):
            schema.migrate(con, migrations=python_step)
        columns = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                             "WHERE table_name = 'runs'").fetchall()}
        assert "note" not in columns and "config_key" in columns
    finally:
        con.close()


def test_a_store_from_a_newer_primbench_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest(_runs(tmp_path), db)
    con = connect(db, read_only=False)
    try:
        con.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', current_timestamp)")
    finally:
        con.close()
    with pytest.raises(SchemaError, match=r"schema version 99, newer than this primbench .* upgrade primbench"), \
            open_for_query(db):
        pass
    extra = hd.write(tmp_path / "x.json", hd.document([3e12], commit=hd.sha("x")))
    with pytest.raises(SchemaError, match="newer"):
        ingest([extra], db)
    with pytest.raises(SchemaError, match="newer"):
        open_store(db).migrate()


def test_a_duckdb_file_that_is_not_a_store(tmp_path: Path) -> None:
    db = tmp_path / "other.duckdb"
    con = connect(db, read_only=False)
    try:
        con.execute("CREATE TABLE runs (x INTEGER)")
        with pytest.raises(SchemaError, match="not a primbench store"):
            schema.stored_version(con)
    finally:
        con.close()


def test_migrations_are_numbered_one_by_one() -> None:
    assert [m.version for m in schema.MIGRATIONS] == list(range(1, len(schema.MIGRATIONS) + 1))


def test_migration_5_fills_in_the_time_per_call_of_stored_runs(tmp_path: Path) -> None:
    """A store of schema 4 gets specializations.gpu_seconds_per_call, computed as ingest does
    (GPU time over kernel calls, NULL for a failed specialization), so `--metric time` reads
    every stored run; the view has the column."""
    db = tmp_path / "s.duckdb"
    _at_version(db, 4)
    doc = hd.document({"type: a": 1e12, "type: b": 2e12}, commit=hd.sha("t"), failed=["type: b"])
    files = [*_runs(tmp_path, 2), hd.write(tmp_path / "failed.json", doc)]
    _fill_as_old_writer(db, files)
    assert open_store(db).migrate() == [5, 6, 7]
    with open_for_query(db) as con:
        rows = con.execute("SELECT name, elapsed_gpu_secs, kernel_calls, gpu_seconds_per_call FROM specializations "
                           "ORDER BY run_id, idx").fetchall()
        assert con.execute("SELECT count(gpu_seconds_per_call) FROM measurements").fetchone()[0] == 5
    failed = [r for r in rows if r[0] == "type: b" and r[1] is None]
    assert len(failed) == 1 and failed[0][3] is None
    assert all(r[3] == pytest.approx(r[1] / r[2]) for r in rows if r[1] is not None)
    fresh = tmp_path / "fresh.duckdb"
    ingest(files, fresh)  # a new store, the same runs: ingest computes what the migration filled in
    with open_for_query(fresh) as con:
        assert con.execute("SELECT name, elapsed_gpu_secs, kernel_calls, gpu_seconds_per_call FROM specializations "
                           "ORDER BY run_id, idx").fetchall() == rows
