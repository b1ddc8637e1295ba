"""The history store under hostile and broken input (issue 16, items 1, 3, 5, 6 and 7)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.errors import HistoryError, HistoryWarning
from primbench.history.selector import Selector as S
from primbench.history.storage import ingest as ingest_mod
from primbench.history.storage import schema
from primbench.history.storage.contract import open_store
from primbench.history.storage.duckdb_file import DuckDBWriter, check_backing_file, connect
from primbench.history.storage.ingest import stage_files, write_atomically
from primbench.history.storage.parquet import parts
from tests import history_data as hd
from tests.history_data import ingest, ingest_shared, open_for_query


def invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


# --------------------------------------------------------------------------- 1: not a store


@pytest.mark.parametrize("suffix", [".json", ".csv", ".txt"])
def test_a_file_that_is_not_a_duckdb_database_is_refused(tmp_path, suffix):
    db = tmp_path / f"store{suffix}"
    db.write_text('{"a": 1}\n' if suffix == ".json" else "a,b\n1,2\n")
    before = db.read_bytes()
    good = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("c")))
    for args in (["history", "ingest", str(good), "--db", str(db)], ["history", "migrate", "--db", str(db)],
                 ["history", "runs", "--db", str(db)], ["history", "info", "--db", str(db)]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "not a DuckDB database" in result.output and result.output.count("\n") == 1
    assert db.read_bytes() == before


def test_a_connection_with_no_backing_file_is_refused(tmp_path):
    con = duckdb.connect(":memory:")
    with pytest.raises(HistoryError, match="in-memory"):
        check_backing_file(con, tmp_path / "x.json")


def test_a_new_store_with_any_suffix_is_a_real_file(tmp_path):
    db = tmp_path / "history.json"  # a new path: DuckDB creates a database file there
    good = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("c")))
    assert invoke("history", "ingest", str(good), "--db", str(db)).exit_code == 0
    assert len(open_store(db).runs()) == 1


# --------------------------------------------------------------------------- 3: no uncaught exception


def test_one_file_that_fails_in_an_unexpected_way_never_blocks_the_others(tmp_path, monkeypatch):
    good = hd.write(tmp_path / "good.json", hd.document([1e12], commit=hd.sha("g")))
    odd = hd.write(tmp_path / "odd.json", hd.document([1e12], commit=hd.sha("o"), algorithm="odd"))
    real = ingest_mod.config_key

    def config_key(results):
        if results.algorithm == "odd":
            raise RuntimeError("something nobody expected")
        return real(results)

    monkeypatch.setattr(ingest_mod, "config_key", config_key)
    report = ingest([odd, good], tmp_path / "h.duckdb")
    assert [o.status for o in report.outcomes] == ["error", "stored"]
    assert "odd.json" in report.errors[0].message and "nobody expected" in report.errors[0].message


def test_a_date_outside_the_range_never_aborts_the_good_files(tmp_path):
    good = hd.write(tmp_path / "good.json", hd.document([1e12], commit=hd.sha("g")))
    bad = hd.write(tmp_path / "bad.json", hd.document([1e12], commit=hd.sha("b"), date="9999-12-31T23:59:59-08:00"))
    result = invoke("history", "ingest", str(bad), str(good), "--db", str(tmp_path / "h.duckdb"))
    assert result.exit_code == 2
    assert "bad.json" in result.output and "context.general.date" in result.output
    assert len(open_store(tmp_path / "h.duckdb").runs()) == 1


class _FailingCommit:
    """A connection whose COMMIT fails the way DuckDB's does: the transaction is already over."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def execute(self, sql: str, *args):
        if sql == "COMMIT":
            self.con.execute("ROLLBACK")
            raise duckdb.TransactionException("TransactionContext Error: Failed to commit: disk full")
        return self.con.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self.con, name)


def test_a_failed_commit_then_rollback_does_not_raise_again(tmp_path):
    good = hd.write(tmp_path / "good.json", hd.document([1e12], commit=hd.sha("g")))
    staged, _, by_id = stage_files([good])
    con = connect(tmp_path / "h.duckdb", read_only=False)
    try:
        schema.migrate(con)
        written, failed = write_atomically(DuckDBWriter(_FailingCommit(con)), staged, list(by_id))  # type: ignore[arg-type]
    finally:
        con.close()
    assert list(failed.values()) == ["TransactionContext Error: Failed to commit: disk full"] and not written


