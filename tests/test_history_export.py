"""`history export --parquet DIR`: the tables a user's tools query, every row as stored; the
results documents only with ``--documents`` (issue 28: they were most of an export's bytes and
CPU, and no tool but primbench reads them). Real stores in tmp_path, real DuckDB."""

from __future__ import annotations

from pathlib import Path

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
    assert sorted(p.name for p in out.iterdir()) == ["batches.parquet", "runs.parquet", "schema_migrations.parquet",
                                                     "specializations.parquet"]
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
