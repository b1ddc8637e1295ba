"""The Parquet folder backend: a directory of Parquet parts, one writer per part, shared by
many machines (`ParquetStore`).

A DuckDB file takes one writer at a time, and a file on a network share or in a CI cache
is a poor place for a lock. So each runner writes its own Parquet files instead, and
nobody ever writes to a file someone else wrote::

    DIR/runs/runner=NAME/part-<utc time>-<random>.parquet
    DIR/specializations/runner=NAME/part-<same>.parquet
    DIR/batches/runner=NAME/part-<same>.parquet

``primbench history ingest FILES --db DIR [--runner NAME]`` (or ``--shared DIR``) writes one part per table
per call (to a temporary name, then renamed, specializations and batches before runs), with
the same columns and types as the store's tables. Any number of runners may do this at the
same time into the same directory (a shared file system, or parts gathered from CI
artifacts into one folder). Readers see the union:

* every query command accepts ``--db DIR``: the parts are read with DuckDB's
  ``read_parquet(..., hive_partitioning = true, union_by_name = true)`` into an in-memory
  store, deduplicated by run id (the same run written by two runners counts once);
* ``primbench history merge DIR --db FILE`` adds the runs a DuckDB store (or any other) lacks.

Parts record the schema version that wrote them (``runs.store_schema``); a dataset with a
newer one is refused like a newer store. The folder's applied migrations are its table
``schema_migrations``, one part per migration::

    DIR/schema_migrations/<version>.parquet   (version, description, applied_at: one row)

Parts are never rewritten, so a migration changes no part: it records that the folder's
writers write that schema's parts from then on (readers read the older ones as they are).
A writer records the migrations the folder lacks before it writes its first part, each
written to a temporary and hard-linked into place, which fails if another writer got there
first: any number of writers at once leave one part per migration, and a writer killed
mid-migration leaves only a temporary (the next one records it).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import socket
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.history.errors import HistoryError, HistoryWarning, StoreMissingError, one_line
from primbench.history.selector import Selector
from primbench.history.storage.contract import AppliedMigration, Store
from primbench.history.storage.duckdb_file import DuckDBWriter, counts, memory, newest_dates
from primbench.history.storage.schema import (
    COLUMNS,
    KEYS,
    SCHEMA_VERSION,
    TABLES,
    fill_config_keys,
    fill_time_per_call,
    migrate,
    rollback,
    too_new,
)
from primbench.history.storage.schema import MIGRATIONS as SCHEMA_MIGRATIONS
from primbench.signals import raise_received

if TYPE_CHECKING:
    import duckdb

    from primbench.history.storage.ingest import Rows

STALE_SECS = 3600.0  # a temporary (or an orphan part) older than this was left by a writer that died
QUARANTINE = "quarantine"


def runner_name(runner: str | None = None) -> str:
    """The runner's part-folder name: the argument, else ``$PRIMBENCH_RUNNER``, else the host
    name, reduced to letters, digits, dot, dash and underscore."""
    name = runner or os.environ.get("PRIMBENCH_RUNNER") or socket.gethostname() or "runner"
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "runner"
    return clean[:100]


def parts(directory: Path, table: str) -> list[Path]:
    """The finished parts of a table, listed here (DuckDB is given these files one by one,
    never a glob built from folder names: a folder called ``g[1]`` would match ``g1``)."""
    folder = directory / table
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*/*.parquet") if p.is_file() and not p.name.startswith("."))


def literal(path: Path) -> str:
    """A path as DuckDB reads it literally: its glob characters escaped as one-character classes."""
    return re.sub(r"([*?\[])", r"[\1]", str(path))


def _stem(path: Path) -> str:
    """What ties the parts of one write together: the runner folder and the file name."""
    return f"{path.parent.name}/{path.name}"


def _dataset_schema(con: duckdb.DuckDBPyConnection, directory: Path) -> int:
    row = con.execute("SELECT max(store_schema) FROM _stage_runs").fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{directory}: Parquet parts written with history schema version {version}, newer than this "
            f"primbench understands (up to {SCHEMA_VERSION}): upgrade primbench to read them"
        )
    return version


def _warn(message: str) -> None:
    warnings.warn(HistoryWarning(message), stacklevel=3)


def _unreadable(path: Path, exc: BaseException, directory: Path) -> str:
    return (f"{path}: unreadable Parquet part skipped ({one_line(exc)}); move it aside with "
            f"`primbench history quarantine {directory}`")


#: Columns a part may lack because an older schema wrote it (NULL when read, filled in):
#: ``runs.config_key`` (before version 3), ``specializations.gpu_seconds_per_call`` (before 5),
#: and a batches part has ``idx`` (version 4 on) or ``name`` (before), not both.
_OLDER_SCHEMA_COLUMNS = {"runs": {"config_key"}, "specializations": {"gpu_seconds_per_call"},
                         "batches": {"idx", "name"}}
#: Columns filled in after reading, so NULL in a part is no misfit.
_FILLED_IN = {"batches": {"idx"}}
_MAGIC = b"PAR1"


@dataclass(frozen=True)
class Misfit:
    """Why a part cannot be one of its table's: it is no Parquet file, or its columns do not
    fit (`definite`: nothing that reading again would change, so it is moved aside), or it
    could not be read (perhaps for a while: skipped, and left where it is)."""

    reason: str
    definite: bool


def _not_null(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The columns of `table` (in the store's schema) that may not be NULL."""
    rows = con.execute("SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ? "
                       "AND NOT is_nullable", [table]).fetchall()
    return [r[0] for r in rows if r[0] not in _FILLED_IN.get(table, set())]


