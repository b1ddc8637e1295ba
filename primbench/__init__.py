"""primbench: low-noise GPU kernel benchmarks from Python.

``import primbench`` needs no GPU: CuPy and the monitoring libraries load only when a
benchmark runs (see `primbench.backends.open_device`). ``primbench.compare`` and
``primbench.history`` are the repository's top-level folders ``compare/`` and ``history/``,
linked into the package (``primbench/compare`` and ``primbench/history`` are symbolic links,
which the wheel resolves): ``primbench`` is the only import name installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from primbench import axis
from primbench.benchmark import Benchmark, natural_key, specialization_name
from primbench.checks import assert_equal
from primbench.console import log
from primbench.errors import (
    BenchmarkAssertionError,
    BenchmarkFailed,
    DeviceError,
    MissingDependencyError,
    PrimbenchError,
    StreamBlockingTimeout,
    ThermalError,
    UsageError,
)
from primbench.executor import Executor
from primbench.report import BenchResult, Report
from primbench.results import RESULTS_VERSION, Results, load_results
from primbench.settings import GiB, KiB, MiB, Settings, flags, parse_size
from primbench.state import State
from primbench.typenames import register_type, type_name
from primbench.version import __version__

if TYPE_CHECKING:
    from primbench.library import bench


def __getattr__(name: str) -> Any:
    """`bench` loads `primbench.library` on first use."""
    if name == "bench":
        from primbench.library import bench

        return bench
    raise AttributeError(f"module 'primbench' has no attribute {name!r}")


__all__ = [
    "RESULTS_VERSION",
    "BenchResult",
    "Benchmark",
    "BenchmarkAssertionError",
    "BenchmarkFailed",
    "DeviceError",
    "Executor",
    "GiB",
    "KiB",
    "MiB",
    "MissingDependencyError",
    "PrimbenchError",
    "Report",
    "Results",
    "Settings",
    "State",
    "StreamBlockingTimeout",
    "ThermalError",
    "UsageError",
    "__version__",
    "assert_equal",
    "axis",
    "bench",
    "flags",
    "load_results",
    "log",
    "natural_key",
    "parse_size",
    "register_type",
    "specialization_name",
    "type_name",
]
