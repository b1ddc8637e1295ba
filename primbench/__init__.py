"""primbench: low-noise GPU kernel benchmarks from Python.

``import primbench`` needs no GPU: CuPy and the monitoring libraries load only when a
benchmark runs (see `primbench.backends.open_device`). ``primbench.compare`` and
``primbench.history`` are the repository's top-level folders ``compare/`` and ``history/``,
linked into the package (``primbench/compare`` and ``primbench/history`` are symbolic links,
which the wheel resolves): ``primbench`` is the only import name installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from primbench.version import __version__

if TYPE_CHECKING:
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
    from primbench.library import bench
    from primbench.report import BenchResult, Report
    from primbench.results import RESULTS_VERSION, Results, load_results
    from primbench.settings import GiB, KiB, MiB, Settings, flags, parse_size
    from primbench.state import State
    from primbench.typenames import register_type, type_name

#: Where each public name lives: loaded on first use (PEP 562), so that ``primbench compare``
#: and ``primbench history``, which import ``primbench.cli``, do not pay for the executor,
#: the axes and NumPy before they need them.
_LAZY = {
    "axis": "primbench.axis",
    **dict.fromkeys(("Benchmark", "natural_key", "specialization_name"), "primbench.benchmark"),
    "assert_equal": "primbench.checks",
    "log": "primbench.console",
    **dict.fromkeys(("BenchmarkAssertionError", "BenchmarkFailed", "DeviceError", "MissingDependencyError",
                     "PrimbenchError", "StreamBlockingTimeout", "ThermalError", "UsageError"), "primbench.errors"),
    "Executor": "primbench.executor",
    "bench": "primbench.library",
    **dict.fromkeys(("BenchResult", "Report"), "primbench.report"),
    **dict.fromkeys(("RESULTS_VERSION", "Results", "load_results"), "primbench.results"),
    **dict.fromkeys(("GiB", "KiB", "MiB", "Settings", "flags", "parse_size"), "primbench.settings"),
    "State": "primbench.state",
    **dict.fromkeys(("register_type", "type_name"), "primbench.typenames"),
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and then kept here."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'primbench' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if name == "axis" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
