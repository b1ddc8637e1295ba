"""Export a store to plain Parquet files: one per table, readable by any DuckDB (1.x included,
which cannot open a DuckDB 2.0 file), pandas, Polars or Spark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from primbench.history.bounded import bounded, is_store_file
from primbench.history.errors import HistoryError, one_line
from primbench.history.storage.schema import TABLES

if TYPE_CHECKING:
    import duckdb

#: A DuckDB file (schema 6 and later) keeps the documents apart: its ``documents`` (run_id,
#: codec, body) is exported (only with `documents`: ``history export --documents``) as it is
#: stored, the bytes copied as they are, and its ``runs.parquet`` has no ``document`` column.
#: The codecs (`history.storage.schema.encode_document`; docs/history.md describes them):
#: ``floats+xz`` (schema 7) is an xz stream of the skeleton's length (4 bytes, little-endian),
#: the skeleton (the document's MessagePack, each float an extension of type 1 without data) and
#: the floats (IEEE doubles in the order of their paths' first appearance, within a path in
#: document order, byte-transposed: every float's byte 0, then every float's byte 1, ...);
#: ``msgpack+zlib`` (schema 6) zlib of the MessagePack; ``json+zlib`` zlib of the canonical JSON
#: text. The other stores' ``runs.parquet`` hold the document as JSON text (only with
#: `documents` too).
EXPORTED = (*TABLES, "documents", "schema_migrations")


def export_tables(con: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str], *,
                  documents: bool = True) -> dict[str, tuple[Path, int]]:
    """Write every table of the store open on `con` (a DuckDB file, or the union of a folder of
    Parquet parts) to ``DIRECTORY/<table>.parquet`` with DuckDB's ``COPY … (FORMAT parquet)``,
    each to a temporary name first and then renamed, so a reader never sees half a file.
    Returns table -> (path, rows). Existing files of those names are replaced.

    Without `documents` the results documents are left out: a store file's ``documents`` table
    (no ``documents.parquet`` written) and another store's ``runs.document`` column. They are
    most of the bytes and CPU of an export (72 % and 45 % at 100,000 runs), and opaque to any
    tool but primbench (`history export --documents` asks for them)."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise HistoryError(f"{out}: --parquet needs a directory, and this is a file")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryError(f"{out}: cannot create the export directory ({exc.strerror or exc})") from None
    written: dict[str, tuple[Path, int]] = {}
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    store_file = is_store_file(con)  # only a store file's memory is limited
    with bounded(con, EXPORT_MEMORY, threads=1):
        for table in EXPORTED:
            if table not in present or (table == "documents" and not documents):
                continue
            if store_file:
                con.execute(f"SET memory_limit = '{MEMORY.get(table, EXPORT_MEMORY)}'")
            written[table] = _export(con, table, out, documents=documents)
            if store_file:
                _let_go(con)
    return written


def _let_go(con: duckdb.DuckDBPyConnection) -> None:
    """The blocks DuckDB cached while it exported a table, given back: the next table reads
    others. Kept, they and the next table's row groups took a 100,000-run store's export to 935 MB
    of peak RSS (790 MB let go: `results-s6.md`). DuckDB evicts down to a lower limit when it is set; the caller sets
    the next one."""
    try:
        con.execute(f"SET memory_limit = '{LET_GO_MEMORY}'")
    except Exception as exc:  # a block still pinned: nothing lost but the memory
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise


#: Rows per Parquet row group: a documents' group holds about 1,000 compressed documents (some
#: 25 MB), a batches' group 10,000 rows (each some 560 bytes: 64 iterations), any other table's
#: 100,000 rows; DuckDB holds a row group whole before it writes it, and each group's buffers are
#: fresh pages from the OS: the batches' CPU at 100,000 runs, 3.3 s in groups of 100,000 rows,
#: 2.6 s in groups of 10,000 (`tests/benchmarks/history_scale/export-settings-s6.txt`); the
#: specializations' gain nothing from smaller groups.
ROW_GROUP_ROWS = {"documents": 1_000, "batches": 10_000}
DEFAULT_ROW_GROUP_ROWS = 100_000
#: The documents' bodies are compressed already, each unlike any other: written without
#: Parquet's compression (Snappy gains nothing on them) and without a dictionary (DuckDB's
#: writer would try one for every row group, in vain): a third less CPU for that file.
OPTIONS = {"documents": ", COMPRESSION uncompressed, DICTIONARY_SIZE_LIMIT 1"}

#: DuckDB's memory while it exports a store file: its buffer pool otherwise keeps every block
#: it read (up to 80 % of the machine's memory), so a 10,000-run store's export took 1.6 GB. At
#: 384 MB the blocks it read and the row groups it writes kept evicting each other, each time
#: fresh pages from the OS: 768 MB took a fifth of the specializations' CPU off at 100,000 runs
#: (6.7 s to 5.5 s); one table's peak RSS is some 720 MB, the whole command's 790 MB
#: (`tests/benchmarks/history_scale/results-s6.md`).
EXPORT_MEMORY = "768MB"
#: The documents' export (``--documents``) keeps the 384 MB it had (their row groups hold 25 MB
#: of bodies apiece; the documents gain nothing from more).
MEMORY = {"documents": "384MB"}
#: DuckDB's limit for a moment after each table (`_let_go`).
LET_GO_MEMORY = "16MB"


def _export(con: duckdb.DuckDBPyConnection, table: str, out: Path, *, documents: bool = True) -> tuple[Path, int]:
    """`table` as ``OUT/<table>.parquet`` in row groups of `ROW_GROUP_ROWS` (``runs`` without
    its ``document`` column, where it has one, unless `documents`); (path, rows)."""
    target = out / f"{table}.parquet"
    tmp = out / f".{table}.parquet.{os.getpid()}.tmp"
    group = ROW_GROUP_ROWS.get(table, DEFAULT_ROW_GROUP_ROWS)
    columns = "*"
    if table == "runs" and not documents and _has_column(con, "runs", "document"):
        columns = "* EXCLUDE (document)"
    try:
        con.execute(f"COPY (SELECT {columns} FROM {table}) TO ? (FORMAT parquet, ROW_GROUP_SIZE {group}"
                    f"{OPTIONS.get(table, '')})", [str(tmp)])
        os.replace(tmp, target)
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the export ({exc.strerror or exc})") from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        raise HistoryError(f"{target}: cannot write the export ({one_line(exc)})") from None
    finally:
        tmp.unlink(missing_ok=True)
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return target, int(row[0]) if row else 0


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
                      "AND table_name = ? AND column_name = ?", [table, column]).fetchone()
    return bool(row and row[0])
