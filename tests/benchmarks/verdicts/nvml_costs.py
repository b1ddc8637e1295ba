"""What each read the harness makes around a round costs on the host, on the GPU machine: the NVML monitor's
methods (`primbench.monitoring.NvmlMonitor`) and the device's clock sample (`Device.clock_sample`: a clock
kernel's launches), each called N times in a row, microseconds a call (median of 5 passes). A p8r2 worker's round
makes about 20 such reads (3 a batch: temperature, SM clock, clock-event reasons; 7 around the window), so at
tens of microseconds each they are a part of the round's time outside its window (probe15: 1.0-1.7 ms "harness").

    PYTHONPATH=$PWD python3 tests/benchmarks/verdicts/nvml_costs.py > $OUT/nvml_costs.txt
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def per_call_us(fn: Callable[[], object], n: int = 200) -> float:
    passes = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        passes.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(passes)


def main() -> None:
    from primbench.backends.cupy_backend import CupyDevice  # the GPU's device seam

    device = CupyDevice(0)
    device.prepare(cache_size=0, blocking_timeout_secs=10.0, slots=4)
    reads = {
        "temperature": device.temperature,
        "sm_clock_now_mhz": device.sm_clock_now_mhz,
        "clock_event_reasons": device.clock_event_reasons,
        "power_watts": device.power_watts,
        "energy_joules (10 calls)": device.energy_joules,
        "clock_sample": device.clock_sample,
    }
    print("read, microseconds a call (median of 5 passes of 200 calls; energy 10)")
    for name, fn in reads.items():
        try:
            print(f"{name:28s} {per_call_us(fn, 10 if 'energy' in name else 200):10.1f}")
        except Exception as e:  # a read this GPU lacks is said, the others still timed
            print(f"{name:28s} failed: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
