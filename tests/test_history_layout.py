"""The store layout of schemas 6 and 7 (issue 28): a DuckDB file keeps each run's document apart
from ``runs``, compressed (7: ``floats+xz``) and written once; the rounds, the spread between
rounds and the time per call's statistics are stored once (in the document); 7's
specializations have no primary-key index. Every query answers as it did on a store of schema 5
or 6, the migrations keep every document byte for byte, and a migration killed half-way leaves
the store as it was."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from primbench.history.reader import Reader
from primbench.history.selector import Selector
from primbench.history.storage import ingest as ingest_module
from primbench.history.storage import schema
from primbench.history.storage.contract import open_store
from primbench.history.storage.duckdb_file import DuckDBWriter, connect, duckdb_module
from primbench.history.storage.ingest import document_of, rows_of, stage_files
from tests import history_data as hd
from tests.layout_data import answers, rounds_files

#: What a store of each older schema kept: in extra (schema 5: everything the table has no
#: column for; 6: not the rounds) and the documents' codec (6: MessagePack under zlib).
_LEFT_TO_DOCUMENT = {5: (), 6: ("rounds",)}
_DROPPED = ("rounds", "between_rounds", "time_per_call")


def _old_store(db: Path, files: list[Path], monkeypatch: pytest.MonkeyPatch, version: int = 5) -> None:
    """`db` as a schema-`version` primbench wrote it: 5, documents in ``runs.document``, the
    rounds in ``specializations.extra`` too; 6, documents apart (MessagePack under zlib), the
    spread between rounds and the time per call's statistics in extra too."""
    monkeypatch.setattr(ingest_module, "EXTRA_LEFT_TO_DOCUMENT", _LEFT_TO_DOCUMENT[version])
    monkeypatch.setattr(schema, "DOCUMENT_CODEC", "msgpack+zlib")
    ingest_module._extra_fields.cache_clear()
    try:
        staged, _, _ = stage_files(files)
        con = connect(db, read_only=False)
        try:
            assert schema.migrate(con, migrations=schema.FILE_MIGRATIONS, target=version) == list(range(1, version + 1))
            staged.columns["runs"]["store_schema"] = [version] * len(staged.run_ids)
            DuckDBWriter(con).write(staged.rows())
            extra = con.execute("SELECT count(*) FROM specializations WHERE json_exists(extra, '$.time_per_call')"
                                ).fetchall()
            assert extra[0][0] > 0  # stored twice, as schemas 5 and 6 did
        finally:
            con.close()
    finally:
        monkeypatch.undo()
        ingest_module._extra_fields.cache_clear()


def _version_5_store(db: Path, files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _old_store(db, files, monkeypatch, 5)


def _texts(con: Any) -> dict[str, str]:
    """Every stored document's canonical text, by run id (either layout)."""
    run_ids = sorted(r[0] for r in con.execute("SELECT run_id FROM runs").fetchall())
    return schema.document_texts(con, run_ids)


@pytest.mark.parametrize("version", [5, 6])
def test_queries_answer_the_same_before_and_after_the_migration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 version: int) -> None:
    db = tmp_path / "s.duckdb"
    files = rounds_files(tmp_path / "in")
    _old_store(db, files, monkeypatch, version)
    duckdb = duckdb_module()
    con = duckdb.connect(str(db), read_only=True)
    try:
        before = answers(Reader(con))
        texts = _texts(con)
        merged_before = rows_of(con, sorted(texts))
    finally:
        con.close()
    assert open_store(db).migrate() == list(range(version + 1, schema.SCHEMA_VERSION + 1))
    with open_store(db).read() as reader:
        after = answers(reader)
        assert schema.document_texts(reader.con, sorted(texts)) == texts  # every document byte for byte
        merged_after = rows_of(reader.con, sorted(texts))
        columns = {r[0] for r in reader.con.execute("SELECT column_name FROM information_schema.columns "
                                                    "WHERE table_name = 'runs'").fetchall()}
        twice = reader.con.execute("SELECT count(*) FROM specializations WHERE json_exists(extra, '$.rounds') "
                                   "OR json_exists(extra, '$.between_rounds') OR json_exists(extra, '$.time_per_call')"
                                   ).fetchall()[0][0]
        codecs = reader.con.execute("SELECT DISTINCT codec FROM documents").fetchall()
        keys = reader.con.execute("SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
                                  "AND table_name IN ('runs', 'specializations', 'batches')").fetchall()
        leftovers = reader.con.execute("SELECT count(*) FROM information_schema.tables "
                                       "WHERE table_name LIKE 'documents7%'").fetchall()[0][0]
    assert after == before
    assert "document" not in columns and twice == 0 and codecs == [(schema.DOCUMENT_CODEC,)]
    assert keys == [("runs",)] and leftovers == 0  # runs keep theirs: a run is stored once, by its key
    # a merge takes the same rows from either layout (extra aside: what the document alone keeps)
    for table in schema.TABLES:
        old, new = merged_before.columns[table], merged_after.columns[table]
        if table == "specializations":
            old = dict(old, extra=[_without_rounds(e) for e in old["extra"]])
            new = dict(new, extra=[None if e is None else json.loads(e) for e in new["extra"]])
        assert old == new, table
    # and a store ingested at the latest schema holds what the migrated one does
    fresh = tmp_path / "fresh.duckdb"
    hd.ingest(files, fresh)
    with open_store(fresh).read() as reader:
        assert {k: v for k, v in answers(reader).items() if k != "runs"} == \
            {k: v for k, v in after.items() if k != "runs"}


