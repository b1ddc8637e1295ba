"""How a kernel's time per call moves while the GPU warms up: the evidence for the default
warming rule.

    python tests/benchmarks/loop/warming_trace.py OUTDIR

From a GPU that has idled, runs back-to-back batches (cold protocol, the harness's own
`timed_calls`, L2-sized cache clear) alternating a 1 MiB long long copy and a 1 MiB
`cp.sum`, for `LOAD_SECS`; then idles `GAP_SECS` and loads again for `RELOAD_SECS`.
Each batch records its time since start, time per call, GPU temperature, SM clock and
power. Writes OUTDIR/warming_trace.csv and OUTDIR/warming_trace.md (time per call per
second of load, relative to the last 5 s of the first load).
"""

from __future__ import annotations

import csv
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pynvml
from _kernels import copy_call, sum_call

from primbench.backends import open_device
from primbench.measure import timed_calls

IDLE_SECS, LOAD_SECS, GAP_SECS, RELOAD_SECS = 10.0, 24.0, 5.0, 8.0
CALLS = 1024  # per batch: about 5-10 ms of GPU time at 1 MiB


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    dev = open_device(None, monitoring=True)
    l2 = int(dev.context()["gpu"]["l2_cache_bytes"])
    dev.prepare(cache_size=l2, blocking_timeout_secs=10, slots=64)
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    kernels = {"copy long long 1MiB": copy_call("long long", 1 << 20)[0], "cp.sum float 1MiB": sum_call(1 << 20)[0]}
    with dev.activate():  # one unblocked call each: CuPy's memory pool allocates (and may synchronize) now
        for fn in kernels.values():
            fn()
        dev.synchronize()
    rows: list[dict[str, object]] = []
    t0 = time.perf_counter()

    def sample(phase: str, secs: float) -> None:
        end = time.perf_counter() + secs
        with dev.activate():
            while time.perf_counter() < end:
                for name, fn in kernels.items():
                    ms = timed_calls(dev, fn, CALLS, hot=False, block=True)
                    rows.append({
                        "phase": phase, "t": round(time.perf_counter() - t0, 4), "kernel": name,
                        "us_per_call": sum(ms) / len(ms) * 1e3,
                        "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                        "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                        "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                        "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                    })

    idle_temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
    time.sleep(IDLE_SECS)
    start_temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
    sample("load", LOAD_SECS)
    gap_start = time.perf_counter()
    time.sleep(GAP_SECS)
    sample("reload", RELOAD_SECS)
    dev.close()
    with open(out / "warming_trace.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "warming_trace.md").write_text(render(rows, idle_temp, start_temp, gap_start - t0))
    print(render(rows, idle_temp, start_temp, gap_start - t0))


def render(rows: list[dict[str, object]], idle_temp: float, start_temp: float, gap_at: float) -> str:
    lines = [f"GPU temperature {idle_temp} °C at start, {start_temp} °C after {IDLE_SECS:.0f} s idle; "
             f"load {LOAD_SECS:.0f} s, idle {GAP_SECS:.0f} s, reload {RELOAD_SECS:.0f} s; {CALLS} cold calls "
             "per batch, kernels alternating.", ""]
    names = sorted({str(r["kernel"]) for r in rows})
    load_start = min(float(r["t"]) for r in rows if r["phase"] == "load")  # type: ignore[arg-type]
    reload_start = min(float(r["t"]) for r in rows if r["phase"] == "reload")  # type: ignore[arg-type]
    ref = {n: statistics.median(float(r["us_per_call"]) for r in rows  # type: ignore[arg-type]
                                if r["kernel"] == n and r["phase"] == "load" and float(r["t"]) > gap_at - 5)
           for n in names}
    lines.append("| phase | second of load | " + " | ".join(f"{n}: µs/call (vs last 5 s)" for n in names)
                 + " | temp °C | SM MHz | power W |")
    lines.append("|---|---|" + "---|" * len(names) + "---|---|---|")
    for phase, origin in (("load", load_start), ("reload", reload_start)):
        bins: dict[int, list[dict[str, object]]] = {}
        for r in rows:
            if r["phase"] == phase:
                sec = float(r["t"]) - origin  # type: ignore[arg-type]
                key = int(sec * 4) if sec < 2 else 8 + int(sec - 2)  # quarter seconds first, then seconds
                bins.setdefault(key, []).append(r)
        for key in sorted(bins):
            rs = bins[key]
            label = f"{key / 4:.2f}" if key < 8 else f"{key - 6}"
            cells = []
            for n in names:
                v = [float(r["us_per_call"]) for r in rs if r["kernel"] == n]  # type: ignore[arg-type]
                cells.append(f"{statistics.median(v):.3f} ({(statistics.median(v) / ref[n] - 1) * 100:+.2f} %)"
                             if v else "–")
            lines.append(f"| {phase} | {label} | " + " | ".join(cells)
                         + f" | {statistics.median(float(r['temp_c']) for r in rs):.0f}"  # type: ignore[arg-type]
                         + f" | {statistics.median(float(r['sm_mhz']) for r in rs):.0f}"  # type: ignore[arg-type]
                         + f" | {statistics.median(float(r['power_w']) for r in rs):.0f} |")  # type: ignore[arg-type]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