def misfit(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> Misfit | None:
    """Why the part at `path` does not fit `table` (None: it fits): not a Parquet file (its
    first bytes are not Parquet's), a column of the table missing (a part of another table put
    here), or NULL where the table takes none: definite. An empty or cut-short file, or one
    that cannot be read, is not definite (a copy may still be writing it). `con` holds the
    store's tables (for their NOT NULL columns)."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(size - 4, 0))
            tail = f.read(4)
    except OSError as exc:
        return Misfit(f"cannot be read ({exc.strerror or type(exc).__name__})", False)
    if len(head) == 4 and head != _MAGIC:
        return Misfit("not a Parquet file", True)
    if size < 12 or tail != _MAGIC:  # empty, or cut short: perhaps a copy still under way, so left in place
        return Misfit("not a whole Parquet file (empty or cut short)", False)
    try:
        present = {d[0] for d in con.execute("SELECT * FROM read_parquet(?) LIMIT 0", [literal(path)]).description}
    except Exception as exc:
        raise_received()  # a query interrupted by a signal: no fault of the part's
        return Misfit(f"unreadable ({one_line(exc)})", False)
    optional = _OLDER_SCHEMA_COLUMNS.get(table, set())
    missing = [c for c in COLUMNS[table] if c not in present and c not in optional]
    if table == "batches" and not present & {"idx", "name"}:
        missing.append("idx")
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        return Misfit(f"its columns do not fit the {table} table (missing {shown})", True)
    required = [c for c in _not_null(con, table) if c in present]
    if required:
        nulls = " OR ".join(f'"{c}" IS NULL' for c in required)
        try:
            row = con.execute(f"SELECT count(*) FROM read_parquet(?) WHERE {nulls}", [literal(path)]).fetchone()
        except Exception as exc:
            raise_received()
            return Misfit(f"unreadable ({one_line(exc)})", False)
        if row and row[0]:
            return Misfit(f"its columns do not fit the {table} table (NULL in a column that takes none: "
                          f"{', '.join(required)})", True)
    return None


def _quarantine_write(directory: Path, stem: str) -> list[tuple[Path, Path]]:
    """Move every part of the write `stem` into ``DIR/quarantine/<table>/<runner>/``, each by
    one rename (nothing is deleted; a part another reader moved first is passed over).
    Returns (part, where it went) of those moved."""
    moved = []
    runner, name = stem.split("/", 1)
    for table in TABLES:
        f = directory / table / runner / name
        if not f.is_file():
            continue
        to = directory / QUARANTINE / table / runner / name
        n = 0
        while to.exists():  # never over a part quarantined before
            n += 1
            to = to.with_name(f"{name}.{n}")
        to.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(f, to)
        except FileNotFoundError:  # another reader moved it first
            continue
        moved.append((f, to))
    return moved


def quarantined_parts(directory: Path) -> list[Path]:
    """The parts moved aside into ``DIR/quarantine/``."""
    folder = directory / QUARANTINE
    return sorted(p for p in folder.glob("*/*/*") if p.is_file()) if folder.is_dir() else []


def dataset_run_ids(directory: str | os.PathLike[str]) -> set[str]:
    """Run ids already present in a Parquet dataset (empty if it has none); unreadable parts
    are skipped with a warning."""
    return _runs_column(directory, "run_id")


def dataset_commits(directory: str | os.PathLike[str]) -> set[str]:
    """The commit hashes of the runs in a Parquet dataset (as `dataset_run_ids` reads it)."""
    return _runs_column(directory, "commit")


def _runs_column(directory: str | os.PathLike[str], column: str) -> set[str]:
    """The distinct non-null values of a column of the dataset's runs (a constant name)."""
    directory = Path(directory)
    files = parts(directory, "runs")
    if not files:
        return set()
    con = memory()
    values: set[str] = set()
    try:
        migrate(con, source=":memory:")
        for f in files:
            problem = misfit(con, "runs", f)
            if problem is not None:  # its runs are not stored: readers skip it (and move a definite misfit aside)
                if not problem.definite:
                    _warn(_unreadable(f, HistoryError(problem.reason), directory))
                continue
            try:
                values.update(r[0] for r in con.execute(
                    f'SELECT DISTINCT "{column}" FROM read_parquet(?) WHERE "{column}" IS NOT NULL',
                    [literal(f)]).fetchall())
            except Exception as exc:
                raise_received()
                _warn(_unreadable(f, exc, directory))
    finally:
        con.close()
    return values


class ParquetWriter:
    """The `history.storage.ingest.Writer` of a Parquet folder: rows are gathered in an
    in-memory store (each `write` a transaction there) and written as this runner's parts when
    the writer closes without an error. A part is never rewritten, so short hashes already
    written stay (`rename_commits` does nothing)."""

    def __init__(self, directory: Path, runner: str) -> None:
        self.directory = directory
        self.runner = runner
        self.con = memory()
        migrate(self.con, source=":memory:")
        self.pending = DuckDBWriter(self.con)
        self._present: set[str] | None = None

    def commits(self) -> set[str]:
        return dataset_commits(self.directory)

    def present(self, run_ids: Sequence[str]) -> set[str]:
        if self._present is None:
            self._present = dataset_run_ids(self.directory)
        return {r for r in run_ids if r in self._present} | self.pending.present(run_ids)

    def newest_dates(self, branches: Sequence[str]) -> dict[str, _dt.datetime]:
        """Over the runs parts that fit their table (as readers take them)."""
        out: dict[str, _dt.datetime] = {}
        if not branches:
            return out
        check = memory()
        try:
            migrate(check, source=":memory:")
            for f in parts(self.directory, "runs"):
                if misfit(check, "runs", f) is not None:
                    continue
                try:
                    found = newest_dates(check, "read_parquet(?)", branches, [literal(f)])
                except Exception as exc:
                    raise_received()
                    _warn(_unreadable(f, exc, self.directory))
                    continue
                for branch, when in found.items():
                    if branch not in out or when > out[branch]:
                        out[branch] = when
        finally:
            check.close()
        for branch, when in self.pending.newest_dates(branches).items():
            if branch not in out or when > out[branch]:
                out[branch] = when
        return out

    def rename_commits(self, renames: Mapping[str, str]) -> None:
        return None

    def write(self, rows: Rows) -> set[str]:
        return self.pending.write(rows)

    def flush(self) -> None:
        """Write what was gathered as this runner's parts (nothing if nothing was), after the
        folder's missing migrations."""
        if counts(self.con)["runs"]:
            migrate_folder(self.directory)  # before any part: a part's schema is always a recorded migration
            write_parts(self.con, self.directory, self.runner)

    def close(self) -> None:
        self.con.close()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temporaries(directory: Path, *, max_age_secs: float = STALE_SECS,
                             runner: str | None = None) -> list[Path]:
    """Delete the temporaries (``.part-….parquet.tmp``) that writers killed mid-write left,
    once older than `max_age_secs` (a live writer renames its own within seconds)."""
    removed = []
    limit = time.time() - max_age_secs
    for table in TABLES:
        folder = directory / table
        if not folder.is_dir():
            continue
        pattern = f"runner={runner}/.*.parquet.tmp" if runner else "*/.*.parquet.tmp"
        for tmp in folder.glob(pattern):
            with contextlib.suppress(OSError):
                if tmp.is_file() and tmp.stat().st_mtime < limit:
                    tmp.unlink()
                    removed.append(tmp)
    return removed


MIGRATIONS_TABLE = "schema_migrations"
#: The folder's migrations, one per history schema version (`schema.MIGRATIONS`): (version, description).
FOLDER_MIGRATIONS: tuple[tuple[int, str], ...] = tuple(
    (m.version, f"parts written at history schema {m.version} ({m.description}); older parts read as written")
    for m in SCHEMA_MIGRATIONS)


def _migration_part(directory: Path, version: int) -> Path:
    return directory / MIGRATIONS_TABLE / f"{version:04d}.parquet"


def applied_migrations(directory: Path) -> list[AppliedMigration]:
    """The folder's ``schema_migrations`` parts, by version (one row each; should two parts
    hold a version, the earlier is kept). A part that cannot be read is skipped with a warning."""
    folder = directory / MIGRATIONS_TABLE
    files = sorted(p for p in folder.glob("*.parquet") if not p.name.startswith(".")) if folder.is_dir() else []
    found: dict[int, AppliedMigration] = {}
    if not files:
        return []
    con = memory()
    try:
        for f in files:
            try:
                rows = con.execute("SELECT version, description, applied_at FROM read_parquet(?)",
                                   [literal(f)]).fetchall()
            except Exception as exc:
                raise_received()
                _warn(f"{f}: unreadable migration part skipped ({one_line(exc)})")
                continue
            for version, description, at in rows:
                if int(version) not in found or at < found[int(version)].applied_at:
                    found[int(version)] = AppliedMigration(int(version), str(description), at)
    finally:
        con.close()
    return [found[v] for v in sorted(found)]


def _check_not_newer(directory: Path, applied: Sequence[AppliedMigration]) -> int:
    version = max((m.version for m in applied), default=0)
    if version > SCHEMA_VERSION:
        raise too_new(version, SCHEMA_VERSION, str(directory))
    return version


def _record_migration(directory: Path, version: int, description: str) -> bool:
    """Write the migration's part: to a temporary, fsynced, then hard-linked into place (False:
    another writer's was there first; it is kept). Where the file system has no hard links,
    renamed into place (a second writer's rename then replaces the first's row by its twin)."""
    folder = directory / MIGRATIONS_TABLE
    folder.mkdir(parents=True, exist_ok=True)
    final = _migration_part(directory, version)
    tmp = folder / f".{final.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    con = memory()
    try:
        con.execute("CREATE TABLE m AS SELECT ?::INTEGER AS version, ?::VARCHAR AS description, "
                    "current_timestamp AS applied_at", [version, description])
        con.execute("COPY m TO ? (FORMAT parquet)", [str(tmp)])
        _fsync(tmp)
        try:
            os.link(tmp, final)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some network shares)
            os.replace(tmp, final)
        with contextlib.suppress(OSError):
            _fsync(folder)
        return True
    finally:
        con.close()
        tmp.unlink(missing_ok=True)


