"""Is a cold measurement taken right after the benchmark wrote its inputs biased, by clear size?

    python tests/benchmarks/loop/clear_bias.py OUTDIR [TRIALS]

`cache_clear.py`'s first run measured the L2-sized clear first after the buffers were written,
and read it up to 2.4 % fast in 3 of 4 small cases; its shuffled run never put the L2 clear
first. This separates the two: in every trial and for every clear (L2, 1.5x L2, 2x L2,
256 MiB, in a new random order each trial), the copy kernel's buffers are allocated and written
afresh, then measured twice in a row by the harness's loop (`primbench.measure.measure`,
0.3 s, window 5) under that clear. Each round of the executor measures exactly like the first
of the two. Reported per case and clear: the first measurement against the second (mean over
trials, and the range), and the second against 256 MiB's second; plus the host µs per timed
call. Writes OUTDIR/clear_bias.json and .md.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernels import copy_call

from primbench.backends import open_device
from primbench.measure import measure

CASES = [("char", 64 << 10), ("long long", 64 << 10), ("char", 1 << 20), ("long long", 1 << 20)]


def main() -> None:
    out = Path(sys.argv[1])
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    out.mkdir(parents=True, exist_ok=True)
    probe = open_device(None, monitoring=False)
    l2 = int(probe.context()["gpu"]["l2_cache_bytes"])
    probe.close()
    clears = {"L2": l2, "1.5xL2": 3 * l2 // 2, "2xL2": 2 * l2, "256MiB": 256 << 20}
    devices = {}
    for name, size in clears.items():
        d = open_device(None, monitoring=False)
        d.prepare(cache_size=size, blocking_timeout_secs=10, slots=64)
        devices[name] = d
    rng = random.Random(7)
    raw: dict[str, dict[str, list[dict[str, float]]]] = {f"{t} {s >> 10} KiB": {c: [] for c in clears}
                                                         for t, s in CASES}
    for trial in range(trials):
        for tname, size in CASES:
            case = f"{tname} {size >> 10} KiB"
            names = list(devices)
            rng.shuffle(names)
            for name in names:
                dev = devices[name]
                with dev.activate():
                    fn, _ = copy_call(tname, size)  # new buffers, written now
                    dev.synchronize_device()
                    fn()  # the executor's warmup call
                    dev.synchronize()
                    got = []
                    for _ in range(2):
                        m = measure(dev, fn, min_gpu_ms_per_batch=10, min_secs=0.3, noise_timeout_secs=3,
                                    batch_window_size=5, noise_tolerance_percent=1, hot=False, sync=False)
                        got.append((m.secs_per_call * 1e6, m.host_secs / m.kernel_calls * 1e6))
                raw[case][name].append({"first_us": got[0][0], "second_us": got[1][0], "host_us": got[1][1],
                                        "trial": trial, "position": names.index(name)})
            print(case, trial, json.dumps({n: raw[case][n][-1] for n in names}), flush=True)
    for d in devices.values():
        d.close()
    lines = [f"Each trial: new buffers written, then two measurements in a row under one clear; {trials} trials, "
             "clears in a new random order each. First vs second: mean (min to max) over trials of first/second - 1.",
             "", "| case | clear | GPU µs per call, second | first vs second | second vs 256 MiB | host µs per call |",
             "|---|---|---|---|---|---|"]
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for case, per in raw.items():
        ref = statistics.fmean(r["second_us"] for r in per["256MiB"])
        summary[case] = {}
        for name, rows in per.items():
            rel = [(r["first_us"] / r["second_us"] - 1) * 100 for r in rows]
            second = statistics.fmean(r["second_us"] for r in rows)
            host = statistics.median(r["host_us"] for r in rows)
            summary[case][name] = {"second_us": second, "first_vs_second_percent": statistics.fmean(rel),
                                   "first_vs_second_min": min(rel), "first_vs_second_max": max(rel),
                                   "second_vs_256MiB_percent": (second / ref - 1) * 100, "host_us": host}
            s = summary[case][name]
            lines.append(f"| {case} | {name} | {second:.3f} | {s['first_vs_second_percent']:+.2f} % "
                         f"({min(rel):+.2f} to {max(rel):+.2f}) | {s['second_vs_256MiB_percent']:+.2f} % "
                         f"| {host:.1f} |")
    (out / "clear_bias.json").write_text(json.dumps({"l2_bytes": l2, "trials": trials, "raw": raw,
                                                     "summary": summary}, indent=1))
    (out / "clear_bias.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
