"""Read access to a history, whichever its kind: a DuckDB file, or a folder of Parquet parts
that many runners write (`history.shared`). Queries, plots and reports open it here."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from primbench.history import schema
from primbench.history.shared import open_dataset
from primbench.history.store import connect, resolve_db

if TYPE_CHECKING:
    import duckdb


@contextmanager
def open_for_query(db: str | os.PathLike[str] | None = None, *,
                   wait_secs: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only view of the history: a DuckDB file, or a directory of Parquet parts
    written by ``ingest --shared`` (loaded into memory). Checks the schema version."""
    path = resolve_db(db)
    if path.is_dir():
        con = open_dataset(path)
    else:
        con = connect(path, read_only=True, wait_secs=wait_secs)
        try:
            schema.check_readable(con, str(path))
        except BaseException:
            con.close()
            raise
    try:
        yield con
    finally:
        con.close()
