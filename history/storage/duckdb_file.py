"""The DuckDB file backend (``--db FILE``, the default ``.primbench/history.duckdb``):
`DuckDBStore`, its connections, and waiting for another process's lock.

DuckDB lets one process hold a file read-write,
and while it does no other process can open the file at all, not even read-only. So:

* writers (ingest, migrate, merge) keep their transaction short: they parse every input file
  before they open the store;
* queries open the store read-only;
* both retry while another process holds the file, with a growing, jittered pause, for up to
  ``wait_secs`` (default 60 s, environment ``PRIMBENCH_HISTORY_WAIT_SECS``), then fail with a
  message that says who holds it and what to do.

Extension auto-install and auto-load are off: the machines this runs on cannot download, and
the wheel's built-in extensions (ICU, JSON, Parquet) are all the store needs.
"""

from __future__ import annotations

import datetime as _dt
import os
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.history.deps import require
from primbench.history.errors import HistoryError, StoreLockedError, StoreMissingError
from primbench.history.selector import Selector
from primbench.history.storage import schema
from primbench.history.storage.contract import ENV_DB, AppliedMigration, Store, resolve_db

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.history.storage.ingest import Rows

ENV_WAIT = "PRIMBENCH_HISTORY_WAIT_SECS"
DEFAULT_WAIT_SECS = 60.0

CONFIG: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def duckdb_module() -> Any:
    """The ``duckdb`` module, or a MissingDependencyError that names the extra to install."""
    return require("duckdb")


def resolve_wait(wait_secs: float | None = None, env: Mapping[str, str] | None = None) -> float:
    """Seconds to wait for another process's lock: the argument, else ``$PRIMBENCH_HISTORY_WAIT_SECS``, else 60."""
    env = os.environ if env is None else env
    if wait_secs is not None:
        return max(0.0, float(wait_secs))
    text = env.get(ENV_WAIT)
    if text:
        try:
            return max(0.0, float(text))
        except ValueError:
            raise HistoryError(f"{ENV_WAIT}={text!r}: must be a number of seconds") from None
    return DEFAULT_WAIT_SECS


def _is_lock_conflict(exc: BaseException) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def connect(path: str | os.PathLike[str], *, read_only: bool, wait_secs: float | None = None,
            migrated: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the store's file, waiting while another process holds it.

    Read-only opening of a file that does not exist is an error (queries never create a store);
    read-write opening creates the file and its directory: empty, or with `migrated` already at
    this primbench's schema (what writers want: no reader ever sees a new store half-made)."""
    duckdb = duckdb_module()
    path = Path(path)
    if read_only and not path.exists():
        raise StoreMissingError(
            f"{path}: no history store here; create it with `primbench history ingest RESULTS.json --db {path}` "
            f"(or set {ENV_DB})"
        )
    if path.is_dir():
        raise HistoryError(f"{path}: is a directory, not a DuckDB history file")
    check_store_file(path)
    if not read_only and not path.exists():
        _create(path, duckdb, migrated)
    limit = resolve_wait(wait_secs)
    deadline = time.monotonic() + limit
    pause = 0.02
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=CONFIG)
            break
        except duckdb.IOException as exc:
            if not _is_lock_conflict(exc):
                raise HistoryError(f"{path}: cannot open the history store ({exc})") from None
            if time.monotonic() >= deadline:
                raise StoreLockedError(
                    f"{path}: the history store is busy: another process holds it "
                    f"({_holder(exc)}) and did not let go within {limit:g} s. DuckDB allows one "
                    f"writer per file and no readers while it writes. Retry, raise the wait with "
                    f"--wait-secs or {ENV_WAIT}, or let each runner write its own Parquet files "
                    f"(`primbench history ingest --shared DIR`, see docs/history.md)"
                ) from None
            time.sleep(min(pause * (0.5 + random.random()), max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 1.0)
        except duckdb.Error as exc:
            raise HistoryError(f"{path}: cannot open the history store ({exc})") from None
    try:
        check_backing_file(con, path)
        con.execute("SET TimeZone = 'UTC'")
    except BaseException:
        con.close()
        raise
    return con


DUCKDB_MAGIC = b"DUCK"  # bytes 8 to 11 of every DuckDB database file
_MAGIC_AT = 8


def check_store_file(path: Path) -> None:
    """An existing store path must be a regular file that starts like a DuckDB database:
    DuckDB would open a JSON or CSV file as an in-memory database over it, and everything
    written there would be lost without a word."""
    import stat

    try:
        info = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read the history store ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise HistoryError(f"{path}: not a regular file, so not a DuckDB history store")
    try:
        with open(path, "rb") as f:
            head = f.read(_MAGIC_AT + len(DUCKDB_MAGIC))
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read the history store ({exc.strerror or exc})") from None
    if head[_MAGIC_AT:] != DUCKDB_MAGIC:
        raise HistoryError(
            f"{path}: not a DuckDB database (it does not start with DuckDB's magic bytes); refusing to use it as "
            f"the history store. Give --db a new path or an existing store (a .duckdb file), or a folder of "
            f"Parquet parts")


def check_backing_file(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """The connection must be backed by the file itself, not an in-memory database."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    if not row or not row[0]:
        raise HistoryError(f"{path}: DuckDB opened this path as an in-memory database, not a file: nothing would "
                           f"be kept; refusing to use it as the history store")


def _create(path: Path, duckdb: Any, migrated: bool = False) -> None:
    """Create a DuckDB file so that no other process ever sees a half-made one: build it under
    a temporary name, then hard-link it into place (which fails if another process got there
    first; its file is then used). With `migrated` the file is at this primbench's schema
    before it appears (a writer killed while migrating leaves no store at all); else empty,
    and the schema comes with the first migration."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{random.getrandbits(32):08x}.tmp")
    try:
        con = duckdb.connect(str(tmp), config=CONFIG)
        try:
            if migrated:
                con.execute("SET TimeZone = 'UTC'")
                schema.migrate(con, source=str(path), migrations=schema.FILE_MIGRATIONS)
        finally:
            con.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: a rename may replace a racing twin, still whole
            if not path.exists():
                os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)