def migrate_folder(directory: Path) -> list[int]:
    """Record the migrations the folder lacks (its ``schema_migrations`` parts); the versions
    this call recorded. Refuses a folder a newer primbench migrated. Safe with any number of
    writers at once, and after a writer killed mid-way (its temporaries older than
    `STALE_SECS` are deleted)."""
    applied = applied_migrations(directory)
    _check_not_newer(directory, applied)
    done = {m.version for m in applied}
    limit = time.time() - STALE_SECS
    for tmp in (directory / MIGRATIONS_TABLE).glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.stat().st_mtime < limit:
                tmp.unlink()
    recorded = []
    for version, description in FOLDER_MIGRATIONS:
        if version not in done and _record_migration(directory, version, description):
            recorded.append(version)
    return recorded


def write_parts(con: duckdb.DuckDBPyConnection, directory: Path, runner: str) -> None:
    """One part per table, each written to a temporary, fsynced, then renamed (runs last)."""
    remove_stale_temporaries(directory, runner=runner)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    stem = f"part-{stamp}-{uuid.uuid4().hex[:12]}"
    for table in ("batches", "specializations", "runs"):  # runs last: a reader that sees a run sees its rows
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        if not count or not count[0]:
            continue
        folder = directory / table / f"runner={runner}"
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{stem}.parquet"
        tmp = folder / f".{stem}.parquet.tmp"
        try:
            con.execute(f"COPY (SELECT * FROM {table}) TO ? (FORMAT parquet)", [str(tmp)])  # COPY TO never globs
            _fsync(tmp)
            os.replace(tmp, final)
            with contextlib.suppress(OSError):
                _fsync(folder)
        finally:
            tmp.unlink(missing_ok=True)


