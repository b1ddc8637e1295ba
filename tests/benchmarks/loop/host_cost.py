"""Where does the host's time per cold call go, and what does reordering it save?

    python tests/benchmarks/loop/host_cost.py OUTDIR

The 4-item long long copy at 64 KiB and 1 MiB and ``cp.sum`` of float at 1 MiB, cold (twice the
L2 cleared before each call, as ``--cache-size auto`` does), one call synchronized at a time.
Variants, interleaved, each repeated `REPEATS` times over batches of `CALLS` calls:

* order: "before" is the loop of fbdf38c (clear, spin, start, call, stop, release, synchronize,
  read the events; then the next call), "after" is `primbench.measure.timed_calls` now (the next
  call's clear and spin are enqueued right after the synchronization, and the finished call's
  events are read while the GPU clears); "after, CuPy spin call" is the harness now;
* spin: the spin kernel launched by CuPy's kernel call (the harness's way), or through the
  driver (``cuLaunchKernel``) with its arguments packed once (`PackedSpin`, here only);
* for reference, the after/packed loop clearing only the L2, and without the spin kernel.

Reported per variant: host µs per timed call (wall time of the batch over its calls) and the GPU
µs per call (mean and median of the event times), which the reordering must not change.
Writes OUTDIR/host_cost.json and .md.
"""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cupy
from _kernels import copy_call, sum_call

from primbench.backends import open_device
from primbench.backends.cupy_backend import CupyDevice
from primbench.device import Device
from primbench.measure import timed_calls

REPEATS = 8
CALLS = 2048


class PackedSpin:
    """`CupyDevice.block` through ``cuLaunchKernel`` with the spin kernel's arguments packed once:
    the flag and timed-out words in mapped host memory (the host pointer is the device pointer),
    the timeout, and the ticket, rewritten in place before each launch."""

    def __init__(self, dev: CupyDevice) -> None:
        self.dev = dev
        ptr = dev._host_ptr
        self.values = (ctypes.c_void_p(ptr), ctypes.c_int32(0), ctypes.c_uint64(int(dev._timeout_ticks)),
                       ctypes.c_void_p(ptr + 4))
        self.params = (ctypes.c_void_p * 4)(*(ctypes.addressof(v) for v in self.values))

    def __call__(self) -> None:
        dev = self.dev
        dev._ticket += 1
        self.values[1].value = dev._ticket
        cupy.cuda.driver.launchKernel(dev._spin.ptr, 1, 1, 1, 1, 1, 1, 0, dev._stream_ptr,
                                      ctypes.addressof(self.params), 0)


def before_loop(dev: Device, fn: Callable[[], object], calls: int, block: bool) -> list[float]:
    """The cold loop as it was: everything for a call, then its synchronization and events."""
    out: list[float] = []
    for _ in range(calls):
        dev.clear_cache()
        if block:
            dev.block()
        dev.record_start(0)
        fn()
        dev.record_stop(0)
        if block:
            dev.unblock()
        dev.synchronize()
        out.append(dev.elapsed_ms(0))
    return out


def after_loop(dev: Device, fn: Callable[[], object], calls: int, block: bool) -> list[float]:
    return timed_calls(dev, fn, calls, hot=False, block=block)


# name: (loop, packed spin, cache bytes: "2xL2" or "L2", block)
VARIANTS: dict[str, tuple[Callable[..., list[float]], bool, str, bool]] = {
    "before order, CuPy spin call (fbdf38c)": (before_loop, False, "2xL2", True),
    "before order, packed spin": (before_loop, True, "2xL2", True),
    "after order, CuPy spin call": (after_loop, False, "2xL2", True),
    "after order, packed spin": (after_loop, True, "2xL2", True),
    "after order, packed spin, L2 clear": (after_loop, True, "L2", True),
    "after order, no spin": (after_loop, True, "2xL2", False),
}


def main() -> None:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    dev = open_device(None, monitoring=False)
    assert isinstance(dev, CupyDevice)
    l2 = int(dev.props["l2CacheSize"])
    sizes = {"2xL2": 2 * l2, "L2": l2}
    cases = {"long long copy 64 KiB": lambda: copy_call("long long", 64 << 10),
             "long long copy 1 MiB": lambda: copy_call("long long", 1 << 20),
             "cp.sum float 1 MiB": lambda: sum_call(1 << 20)}
    results: dict[str, dict[str, dict[str, float]]] = {}
    with dev.activate():
        for case, make in cases.items():
            fn, _ = make()
            raw: dict[str, list[tuple[float, list[float]]]] = {v: [] for v in VARIANTS}
            for rep in range(REPEATS + 1):  # the first pass warms everything up and is dropped
                for name, (loop, packed, clear, block) in VARIANTS.items():
                    dev.prepare(cache_size=sizes[clear], blocking_timeout_secs=10.0, slots=64)
                    if packed:
                        dev.block = PackedSpin(dev)  # type: ignore[method-assign]
                    else:
                        dev.__dict__.pop("block", None)
                    fn()
                    dev.synchronize()
                    t0 = time.perf_counter()
                    times = loop(dev, fn, CALLS, block)
                    wall = time.perf_counter() - t0
                    if rep:
                        raw[name].append((wall, times))
            results[case] = {}
            for name, reps in raw.items():
                host = [w / CALLS * 1e6 for w, _ in reps]
                gpu_mean = [statistics.fmean(t) * 1e3 for _, t in reps]
                gpu_median = [statistics.median(t) * 1e3 for _, t in reps]
                results[case][name] = {"host_us_per_call": statistics.median(host),
                                       "host_us_min": min(host), "host_us_max": max(host),
                                       "gpu_us_mean": statistics.fmean(gpu_mean),
                                       "gpu_us_median": statistics.median(gpu_median)}
                print(case, "|", name, "|", json.dumps(results[case][name]), flush=True)
    dev.close()
    (out_dir / "host_cost.json").write_text(json.dumps({"l2_bytes": l2, "calls": CALLS, "repeats": REPEATS,
                                                        "results": results}, indent=1))
    lines = [f"Cold calls, {REPEATS} interleaved repeats of {CALLS} calls per variant; host µs per timed call: "
             "median (min–max) over repeats; GPU µs per call: mean of the repeats' means, median of their medians.",
             "", "| case | variant | host µs per call | GPU µs per call: mean | median |", "|---|---|---|---|---|"]
    for case, rows in results.items():
        for name, r in rows.items():
            lines.append(f"| {case} | {name} | {r['host_us_per_call']:.1f} ({r['host_us_min']:.1f}–"
                         f"{r['host_us_max']:.1f}) | {r['gpu_us_mean']:.3f} | {r['gpu_us_median']:.3f} |")
    (out_dir / "host_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