def test_an_index_of_2_to_the_31_or_more_is_stored(tmp_path):
    doc = hd.document([1e12, 2e12], commit=hd.sha("i"), batches=3)
    doc["specializations"][1]["index"] = 2**31 + 5
    path = hd.write(tmp_path / "r.json", doc)
    report = ingest([path], tmp_path / "h.duckdb")
    assert not report.errors, report.errors
    with open_for_query(tmp_path / "h.duckdb") as con:
        assert con.execute("SELECT max(idx) FROM specializations").fetchone()[0] == 2**31 + 5
        assert con.execute("SELECT count(*) FROM batches WHERE idx = ?", [2**31 + 5]).fetchone()[0] == 3


def test_the_real_cause_of_a_failed_insert_is_named(tmp_path, monkeypatch):
    doc = hd.document([1e12], commit=hd.sha("i"))
    path = hd.write(tmp_path / "r.json", doc)
    real = ingest_mod.Rows.frame

    def frame(self, table):
        out = real(self, table)
        return out.assign(idx=2**70) if table == "specializations" else out  # too large for any column

    monkeypatch.setattr(ingest_mod.Rows, "frame", frame)
    report = ingest([path], tmp_path / "h.duckdb")
    message = report.errors[0].message
    assert "aborted" not in message and "\n" not in message
    assert "r.json: not stored" in message


def test_duplicate_indexes_are_a_bad_file(tmp_path):
    doc = hd.document([1e12, 2e12], commit=hd.sha("d"))
    doc["specializations"][1]["index"] = 0
    report = ingest([hd.write(tmp_path / "r.json", doc)], tmp_path / "h.duckdb")
    assert "specializations[1].index: duplicate index 0" in report.errors[0].message


def test_a_duckdb_error_that_escapes_the_core_is_one_line(tmp_path, monkeypatch):
    from primbench.history import commands

    def broken(*args, **kwargs):
        raise duckdb.IOException("IO Error: Could not read from file\n\nLINE 1: SELECT\n        ^")

    monkeypatch.setattr(commands, "runs", broken)
    result = invoke("history", "runs", "--db", str(tmp_path / "h.duckdb"))
    assert result.exit_code == 2 and result.output == "primbench history: error: IO Error: Could not read from file\n"


# --------------------------------------------------------------------------- 6: bounded inputs


def test_batches_are_keyed_by_index_not_by_a_repeated_name(tmp_path):
    name = "n" * 60000
    path = hd.write(tmp_path / "r.json", hd.document({name: 1e12}, commit=hd.sha("n"), batches=200))
    assert not ingest([path], tmp_path / "h.duckdb").errors
    with open_for_query(tmp_path / "h.duckdb") as con:
        columns = [r[0] for r in con.execute("DESCRIBE batches").fetchall()]
        assert "name" not in columns and "idx" in columns
        assert con.execute("SELECT count(*) FROM batches").fetchone()[0] == 200
    assert (tmp_path / "h.duckdb").stat().st_size < 5_000_000


def test_migration_4_keys_stored_batches_by_index(tmp_path):
    db = tmp_path / "h.duckdb"
    con = connect(db, read_only=False)
    try:
        schema.migrate(con, target=3)
        con.execute("INSERT INTO runs (run_id, algorithm, date, date_text, gpu_key, results_version, "
                    "specialization_count, failures, noise_timeouts, document, ingested_at, store_schema) "
                    "VALUES ('r', 'copy', now(), 'x', 'g', '4.1.0', 1, 0, 0, '{}', now(), 3)")
        con.execute("INSERT INTO specializations (run_id, idx, name, algorithm) VALUES ('r', 7, 'type: a', 'copy')")
        con.execute("INSERT INTO batches (run_id, name, batch, batch_ms) VALUES ('r', 'type: a', 0, 1.5), "
                    "('r', 'type: a', 1, 1.6)")
        assert schema.migrate(con, target=4) == [4]
        assert con.execute("SELECT idx, batch, batch_ms FROM batches ORDER BY batch").fetchall() == [
            (7, 0, 1.5), (7, 1, 1.6)]
    finally:
        con.close()


# --------------------------------------------------------------------------- 7: runs with no branch


def test_runs_with_no_branch_can_be_queried(tmp_path):
    db = tmp_path / "h.duckdb"
    files = [hd.write(tmp_path / f"r{i}.json", hd.document({"type: a": 1e12}, branch=None, commit=hd.sha(f"n{i}"),
                                                          date=hd.START.replace(hour=8 + i))) for i in range(2)]
    files.append(hd.write(tmp_path / "m.json", hd.document({"type: a": 1e12}, commit=hd.sha("m"))))
    assert not ingest(files, db).errors
    assert len(open_store(db).runs(S(branch=""))) == 2
    assert len(open_store(db).series(S(branch="", name="type: a"))) == 2
    result = invoke("history", "runs", "--db", str(db), "--branch", "", "-f", "json")
    assert result.exit_code == 0 and [r["branch"] for r in json.loads(result.output)] == [None, None]
    assert invoke("history", "series", "type: a", "--db", str(db), "--branch", "").exit_code == 0


