"""The DuckDB file backend's test side (`tests.backends`): its contract case. Its own tests are
the history's (tests/test_history_*.py): it is the default store."""

from __future__ import annotations

from pathlib import Path

import pytest

from primbench.history.storage.contract import Store
from primbench.history.storage.duckdb_file import DuckDBStore
from tests.backends import Case


def _make(where: Path, request: pytest.FixtureRequest) -> Store:
    return DuckDBStore(where / "h.duckdb")


CASE = Case("duckdb", DuckDBStore, _make)