def _without_rounds(text: str | None) -> Any:
    if text is None:
        return None
    value = json.loads(text)
    for key in _DROPPED:
        value.pop(key, None)
    return value or None


def test_a_document_is_read_by_its_key(tmp_path: Path) -> None:
    """The lookup is a point query on ``documents`` by run_id (its primary key); the plan and
    the stored size are what issue 28 records (tests/benchmarks/history_scale/layout.txt)."""
    db = tmp_path / "s.duckdb"
    hd.ingest(rounds_files(tmp_path / "in", runs=3), db)
    with open_store(db).read() as reader:
        run_id = reader.con.execute("SELECT run_id FROM runs LIMIT 1").fetchall()[0][0]
        # DuckDB 2 picks the index at run time: EXPLAIN says Seq Scan, EXPLAIN ANALYZE Index Scan
        plan = "\n".join(r[1] for r in reader.con.execute(
            "EXPLAIN ANALYZE SELECT codec, body FROM documents WHERE run_id = ?", [run_id]).fetchall())
        assert "Index Scan" in plan and "documents" in plan
        codecs = reader.con.execute("SELECT DISTINCT codec FROM documents").fetchall()
        assert codecs == [("floats+xz",)]
        assert reader.results(run_id).specializations


def test_a_document_messagepack_cannot_hold_is_kept_as_text() -> None:
    text = ingest_module.canonical_json({"big": 2**70, "x": [1.5, "é"]})
    codec, body = schema.encode_document(text)
    assert codec == "json+zlib" and schema.document_text(codec, body) == text
    for doc in ({"x": [0.1, 1e-300, 12345678901234567, -0.0, True, None, 2.0]}, {"a": {"b": [1.5, {"c": 2.5}]}},
                {"s": [{"t": 0.5, "u": 1}, {"t": 0.25, "u": 1.0}], "v": []}, [], {}):
        text = ingest_module.canonical_json(doc)
        for codec in schema.DOCUMENT_CODECS[:2]:  # floats+xz (written), msgpack+zlib (schema 6's, read)
            stored, body = schema.encode_document(text, codec)
            assert stored == codec and schema.document_text(codec, body) == text
            assert schema.decode_document(codec, body) == json.loads(text)


_MIGRATE = """
import sys
from primbench.history.storage.contract import open_store
print("start", flush=True)
open_store(sys.argv[1]).migrate()
print("done", flush=True)
"""