# --------------------------------------------------------------------------- 5: shared Parquet history


def _shared(tmp_path: Path, n: int = 3, runner: str = "r1", folder: str = "shared") -> Path:
    shared = tmp_path / folder
    files = hd.branch_series(tmp_path / f"in-{folder}-{runner}", hd.noisy_levels(n, specs=2), batches=2,
                             prefix=f"{folder}-{runner}")
    assert not ingest_shared(files, shared, runner=runner).errors
    return shared


def _break(shared: Path) -> list[Path]:
    """An empty specializations part and a truncated runs part, of two other writes."""
    empty = shared / "specializations" / "runner=r2" / "part-empty.parquet"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    good = parts(shared, "runs")[0]
    truncated = shared / "runs" / "runner=r3" / "part-cut.parquet"
    truncated.parent.mkdir(parents=True)
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return [empty, truncated]


def test_unreadable_parts_are_skipped_with_a_warning_naming_them(tmp_path):
    shared = _shared(tmp_path)
    bad = _break(shared)
    with pytest.warns(HistoryWarning) as caught:
        assert len(open_store(shared).runs()) == 3
    text = " ".join(str(w.message) for w in caught)
    assert all(str(b) in text for b in bad) and "history quarantine" in text
    result = invoke("history", "runs", "--db", str(shared), "-f", "json")
    assert result.exit_code == 0 and "warning: " + str(bad[0]) in result.output
    # writers go on too
    more = hd.branch_series(tmp_path / "more", hd.noisy_levels(2, specs=2, seed=3), prefix="more")
    with pytest.warns(HistoryWarning):
        assert len(ingest_shared(more, shared, runner="r1").stored) == 2
    assert invoke("history", "ingest", str(more[0]), "--shared", str(shared)).exit_code == 0


def test_quarantine_moves_bad_and_orphan_parts_and_removes_stale_temporaries(tmp_path):
    shared = _shared(tmp_path)
    bad = _break(shared)
    orphan = shared / "batches" / "runner=r1" / "part-orphan.parquet"
    orphan.write_bytes(parts(shared, "batches")[0].read_bytes())
    stale = shared / "runs" / "runner=r1" / ".part-x.parquet.tmp"
    fresh = shared / "runs" / "runner=r1" / ".part-y.parquet.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    os.utime(orphan, (old, old))
    result = invoke("history", "quarantine", str(shared))
    assert result.exit_code == 0, result.output
    assert "3 part(s) moved" in result.output and "1 temporary" in result.output
    assert not stale.exists() and fresh.exists()
    assert all(not b.exists() for b in [*bad, orphan])
    assert (shared / "quarantine" / "runs" / "runner=r3" / "part-cut.parquet").exists()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", HistoryWarning)
        assert len(open_store(shared).runs()) == 3


def test_a_folder_name_with_glob_characters_reads_only_its_own_parts(tmp_path):
    mine = _shared(tmp_path, n=2, folder="g[1]")
    other = _shared(tmp_path, n=5, folder="g1")
    assert len(open_store(mine).runs()) == 2 and len(open_store(other).runs()) == 5
    strange = _shared(tmp_path, n=1, folder="a*?b")
    assert len(open_store(strange).runs()) == 1


def test_parts_of_schema_3_with_batches_keyed_by_name_still_load(tmp_path):
    shared = _shared(tmp_path, n=2)
    con = duckdb.connect()
    try:
        for part in parts(shared, "batches"):
            old = part.with_name("old.parquet")
            con.execute("COPY (SELECT b.run_id, s.name, b.* EXCLUDE (run_id, idx) FROM read_parquet(?) b "
                        "JOIN read_parquet(?) s ON b.run_id = s.run_id AND b.idx = s.idx) TO ? (FORMAT parquet)",
                        [str(part), str(parts(shared, "specializations")[0]), str(old)])
            os.replace(old, part)
    finally:
        con.close()
    with open_for_query(shared) as con:
        assert con.execute("SELECT count(*) FROM batches WHERE idx IS NOT NULL").fetchone()[0] == 2 * 2 * 2
