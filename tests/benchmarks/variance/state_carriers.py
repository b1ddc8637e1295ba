"""Which harness object carries the per-round state? (issue "Verdicts that speak", step 1; tuning data)

`fresh_device.md` found that renewing the harness's stream, events, blocking flag and cache-clear
buffer before a round reproduces the spread between processes, and study.py that without renewal
the copies' rounds agree to 0.03-0.14 %. This script asks which of the four carries the state, and
whether a state is a property of the object (stable while the object lives) or redrawn per use.

For each kernel and each carrier X (stream, events, flag, cache), a pool of POOL objects of X is
made (the other three stay the device's own); then PASSES passes, each visiting the pool in a new
random order, run BATCHES batches of cold calls under the harness's own per-call protocol
(`primbench.measure.timed_calls`: clear, spin, events, call) with that object in use. A carrier
that carries the state shows a spread between objects (the mean over passes of each) far above
the spread of one object between passes. Controls: `none` (POOL slots that are all the device's
own objects) and `renew` (`Device.renew` before each visit: what a round does today).

Kernels are tuning-suite kinds (tuning_suite.py): RawKernel char copy, CuPy add / sum, PyTorch sum,
cuBLAS SGEMV, at 64 KiB-64 MiB.

    python3 tests/benchmarks/variance/state_carriers.py --out DIR [--quick]

writes DIR/carriers-<pid>.json (every batch's mean ms per call with its kernel, carrier, pass,
object index, and the stream's creation order).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

POOL = 12
PASSES = 3
BATCHES = 2
BATCH_GPU_MS = 2.0
CARRIERS = ("none", "stream", "events", "flag", "cache", "renew")

COPY = r"""
extern "C" __global__ void copy_char(const char* __restrict__ in, char* __restrict__ out)
{
    unsigned int idx = threadIdx.x + blockIdx.x * 256u;
    out[idx] = in[idx];
}
"""


def kernels(size: int) -> dict[str, Callable[[Any], Callable[[], object]]]:
    """name -> (a stream -> the call on it), inputs allocated once for the size."""
    import cupy as cp
    import torch

    out: dict[str, Callable[[Any], Callable[[], object]]] = {}
    n = max(256, size // 256 * 256)
    mod = cp.RawModule(code=COPY)
    copy = mod.get_function("copy_char")
    c_in = cp.arange(n, dtype=cp.int8)
    c_out = cp.empty_like(c_in)

    def copy_on(s: Any) -> Callable[[], object]:
        return lambda: copy((n // 256,), (256,), (c_in, c_out), stream=s)

    out["copy_char"] = copy_on
    f = max(1024, size // 4)
    a = cp.random.default_rng(1).random(f, dtype=cp.float32)
    b = cp.random.default_rng(2).random(f, dtype=cp.float32)
    o = cp.empty_like(a)
    total = cp.empty((), dtype=cp.float32)

    def with_stream(s: Any, fn: Callable[[], object]) -> Callable[[], object]:
        def call() -> object:
            with s:
                return fn()
        return call

    out["cp.add"] = lambda s: with_stream(s, lambda: cp.add(a, b, out=o))
    out["cp.sum"] = lambda s: with_stream(s, lambda: cp.sum(a, out=total))
    m = max(32, int(math.sqrt(size // 4)))
    mat = cp.random.default_rng(3).random((m, m), dtype=cp.float32)
    vec = cp.random.default_rng(4).random(m, dtype=cp.float32)
    mv = cp.empty(m, dtype=cp.float32)
    out["sgemv"] = lambda s: with_stream(s, lambda: cp.matmul(mat, vec, out=mv))
    x = torch.rand(f, device="cuda")
    t_out = torch.empty((), device="cuda")
    torch.cuda.synchronize()

    def torch_on(s: Any) -> Callable[[], object]:
        ext = torch.cuda.ExternalStream(s.ptr)

        def call() -> None:
            with torch.cuda.stream(ext):
                torch.sum(x, dim=0, out=t_out)
        return call

    out["torch.sum"] = torch_on
    return out


class Carriers:
    """Swap one harness object of a prepared `CupyDevice` for another of its kind."""

    def __init__(self, device: Any) -> None:
        self.d = device

    def make(self, carrier: str, count: int) -> list[dict[str, Any]]:
        import cupy

        d = self.d
        pool: list[dict[str, Any]] = []
        for _ in range(count):
            if carrier == "stream":
                s = cupy.cuda.Stream(non_blocking=True)
                pool.append({"_stream": s, "_stream_ptr": s.ptr})
            elif carrier == "events":
                starts, stops = [cupy.cuda.Event()], [cupy.cuda.Event()]
                pool.append({"_starts": starts, "_stops": stops, "_start_ptrs": [e.ptr for e in starts],
                             "_stop_ptrs": [e.ptr for e in stops]})
            elif carrier == "flag":
                rt = d.rt
                ptr = rt.hostAlloc(64, rt.hostAllocMapped | rt.hostAllocPortable)
                host = np.ctypeslib.as_array((ctypes.c_int32 * 16).from_address(ptr))
                host[:] = 0
                mem = cupy.cuda.UnownedMemory(ptr, 64, owner=d)
                dev = cupy.ndarray((16,), dtype=cupy.int32, memptr=cupy.cuda.MemoryPointer(mem, 0))
                pool.append({"_host_ptr": ptr, "_host": host, "_host_dev": dev, "_flag_arg": dev[0:1],
                             "_timeout_arg": dev[1:2]})
            elif carrier == "cache":
                c = cupy.empty(d._cache_size, dtype=cupy.uint8)
                pool.append({"_cache": c, "_cache_ptr": c.data.ptr})
            else:
                pool.append({})
        return pool

    def use(self, attrs: dict[str, Any]) -> dict[str, Any]:
        old = {k: getattr(self.d, k) for k in attrs}
        for k, v in attrs.items():
            setattr(self.d, k, v)
        return old


def calls_for(device: Any, fn: Callable[[], object]) -> int:
    from primbench.measure import timed_calls

    ms = timed_calls(device, fn, 20, hot=False, block=True)
    return max(20, int(BATCH_GPU_MS / max(1e-4, float(np.median(ms)))))


def measure_kernel(device: Any, name: str, make_fn: Callable[[Any], Callable[[], object]], size: int,
                   rng: np.random.Generator, passes: int, pool_size: int) -> list[dict[str, Any]]:
    from primbench.measure import timed_calls

    rows: list[dict[str, Any]] = []
    sw = Carriers(device)
    with device.activate():
        fn0 = make_fn(device._stream)
        fn0()
        device.synchronize_device()
        calls = calls_for(device, fn0)
    for carrier in CARRIERS:
        pool = sw.make(carrier, pool_size) if carrier != "renew" else [{} for _ in range(pool_size)]
        for p in range(passes):
            for i in rng.permutation(pool_size).tolist():
                if carrier == "renew":
                    device.renew()
                old = sw.use(pool[i])
                try:
                    with device.activate():
                        fn = make_fn(device._stream)
                        fn()  # unmeasured warm-up on this object
                        device.synchronize_device()
                        for b in range(BATCHES):
                            ms = timed_calls(device, fn, calls, hot=False, block=True)
                            rows.append({"kernel": name, "size": size, "carrier": carrier, "pass": p, "object": i,
                                         "batch": b, "calls": calls, "ms": float(np.mean(ms)),
                                         "median_ms": float(np.median(ms)), "t": time.time()})
                finally:
                    if carrier != "renew":
                        sw.use(old)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="one size, fewer objects (a smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from primbench.backends import open_device
    from primbench.settings import effective_cache_size

    device = open_device(None, monitoring=False)
    l2 = int(device.props.get("l2CacheSize", 0)) or None
    device.prepare(cache_size=effective_cache_size(None, l2), blocking_timeout_secs=5.0, slots=64)
    rng = np.random.default_rng(args.seed or os.getpid())
    plan = [(64 << 10, ("copy_char", "cp.sum", "torch.sum")), (4 << 20, ("copy_char", "cp.add", "sgemv")),
            (64 << 20, ("copy_char", "torch.sum"))]
    if args.quick:
        plan = [(64 << 10, ("copy_char", "torch.sum"))]
    passes, pool_size = (2, 4) if args.quick else (PASSES, POOL)
    rows: list[dict[str, Any]] = []
    started = time.time()
    for size, names in plan:
        fns = kernels(size)
        for name in names:
            rows.extend(measure_kernel(device, name, fns[name], size, rng, passes, pool_size))
            print(f"{name} @ {size}: {time.time() - started:.0f} s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gpu = device.context().get("gpu", {})
    (out / f"carriers-{os.getpid()}.json").write_text(json.dumps({"gpu": gpu, "rows": rows}))
    device.close()


if __name__ == "__main__":
    main()
