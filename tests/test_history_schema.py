"""Schema versions and migrations, on real DuckDB files."""

from __future__ import annotations

from pathlib import Path

import pytest

from history import schema
from history.errors import SchemaError
from history.info import migrate_store, store_info
from history.ingest import ingest
from history.queries import list_runs
from history.store import connect, open_for_query
from tests import history_data as hd


def _runs(tmp_path: Path, n: int = 2) -> list[Path]:
    return hd.branch_series(tmp_path / "r", hd.noisy_levels(n, specs=2))


def test_fresh_store_is_at_the_latest_version(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest(_runs(tmp_path), db)
    info = store_info(db)
    assert info["schema_version"] == schema.SCHEMA_VERSION == len(schema.MIGRATIONS)
    assert len(info["migrations"]) == schema.SCHEMA_VERSION
    assert info["runs"] == 2 and info["specializations"] == 4


def test_migrating_an_old_store_keeps_its_data(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = connect(db, read_only=False)
    try:
        assert schema.migrate(con, target=1) == [1]
    finally:
        con.close()
    # a version-1 store is refused by read-only queries, with the way out
    with pytest.raises(SchemaError, match=r"version 1, older .*primbench history migrate"), open_for_query(db):
        pass
    # ... and fill it as a version-1 writer would have: tables only
    from history.ingest import Staged, insert_frames
    from primbench.results import load_results

    staged = Staged()
    import datetime as dt

    for f in _runs(tmp_path, 3):
        staged.add(load_results(f), str(f), dt.datetime.now(dt.UTC))
    con = connect(db, read_only=False)
    try:
        insert_frames(con, staged.frames())
    finally:
        con.close()
    assert migrate_store(db) == [2]
    assert migrate_store(db) == []
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM measurements").fetchone()[0] == 6  # the view of migration 2
    assert len(list_runs(db)) == 3


def test_ingest_migrates_an_old_store(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = connect(db, read_only=False)
    try:
        schema.migrate(con, target=1)
    finally:
        con.close()
    ingest(_runs(tmp_path), db)
    assert store_info(db)["schema_version"] == schema.SCHEMA_VERSION


def test_a_failing_migration_is_rolled_back_with_its_record(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    broken = (*schema.MIGRATIONS, schema.Migration(
        3, "half-done", ("CREATE TABLE extra_notes (note VARCHAR)", "SELECT * FROM no_such_table")))
    con = connect(db, read_only=False)
    try:
        schema.migrate(con)
        with pytest.raises(SchemaError, match=r"migration 3 \(half-done\) failed and was rolled back.*version 2"):
            schema.migrate(con, migrations=broken)
        assert schema.stored_version(con) == 2
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert "extra_notes" not in tables  # the DDL went with the failed transaction
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
        migrate_store(db)


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
