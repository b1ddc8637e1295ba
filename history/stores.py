"""The two kinds of history store, behind `history.interface.Store`, and how a path becomes one.

* `DuckDBStore`: one DuckDB file (`history.store`: connections, locks, migrations);
* `ParquetStore`: a folder of Parquet parts that many runners write (`history.shared`).

`open_store` picks the kind from the path (``--db``, else ``$PRIMBENCH_HISTORY_DB``, else
``.primbench/history.duckdb``): a directory is a Parquet dataset, anything else a DuckDB file.
`reading` gives a `Reader` for whatever a caller holds: a store, a reader, an open DuckDB
connection or a path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from primbench.history import schema
from primbench.history.errors import StoreMissingError
from primbench.history.interface import Reader, Store
from primbench.history.store import connect, resolve_db

if TYPE_CHECKING:
    import duckdb

    from primbench.history.ingest import IngestReport, Overrides, Progress
    from primbench.history.shared import MergeReport, QuarantineReport

#: What names a store: a path (None: the default), a `Store`, a `Reader` or an open connection.
Source = Any


class DuckDBStore(Store):
    """One DuckDB file: one writer at a time, queries read-only (`history.store`)."""

    kind = "DuckDB file"

    def ingest(self, paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
               overrides: Overrides | None = None) -> IngestReport:
        from primbench.history.ingest import Overrides, ingest

        return ingest(paths, self.path, wait_secs=self.wait_secs, progress=progress,
                      overrides=overrides or Overrides())

    def _connect(self) -> duckdb.DuckDBPyConnection:
        con = connect(self.path, read_only=True, wait_secs=self.wait_secs)
        try:
            schema.check_readable(con, str(self.path))
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
                "migrations": [f"{v}: {d} ({at})" for v, d, at in schema.applied_migrations(con)],
            }
            if version >= 1:
                out.update(_counts(con))
            out["size_bytes"] = self.path.stat().st_size
            return out
        finally:
            con.close()

    def migrate(self) -> list[int]:
        con = connect(self.path, read_only=False, wait_secs=self.wait_secs)
        try:
            return schema.migrate(con, source=str(self.path))
        finally:
            con.close()

    def merge(self, source: str | os.PathLike[str]) -> MergeReport:
        """Add the runs of the Parquet dataset `source` that this store lacks (idempotent)."""
        from primbench.history.shared import merge

        return merge(source, self.path, wait_secs=self.wait_secs)


class ParquetStore(Store):
    """A folder of Parquet parts, one writer per part, no lock (`history.shared`). Readers load
    the union of the parts into memory, deduplicated by run id. `runner` names this writer's
    part folder (default ``$PRIMBENCH_RUNNER``, else the host name)."""

    kind = "Parquet dataset"

    def __init__(self, path: str | os.PathLike[str], *, runner: str | None = None,
                 wait_secs: float | None = None) -> None:
        super().__init__(path, wait_secs=wait_secs)
        self.runner = runner

    def ingest(self, paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
               overrides: Overrides | None = None) -> IngestReport:
        from primbench.history.ingest import Overrides
        from primbench.history.shared import ingest_shared

        return ingest_shared(paths, self.path, runner=self.runner, progress=progress,
                             overrides=overrides or Overrides())

    def _connect(self) -> duckdb.DuckDBPyConnection:
        from primbench.history.shared import open_dataset

        if not self.path.exists():
            raise StoreMissingError(f"{self.path}: no such directory")
        return open_dataset(self.path)

    def info(self) -> dict[str, Any]:
        with self.read() as r:
            counts = _counts(r.con)
        return {"path": str(self.path), "kind": self.kind, "schema_version": schema.SCHEMA_VERSION, **counts}

    def migrate(self) -> list[int]:
        """Nothing to do: parts are never rewritten, and readers read those of any older schema."""
        return []

    def quarantine(self, *, max_age_secs: float | None = None, dry_run: bool = False) -> QuarantineReport:
        """Move unreadable and orphan parts aside (`history.shared.quarantine`)."""
        from primbench.history.shared import STALE_SECS, quarantine

        return quarantine(self.path, max_age_secs=STALE_SECS if max_age_secs is None else max_age_secs,
                          dry_run=dry_run)


def _counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    out = {}
    for table in schema.TABLES:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        out[table] = int(row[0]) if row else 0
    return out


def open_store(db: str | os.PathLike[str] | None = None, *, wait_secs: float | None = None) -> Store:
    """The store at `db` (None: ``$PRIMBENCH_HISTORY_DB``, else ``.primbench/history.duckdb``):
    a `ParquetStore` for a directory, else a `DuckDBStore`. Nothing is opened yet."""
    path = resolve_db(db)
    if path.is_dir():
        return ParquetStore(path, wait_secs=wait_secs)
    return DuckDBStore(path, wait_secs=wait_secs)


@contextmanager
def reading(db: Source = None) -> Iterator[Reader]:
    """A `Reader` on `db`: a `Reader` as it is, a `Store` read once, an open DuckDB connection
    (not closed here), or a path for `open_store` (None: the default store)."""
    if isinstance(db, Reader):
        yield db
    elif isinstance(db, Store):
        with db.read() as r:
            yield r
    elif db is not None and hasattr(db, "execute") and not isinstance(db, (str, os.PathLike)):
        yield Reader(db)
    else:
        with open_store(db).read() as r:
            yield r