def _stage(con: duckdb.DuckDBPyConnection, directory: Path) -> set[str]:
    """Read every part, one file at a time, into temporary tables ``_stage_<table>`` (with
    a ``_stem`` column). A part that cannot be read whole is skipped with a warning, and with
    it the other parts of the same write; one that is not Parquet or whose columns do not fit
    its table (`misfit`) is moved aside too, with the other parts of its write, into
    ``DIR/quarantine/``. Returns the stems read."""
    bad: dict[str, Path] = {}
    stems: set[str] = set()
    misfits: dict[str, tuple[Path, str]] = {}
    for table in TABLES:
        extra = ", NULL::VARCHAR AS name" if table == "batches" else ""
        con.execute(f"CREATE OR REPLACE TEMP TABLE _stage_{table} AS SELECT *{extra}, NULL::VARCHAR AS _stem "
                    f"FROM {table} LIMIT 0")
        wanted = [*COLUMNS[table], *(["name"] if table == "batches" else [])]
        for f in parts(directory, table):
            stem = _stem(f)
            if stem in bad:
                continue
            problem = misfit(con, table, f)
            if problem is not None and problem.definite:
                bad[stem] = f
                misfits[stem] = (f, problem.reason)
                continue
            if problem is not None:
                bad[stem] = f
                _warn(_unreadable(f, HistoryError(problem.reason), directory))
                continue
            try:
                present = {d[0] for d in con.execute("SELECT * FROM read_parquet(?) LIMIT 0",
                                                     [literal(f)]).description}
                if "run_id" not in present:
                    raise HistoryError("no run_id column")
                # parts of an older schema lack newer columns (runs.config_key before version 3,
                # batches.idx before 4, specializations.gpu_seconds_per_call before 5): NULL here, filled in below
                cols = ", ".join(f'"{c}"' for c in wanted if c in present)
                con.execute(f"INSERT INTO _stage_{table} BY NAME SELECT {cols}, ? AS _stem FROM read_parquet(?)",
                            [stem, literal(f)])
                stems.add(stem)
            except Exception as exc:
                raise_received()  # interrupted: the command ends, no part is skipped for it
                bad[stem] = f
                _warn(_unreadable(f, exc, directory))
    if bad:
        for table in TABLES:
            con.execute(f"DELETE FROM _stage_{table} WHERE list_contains(?, _stem)", [list(bad)])
    for stem, (f, reason) in misfits.items():
        try:
            moved = _quarantine_write(directory, stem)
        except OSError as exc:  # a read-only share: skipped all the same
            _warn(f"{f}: Parquet part skipped: {reason}; cannot move it aside ({exc.strerror or exc}): "
                  f"`primbench history quarantine {directory}` does")
            continue
        where = directory / QUARANTINE
        _warn(f"{f}: Parquet part skipped: {reason}; moved to {where}/ with the {len(moved)} part(s) of its write")
    # batches of schema 3 and before are keyed by name: find their specialization's index
    con.execute("UPDATE _stage_batches b SET idx = s.idx FROM _stage_specializations s "
                "WHERE b.idx IS NULL AND b.run_id = s.run_id AND b.name = s.name")
    con.execute("DELETE FROM _stage_batches WHERE idx IS NULL")
    return stems - set(bad)


