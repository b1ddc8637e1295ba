"""Export a store to plain Parquet files: one per table, readable by any DuckDB (1.x included,
which cannot open a DuckDB 2.0 file), pandas, Polars or Spark."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


class Written(dict[str, tuple[Path, int]]):
    """What an export wrote: table -> (path, rows) of each file written, and how (`incremental`:
    only the runs added since the export the folder held, `added_runs` of them; nothing written
    when none were added)."""

    def __init__(self, written: dict[str, tuple[Path, int]] | None = None, *, incremental: bool = False,
                 added_runs: int | None = None) -> None:
        super().__init__(written or {})
        self.incremental, self.added_runs = incremental, added_runs


#: The export's record of itself, in the folder: the store it is of (a digest of its location), the
#: store's migrations, whether it holds the documents, and each table's parts in order.
MANIFEST = "primbench-export.json"
#: A part written by an incremental export: ``<table>.<sequence>.parquet`` (``<table>.parquet``
#: is the first export's); a table is read whole as ``<table>*.parquet``.
PART = re.compile(r"^(?P<table>[a-z_]+)\.(?P<seq>[0-9]{5})\.parquet$")


def store_identity(location: str) -> str:
    """What names a store in an export's manifest: a digest of its location (a path made absolute;
    a server's URL as given, never written out: it may hold a password)."""
    where = location if "://" in location else os.path.realpath(location)
    return hashlib.sha256(where.encode()).hexdigest()[:32]


