"""The PostgreSQL backend (``--db postgresql://user@host/db``): one server that a fleet of
runners writes to at once and every dashboard reads (`PostgresStore`; the ``postgres``
extra, psycopg 3).

* **Many writers.** Each write is one transaction: the rows are copied into temporary tables,
  then the runs inserted in run-id order with ``ON CONFLICT (run_id) DO NOTHING``, and only the
  specializations and batches of the runs this transaction inserted follow. Two runners with
  the same run: the second waits on the first's row, then leaves the run alone; a writer killed
  mid-transaction leaves nothing (the server rolls it back). A run is stored once, whole.
* **Reading.** DuckDB's ``postgres`` extension is not used (it is a download): `connect` copies
  the ``runs`` and ``specializations`` rows (and ``batches``) through the driver, in one
  read-only repeatable-read transaction (the server writes CSV, ``COPY … TO STDOUT``, which
  DuckDB reads from a temporary file), into an in-memory DuckDB store at this primbench's
  schema, where every query runs unchanged. A command copies the values only of the
  specializations its filters can reach (their branches, their specialization's name), and
  of the others their keys, on which its filters are checked (`scoped`). A run's results
  document, the bulk of the data, is not copied: ``runs.document`` there is a view column
  that fetches the document of a run from the server when a query asks for it
  (`history.reader.Reader.results`); `export_parquet` copies them all.
* **Migrations.** Its own, in ``schema_migrations`` on the server, numbered like the DuckDB
  file's (`history.storage.schema`: the layout of version 5 is this backend's first), each in
  one transaction with its row, under an advisory lock so runners starting together migrate
  once.
* **Grafana.** The view ``grafana_series`` (time, branch, commit, specialization, value and
  the series' keys) is what a dashboard panel reads (docs/history.md).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from primbench.errors import MissingDependencyError
from primbench.history.errors import HistoryError, SchemaError, StoreMissingError, one_line
from primbench.history.selector import Selector
from primbench.history.storage import schema
from primbench.history.storage.contract import AppliedMigration, Store
from primbench.history.storage.duckdb_file import CASTS, memory

if TYPE_CHECKING:
    import duckdb

    from primbench.history.export import Written
    from primbench.history.storage.ingest import Rows

SCHEMES = ("postgresql://", "postgres://")
#: The advisory lock migrations hold (any constant: it names this application's lock).
_MIGRATION_LOCK = 0x7072696D62  # "primb"

# PostgreSQL types of the columns (`schema.COLUMNS`); JSON as ``json``: kept exactly as written.
_TYPES: dict[str, dict[str, str]] = {
    "runs": {
        "run_id": "text PRIMARY KEY", "algorithm": "text NOT NULL", "branch": "text", "commit": "text",
        "date": "timestamptz NOT NULL", "date_text": "text NOT NULL", "branch_source": "text",
        "commit_source": "text", "host": "text", "gpu_key": "text NOT NULL", "gpu_name": "text",
        "gpu_uuid": "text", "gpu_serial": "text", "gpu_pci_bus_id": "text", "gpu_arch": "text", "backend": "text",
        "results_version": "text NOT NULL", "primbench_version": "text", "python_version": "text",
        "general": "json", "settings": "json", "flags": "json", "custom_settings": "json",
        "specialization_count": "integer NOT NULL", "failures": "integer NOT NULL",
        "noise_timeouts": "integer NOT NULL", "document": "json NOT NULL", "source_path": "text",
        "ingested_at": "timestamptz NOT NULL", "store_schema": "integer NOT NULL", "config_key": "text",
    },
    "specializations": {
        "run_id": "text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE", "idx": "bigint NOT NULL",
        "name": "text NOT NULL", "algorithm": "text NOT NULL", "meta": "json",
        "bytes_per_second": "double precision", "items_per_second": "double precision",
        "bytes_per_item": "double precision", "items": "bigint", "noise_percent": "double precision",
        "noise_timeout": "boolean", "elapsed_host_secs": "double precision", "elapsed_gpu_secs": "double precision",
        "kernel_calls_per_batch": "bigint", "ms_per_batch": "double precision", "batch_count": "bigint",
        "kernel_calls": "bigint", "gpu_temp_start": "double precision", "gpu_temp_end": "double precision",
        "sm_clock_mhz": "double precision", "sm_clock_fraction": "double precision",
        "sm_clock_below_expected": "boolean", "sm_clock": "json", "error": "text", "extra": "json",
        "gpu_seconds_per_call": "double precision",
    },
    "batches": {
        "run_id": "text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE", "idx": "bigint NOT NULL",
        "batch": "integer NOT NULL", "batch_ms": "double precision NOT NULL", "kernel_calls": "bigint",
        "host_secs": "double precision", "iterations_ms": "double precision[]",
    },
}


def _create_table(table: str) -> str:
    cols = ", ".join(f'"{c}" {_TYPES[table][c]}' for c in schema.COLUMNS[table])
    key = "" if table == "runs" else ", PRIMARY KEY (" + ", ".join(f'"{c}"' for c in schema.KEYS[table]) + ")"
    return f"CREATE TABLE {table} ({cols}{key})"


#: What a Grafana panel reads: one row per measured specialization of a run, the value its
#: series follows by default (bytes/s where declared, else items/s, else GPU seconds per call).
GRAFANA_VIEW = """
CREATE VIEW grafana_series AS
SELECT r.date AS "time", r.branch, r."commit", s.name AS specialization,
       CASE WHEN s.bytes_per_second > 0 THEN s.bytes_per_second
            WHEN s.items_per_second > 0 THEN s.items_per_second
            ELSE s.gpu_seconds_per_call END AS value,
       CASE WHEN s.bytes_per_second > 0 THEN 'bytes_per_second'
            WHEN s.items_per_second > 0 THEN 'items_per_second'
            ELSE 'gpu_seconds_per_call' END AS metric,
       s.algorithm, r.gpu_key, r.gpu_name, r.config_key, r.host, s.noise_percent, r.run_id
