"""Writes tests/formats/pytest-benchmark-copy.json with pytest-benchmark (PyPI
``pytest-benchmark``): a host copy of 1 MiB per element type, grouped as ``copy``, each
parametrized by ``type``. Run with a pytest that has pytest-benchmark and not this project's
conftest: ``python -m pytest tests/formats/make/pytest_benchmark_copy.py -p no:cacheprovider
--rootdir tests/formats/make --benchmark-json=tests/formats/pytest-benchmark-copy.json
--benchmark-save-data --benchmark-max-time=0.005 --benchmark-min-rounds=5``."""

from __future__ import annotations

from typing import Any

import pytest

SIZE = 1 << 20


@pytest.mark.parametrize("type", ["i8", "i64"])
@pytest.mark.benchmark(group="copy")
def test_copy(benchmark: Any, type: str) -> None:
    src = bytearray(SIZE)
    dst = bytearray(SIZE)

    def copy() -> None:
        dst[:] = src

    benchmark(copy)
    benchmark.extra_info["bytes_per_second"] = 2 * SIZE / benchmark.stats.stats.mean