def _drop_stage(con: duckdb.DuckDBPyConnection) -> None:
    for table in TABLES:
        with contextlib.suppress(Exception):
            con.execute(f"DROP TABLE IF EXISTS _stage_{table}")


def load_dataset(con: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str]) -> int:
    """Insert the dataset's runs that `con`'s store lacks, deduplicated; return how many.
    Unreadable parts are skipped with a warning (`HistoryWarning`) that names them."""
    directory = Path(directory)
    if not directory.is_dir():
        raise HistoryError(f"{directory}: no such directory")
    if not (directory / "runs").is_dir() and not (directory / MIGRATIONS_TABLE).is_dir():
        raise HistoryError(
            f"{directory}: not a primbench Parquet history (no runs/ folder); write one with "
            f"`primbench history ingest FILES --shared {directory}`"
        )
    _check_not_newer(directory, applied_migrations(directory))
    if not parts(directory, "runs"):
        return 0
    try:
        try:
            _stage(con, directory)
        except Exception as exc:
            raise HistoryError(f"{directory}: cannot read the Parquet history ({one_line(exc)})") from None
        _dataset_schema(con, directory)
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("CREATE OR REPLACE TEMP TABLE _primbench_new AS SELECT DISTINCT run_id FROM _stage_runs "
                        "WHERE run_id NOT IN (SELECT run_id FROM runs)")
            row = con.execute("SELECT count(*) FROM _primbench_new").fetchone()
            added = int(row[0]) if row else 0
            for table in TABLES:
                cols = ", ".join(f'"{c}"' for c in COLUMNS[table])
                keys = ", ".join(f'"{c}"' for c in KEYS[table])
                con.execute(
                    f"INSERT INTO {table} BY NAME SELECT {cols} FROM ("
                    f"  SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY _stem) AS _n FROM _stage_{table}"
                    "   WHERE run_id IN (SELECT run_id FROM _primbench_new)"
                    ") WHERE _n = 1"
                )
            con.execute("DROP TABLE _primbench_new")
            fill_config_keys(con)
            fill_time_per_call(con)
            con.execute("COMMIT")
        except Exception as exc:
            rollback(con)
            raise HistoryError(f"{directory}: cannot read the Parquet history ({one_line(exc)})") from None
    finally:
        _drop_stage(con)
    return added


