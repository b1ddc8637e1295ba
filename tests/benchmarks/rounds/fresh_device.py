"""Which per-round reset reproduces the spread between processes? One process, 64 KiB,
the suite's char copy (1 item per thread) and cp.sum, rounds under three variants, interleaved:

* ``same``: one device (stream, events, spin flag, cache buffer) for every round; new buffers
  from CuPy's pool (which hands back the blocks just freed);
* ``fresh-device``: a new device per round (new stream, events, pinned flag, cache buffer);
* ``fresh-device+pool``: that, plus CuPy's pool emptied and a spacer of random size held
  during the round, so the buffers land elsewhere.

    python tests/benchmarks/rounds/fresh_device.py OUT.json
"""

from __future__ import annotations

import json
import random
import sys

import cupy as cp
import numpy as np

import primbench as pb
from primbench.backends import open_device
from primbench.measure import measure
from primbench.rounds import round_budget

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from suite import BLOCK, CODE

SIZE = 64 * 1024
ROUNDS = 8
CACHE = 256 * 1024 * 1024


def setup(kind: str):
    if kind == "copy":
        expr = f"copy_kernel<char, {BLOCK}, 1>"
        k = cp.RawModule(code=CODE, options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
        a = cp.arange(SIZE).astype(cp.int8)
        b = cp.empty_like(a)
        done = cp.zeros(1, dtype=cp.uint32)
        grid = (SIZE // BLOCK,)
        return lambda: k(grid, (BLOCK,), (a, b, done, np.int64(0)))
    a = cp.random.default_rng(1).random(SIZE // 4, dtype=cp.float32)
    out = cp.empty((), dtype=cp.float32)
    return lambda: cp.sum(a, out=out)


def one_round(dev, kind: str) -> float:
    b = round_budget(1.0, 10.0, 10, 3)
    with dev.activate():
        fn = setup(kind)
        dev.synchronize_device()
        fn()
        dev.synchronize()
        m = measure(dev, fn, min_gpu_ms_per_batch=10, min_secs=b.min_secs, noise_timeout_secs=b.noise_timeout_secs,
                    batch_window_size=b.batch_window_size, noise_tolerance_percent=1, hot=False, sync=False)
    return m.gpu_secs * 1e3 / m.kernel_calls


def main() -> None:
    rng = random.Random(7)
    shared = open_device(monitoring=False)
    shared.prepare(cache_size=CACHE, blocking_timeout_secs=10, slots=64)
    out: dict[str, dict[str, list[float]]] = {}
    for r in range(ROUNDS):
        for variant in ("same", "fresh-device", "fresh-device+pool"):
            for kind in ("copy", "sum"):
                spacer = None
                if variant == "same":
                    dev = shared
                else:
                    if variant.endswith("pool"):
                        cp.get_default_memory_pool().free_all_blocks()
                        spacer = cp.empty(rng.randrange(1, 64) * (1 << 20) + rng.randrange(0, 1 << 20, 256),
                                          dtype=cp.uint8)
                    dev = open_device(monitoring=False)
                    dev.prepare(cache_size=CACHE, blocking_timeout_secs=10, slots=64)
                ms = one_round(dev, kind)
                if dev is not shared:
                    dev.close()
                del spacer
                out.setdefault(variant, {}).setdefault(kind, []).append(ms)
                print(f"round {r} {variant:18s} {kind:5s} {ms * 1000:.4f} us", flush=True)
    shared.close()
    summary = {v: {k: float(np.std(np.log(x), ddof=1) * 100) for k, x in d.items()} for v, d in out.items()}
    print(json.dumps(summary, indent=1))
    with open(sys.argv[1], "w") as f:
        json.dump({"ms_per_call": out, "log_sd_percent": summary, "pb_version": pb.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
