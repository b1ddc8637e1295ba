"""`history export --parquet DIR`: the tables a user's tools query, every row as stored; the
results documents only with ``--documents`` (issue 28: they were most of an export's bytes and
CPU, and no tool but primbench reads them). Real stores in tmp_path, real DuckDB."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history import commands
from primbench.history.export import export_tables
from primbench.history.storage.contract import Store, open_store
from tests import backends
from tests import history_data as hd

runner = CliRunner()
CASES = backends.cases()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file: 6 runs of 3 specializations, each with 2 batches."""
    where = tmp_path_factory.mktemp("export")
    db = where / "h.duckdb"
    hd.ingest(hd.branch_series(where / "in", hd.noisy_levels(6, specs=3), batches=2), db)
    return db


def _parquet_columns(path: Path) -> list[str]:
    import duckdb

    return [r[0] for r in duckdb.connect().execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()]


def test_the_documents_are_written_only_with_documents(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    code, text, _ = run("export", "--parquet", str(out), "--db", str(store))
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["batches.parquet", "primbench-export.json", "runs.parquet",
                                                     "schema_migrations.parquet", "specializations.parquet"]
    assert "documents were not written" in text and "--documents writes them" in text
    assert "earlier export" not in text

    code, text, _ = run("export", "--parquet", str(out), "--db", str(store), "--documents")
    assert code == 0 and "(6 rows of documents)" in text and "not written" not in text
    documents = out / "documents.parquet"
    assert _parquet_columns(documents) == ["run_id", "codec", "body"]

    # an export without them leaves an earlier export's documents as they were, and says so
    before = documents.read_bytes()
    code, text, _ = run("export", "--parquet", str(out), "--db", str(store))
    assert code == 0 and f"{documents} is an earlier export's, left as it was" in text
    assert documents.read_bytes() == before
    assert not list(out.glob(".*tmp"))


def test_the_json_output_names_what_was_written(store: Path, tmp_path: Path) -> None:
    import json

    code, text, _ = run("export", "--parquet", str(tmp_path / "a"), "--db", str(store), "-f", "json")
    assert code == 0 and sorted(json.loads(text)) == ["batches", "runs", "schema_migrations", "specializations"]
    code, text, _ = run("export", "--parquet", str(tmp_path / "b"), "--db", str(store), "-f", "json", "--documents")
    assert code == 0 and json.loads(text)["documents"]["rows"] == 6


@pytest.mark.parametrize("documents", [False, True])
def test_every_exported_row_is_the_stored_row(store: Path, tmp_path: Path, documents: bool) -> None:
    """Each table's Parquet file holds exactly the store's rows: EXCEPT ALL both ways is empty,
    the counts agree, and the columns are the table's, in its order, of the same types."""
    written = commands.export(store, tmp_path / "export", documents=documents)
    assert ("documents" in written) == documents
    with open_store(store).read() as reader:
        con = reader.con
        for table, (path, rows) in written.items():
            stored = con.execute(f"DESCRIBE SELECT * FROM {table}").fetchall()
            exported = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
            assert [r[:2] for r in stored] == [r[:2] for r in exported]  # JSON too: DuckDB marks and reads it
            for first, second in ((f"SELECT * FROM {table}", "SELECT * FROM read_parquet(?)"),
                                  ("SELECT * FROM read_parquet(?)", f"SELECT * FROM {table}")):
                extra = con.execute(f"SELECT count(*) FROM ({first} EXCEPT ALL {second})", [str(path)]).fetchone()
                assert extra == (0,), (table, first)
            assert (rows,) == con.execute(f"SELECT count(*) FROM {table}").fetchone()
            assert rows > 0


def test_the_settings_of_the_callers_connection_are_restored(store: Path, tmp_path: Path) -> None:
    settings = ("SELECT current_setting('memory_limit'), current_setting('threads'), "
                "current_setting('preserve_insertion_order')")
    with open_store(store).read() as reader:
        before = reader.con.execute(settings).fetchone()
        export_tables(reader.con, tmp_path / "export", documents=False)
        assert reader.con.execute(settings).fetchone() == before


@pytest.mark.parametrize("kind", list(CASES))
def test_every_kind_of_store_leaves_the_documents_out_unless_asked(kind: str, tmp_path: Path,
                                                                   request: pytest.FixtureRequest) -> None:
    """A store file keeps its documents in a table of their own (documents.parquet); a Parquet
    folder and a server keep them in ``runs.document``: out of runs.parquet without
    `documents`, in it (JSON text) with."""
    made: Store = CASES[kind].make(tmp_path / "store", request)
    made.ingest(hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2), batches=1))
    without = commands.export(made.location, tmp_path / "without")
    assert "documents" not in without and "document" not in _parquet_columns(without["runs"][0])
    assert without["runs"][1] == 3 and without["specializations"][1] == 6 and without["batches"][1] == 6
    with_them = commands.export(made.location, tmp_path / "with", documents=True)
    if "documents" in with_them:
        assert with_them["documents"][1] == 3 and "document" not in _parquet_columns(with_them["runs"][0])
    else:
        assert "document" in _parquet_columns(with_them["runs"][0])
    columns = [c for c in _parquet_columns(with_them["runs"][0]) if c != "document"]
    assert _parquet_columns(without["runs"][0]) == columns


