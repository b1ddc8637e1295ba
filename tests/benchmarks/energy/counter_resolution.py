"""How often the board's energy counter moves (issue 26): poll NVML's
``nvmlDeviceGetTotalEnergyConsumption`` on an idle and on a busy GPU and print the steps.

    python tests/benchmarks/energy/counter_resolution.py [--secs 2] [--device 0] [--json FILE] [--fake]

Prints each change of the counter (time since the first reading, millijoules added) and the
median interval between changes, idle and under a CuPy multiply loop. primbench's
`primbench.energy.COUNTER_UPDATE_SECS` (0.1 s) and `MIN_WINDOW_SECS` (1 s) assume the H200's
~100 ms, from issue 26's 5 changes in 0.5 s: this script is what checks it on a GPU.
``--json FILE`` also writes every change (for `tests/benchmarks/analyze_issue26.py`); ``--fake``
polls a simulated counter (100 ms steps at 300 W busy, 70 W idle): logic only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def poll(read: Callable[[], int], secs: float) -> tuple[list[tuple[float, int]], int]:
    """(seconds since start, counter mJ) at each change of the counter over `secs`, and how
    many times it was read."""
    start = time.perf_counter()
    last = read()
    changes = [(0.0, last)]
    reads = 1
    while (now := time.perf_counter() - start) < secs:
        value = read()
        reads += 1
        if value != last:
            changes.append((now, value))
            last = value
    return changes, reads


def summary(changes: list[tuple[float, int]], reads: int, secs: float) -> dict[str, Any]:
    """The intervals between changes and the steps (mJ), with their median, min and max."""
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(changes)]
    intervals = [s[0] for s in steps[1:]]  # the first change ends a partial interval
    mj = [s[1] for s in steps]
    return {
        "secs": secs, "reads": reads, "changes": len(steps),
        "median_interval_ms": statistics.median(intervals) * 1000 if intervals else None,
        "min_interval_ms": min(intervals) * 1000 if intervals else None,
        "max_interval_ms": max(intervals) * 1000 if intervals else None,
        "median_step_mj": statistics.median(mj) if mj else None,
        "min_step_mj": min(mj) if mj else None, "max_step_mj": max(mj) if mj else None,
        "steps": [[round(t * 1000, 3), d] for t, d in steps],
    }


def report(label: str, changes: list[tuple[float, int]], reads: int, secs: float) -> dict[str, Any]:
    out = summary(changes, reads, secs)
    print(f"{label}: {out['changes']} changes in {secs:g} s ({reads} reads)")
    for t, mj in out["steps"][:20]:
        print(f"  +{t:7.1f} ms  +{mj} mJ")
    if out["median_interval_ms"] is not None:
        print(f"  interval median {out['median_interval_ms']:.1f} ms (min {out['min_interval_ms']:.1f}, "
              f"max {out['max_interval_ms']:.1f}); step median {out['median_step_mj']} mJ "
              f"(min {out['min_step_mj']}, max {out['max_step_mj']})")
    return out


class FakeCounter:
    """A counter that moves every 100 ms by what `watts` added since the last move."""

    def __init__(self) -> None:
        self.watts = 70.0
        self.start = time.perf_counter()
        self.mj = 0.0
        self.last_step = 0

    def read(self) -> int:
        step = int((time.perf_counter() - self.start) / 0.1)
        if step != self.last_step:
            self.mj += (step - self.last_step) * 0.1 * self.watts * 1000
            self.last_step = step
        return int(self.mj)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secs", type=float, default=2.0)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--fake", action="store_true")
    args = parser.parse_args()
    out: dict[str, Any] = {"fake": args.fake}
    if args.fake:
        counter = FakeCounter()
        out["power_limit_watts"] = 700.0
        out["idle"] = report("idle", *poll(counter.read, args.secs), args.secs)
        counter.watts = 300.0
        out["busy"] = report("busy", *poll(counter.read, args.secs), args.secs)
    else:
        import cupy as cp
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(args.device)
        out["power_limit_watts"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000
        out["gpu"] = str(pynvml.nvmlDeviceGetName(handle))
        print("power limit", out["power_limit_watts"], "W")

        def read() -> int:
            return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))

        out["idle"] = report("idle", *poll(read, args.secs), args.secs)
        stop = threading.Event()
        with cp.cuda.Device(args.device):
            a = cp.ones(32 * 2**20, dtype=cp.float32)  # 128 MiB, as in issue 26

            def busy() -> None:
                while not stop.is_set():
                    cp.multiply(a, 1.0001, out=a)
                    cp.cuda.Stream.null.synchronize()

            worker = threading.Thread(target=busy)
            worker.start()
            try:
                time.sleep(0.3)  # let the load settle
                out["busy"] = report("busy", *poll(read, args.secs), args.secs)
                watts = []
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < 0.5:
                    watts.append(pynvml.nvmlDeviceGetPowerUsage(handle) / 1000)
                    time.sleep(0.01)
                out["busy_power_usage_watts"] = statistics.median(watts)
            finally:
                stop.set()
                worker.join()
        pynvml.nvmlShutdown()
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
