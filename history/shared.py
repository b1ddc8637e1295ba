"""History shared by many machines: a directory of Parquet parts, one writer per part.

A DuckDB file takes one writer at a time, and a file on a network share or in a CI cache
is a poor place for a lock. So each runner writes its own Parquet files instead, and
nobody ever writes to a file someone else wrote::

    DIR/runs/runner=NAME/part-<utc time>-<random>.parquet
    DIR/specializations/runner=NAME/part-<same>.parquet
    DIR/batches/runner=NAME/part-<same>.parquet

``primbench history ingest FILES --shared DIR [--runner NAME]`` writes one part per table
per call (to a temporary name, then renamed, specializations and batches before runs), with
the same columns and types as the store's tables. Any number of runners may do this at the
same time into the same directory (a shared file system, or parts gathered from CI
artifacts into one folder). Readers see the union:

* every query command accepts ``--db DIR``: the parts are read with DuckDB's
  ``read_parquet(..., hive_partitioning = true, union_by_name = true)`` into an in-memory
  store, deduplicated by run id (the same run written by two runners counts once);
* ``primbench history merge DIR --db FILE`` adds the runs a DuckDB store lacks.

Parts record the schema version that wrote them (``runs.store_schema``); a dataset with a
newer one is refused like a newer store.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import socket
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from history.errors import HistoryError
from history.ingest import COLUMNS, IngestReport, _final, _insert_atomically, stage_files
from history.schema import SCHEMA_VERSION, TABLES, fill_config_keys, migrate
from history.store import memory, open_for_write, resolve_db

if TYPE_CHECKING:
    import duckdb

_KEYS = {"runs": ("run_id",), "specializations": ("run_id", "name"), "batches": ("run_id", "name", "batch")}


def runner_name(runner: str | None = None) -> str:
    """The runner's part-folder name: the argument, else ``$PRIMBENCH_RUNNER``, else the host
    name, reduced to letters, digits, dot, dash and underscore."""
    name = runner or os.environ.get("PRIMBENCH_RUNNER") or socket.gethostname() or "runner"
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "runner"
    return clean[:100]


def _glob(directory: Path, table: str) -> str:
    return str(directory / table / "*" / "*.parquet")


def _has_parts(directory: Path, table: str) -> bool:
    return any((directory / table).glob("*/*.parquet"))


def _dataset_schema(con: duckdb.DuckDBPyConnection, directory: Path) -> int:
    row = con.execute("SELECT max(store_schema) FROM read_parquet(?, union_by_name = true)",
                      [_glob(directory, "runs")]).fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{directory}: Parquet parts written with history schema version {version}, newer than this "
            f"primbench understands (up to {SCHEMA_VERSION}): upgrade primbench to read them"
        )
    return version


def dataset_run_ids(directory: str | os.PathLike[str]) -> set[str]:
    """Run ids already present in a Parquet dataset (empty if it has none)."""
    directory = Path(directory)
    if not _has_parts(directory, "runs"):
        return set()
    con = memory()
    try:
        rows = con.execute("SELECT DISTINCT run_id FROM read_parquet(?, union_by_name = true)",
                           [_glob(directory, "runs")]).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def ingest_shared(paths: Iterable[str | os.PathLike[str]], directory: str | os.PathLike[str], *,
                  runner: str | None = None) -> IngestReport:
    """Write the files' new runs as this runner's Parquet parts under `directory` (no lock)."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise HistoryError(f"{directory}: --shared needs a directory, and this is a file")
    staged, outcomes, by_id = stage_files(paths)
    report = IngestReport(str(directory))
    present = dataset_run_ids(directory) if by_id else set()
    new = [r for r in by_id if r not in present]
    failed: dict[str, str] = {}
    if new:
        con = memory()
        try:
            migrate(con, source=":memory:")
            failed = _insert_atomically(con, staged, new)
            if len(failed) < len(new):
                _write_parts(con, directory, runner_name(runner))
        finally:
            con.close()
    report.outcomes = [_final(o, present, failed) for o in outcomes]
    return report


def _write_parts(con: duckdb.DuckDBPyConnection, directory: Path, runner: str) -> None:
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
            con.execute(f"COPY (SELECT * FROM {table}) TO ? (FORMAT parquet)", [str(tmp)])
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)


def load_dataset(con: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str]) -> int:
    """Insert the dataset's runs that `con`'s store lacks, deduplicated; return how many."""
    directory = Path(directory)
    if not directory.is_dir():
        raise HistoryError(f"{directory}: no such directory")
    if not (directory / "runs").is_dir():
        raise HistoryError(
            f"{directory}: not a primbench Parquet history (no runs/ folder); write one with "
            f"`primbench history ingest FILES --shared {directory}`"
        )
    if not _has_parts(directory, "runs"):
        return 0
    _dataset_schema(con, directory)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _primbench_new AS "
                    "SELECT DISTINCT run_id FROM read_parquet(?, union_by_name = true) "
                    "WHERE run_id NOT IN (SELECT run_id FROM runs)", [_glob(directory, "runs")])
        row = con.execute("SELECT count(*) FROM _primbench_new").fetchone()
        added = int(row[0]) if row else 0
        for table in TABLES:
            if not _has_parts(directory, table):
                continue
            present = {d[0] for d in con.execute("SELECT * FROM read_parquet(?, union_by_name = true) LIMIT 0",
                                                 [_glob(directory, table)]).description}
            # parts of an older schema lack newer columns (runs.config_key before version 3): NULL, filled below
            cols = ", ".join(f'"{c}"' if c in present else f'NULL AS "{c}"' for c in COLUMNS[table])
            keys = ", ".join(f'"{c}"' for c in _KEYS[table])
            con.execute(
                f"INSERT INTO {table} BY NAME SELECT {cols} FROM ("
                f"  SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY filename) AS _n"
                "   FROM read_parquet(?, hive_partitioning = true, union_by_name = true, filename = true)"
                "   WHERE run_id IN (SELECT run_id FROM _primbench_new)"
                ") WHERE _n = 1",
                [_glob(directory, table)],
            )
        con.execute("DROP TABLE _primbench_new")
        fill_config_keys(con)
        con.execute("COMMIT")
    except Exception as exc:
        con.execute("ROLLBACK")
        raise HistoryError(f"{directory}: cannot read the Parquet history ({exc})") from exc
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
class MergeReport:
    source: str
    target: str
    added_runs: int

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "added_runs": self.added_runs}


def merge(directory: str | os.PathLike[str], db: str | os.PathLike[str] | None = None, *,
          wait_secs: float | None = None) -> MergeReport:
    """Add a Parquet dataset's runs to a DuckDB store (idempotent)."""
    target = resolve_db(db)
    with open_for_write(target, wait_secs=wait_secs) as con:
        added = load_dataset(con, directory)
    return MergeReport(str(directory), str(target), added)
