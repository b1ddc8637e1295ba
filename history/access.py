"""A raw read-only connection to a history, whichever its kind (for direct SQL and tests):
the `Reader`'s connection of the store `history.stores.open_store` finds at the path."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from primbench.history.stores import open_store

if TYPE_CHECKING:
    import duckdb


@contextmanager
def open_for_query(db: str | os.PathLike[str] | None = None, *,
                   wait_secs: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only view of the history: a DuckDB file, or a directory of Parquet parts
    written by ``ingest --shared`` (loaded into memory). Checks the schema version."""
    with open_store(db, wait_secs=wait_secs).read() as reader:
        yield reader.con