def export_tables(con: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str], *,
                  documents: bool = True, store: str | None = None) -> Written:
    """Write every table of the store open on `con` (a DuckDB file, or the union of a folder of
    Parquet parts) to ``DIRECTORY/<table>.parquet`` with DuckDB's ``COPY … (FORMAT parquet)``.
    Returns table -> (path, rows) (`Written`).

    `store` (`store_identity`) names the store: where the folder already holds an export of it
    (its manifest, `MANIFEST`: the same store, its migrations and `documents` as now, every part
    present) whose runs are all still in the store with the same commit, only the runs added since
    are written, with their specializations and batches (and documents), each table's as a new part
    ``<table>.<sequence>.parquet``; no part already there is rewritten, and nothing is written when
    no run was added. Anything else (no manifest, another store, a migration since, runs removed or
    their commits renamed, or no `store`) writes every table afresh as ``<table>.parquet`` and
    removes the earlier parts. Either way every file is written to a temporary name first and
    renamed into place once all are written, and the manifest last: a failure leaves the earlier
    export as it was (the temporaries, and any part renamed before it, are removed).

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
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    tables = [t for t in EXPORTED if t in present and (t != "documents" or documents)]
    migrations = _migrations(con) if "schema_migrations" in present else []
    store_file = is_store_file(con)  # only a store file's memory is limited
    with bounded(con, EXPORT_MEMORY, threads=1):
        manifest = _manifest(out, store, migrations, documents, tables)
        added = _added_runs(con, out, manifest) if manifest is not None else None
        if manifest is not None and added is not None:
            return _append(con, out, manifest, added, tables, documents=documents, store_file=store_file)
        return _fresh(con, out, tables, documents=documents, store_file=store_file,
                      manifest=None if store is None else {
                          "format": 1, "store": store, "migrations": migrations, "documents": documents})


def _migrations(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [int(r[0]) for r in con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()]


def _manifest(out: Path, store: str | None, migrations: list[int], documents: bool,
              tables: list[str]) -> dict[str, Any] | None:
    """The folder's manifest where it is an export of this store as it would be written now (the
    same migrations, documents and tables, every part it lists present), else None."""
    if store is None:
        return None
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != 1 or manifest.get("store") != store \
            or manifest.get("migrations") != migrations or manifest.get("documents") is not documents:
        return None
    parts = manifest.get("parts")
    if not isinstance(parts, dict) or sorted(parts) != sorted(tables) or not all(
            isinstance(names, list) and names and all(isinstance(n, str) and (out / n).is_file() for n in names)
            for names in parts.values()):
        return None
    return manifest


def _added_runs(con: duckdb.DuckDBPyConnection, out: Path, manifest: dict[str, Any]) -> list[str] | None:
    """The run ids the store has and the export lacks; None where a run of the export is no longer
    in the store with the commit it had (removed, its commit renamed: the one column of a stored
    run that changes; a migration is in the manifest): the export is then written afresh."""
    parts = [str(out / n) for n in manifest["parts"]["runs"]]
    row = con.execute('SELECT count(*) FROM (SELECT run_id, "commit" FROM read_parquet(?) '
                      'EXCEPT ALL SELECT run_id, "commit" FROM runs)', [parts]).fetchone()
    if not row or row[0]:
        return None
    return [r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id NOT IN "
                                      "(SELECT run_id FROM read_parquet(?)) ORDER BY run_id", [parts]).fetchall()]


def _fresh(con: duckdb.DuckDBPyConnection, out: Path, tables: list[str], *, documents: bool, store_file: bool,
           manifest: dict[str, Any] | None) -> Written:
    """Every table as ``<table>.parquet``; the earlier parts of those tables removed, and the
    manifest written (`manifest`: its fields but the parts; None: no manifest, an earlier one
    removed)."""
    made: list[tuple[Path, Path]] = []
    written = Written()
    try:
        for table in tables:
            if store_file:
                con.execute(f"SET memory_limit = '{MEMORY.get(table, EXPORT_MEMORY)}'")
            target = out / f"{table}.parquet"
            tmp = _tmp(target)
            made.append((tmp, target))
            written[table] = (target, _copy(con, table, tmp, target, documents=documents))
            if store_file:
                _let_go(con)
        _remove(out / MANIFEST)  # the parts below are no longer the manifest's
        for tmp, target in made:
            _rename(tmp, target)
    finally:
        for tmp, _ in made:
            tmp.unlink(missing_ok=True)
    for path in out.iterdir():  # the earlier incremental parts of the tables written
        if (m := PART.match(path.name)) and m["table"] in written:
            _remove(path)
    if manifest is not None:
        _write_manifest(out, {**manifest, "parts": {t: [f"{t}.parquet"] for t in tables},
                              "runs": written["runs"][1] if "runs" in written else 0, "next": 1})
    return written


def _append(con: duckdb.DuckDBPyConnection, out: Path, manifest: dict[str, Any], added: list[str],
            tables: list[str], *, documents: bool, store_file: bool) -> Written:
    """The runs `added` (and their rows of every other table but ``schema_migrations``, which a
    store of the same migrations has unchanged) as a new part of each table that has rows of them;
    the manifest lists them once all are in place."""
    written = Written(incremental=True, added_runs=len(added))
    if not added:
        return written
    seq = int(manifest.get("next", 1))
    for path in out.iterdir():  # parts a failed export left (renamed, not yet in the manifest)
        if (m := PART.match(path.name)) and int(m["seq"]) >= seq:
            _remove(path)
    made: list[tuple[Path, Path]] = []
    renamed: list[Path] = []
    try:
        for table in tables:
            if table == "schema_migrations":
                continue
            if store_file:
                con.execute(f"SET memory_limit = '{MEMORY.get(table, EXPORT_MEMORY)}'")
            target = out / f"{table}.{seq:05d}.parquet"
            tmp = _tmp(target)
            made.append((tmp, target))
            rows = _copy(con, table, tmp, target, documents=documents, runs=added)
            if rows:
                written[table] = (target, rows)
            if store_file:
                _let_go(con)
        for tmp, target in made:
            if target.name.split(".")[0] in written:
                _rename(tmp, target)
                renamed.append(target)
        parts = {t: [*names, written[t][0].name] if t in written else names
                 for t, names in manifest["parts"].items()}
        _write_manifest(out, {**manifest, "parts": parts, "runs": int(manifest.get("runs", 0)) + len(added),
                              "next": seq + 1})
    except BaseException:
        for path in renamed:  # the earlier export as it was: its manifest does not list them
            path.unlink(missing_ok=True)
        raise
    finally:
        for tmp, _ in made:
            tmp.unlink(missing_ok=True)
    return written


def _tmp(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _rename(tmp: Path, target: Path) -> None:
    try:
        os.replace(tmp, target)
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the export ({exc.strerror or exc})") from None


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise HistoryError(f"{path}: cannot remove an earlier export's file ({exc.strerror or exc})") from None


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    target = out / MANIFEST
    tmp = _tmp(target)
    try:
        tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the export ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)


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


def _copy(con: duckdb.DuckDBPyConnection, table: str, tmp: Path, target: Path, *, documents: bool = True,
          runs: list[str] | None = None) -> int:
    """`table` (of the runs `runs` only, where given) written to `tmp` in row groups of
    `ROW_GROUP_ROWS` (``runs`` without its ``document`` column, where it has one, unless
    `documents`); the rows written. `target`: the file it becomes, as errors name it."""
    group = ROW_GROUP_ROWS.get(table, DEFAULT_ROW_GROUP_ROWS)
    columns = "*"
    if table == "runs" and not documents and _has_column(con, "runs", "document"):
        columns = "* EXCLUDE (document)"
    where, params = ("", [str(tmp)]) if runs is None else (" WHERE run_id IN (SELECT unnest(?))", [runs, str(tmp)])
    try:
        row = con.execute(f"COPY (SELECT {columns} FROM {table}{where}) TO ? (FORMAT parquet, "
                          f"ROW_GROUP_SIZE {group}{OPTIONS.get(table, '')})", params).fetchone()
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the export ({exc.strerror or exc})") from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        raise HistoryError(f"{target}: cannot write the export ({one_line(exc)})") from None
    return int(row[0]) if row else 0


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
                      "AND table_name = ? AND column_name = ?", [table, column]).fetchone()
    return bool(row and row[0])