def open_dataset(directory: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory store holding the union of a Parquet dataset (for queries)."""
    con = memory()
    try:
        migrate(con, source=":memory:")
        load_dataset(con, directory)
    except BaseException:
        con.close()
        raise
    return con


@dataclass(frozen=True)
class QuarantineReport:
    directory: str
    moved: list[tuple[str, str, str]]  # (part, where it went, why)
    removed: list[str]  # stale temporaries deleted

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "removed_temporaries": self.removed,
                "moved": [{"part": p, "to": to, "reason": why} for p, to, why in self.moved]}


def quarantine(directory: str | os.PathLike[str], *, max_age_secs: float = STALE_SECS,
               dry_run: bool = False) -> QuarantineReport:
    """Move the parts readers skip out of the dataset, into ``DIR/quarantine/<table>/<runner>/``
    (nothing is deleted): parts that cannot be read whole or whose columns do not fit their
    table (`misfit`), the other parts of their write, and
    orphans older than `max_age_secs` (specializations or batches whose runs part was never
    written: a writer killed between renames). Deletes temporaries older than that."""
    directory = Path(directory)
    if not (directory / "runs").is_dir():
        raise HistoryError(f"{directory}: not a primbench Parquet history (no runs/ folder)")
    con = memory()
    reasons: dict[str, str] = {}
    try:
        migrate(con, source=":memory:")
        for table in TABLES:
            for f in parts(directory, table):
                problem = misfit(con, table, f)
                if problem is not None and problem.definite:
                    reasons.setdefault(_stem(f), f"misfit: {problem.reason}")
                    continue
                try:
                    con.execute("CREATE OR REPLACE TEMP TABLE _check AS SELECT * FROM read_parquet(?)", [literal(f)])
                except Exception as exc:
                    raise_received()  # interrupted: nothing is moved for it
                    reasons.setdefault(_stem(f), f"unreadable: {one_line(exc)}")
        con.execute("DROP TABLE IF EXISTS _check")
    finally:
        con.close()
    with_runs = {_stem(f) for f in parts(directory, "runs")}
    limit = time.time() - max_age_secs
    for table in ("specializations", "batches"):
        for f in parts(directory, table):
            with contextlib.suppress(OSError):
                if _stem(f) not in with_runs and f.stat().st_mtime < limit:
                    reasons.setdefault(_stem(f), "orphan: its write never finished (no runs part)")
    moved = []
    for table in TABLES:
        for f in parts(directory, table):
            why = reasons.get(_stem(f))
            if why is None:
                continue
            to = directory / QUARANTINE / table / f.parent.name / f.name
            if not dry_run:
                to.parent.mkdir(parents=True, exist_ok=True)
                os.replace(f, to)
            moved.append((str(f), str(to), why))
    removed = [] if dry_run else [str(p) for p in remove_stale_temporaries(directory, max_age_secs=max_age_secs)]
    return QuarantineReport(str(directory), moved, removed)


class ParquetStore(Store):
    """A folder of Parquet parts, one writer per part, no lock. Readers load the union of the
    parts into memory, deduplicated by run id. `runner` names this writer's part folder
    (default ``$PRIMBENCH_RUNNER``, else the host name). An existing directory is one."""

    kind = "Parquet dataset"

    def __init__(self, location: str | os.PathLike[str], *, runner: str | None = None,
                 wait_secs: float | None = None) -> None:
        super().__init__(location, wait_secs=wait_secs)
        self.path = Path(self.location)
        self.runner = runner

    @classmethod
    def claims(cls, location: str) -> bool:
        return Path(location).is_dir()

    @contextmanager
    def writer(self) -> Iterator[ParquetWriter]:
        if self.path.exists() and not self.path.is_dir():
            raise HistoryError(f"{self.path}: a Parquet history needs a directory, and this is a file")
        _check_not_newer(self.path, applied_migrations(self.path))
        w = ParquetWriter(self.path, runner_name(self.runner))
        try:
            yield w
            w.flush()
        finally:
            w.close()

    def connect(self, *scope: Selector) -> duckdb.DuckDBPyConnection:
        if not self.path.exists():
            raise StoreMissingError(f"{self.path}: no such directory")
        return open_dataset(self.path)

    def info(self) -> dict[str, Any]:
        """As a DuckDB file's: the schema version is the newest recorded migration's (a folder
        written before they were recorded: its parts' newest schema, and no migrations)."""
        con = self.connect()
        try:
            found = counts(con)
            row = con.execute("SELECT max(store_schema) FROM runs").fetchone()
        finally:
            con.close()
        applied = applied_migrations(self.path)
        version = max((m.version for m in applied), default=int(row[0]) if row and row[0] is not None else 0)
        out: dict[str, Any] = {"path": str(self.path), "kind": self.kind, "schema_version": version,
                               "primbench_schema_version": SCHEMA_VERSION,
                               "migrations": [str(m) for m in applied], **found}
        moved = quarantined_parts(self.path)
        out["quarantined_parts"] = len(moved)
        if moved:
            out["quarantine"] = f"{len(moved)} part(s) moved aside into {self.path / QUARANTINE}"
        return out

    def migrate(self) -> list[int]:
        """Record the folder's missing migrations (`migrate_folder`): parts are never rewritten,
        and readers read those of any older schema."""
        if self.path.exists() and not self.path.is_dir():
            raise HistoryError(f"{self.path}: a Parquet history needs a directory, and this is a file")
        return migrate_folder(self.path)

    def migrations(self) -> list[AppliedMigration]:
        """The folder's ``schema_migrations`` parts."""
        return applied_migrations(self.path)

    def quarantine(self, *, max_age_secs: float | None = None, dry_run: bool = False) -> QuarantineReport:
        """Move unreadable and orphan parts aside (`quarantine`)."""
        return quarantine(self.path, max_age_secs=STALE_SECS if max_age_secs is None else max_age_secs,
                          dry_run=dry_run)


#: This module's backend (`history.storage.contract.backends` finds it).
BACKEND = ParquetStore
