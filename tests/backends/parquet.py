"""The Parquet folder backend's test side (`tests.backends`): its contract case. Its own tests
are tests/test_history_shared.py (many runners' parts, migrations, kills) and the quarantine's."""

from __future__ import annotations

from pathlib import Path

import pytest

from primbench.history.storage.contract import Store
from primbench.history.storage.parquet import ParquetStore
from tests.backends import Case


def _make(where: Path, request: pytest.FixtureRequest) -> Store:
    return ParquetStore(where / "parts", runner="r1")


CASE = Case("parquet", ParquetStore, _make)