FROM specializations s JOIN runs r USING (run_id)
WHERE s.error IS NULL
"""


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(5, "tables runs, specializations, batches at history schema 5; views measurements, latest_runs "
                 "and grafana_series", (
                     *(_create_table(t) for t in schema.TABLES),
                     'CREATE INDEX runs_branch_date ON runs (branch, date)',
                     "CREATE INDEX runs_commit ON runs (\"commit\")",
                     """CREATE VIEW measurements AS
                        SELECT r.branch, r."commit", r.date, r.gpu_key, r.gpu_name, r.host, r.config_key, s.*
                        FROM specializations s JOIN runs r USING (run_id)""",
                     """CREATE VIEW latest_runs AS
                        SELECT DISTINCT ON (branch, algorithm, gpu_key, config_key) run_id, algorithm, branch,
                               "commit", date, gpu_key, gpu_name, config_key, host
                        FROM runs ORDER BY branch, algorithm, gpu_key, config_key, date DESC, run_id""",
                     GRAFANA_VIEW,
                 )),
    # issue 28: the rounds were stored twice (the document, and extra): the document keeps them.
    # (runs.document needs no move here: PostgreSQL keeps a value this large out of the row, in
    # the table's TOAST storage, compressed, and rewrites nothing of it on later writes.)
    Migration(6, "specializations.extra without the rounds (kept once, in the run's document)", (
        """UPDATE specializations
           SET extra = CASE WHEN (extra::jsonb - 'rounds') = '{}'::jsonb THEN NULL
                            ELSE (extra::jsonb - 'rounds')::json END
           WHERE extra IS NOT NULL AND jsonb_typeof(extra::jsonb) = 'object'
             AND (extra::jsonb -> 'rounds') IS NOT NULL""",
    )),
    # issue 28: between_rounds and time_per_call were stored twice too. The (run_id, name)
    # primary key stays here (the server's own index; the DuckDB file drops its copy, 8.9 KB a run)
    Migration(7, "specializations.extra without between_rounds and time_per_call (kept once, in the run's "
                 "document)", (
        """UPDATE specializations
           SET extra = CASE WHEN (extra::jsonb - 'between_rounds' - 'time_per_call') = '{}'::jsonb THEN NULL
                            ELSE (extra::jsonb - 'between_rounds' - 'time_per_call')::json END
           WHERE extra IS NOT NULL AND jsonb_typeof(extra::jsonb) = 'object'
             AND ((extra::jsonb -> 'between_rounds') IS NOT NULL OR (extra::jsonb -> 'time_per_call') IS NOT NULL)""",
    )),
)
if MIGRATIONS[-1].version != schema.SCHEMA_VERSION:  # pragma: no cover - a schema change needs its migration here
    raise RuntimeError("history.storage.postgres: no migration to the history schema's version")

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


def scoped(scope: Sequence[Selector]) -> tuple[str, list[Any]]:
    """The condition (and its parameters) on ``specializations`` of the rows a reader copies
    whole for `scope`: those of the runs of the selectors' branches where every selector names
    a branch, and of their names where every one names a specialization ('' and no parameter:
    every row, as without a scope or where a selector leaves a filter out)."""
    clauses: list[str] = []
    params: list[Any] = []
    if scope and all(s.branch is not None for s in scope):
        clauses.append("run_id IN (SELECT run_id FROM runs WHERE coalesce(branch, '') = ANY(%s))")
        params.append(sorted({str(s.branch) for s in scope}))
    if scope and all(s.name is not None for s in scope):
        clauses.append("name = ANY(%s)")
        params.append(sorted({str(s.name) for s in scope}))
    return " AND ".join(clauses), params


#: What every specialization row keeps outside a reader's scope: enough for the checks of the
#: filters ("did you mean …") to see every name and algorithm of every run.
KEY_COLUMNS = ("run_id", "idx", "name", "algorithm")


def driver() -> Any:
    """The ``psycopg`` module, or a MissingDependencyError that names the ``postgres`` extra."""
    try:
        import psycopg
    except ImportError:
        raise MissingDependencyError("psycopg", "postgres", "a PostgreSQL history") from None
    return psycopg


def redact(url: str) -> str:
    """A URL without its password, in the user part or the query (for messages)."""
    url = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


class PostgresWriter:
    """The `history.storage.ingest.Writer` of one server connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def commits(self) -> set[str]:
        with self.conn.transaction():
            rows = self.conn.execute('SELECT DISTINCT "commit" FROM runs WHERE "commit" IS NOT NULL').fetchall()
        return {r[0] for r in rows}

    def present(self, run_ids: Sequence[str]) -> set[str]:
        if not run_ids:
            return set()
        with self.conn.transaction():
            rows = self.conn.execute("SELECT run_id FROM runs WHERE run_id = ANY(%s)", [list(run_ids)]).fetchall()
        return {r[0] for r in rows}

    def newest_dates(self, branches: Sequence[str]) -> dict[str, _dt.datetime]:
        from primbench.history.storage.ingest import DATE_TOLERANCE

        if not branches:
            return {}
        with self.conn.transaction():
            rows = self.conn.execute("SELECT branch, max(date) FROM runs WHERE branch = ANY(%s) "
                                     "AND date <= ingested_at + %s GROUP BY branch",
                                     [list(branches), DATE_TOLERANCE]).fetchall()
        return {b: d for b, d in rows if d is not None}

    def rename_commits(self, renames: Mapping[str, str]) -> None:
        with self.conn.transaction():
            for old, full in renames.items():
                self.conn.execute('UPDATE runs SET "commit" = %s WHERE "commit" = %s', [full, old])

    def write(self, rows: Rows) -> set[str]:
        with self.conn.transaction():
            written: set[str] = set()
            for table in schema.TABLES:
                if not rows.count(table):
                    continue
                cols = ", ".join(f'"{c}"' for c in schema.COLUMNS[table])
                stage = f"_primbench_stage_{table}"
                self.conn.execute(f"CREATE TEMP TABLE {stage} (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DROP")
                with self.conn.cursor().copy(f"COPY {stage} ({cols}) FROM STDIN") as copy:
                    for record in _pg_records(table, rows):
                        copy.write_row(record)
                if table == "runs":
                    inserted = self.conn.execute(
                        f"INSERT INTO runs ({cols}) SELECT {cols} FROM {stage} ORDER BY run_id "
                        "ON CONFLICT (run_id) DO NOTHING RETURNING run_id").fetchall()
                    written = {r[0] for r in inserted}
                elif written:
                    self.conn.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {stage} "
                                      "WHERE run_id = ANY(%s)", [sorted(written)])
            return written


