"""How often the board's energy counter moves (issue 26): poll NVML's
``nvmlDeviceGetTotalEnergyConsumption`` on an idle and on a busy GPU and print the steps.

    python tests/benchmarks/energy/counter_resolution.py [--secs 2] [--device 0]

Prints each change of the counter (time since the first reading, millijoules added) and the
median interval between changes, idle and under a CuPy multiply loop. primbench's
`primbench.energy.COUNTER_UPDATE_SECS` (0.1 s) and `MIN_WINDOW_SECS` (1 s) assume the H200's
~100 ms, from issue 26's 5 changes in 0.5 s: this script is what checks it on a GPU. Not run in
the session that wrote it (no GPU there).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import threading
import time
from typing import Any


def poll(nvml: Any, handle: Any, secs: float) -> list[tuple[float, int]]:
    """(seconds since start, counter mJ) at each change of the counter over `secs`."""
    read = nvml.nvmlDeviceGetTotalEnergyConsumption
    start = time.perf_counter()
    last = read(handle)
    changes = [(0.0, last)]
    while (now := time.perf_counter() - start) < secs:
        value = read(handle)
        if value != last:
            changes.append((now, value))
            last = value
    return changes


def report(label: str, changes: list[tuple[float, int]]) -> None:
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(changes)]
    print(f"{label}: {len(steps)} changes")
    for (t, mj) in steps[:20]:
        print(f"  +{t * 1000:7.1f} ms  +{mj} mJ")
    if steps:
        print(f"  median interval {statistics.median(s[0] for s in steps) * 1000:.1f} ms, "
              f"median step {statistics.median(s[1] for s in steps)} mJ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secs", type=float, default=2.0)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    import cupy as cp
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(args.device)
    print("power limit", pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000, "W")
    report("idle", poll(pynvml, handle, args.secs))
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
            report("busy", poll(pynvml, handle, args.secs))
        finally:
            stop.set()
            worker.join()
    pynvml.nvmlShutdown()


if __name__ == "__main__":
    main()
