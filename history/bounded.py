"""DuckDB's memory held while a command reads a whole history from a store file: its buffer pool
otherwise keeps every block it read, up to 80 % of the machine's memory (issue 28: a
100,000-run store's report passed 1.3 GB, its export 4 GB)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

#: DuckDB's memory while `regressions` or the report read a branch's whole history (`bounded`).
READ_MEMORY = "384MB"


def is_store_file(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con`'s database is a store file (not an in-memory copy of a folder's or a server's
    tables): only a file's buffer pool is limited (`bounded`)."""
    row = con.execute("SELECT count(*) FROM duckdb_databases() WHERE database_name = current_database() "
                      "AND path IS NOT NULL").fetchone()
    return bool(row and row[0])


@contextmanager
def bounded(con: duckdb.DuckDBPyConnection, memory: str = READ_MEMORY, *, threads: int | None = None) -> Iterator[None]:
    """DuckDB limited to `memory` (and `threads`, where given) while a store *file* is read on
    `con`: its buffer pool otherwise keeps every block it read, up to 80 % of the machine's
    memory (a 100,000-run store's report passed 1.3 GB); past the limit it lets cached blocks
    go. An in-memory copy of a Parquet folder's or a server's tables is not limited (its tables
    are that memory). The settings are as they were afterwards."""
    if not is_store_file(con):
        yield
        return
    was = con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    con.execute(f"SET memory_limit = '{memory}'")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")  # the default (its text is rounded: '18.8 GiB' would not give it back)
        if was and con.execute("SELECT current_setting('memory_limit')").fetchone() != (was[0],):
            con.execute(f"SET memory_limit = '{was[0]}'")
        if was:
            con.execute(f"SET threads = {int(was[1])}")
