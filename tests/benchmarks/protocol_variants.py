"""Which part of the per-call protocol moves a small kernel's measured time? The copy kernel
(long long) timed under variants of cache clearing, stream blocking and synchronization.

    python tests/benchmarks/protocol_variants.py OUT.md
"""

from __future__ import annotations

import statistics
import sys

import cupy as cp
import numpy as np

import primbench.measure as measure
from primbench.backends import open_device

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from _copy import copy_example

EX = copy_example()
DRAIN = cp.RawKernel(r"""
extern "C" __global__ void drain(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}""", "drain")


def kernel(size: int):
    expr = "copy_kernel<long long, 256, 4>"
    k = cp.RawModule(code=EX["CODE"], options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
    items = size // 8
    a = cp.arange(items, dtype=cp.int64)
    b = cp.empty_like(a)
    return lambda: k((items // 1024,), (256,), (a, b))


VARIANTS = [
    # name, cache bytes, block, sync every, drain ns after the clear
    ("256 MiB clear, block, sync every 64 (default)", 256 << 20, True, 64, 0),
    ("60 MiB clear, block, sync every 64", 60 << 20, True, 64, 0),
    ("32 MiB clear, block, sync every 64", 32 << 20, True, 64, 0),
    ("no clear (hot), block, sync every 64", 0, True, 64, 0),
    ("256 MiB clear, no block, sync every 64", 256 << 20, False, 64, 0),
    ("256 MiB clear, block, sync every call", 256 << 20, True, 1, 0),
    ("60 MiB clear, block, sync every call", 60 << 20, True, 1, 0),
    ("256 MiB clear, 20 µs idle after it, block", 256 << 20, True, 64, 20_000),
    ("60 MiB clear, 20 µs idle after it, block", 60 << 20, True, 64, 20_000),
]


def main() -> None:
    dev = open_device(None, monitoring=False)
    lines = ["| variant | size | GPU µs per call: mean | median | host µs per call |", "|---|---|---|---|---|"]
    for size, calls in ((64 << 10, 3000), (128 << 20, 600)):
        fn = kernel(size)
        for name, cache, block, every, drain in VARIANTS:
            dev.prepare(cache_size=cache, blocking_timeout_secs=10, slots=64)
            measure.SYNC_EVERY = every
            if drain:
                clear = dev.clear_cache

                def clear_and_drain(clear=clear, drain=drain) -> None:
                    clear()
                    DRAIN((1,), (1,), (np.uint64(drain),), stream=dev.stream)

                dev.clear_cache = clear_and_drain  # type: ignore[method-assign]
            with dev.activate():
                measure.timed_calls(dev, fn, 200, hot=cache == 0, block=block)
                t0 = __import__("time").perf_counter()
                times = measure.timed_calls(dev, fn, calls, hot=cache == 0, block=block)
                host = (__import__("time").perf_counter() - t0) / calls * 1e6
            if drain:
                del dev.clear_cache
            measure.SYNC_EVERY = 64
            us = [t * 1e3 for t in times]
            lines.append(f"| {name} | {size >> 10} KiB | {statistics.mean(us):.3f} | {statistics.median(us):.3f} "
                         f"| {host:.1f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