# ------------------------------------------------------------------ incremental exports (issue 28)


def _grow(db: Path, where: Path, runs: int, *, seed: int) -> None:
    """`runs` more runs (3 specializations, 2 batches each) on a branch of their own."""
    hd.ingest(hd.branch_series(where, hd.noisy_levels(runs, specs=3, seed=seed), batches=2, branch=f"b{seed}"), db)


def _exported_twice(tmp_path: Path, added: int) -> tuple[Path, Path]:
    """A store of 3 runs exported into a folder, `added` more runs, exported again into it (the
    incremental path): the store and the folder."""
    db, out = tmp_path / "h.duckdb", tmp_path / "export"
    _grow(db, tmp_path / "in", 3, seed=1)
    commands.export(db, out)
    _grow(db, tmp_path / "in2", added, seed=2)
    commands.export(db, out)
    return db, out


def _tables_equal(db: Path, first: Path, second: Path, tables: tuple[str, ...]) -> None:
    """Each table read whole from two exports (``<table>*.parquet``) holds the same rows as the
    other, and as the store: EXCEPT ALL every way is empty."""
    with open_store(db).read() as reader:
        con = reader.con
        for table in tables:
            a, b = str(first / f"{table}*.parquet"), str(second / f"{table}*.parquet")
            stored = "SELECT * EXCLUDE (document) FROM runs" if table == "runs" and "document" in [
                r[0] for r in con.execute("DESCRIBE runs").fetchall()] else f"SELECT * FROM {table}"
            sources = (("SELECT * FROM read_parquet(?)", [a]), ("SELECT * FROM read_parquet(?)", [b]), (stored, []))
            for (x, px), (y, py) in itertools.permutations(sources, 2):
                extra = con.execute(f"SELECT count(*) FROM ({x} EXCEPT ALL {y})", [*px, *py]).fetchone()
                assert extra == (0,), (table, x, y)


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("documents", [False, True])
def test_an_incremental_export_equals_a_fresh_one(tmp_path: Path, documents: bool) -> None:
    """Run again into the same folder, the export writes only the runs added since, as new parts,
    and leaves every earlier file as it was; read whole (``<table>*.parquet``), each table is a
    fresh export's of the grown store, row for row."""
    db = tmp_path / "h.duckdb"
    _grow(db, tmp_path / "in1", 4, seed=1)
    out = tmp_path / "export"
    first = commands.export(db, out, documents=documents)
    assert not first.incremental and first["runs"][1] == 4
    before = _snapshot(out)

    _grow(db, tmp_path / "in2", 2, seed=2)
    added = commands.export(db, out, documents=documents)
    assert added.incremental and added.added_runs == 2
    tables = ("runs", "specializations", "batches", *(("documents",) if documents else ()))
    assert sorted(added) == sorted(tables)  # schema_migrations: unchanged, not written again
    assert {t: (p.name, n) for t, (p, n) in added.items()} == {
        t: (f"{t}.00001.parquet", {"runs": 2, "specializations": 6, "batches": 12, "documents": 2}[t]) for t in tables}
    after = _snapshot(out)
    assert {k: v for k, v in after.items() if k in before and k != "primbench-export.json"} == {
        k: v for k, v in before.items() if k != "primbench-export.json"}  # no earlier file rewritten

    _grow(db, tmp_path / "in3", 1, seed=3)
    assert commands.export(db, out, documents=documents)["runs"][0].name == "runs.00002.parquet"
    fresh = commands.export(db, tmp_path / "fresh", documents=documents)
    assert not fresh.incremental and fresh["runs"][1] == 7
    _tables_equal(db, out, tmp_path / "fresh", (*tables, "schema_migrations"))


def test_nothing_new_writes_nothing(tmp_path: Path) -> None:
    db, out = _exported_twice(tmp_path, 1)
    before = _snapshot(out)
    again = commands.export(db, out)
    assert again.incremental and again.added_runs == 0 and dict(again) == {}
    assert _snapshot(out) == before
    code, text, _ = run("export", "--parquet", str(out), "--db", str(db))
    assert code == 0 and "is up to date: no run was added" in text and "Wrote" not in text
    assert _snapshot(out) == before