@pytest.mark.parametrize("version", [5, 6])
def test_a_migration_killed_half_way_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                version: int) -> None:
    db = tmp_path / "s.duckdb"
    files = rounds_files(tmp_path / "in", runs=40, specs=60)
    _old_store(db, files, monkeypatch, version)
    duckdb = duckdb_module()
    con = duckdb.connect(str(db), read_only=True)
    try:
        texts = _texts(con)
    finally:
        con.close()
    killed = False
    for delay in (0.05, 0.2, 0.5, 1.0):
        proc = subprocess.Popen([sys.executable, "-c", _MIGRATE, str(db)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "start"
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed = True
        proc.wait()
        con = duckdb.connect(str(db), read_only=True)
        try:
            reached = schema.stored_version(con)
            assert version <= reached <= schema.SCHEMA_VERSION
            assert _texts(con) == texts  # nothing lost, whichever it is
            codecs = {r[0] for r in con.execute("SELECT DISTINCT codec FROM documents").fetchall()} \
                if reached >= 6 else set()
            # at 6 the documents are all still in 6's codec, at 7 all in 7's: never a mix a reader of 6 cannot read
            assert codecs <= ({"msgpack+zlib"} if reached == 6 else {schema.DOCUMENT_CODEC} if reached == 7 else set())
            if reached == schema.SCHEMA_VERSION:
                break
        finally:
            con.close()
    assert open_store(db).migrate() == list(range(reached + 1, schema.SCHEMA_VERSION + 1))
    with open_store(db).read() as reader:
        assert _texts(reader.con) == texts
        assert len(reader.runs(Selector())) == len(texts)
    if not killed:  # pragma: no cover - the machine migrated faster than the first kill
        pytest.skip("every migration finished before it could be killed")


def test_documents_fill_parts_of_a_bounded_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each part holds at most DOCUMENT_PART_RUNS documents (an ingest's checkpoint rewrites one
    part at most); a write that does not fit goes on into a new part; every one is read by key."""
    monkeypatch.setattr(schema, "DOCUMENT_PART_RUNS", 2)
    db = tmp_path / "s.duckdb"
    files = rounds_files(tmp_path / "in", runs=5, specs=2)
    hd.ingest(files[:1], db)
    hd.ingest(files[1:], db)
    with open_store(db).read() as reader:
        parts = schema.document_parts(reader.con)
        sizes = [reader.con.execute(f"SELECT count(*) FROM {p}").fetchall()[0][0] for p in parts]
        run_ids = [r[0] for r in reader.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        plan = "\n".join(r[1] for r in reader.con.execute(
            "EXPLAIN ANALYZE SELECT codec, body FROM documents WHERE run_id = ?", [run_ids[0]]).fetchall())
        assert all(document_of(reader.results(r)) for r in run_ids)
    assert parts == ["documents_00000", "documents_00001", "documents_00002"] and sizes == [2, 2, 1]
    assert "Index Scan" in plan and "Sequential Scan" not in plan  # parts pruned or probed by key


def test_an_export_of_a_file_holds_the_documents_as_stored(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    hd.ingest(rounds_files(tmp_path / "in", runs=3, specs=2), db)
    written = open_store(db).export_parquet(tmp_path / "export")
    assert written["documents"][1] == 3 and "document" not in written
    duckdb = duckdb_module()
    con = duckdb.connect()
    rows = con.execute("SELECT run_id, codec, body FROM read_parquet(?)", [str(written["documents"][0])]).fetchall()
    with open_store(db).read() as reader:
        stored = schema.document_texts(reader.con, [r[0] for r in rows])
    assert {r: schema.document_text(c, b) for r, c, b in rows} == stored


def test_a_parquet_folder_of_schema_6_answers_the_same_after_migration_7(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder's parts are never rewritten: migration 7 records that new parts leave
    between_rounds and time_per_call to the document; the old parts, with them in extra too,
    answer as before, and old and new parts together as one store of the latest schema does."""
    folder = tmp_path / "parts"
    files = rounds_files(tmp_path / "in", runs=8, specs=3)
    monkeypatch.setattr(ingest_module, "EXTRA_LEFT_TO_DOCUMENT", _LEFT_TO_DOCUMENT[6])
    ingest_module._extra_fields.cache_clear()
    try:
        hd.ingest_shared(files[:5], folder, runner="old")
    finally:
        monkeypatch.undo()
        ingest_module._extra_fields.cache_clear()
    (folder / "schema_migrations" / "0007.parquet").unlink()  # the folder as schema 6 left it
    store = open_store(folder)
    assert [m.version for m in store.migrations()][-1] == 6
    with store.read() as reader:
        before = answers(reader)
    assert store.migrate() == [7]
    with store.read() as reader:
        assert answers(reader) == before
    hd.ingest_shared(files[5:], folder, runner="new")
    duckdb = duckdb_module()
    con = duckdb.connect()
    extra = {runner: con.execute("SELECT count(*) FROM read_parquet(?) WHERE json_exists(extra, '$.time_per_call')",
                                 [str(folder / "specializations" / f"runner={runner}" / "*.parquet")]).fetchall()[0][0]
             for runner in ("old", "new")}
    assert extra == {"old": 5 * 3, "new": 0}
    fresh = tmp_path / "fresh.duckdb"
    hd.ingest(files, fresh)
    with open_store(folder).read() as a, open_store(fresh).read() as b:
        assert {k: v for k, v in answers(a).items() if k != "runs"} == \
            {k: v for k, v in answers(b).items() if k != "runs"}
