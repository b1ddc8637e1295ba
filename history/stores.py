"""Kept for one release: `history.storage` holds the stores now (docs/history.md taught
``from primbench.history.stores import open_store``). Import from `history.storage.contract`
and the backend modules instead."""

from __future__ import annotations

from primbench.history.storage.contract import Source, Store, open_store, reading
from primbench.history.storage.duckdb_file import DuckDBStore
from primbench.history.storage.parquet import ParquetStore

__all__ = ["DuckDBStore", "ParquetStore", "Source", "Store", "open_store", "reading"]