def test_a_failure_midway_leaves_the_earlier_export_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part that cannot be written (here: the batches', after the runs' and specializations'
    were) leaves the earlier export as it was, every file and the manifest; the next export
    writes the runs the failed one could not."""
    from primbench.history import export as export_module
    from primbench.history.errors import HistoryError

    db, out = _exported_twice(tmp_path, 2)
    before = _snapshot(out)

    _grow(db, tmp_path / "in3", 2, seed=3)
    copy = export_module._copy

    def failing(con: Any, table: str, tmp: Path, target: Path, **kw: Any) -> int:
        if table == "batches":
            raise HistoryError(f"{target}: cannot write the export (disk full)")
        return copy(con, table, tmp, target, **kw)

    monkeypatch.setattr(export_module, "_copy", failing)
    with pytest.raises(HistoryError, match="disk full"):
        commands.export(db, out)
    assert _snapshot(out) == before  # no part of the failed export, no temporary

    # a failure after the parts were renamed (the manifest cannot be written): the same
    monkeypatch.setattr(export_module, "_copy", copy)

    def no_manifest(out: Path, manifest: Any) -> None:
        raise HistoryError("cannot write the manifest")

    monkeypatch.setattr(export_module, "_write_manifest", no_manifest)
    with pytest.raises(HistoryError, match="manifest"):
        commands.export(db, out)
    assert _snapshot(out) == before

    monkeypatch.undo()
    added = commands.export(db, out)
    assert added.incremental and added.added_runs == 2 and added["runs"][0].name == "runs.00002.parquet"
    commands.export(db, tmp_path / "fresh")
    _tables_equal(db, out, tmp_path / "fresh", ("runs", "specializations", "batches", "schema_migrations"))


def test_another_store_or_a_changed_one_is_exported_afresh(tmp_path: Path) -> None:
    """Into a folder that holds another store's export, or an export of runs the store no longer
    has as they were (a commit renamed), the export writes every table again and removes the
    earlier parts."""
    db, other = tmp_path / "h.duckdb", tmp_path / "other.duckdb"
    _grow(db, tmp_path / "in", 3, seed=1)
    _grow(other, tmp_path / "in-other", 2, seed=5)
    out = tmp_path / "export"
    commands.export(db, out)
    _grow(db, tmp_path / "in2", 1, seed=2)
    assert commands.export(db, out).incremental
    assert (out / "runs.00001.parquet").exists()

    switched = commands.export(other, out)
    assert not switched.incremental and switched["runs"][1] == 2
    assert not list(out.glob("*.0000*.parquet"))
    commands.export(other, tmp_path / "fresh-other")
    _tables_equal(other, out, tmp_path / "fresh-other", ("runs", "specializations", "batches"))

    _grow(other, tmp_path / "in-other2", 1, seed=6)
    assert commands.export(other, out).incremental
    import duckdb

    con = duckdb.connect(str(other))
    con.execute('UPDATE runs SET "commit" = \'renamed\' WHERE run_id = (SELECT min(run_id) FROM runs)')
    con.close()
    again = commands.export(other, out)
    assert not again.incremental and again["runs"][1] == 3 and not list(out.glob("*.0000*.parquet"))
    commands.export(other, tmp_path / "fresh-other2")
    _tables_equal(other, out, tmp_path / "fresh-other2", ("runs", "specializations", "batches"))


@pytest.mark.parametrize("kind", list(CASES))
def test_every_kind_of_store_exports_incrementally(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A folder of Parquet parts and a server as a DuckDB file: run again, the export writes the new
    run's rows only, and the folder read whole is a fresh export's."""
    made: Store = CASES[kind].make(tmp_path / "store", request)
    made.ingest(hd.branch_series(tmp_path / "in", hd.noisy_levels(2, specs=2), batches=1))
    out = tmp_path / "export"
    assert not commands.export(made.location, out).incremental
    made.ingest(hd.branch_series(tmp_path / "in2", hd.noisy_levels(1, specs=2, seed=4), batches=1, branch="b4"))
    added = commands.export(made.location, out)
    assert added.incremental and added.added_runs == 1
    assert {t: n for t, (_, n) in added.items()} == {"runs": 1, "specializations": 2, "batches": 2}
    assert commands.export(made.location, out) == {}
    commands.export(made.location, tmp_path / "fresh")
    with open_store(made.location).read() as reader:
        for table in ("runs", "specializations", "batches", "schema_migrations"):
            a, b = str(out / f"{table}*.parquet"), str(tmp_path / "fresh" / f"{table}*.parquet")
            # a folder's or a server's schema_migrations is made as it is read (applied_at: that moment),
            # in every export: its versions and descriptions are the store's
            columns = "version, description" if table == "schema_migrations" else "*"
            for x, y in ((a, b), (b, a)):
                extra = reader.con.execute(f"SELECT count(*) FROM (SELECT {columns} FROM read_parquet(?) EXCEPT ALL "
                                           f"SELECT {columns} FROM read_parquet(?))", [x, y]).fetchone()
                assert extra == (0,), (kind, table)
