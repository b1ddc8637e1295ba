"""What sets the SM clock regime a run sits in (clock_regimes.txt: whole runs at about 1,977 or
1,991 MHz on the H100s lent, every worker of a run in the same one). One process of this script is
one "burst": it opens the GPU, runs a compute-bound and a memory-bound kernel in turn for
``--secs``, and prints one JSON line: the SM clock over the burst from SM 0's cycle counter and
the global timer (as primbench.clocks does), NVML's SM and memory clocks, clock-event reasons,
power and temperature, and each kernel's median time per call.

    python3 clock_probe.py proc --label A1          # one burst in a fresh process
    python3 clock_probe.py inproc --gaps 0,0.3,1,3 --repeat 4   # bursts in one process, idle between
    python3 clock_probe.py keeper                   # hold a CUDA context, idle, until killed

Used by h200_probe8.sh; not part of primbench.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import cupy as cp
import pynvml

_SRC = r"""
extern "C" __global__ void fma_loop(float* out, int iters) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
    for (int i = 0; i < iters; ++i) { a = fmaf(a, b, c); b = fmaf(b, c, a * 1e-9f); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}
extern "C" __global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = in[i];
}
extern "C" __global__ void stamp(unsigned long long* out) {
    unsigned long long t, c;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    out[0] = t; out[1] = c;
}
"""


def _nvml(handle: object) -> dict[str, float]:
    return {"nvml_sm_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            "nvml_mem_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            "reasons": int(pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle)),
            "watts": pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            "temp": pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
            "pstate": int(pynvml.nvmlDeviceGetPerformanceState(handle))}


class Burst:
    def __init__(self) -> None:
        mod = cp.RawModule(code=_SRC)
        self.fma = mod.get_function("fma_loop")
        self.copy = mod.get_function("copy4")
        self.stamp = mod.get_function("stamp")
        self.out = cp.zeros(132 * 4 * 256, dtype=cp.float32)
        n = 64 * 1024 * 1024 // 16
        self.src = cp.ones(n * 4, dtype=cp.float32)
        self.dst = cp.empty_like(self.src)
        self.n = n
        self.stamps = cp.zeros(2, dtype=cp.uint64)
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)

    def _time(self, launch: object) -> float:
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        launch()  # type: ignore[operator]
        b.record()
        b.synchronize()
        return cp.cuda.get_elapsed_time(a, b) * 1e3  # us

    def _stamp(self) -> tuple[int, int]:
        self.stamp((1,), (1,), (self.stamps,))
        t, c = (int(x) for x in self.stamps.get())
        return t, c

    def run(self, secs: float) -> dict[str, object]:
        fma = lambda: self.fma((132 * 4,), (256,), (self.out, cp.int32(20000)))  # noqa: E731
        copy = lambda: self.copy((132 * 8,), (256,), (self.src, self.dst, cp.int64(self.n)))  # noqa: E731
        for _ in range(5):
            fma(), copy()
        cp.cuda.Device().synchronize()
        before = _nvml(self.handle)
        s0 = self._stamp()
        t_fma: list[float] = []
        t_copy: list[float] = []
        mid: list[dict[str, float]] = []
        end = time.perf_counter() + secs
        while time.perf_counter() < end:
            t_fma.append(self._time(fma))
            t_copy.append(self._time(copy))
            if len(t_fma) % 200 == 0:
                mid.append(_nvml(self.handle))
        s1 = self._stamp()
        after = _nvml(self.handle)
        return {"sm_mhz": (s1[1] - s0[1]) / (s1[0] - s0[0]) * 1e3,
                "fma_us": statistics.median(t_fma), "copy_us": statistics.median(t_copy),
                "calls": len(t_fma), "before": before, "after": after,
                "mid_nvml_sm_mhz": [m["nvml_sm_mhz"] for m in mid],
                "mid_reasons": sorted({int(m["reasons"]) for m in mid})}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["proc", "inproc", "keeper"])
    p.add_argument("--label", default="")
    p.add_argument("--secs", type=float, default=0.6)
    p.add_argument("--gaps", default="0,0.3,1,3")
    p.add_argument("--repeat", type=int, default=4)
    a = p.parse_args()
    t0 = time.time()
    if a.mode == "keeper":
        cp.zeros(1).sum()
        cp.cuda.Device().synchronize()
        while True:
            time.sleep(1)
    burst = Burst()
    if a.mode == "proc":
        r = burst.run(a.secs)
        r.update(label=a.label, t=t0, open_secs=time.time() - t0 - a.secs)
        print(json.dumps(r), flush=True)
        return 0
    gaps = [float(g) for g in a.gaps.split(",")]
    i = 0
    for _ in range(a.repeat):
        for g in gaps:
            time.sleep(g)
            r = burst.run(a.secs)
            r.update(label=f"{a.label}{i}", gap=g, t=time.time())
            print(json.dumps(r), flush=True)
            i += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
