"""The fake GPU of issue 26's GPU scripts (``--fake`` / ``PRIMBENCH_FAKE=1``): the scripts run
their whole logic on `tests.fakes.FakeDevice` (virtual time, an energy counter stepping every
100 ms, graph capture through a fake stream), so that the one GPU run does not fail on a typo.

A fake kernel's time comes from a simple model of its work (`kernel_ms`) with 0.3 % noise per
call and a 0.2 % shift per process (seeded by ``PRIMBENCH_FAKE_SEED``, else the process id).
None of its figures is a measurement.
"""

from __future__ import annotations

import os
import random
from typing import Any

#: Board power of the fake GPU, watts: its energy per call is this times the wall time per call.
FAKE_WATTS = 300.0


def enabled() -> bool:
    return os.environ.get("PRIMBENCH_FAKE", "") not in ("", "0")


_rng = random.Random(int(os.environ.get("PRIMBENCH_FAKE_SEED", "0") or 0) or os.getpid())
_process_shift = 1.0 + 0.002 * _rng.gauss(0.0, 1.0)


def jitter(ms: float) -> float:
    """`ms` with the per-call noise and the process's shift."""
    return ms * _process_shift * (1.0 + 0.003 * _rng.gauss(0.0, 1.0))


def device(**kwargs: Any) -> Any:
    """A fake GPU with an energy counter and graph capture: 2 µs of idle GPU before each stream
    launch, 0.5 µs between the kernels of a replayed graph."""
    from tests.fakes import FakeDevice

    options: dict[str, Any] = {"power_watts": FAKE_WATTS, "launch_gap_ms": 0.002, "graph_gap_ms": 0.0005,
                               "host_op_secs": 2e-6, "log_ops": False}
    options.update(kwargs)
    return FakeDevice(**options)
