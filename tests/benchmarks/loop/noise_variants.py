"""Why is long long at 128 MiB 2-6x noisier per batch than char? One variable at a time.

    python tests/benchmarks/loop/noise_variants.py OUTDIR

For the 128 MiB copy of long long (about 72 µs per call) and char (about 248 µs), 40 batches
of each variant after batch sizing; reported: the CV of single calls, the median CV over
rolling windows of 10 batches (the harness's `noise_percent`), and the CV of all 40 batch means.
Variants change one thing against the cold default: the bytes cleared, the GPU time per batch
(`min_gpu_ms_per_batch`), synchronising every call or every 64, the spin block, hot.
Writes OUTDIR/noise_variants.json and .md.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernels import copy_call

from primbench.backends import open_device
from primbench.device import Device
from primbench.measure import coefficient_of_variation, timed_calls

BATCHES = 40
# name: (cache clear, batch ms, sync every, block, hot)
VARIANTS: dict[str, tuple[str, float, int, bool, bool]] = {
    "cold 256MiB 10ms (old default)": ("256MiB", 10, 1, True, False),
    "cold L2 10ms (new default)": ("L2", 10, 1, True, False),
    "cold L2 40ms": ("L2", 40, 1, True, False),
    "cold L2 100ms": ("L2", 100, 1, True, False),
    "cold L2 10ms sync/64": ("L2", 10, 64, True, False),
    "cold L2 10ms no block": ("L2", 10, 1, False, False),
    "hot 10ms": ("none", 10, 64, True, True),
}


def calls_sync_every(dev: Device, fn: Callable[[], object], calls: int, every: int, block: bool) -> list[float]:
    """Cold calls (clear before each), synchronised every `every` calls instead of each."""
    out: list[float] = []
    pending = 0
    for i in range(calls):
        dev.clear_cache()
        if block:
            dev.block()
        dev.record_start(pending)
        fn()
        dev.record_stop(pending)
        if block:
            dev.unblock()
        pending += 1
        if pending == every or i == calls - 1:
            dev.synchronize()
            out.extend(dev.elapsed_ms(s) for s in range(pending))
            pending = 0
    return out


def run_variant(dev: Device, fn: Callable[[], object], batch_ms: float, every: int, block: bool,
                hot: bool) -> dict[str, float]:
    def batch(calls: int) -> list[float]:
        if every == 1 or hot:
            return timed_calls(dev, fn, calls, hot=hot, block=block)
        return calls_sync_every(dev, fn, calls, every, block)

    calls = 1
    while math.fsum(batch(calls)) <= batch_ms:
        calls *= 2
    per_call: list[float] = []
    means: list[float] = []
    for _ in range(BATCHES):
        t = batch(calls)
        per_call.extend(t)
        means.append(math.fsum(t))
    windows = [coefficient_of_variation(means[i - 10:i]) * 100 for i in range(10, len(means) + 1)]
    return {"calls_per_batch": calls, "us_per_call": statistics.mean(per_call) * 1e3,
            "call_cv_percent": coefficient_of_variation(per_call) * 100,
            "window_cv_percent_median": statistics.median(windows),
            "batch_cv_percent": coefficient_of_variation(means) * 100,
            "expected_from_calls_percent": coefficient_of_variation(per_call) * 100 / math.sqrt(calls)}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    probe = open_device(None, monitoring=False)
    l2 = int(probe.context()["gpu"]["l2_cache_bytes"])
    devs = {}
    for key, size in (("256MiB", 256 << 20), ("L2", l2), ("none", 0)):
        d = open_device(None, monitoring=False)
        d.prepare(cache_size=size, blocking_timeout_secs=10, slots=64)
        devs[key] = d
    results = []
    for tname in ("long long", "char"):
        fn, _ = copy_call(tname, 128 << 20)
        for name, (clear, ms, every, block, hot) in VARIANTS.items():
            with devs[clear].activate():
                r = run_variant(devs[clear], fn, ms, every, block, hot)
            results.append({"type": tname, "variant": name, **r})
            print(json.dumps(results[-1]), flush=True)
    (out / "noise_variants.json").write_text(json.dumps(results, indent=1))
    lines = ["| type | variant | calls/batch | µs/call | CV of one call | noise (median CV, windows of 10) "
             "| CV of 40 batches | CV one call / √calls |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['type']} | {r['variant']} | {r['calls_per_batch']} | {r['us_per_call']:.3f} "
                     f"| {r['call_cv_percent']:.3f} % | {r['window_cv_percent_median']:.4f} % "
                     f"| {r['batch_cv_percent']:.4f} % | {r['expected_from_calls_percent']:.4f} % |")
    text = "\n".join(lines) + "\n"
    (out / "noise_variants.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
