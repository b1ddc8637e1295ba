"""Where a store file's bytes are (issue-28b): each table, and some of its columns and indexes,
copied on its own into a fresh DuckDB file and checkpointed; the blocks that file uses beyond an
empty one, per run of the store. Run: ``python sizes.py STORE.duckdb [WORK]``; prints the table.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import duckdb

PARTS = [
    ("runs", ["CREATE TABLE t AS SELECT * FROM s.runs"]),
    ("runs + primary-key index", ["CREATE TABLE t AS SELECT * FROM s.runs", "CREATE UNIQUE INDEX i ON t (run_id)"]),
    ("documents (compressed)", ["CREATE TABLE t AS SELECT * FROM s.documents"]),
    ("batches", ["CREATE TABLE t AS SELECT * FROM s.batches"]),
    ("batches + primary-key index", ["CREATE TABLE t AS SELECT * FROM s.batches",
                                     "CREATE UNIQUE INDEX i ON t (run_id, idx, batch)"]),
    ("specializations", ["CREATE TABLE t AS SELECT * FROM s.specializations"]),
    ("specializations + primary-key index", ["CREATE TABLE t AS SELECT * FROM s.specializations",
                                             "CREATE UNIQUE INDEX i ON t (run_id, name)"]),
    ("specializations without extra", ["CREATE TABLE t AS SELECT * EXCLUDE (extra) FROM s.specializations"]),
    ("specializations.extra alone", ["CREATE TABLE t AS SELECT extra FROM s.specializations"]),
    ("the whole store, copied", ["COPY FROM DATABASE s TO lay"]),
]


def used(src: Path, work: Path, setup: list[str]) -> int:
    path = work / "lay.duckdb"
    for f in (path, path.with_suffix(".duckdb.wal")):
        f.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    con.execute(f"ATTACH '{src}' AS s (READ_ONLY)")
    for sql in setup:
        con.execute(sql)
    con.execute("CHECKPOINT")
    row = con.execute("SELECT used_blocks * block_size FROM pragma_database_size() "
                      "WHERE database_name = 'lay'").fetchone()
    con.close()
    path.unlink()
    return int(row[0]) if row else 0


def main() -> None:
    src = Path(sys.argv[1])
    work = Path(sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(src))
    con = duckdb.connect(str(src), read_only=True)
    runs = int(con.execute("SELECT count(*) FROM runs").fetchone()[0])  # type: ignore[index]
    row = con.execute("SELECT used_blocks * block_size, total_blocks * block_size FROM pragma_database_size() "
                      "WHERE database_name = current_database()").fetchone()
    con.close()
    print(f"{src.name}: {runs} runs; the file's used blocks {row[0] / runs / 1024:.1f} KB a run, "  # type: ignore[index]
          f"all its blocks {row[1] / runs / 1024:.1f} KB a run")  # type: ignore[index]
    empty = used(src, work, [])
    for label, setup in PARTS:
        print(f"  {label:40s} {(used(src, work, setup) - empty) / runs / 1024:6.1f} KB a run", flush=True)


if __name__ == "__main__":
    main()