def _pg_records(table: str, rows: Rows) -> Iterator[tuple[Any, ...]]:
    """A table's rows as the server takes them (``iterations_ms`` from JSON text to a list)."""
    if table != "batches":
        yield from rows.records(table)
        return
    at = schema.BATCH_COLUMNS.index("iterations_ms")
    for record in rows.records(table):
        text = record[at]
        yield (*record[:at], None if text is None else json.loads(text), *record[at + 1:])


class PostgresStore(Store):
    """A PostgreSQL server's database, named by a ``postgresql://`` URL (libpq's: user,
    password, host, port, database, ``?sslmode=…``; ``PGPASSWORD`` and ``~/.pgpass`` work too)."""

    kind = "PostgreSQL database"

    def __init__(self, location: str | os.PathLike[str], *, wait_secs: float | None = None) -> None:
        super().__init__(location, wait_secs=wait_secs)

    @classmethod
    def claims(cls, location: str) -> bool:
        return location.startswith(SCHEMES)

    @property
    def display(self) -> str:
        return redact(self.location)

    @contextmanager
    def _connection(self, *, read_only: bool = False) -> Iterator[Any]:
        psycopg = driver()
        timeout = 60 if self.wait_secs is None else max(1, int(self.wait_secs))
        try:
            conn = psycopg.connect(self.location, connect_timeout=timeout, autocommit=True)
        except psycopg.Error as exc:
            raise HistoryError(f"{self.display}: cannot connect to the PostgreSQL history ({one_line(exc)})") from None
        try:
            conn.execute("SET TIME ZONE 'UTC'")
            if read_only:
                conn.read_only = True
            yield conn
        except psycopg.Error as exc:  # one line, and the password never in it
            raise HistoryError(f"{self.display}: {one_line(exc)}") from None
        finally:
            conn.close()

    def _version(self, conn: Any) -> int:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL, to_regclass('runs') IS NOT NULL"
                           ).fetchone()
        if not row[0]:
            if row[1]:
                raise SchemaError(f"{self.display}: a 'runs' table but no schema_migrations: not a primbench store")
            return 0
        found = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(found[0]) if found and found[0] is not None else 0

    def _migrate(self, conn: Any) -> list[int]:
        applied = []
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
            conn.execute(_MIGRATIONS_TABLE)
            version = self._version(conn)
            if version > MIGRATIONS[-1].version:
                raise schema.too_new(version, MIGRATIONS[-1].version, self.display)
            for m in MIGRATIONS:
                if m.version <= version:
                    continue
                try:
                    with conn.transaction():  # a savepoint: the migration and its row, or neither
                        for statement in m.statements:
                            conn.execute(statement)
                        conn.execute("INSERT INTO schema_migrations (version, description) VALUES (%s, %s)",
                                     [m.version, m.description])
                except driver().Error as exc:
                    raise SchemaError(f"{self.display}: migration {m.version} ({m.description}) failed and was "
                                      f"rolled back: {one_line(exc)}") from None
                applied.append(m.version)
        return applied

    @contextmanager
    def writer(self) -> Iterator[PostgresWriter]:
        with self._connection() as conn:
            self._migrate(conn)
            yield PostgresWriter(conn)

    def migrate(self) -> list[int]:
        with self._connection() as conn:
            return self._migrate(conn)

    def _applied(self, conn: Any) -> list[AppliedMigration]:
        if not self._version(conn):
            return []
        return [AppliedMigration(*row) for row in conn.execute(
            "SELECT version, description, applied_at FROM schema_migrations ORDER BY version").fetchall()]

    def migrations(self) -> list[AppliedMigration]:
        """The server's ``schema_migrations`` table (empty: none yet)."""
        with self._connection(read_only=True) as conn:
            return self._applied(conn)

    def connect(self, *scope: Selector, documents: bool = False) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB store with the server's rows (documents fetched when asked for,
        or all of them with `documents`): every run, every specialization's key (run, index,
        name, algorithm), and the values of the specializations (and their batches) that the
        `scope` can reach (`scoped`; all of them without a scope)."""
        where, params = scoped(scope)
        con = memory()
        try:
            schema.migrate(con, source=":memory:")
            if not documents:
                con.execute("ALTER TABLE runs DROP COLUMN document")
                con.execute("ALTER TABLE runs RENAME TO runs_rows")
            with self._connection(read_only=True) as conn:
                conn.isolation_level = driver().IsolationLevel.REPEATABLE_READ
                with conn.transaction():  # one snapshot: no specialization without its run
                    version = self._version(conn)
                    if version == 0:
                        raise StoreMissingError(f"{self.display}: no history stored here yet; create it with "
                                                f"`primbench history ingest RESULTS.json --db URL`")
                    schema.check_version(version, self.display)
                    self._copy_table(conn, con, "runs", "runs" if documents else "runs_rows",
                                     skip=() if documents else ("document",))
                    within = f" WHERE {where}" if where else ""
                    self._copy_table(conn, con, "specializations", "specializations", within, params)
                    if where:  # the rest of the rows: their keys only (every value NULL)
                        self._copy_table(conn, con, "specializations", "specializations", f" WHERE NOT ({where})",
                                         params, skip=[c for c in schema.SPEC_COLUMNS if c not in KEY_COLUMNS])
                        within = (" WHERE (run_id, idx) IN (SELECT run_id, idx FROM specializations"
                                  f"{within})")
                    self._copy_table(conn, con, "batches", "batches", within, params)
            if not documents:
                self._lazy_documents(con)
        except BaseException:
            con.close()
            raise
        return con

    def _copy_table(self, conn: Any, con: duckdb.DuckDBPyConnection, table: str, target: str,
                    where: str = "", params: Sequence[Any] = (), skip: Sequence[str] = ()) -> None:
        """Copy a table's rows from the server into `target`: the server writes them as CSV
        (``COPY … TO STDOUT``, streamed to a temporary file), DuckDB reads that file, every
        column as text cast to its type (NULL unquoted, an empty string quoted: kept apart)."""
        wanted = [c for c in schema.COLUMNS[table] if c not in skip]
        select = ", ".join("array_to_json(iterations_ms)::text" if c == "iterations_ms"
                           else f'"{c}"::text' if c in schema.JSON_COLUMNS else f'"{c}"' for c in wanted)
        fd, name = tempfile.mkstemp(prefix=".primbench-pg-", suffix=".csv")
        try:
            with os.fdopen(fd, "wb") as out, conn.cursor().copy(
                    f"COPY (SELECT {select} FROM {table}{where}) TO STDOUT (FORMAT csv)", params or None) as copy:
                for data in copy:
                    out.write(data)
            if os.path.getsize(name) == 0:
                return
            columns = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in wanted) + "}"
            cols = ", ".join(CASTS.get(c, f'"{c}"') + (f' AS "{c}"' if c in CASTS else "") for c in wanted)
            con.execute(f"INSERT INTO {target} BY NAME SELECT {cols} FROM read_csv(?, header = false, "
                        f"delim = ',', quote = '\"', escape = '\"', columns = {columns}, auto_detect = false, "
                        "allow_quoted_nulls = false, strict_mode = true)", [name])
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)

    def _lazy_documents(self, con: duckdb.DuckDBPyConnection) -> None:
        """``runs.document`` as a view column over ``runs_rows``: a run's document comes from the
        server when a query selects it (DuckDB computes it only for the rows a query keeps)."""
        location = self.location

        def document(run_id: str) -> str | None:
            with driver().connect(location, autocommit=True) as conn:
                row = conn.execute("SELECT document::text FROM runs WHERE run_id = %s", [run_id]).fetchone()
            return None if row is None else str(row[0])

        con.create_function("primbench_document", document, ["VARCHAR"], "VARCHAR", side_effects=False)
        order = ", ".join("CAST(primbench_document(run_id) AS JSON) AS document" if c == "document" else f'"{c}"'
                          for c in schema.RUN_COLUMNS)
        con.execute(f"CREATE VIEW runs AS SELECT {order} FROM runs_rows")

    def export_parquet(self, directory: str | os.PathLike[str], *, documents: bool = True) -> Written:
        from primbench.history.export import store_identity
        from primbench.history.reader import Reader

        con = self.connect(documents=documents)  # without them, the documents are not fetched at all
        try:
            return Reader(con).export_parquet(directory, documents=documents, store=store_identity(self.location))
        finally:
            con.close()

    def info(self) -> dict[str, Any]:
        with self._connection(read_only=True) as conn:
            version = self._version(conn)
            out: dict[str, Any] = {"path": self.display, "kind": self.kind, "schema_version": version,
                                   "primbench_schema_version": schema.SCHEMA_VERSION}
            if version:
                out["migrations"] = [str(m) for m in self._applied(conn)]
                for table in schema.TABLES:
                    out[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            return out


#: This module's backend (`history.storage.contract.backends` finds it).
BACKEND = PostgresStore
