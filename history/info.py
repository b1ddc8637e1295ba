"""What a store holds: path, schema version, migrations, row counts; and explicit migration."""

from __future__ import annotations

import os
from typing import Any

from primbench.history.access import open_for_query
from primbench.history.schema import SCHEMA_VERSION, TABLES, applied_migrations, stored_version
from primbench.history.store import connect, open_for_write, resolve_db


def _count(con: Any, table: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def store_info(db: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Path, schema versions (stored and this primbench's), applied migrations, table sizes."""
    path = resolve_db(db)
    if path.is_dir():
        with open_for_query(path) as con:
            counts = {t: _count(con, t) for t in TABLES}
        return {"path": str(path), "kind": "Parquet dataset", "schema_version": SCHEMA_VERSION, **counts}
    con = connect(path, read_only=True)
    try:
        version = stored_version(con)
        out: dict[str, Any] = {
            "path": str(path), "kind": "DuckDB file", "schema_version": version,
            "primbench_schema_version": SCHEMA_VERSION,
            "migrations": [f"{v}: {d} ({at})" for v, d, at in applied_migrations(con)],
        }
        if version >= 1:
            for t in TABLES:
                out[t] = _count(con, t)
        out["size_bytes"] = path.stat().st_size
        return out
    finally:
        con.close()


def migrate_store(db: str | os.PathLike[str] | None = None, *, wait_secs: float | None = None) -> list[int]:
    """Apply pending migrations; return the versions applied (empty when up to date)."""
    from primbench.history.schema import migrate

    path = resolve_db(db)
    con = connect(path, read_only=False, wait_secs=wait_secs)
    try:
        return migrate(con, source=str(path))
    finally:
        con.close()


__all__ = ["migrate_store", "open_for_write", "store_info"]
