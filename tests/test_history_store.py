"""The store: default path, read-only queries, lock waiting, settings, import hygiene."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from primbench.errors import MissingDependencyError
from primbench.history.errors import HistoryError, StoreLockedError, StoreMissingError
from primbench.history.storage.contract import DEFAULT_DB, resolve_db
from primbench.history.storage.duckdb_file import connect, resolve_wait
from tests import history_data as hd
from tests.history_data import ingest, open_for_query


def test_default_path_env_and_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PRIMBENCH_HISTORY_DB", raising=False)
    assert resolve_db(None) == str(DEFAULT_DB) == ".primbench/history.duckdb"  # a location: a string
    monkeypatch.setenv("PRIMBENCH_HISTORY_DB", str(tmp_path / "env.duckdb"))
    assert resolve_db(None) == str(tmp_path / "env.duckdb")
    assert resolve_db(tmp_path / "opt.duckdb") == str(tmp_path / "opt.duckdb")
    assert resolve_db("scheme://u@h/db") == "scheme://u@h/db"  # a server's URL: never a Path (scheme:/u@h/db)


def test_default_store_is_created_under_cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PRIMBENCH_HISTORY_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    f = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("a")))
    report = ingest([f])
    assert len(report.stored) == 1
    assert (tmp_path / ".primbench" / "history.duckdb").is_file()


def test_wait_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIMBENCH_HISTORY_WAIT_SECS", "2.5")
    assert resolve_wait(None) == 2.5
    assert resolve_wait(0) == 0
    monkeypatch.setenv("PRIMBENCH_HISTORY_WAIT_SECS", "soon")
    with pytest.raises(HistoryError, match="PRIMBENCH_HISTORY_WAIT_SECS"):
        resolve_wait(None)


def test_query_on_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreMissingError, match=r"no history store here.*primbench history ingest"), \
            open_for_query(tmp_path / "none.duckdb"):
        pass
    assert not (tmp_path / "none.duckdb").exists()  # queries never create a store


def test_not_a_duckdb_file(tmp_path: Path) -> None:
    bogus = tmp_path / "x.duckdb"
    bogus.write_text("hello, not a database\n" * 100)
    with pytest.raises(HistoryError, match="not a DuckDB database"):
        connect(bogus, read_only=True, wait_secs=0)


def test_extension_autoload_and_autoinstall_are_off(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb", read_only=False)
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
    finally:
        con.close()
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


def _hold(path: Path, secs: float) -> subprocess.Popen[str]:
    """Another process that opens the store read-write and keeps it for `secs`."""
    code = textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(path)!r})
        print("held", flush=True)
        time.sleep({secs})
        con.close()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_writer_gets_a_clear_error_when_it_cannot_wait(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    f = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("a")))
    ingest([f], db)
    proc = _hold(db, 30)
    try:
        g = hd.write(tmp_path / "g.json", hd.document([2e12], commit=hd.sha("b")))
        with pytest.raises(StoreLockedError) as info:
            ingest([g], db, wait_secs=0.3)
        message = str(info.value)
        assert str(db) in message and "busy" in message and "--wait-secs" in message and "--shared" in message
        with pytest.raises(StoreLockedError), open_for_query(db, wait_secs=0.2):
            pass  # readers cannot open while a writer holds the file
    finally:
        proc.kill()
        proc.wait()


def test_writer_waits_for_the_lock_and_then_stores(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("a")))], db)
    proc = _hold(db, 1.5)
    try:
        start = time.monotonic()
        report = ingest([hd.write(tmp_path / "g.json", hd.document([2e12], commit=hd.sha("b")))], db, wait_secs=30)
        waited = time.monotonic() - start
    finally:
        proc.wait()
    assert len(report.stored) == 1
    assert waited > 0.5
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def test_importing_primbench_does_not_import_analysis_libraries() -> None:
    code = ("import sys, primbench, primbench.cli, primbench.cli.history; "
            "bad = [m for m in ('duckdb', 'pandas', 'scipy', 'matplotlib', 'primbench.history.storage.duckdb_file') "
            "if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: What a missing history library tells to install: the packages, or the extra from a clone.
HISTORY_ADVICE = r"pip install scipy pandas duckdb matplotlib`, or `pip install -e '\.\[history\]'`"


def test_missing_duckdb_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(MissingDependencyError, match=HISTORY_ADVICE):
        connect(tmp_path / "s.duckdb", read_only=False)


@pytest.mark.parametrize("module", ["pandas", "matplotlib", "scipy.stats"])
def test_every_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    from primbench.history.deps import require

    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=rf"'{module.split('.')[0]}'.*{HISTORY_ADVICE}"):
        require(module)


def test_a_writer_makes_a_new_store_whole_before_it_appears(tmp_path: Path) -> None:
    """A writer's new store is at the latest schema the moment it exists (a writer killed while
    migrating leaves no store, never one a reader must migrate); a bare read-write connect
    still makes an empty file, for tools that build old stores."""
    from primbench.history.storage import schema
    from primbench.history.storage.duckdb_file import open_for_write

    with open_for_write(tmp_path / "w.duckdb") as con:
        assert schema.stored_version(con) == schema.SCHEMA_VERSION
    con = connect(tmp_path / "w2.duckdb", read_only=False, migrated=True)
    try:
        assert schema.stored_version(con) == schema.SCHEMA_VERSION
    finally:
        con.close()
    con = connect(tmp_path / "bare.duckdb", read_only=False)
    try:
        assert schema.stored_version(con) == 0
    finally:
        con.close()
    assert not list(tmp_path.glob(".*.tmp*"))  # the temporaries are gone