def _holder(exc: BaseException) -> str:
    text = str(exc)
    marker = "Conflicting lock is held in "
    if marker in text:
        return "held by " + text.split(marker, 1)[1].split(". See also", 1)[0]
    return text


def memory() -> duckdb.DuckDBPyConnection:
    """An in-memory database with the store's settings (for Parquet datasets and staging)."""
    duckdb = duckdb_module()
    con = duckdb.connect(":memory:", config=CONFIG)
    con.execute("SET TimeZone = 'UTC'")
    return con


@contextmanager
def open_for_write(db: str | os.PathLike[str] | None = None, *,
                   wait_secs: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The store opened read-write and migrated to this primbench's schema."""
    path = resolve_db(db)
    con = connect(path, read_only=False, wait_secs=wait_secs, migrated=True)
    try:
        schema.migrate(con, source=str(path), migrations=schema.FILE_MIGRATIONS)  # an existing store of an older schema
        yield con
    finally:
        con.close()


# Columns staged as JSON text that need an explicit cast (the rest cast implicitly).
CASTS = {"iterations_ms": "CAST(CAST(iterations_ms AS JSON) AS DOUBLE[])"}


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    """Insert a DataFrame's rows into `table` (a constant name), by column name: JSON text into
    JSON columns, ``iterations_ms`` from JSON text to ``DOUBLE[]``."""
    if frame.empty:
        return
    select = ", ".join(CASTS.get(c, f'"{c}"') + (f' AS "{c}"' if c in CASTS else "") for c in frame.columns)
    schema.execute_on_frame(con, "_primbench_stage", frame,
                            f"INSERT INTO {table} BY NAME SELECT {select} FROM _primbench_stage")


def insert_rows(con: duckdb.DuckDBPyConnection, rows: Rows) -> None:
    """Insert staged rows into the tables on `con` (inside the caller's transaction); where the
    store keeps documents apart (a DuckDB file, `schema.has_documents_table`), each run's
    document goes into the documents' last part, compressed (`schema.insert_documents`), the rest into ``runs``."""
    apart = schema.has_documents_table(con)
    for table in schema.TABLES:
        if not rows.count(table):
            continue
        frame = rows.frame(table)
        if table == "runs" and apart:
            insert_frame(con, "runs", frame.drop(columns=["document"]))
            schema.insert_documents(con, list(frame["run_id"]), list(frame["document"]))
            continue
        insert_frame(con, table, frame)


def write_transaction(con: duckdb.DuckDBPyConnection, rows: Rows) -> set[str]:
    """`insert_rows` in one transaction, rolled back on an error (then raised)."""
    try:
        con.execute("BEGIN TRANSACTION")
        insert_rows(con, rows)
        con.execute("COMMIT")
    except Exception:
        schema.rollback(con)
        raise
    return set(rows.run_ids)


def newest_dates(con: duckdb.DuckDBPyConnection, source: str, branches: Sequence[str],
                 params: Sequence[Any] = ()) -> dict[str, _dt.datetime]:
    """`Writer.newest_dates` on a DuckDB connection, over the runs of `source` (a table, or a
    ``read_parquet(?)`` with its `params`)."""
    from primbench.history.storage.ingest import DATE_TOLERANCE

    if not branches:
        return {}
    secs = int(DATE_TOLERANCE.total_seconds())
    rows = con.execute(f"SELECT branch, max(date) FROM {source} WHERE list_contains(?, branch) "
                       f"AND date <= ingested_at + to_seconds({secs}) GROUP BY branch",
                       [*params, list(branches)]).fetchall()
    return {b: d for b, d in rows if d is not None}


class DuckDBWriter:
    """The `history.storage.ingest.Writer` of a DuckDB connection (a file held read-write,
    or an in-memory store): the one writer, so no other one races it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def commits(self) -> set[str]:
        return {r[0] for r in self.con.execute('SELECT DISTINCT "commit" FROM runs WHERE "commit" IS NOT NULL')
                .fetchall()}

    def present(self, run_ids: Sequence[str]) -> set[str]:
        if not run_ids:
            return set()
        rows = self.con.execute("SELECT run_id FROM runs WHERE list_contains(?, run_id)", [list(run_ids)]).fetchall()
        return {r[0] for r in rows}

    def newest_dates(self, branches: Sequence[str]) -> dict[str, _dt.datetime]:
        return newest_dates(self.con, "runs", branches)

    def rename_commits(self, renames: Mapping[str, str]) -> None:
        try:
            self.con.execute("BEGIN TRANSACTION")
            for old, full in renames.items():
                self.con.execute('UPDATE runs SET "commit" = ? WHERE "commit" = ?', [full, old])
            self.con.execute("COMMIT")
        except Exception:
            schema.rollback(self.con)
            raise

    def write(self, rows: Rows) -> set[str]:
        return write_transaction(self.con, rows)


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows per table of the store open on `con`."""
    out = {}
    for table in schema.TABLES:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        out[table] = int(row[0]) if row else 0
    return out


class DuckDBStore(Store):
    """One DuckDB file: one writer at a time, queries read-only. Any location that no other
    backend claims is one (a new path with any name becomes a DuckDB file)."""

    kind = "DuckDB file"
    fallback = True  # any location no other backend claims

    def __init__(self, location: str | os.PathLike[str], *, wait_secs: float | None = None) -> None:
        super().__init__(location, wait_secs=wait_secs)
        self.path = Path(self.location)

    @classmethod
    def claims(cls, location: str) -> bool:
        return True

    @contextmanager
    def writer(self) -> Iterator[DuckDBWriter]:
        with open_for_write(self.path, wait_secs=self.wait_secs) as con:
            yield DuckDBWriter(con)

    def connect(self, *scope: Selector) -> duckdb.DuckDBPyConnection:
        con = connect(self.path, read_only=True, wait_secs=self.wait_secs)
        try:
            schema.check_readable(con, str(self.path), schema.FILE_MIGRATIONS)
        except BaseException:
            con.close()
            raise
        return con

    def info(self) -> dict[str, Any]:
        con = connect(self.path, read_only=True, wait_secs=self.wait_secs)
        try:
            version = schema.stored_version(con)
            out: dict[str, Any] = {
                "path": str(self.path), "kind": self.kind, "schema_version": version,
                "primbench_schema_version": schema.SCHEMA_VERSION,
                "migrations": [str(AppliedMigration(*row)) for row in schema.applied_migrations(con)],
            }
            if version >= 1:
                out.update(counts(con))
            out["size_bytes"] = self.path.stat().st_size
            return out
        finally:
            con.close()

    def migrate(self) -> list[int]:
        con = connect(self.path, read_only=False, wait_secs=self.wait_secs)
        try:
            return schema.migrate(con, source=str(self.path), migrations=schema.FILE_MIGRATIONS)
        finally:
            con.close()

    def migrations(self) -> list[AppliedMigration]:
        """The file's ``schema_migrations`` table (empty: no file yet)."""
        if not self.path.exists():
            return []
        con = connect(self.path, read_only=True, wait_secs=self.wait_secs)
        try:
            return [AppliedMigration(*row) for row in schema.applied_migrations(con)]
        finally:
            con.close()


#: This module's backend (`history.storage.contract.backends` finds it).
BACKEND = DuckDBStore
