"""Issue 26's energy suite: 4 kernels at 2 sizes, each launched once or twice per call.

    python tests/benchmarks/energy/energy_suite.py --rounds 10 --min-secs 12 --noise-timeout-secs 40 --json-out a.json
    python tests/benchmarks/energy/energy_suite.py --filter 'launches: 1' ...   # the 8 base ones

Kernels (CuPy): ``copy`` (a RawKernel copying floats, memory bound), ``scale`` (``cp.multiply``
into a preallocated output), ``reduce`` (``cp.sum`` into a preallocated scalar), ``fma`` (a
RawKernel doing `FMA_STEPS` dependent multiply-adds per element: compute bound). Sizes 1 MiB and
128 MiB of floats. ``launches: 2`` launches the kernel twice per call (twice the work); only at
128 MiB (`TWICE_AT`), as a constraint of the suite.

A planted change for ``compare --metric energy``: ``PRIMBENCH_PLANT_PERCENT=10`` makes the kernels
named in ``PRIMBENCH_PLANT_KERNELS`` (default ``copy,fma``) do 10 % more work (copy 10 % more
elements, 10 % more FMA steps) while they declare the same items and bytes. It is an environment
variable, not an option, so that the planted file stays comparable (a custom option's value would
make ``compare`` refuse the pair), as a code change would.

Every specialization runs all its rounds: the precision stop (`primbench.rounds.PRECISION_STOP`)
judges the time per call only, and would leave the energy with as few as 3 measured rounds
(2 degrees of freedom) where the time is precise; this suite turns it off for itself.

``PRIMBENCH_FAKE=1`` runs it on the fake GPU (`issue26_fake`): logic only, no figure is real.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/benchmarks: issue26_fake

import issue26_fake

import primbench as pb
import primbench.rounds

primbench.rounds.PRECISION_STOP = -1.0  # never stop early: energy needs every round (see above)

KERNELS = ("copy", "scale", "reduce", "fma")
SIZES = {"1MiB": pb.MiB, "128MiB": 128 * pb.MiB}
TWICE_AT = "128MiB"
FMA_STEPS = 256  # dependent FMAs per element of the fma kernel
BLOCK = 256

CODE = r"""
extern "C" __global__ void copy_floats(const float* __restrict__ x, float* __restrict__ y, unsigned long long n)
{
    for(unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
        i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}
extern "C" __global__ void fma_steps(const float* __restrict__ x, float* __restrict__ y, unsigned long long n,
                                     int steps)
{
    for(unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
        i += (unsigned long long)gridDim.x * blockDim.x)
    {
        float v = x[i];
        for(int s = 0; s < steps; ++s)
            v = fmaf(v, 0.999f, 0.001f);
        y[i] = v;
    }
}
"""


def planted(kernel: str) -> float:
    """The planted extra work of `kernel` as a fraction (0 unless the environment plants it)."""
    percent = float(os.environ.get("PRIMBENCH_PLANT_PERCENT", "0") or 0)
    kernels = os.environ.get("PRIMBENCH_PLANT_KERNELS", "copy,fma").split(",")
    return percent / 100.0 if kernel in kernels else 0.0


def fake_ms(kernel: str, size: int, extra: float) -> float:
    """The fake GPU's time for one launch: bytes at 4 TB/s, FMAs at 25 T/s, plus 2 µs."""
    n = size // 4
    work = {"copy": 2 * size / 4e12, "scale": 2 * size / 4e12, "reduce": size / 4e12,
            "fma": n * FMA_STEPS / 25e12}[kernel]
    return (work * (1 + extra)) * 1e3 + 0.002


class EnergyKernel(pb.Benchmark):
    def __init__(self, kernel: str, size: str, launches: int) -> None:
        self.kernel, self.size, self.launches = kernel, size, launches

    def meta(self) -> dict[str, Any]:
        return {"algo": "energy", "kernel": self.kernel, "size": self.size, "launches": self.launches}

    def run(self, state: pb.State) -> None:
        size = SIZES[self.size]
        n = size // 4
        extra = planted(self.kernel)
        state.set_items(n * self.launches)
        if self.kernel != "fma":
            state.add_reads(np.float32, n * self.launches)
            if self.kernel != "reduce":
                state.add_writes(np.float32, n * self.launches)
        if issue26_fake.enabled():
            device: Any = state.device
            ms = fake_ms(self.kernel, size, extra)

            def fake() -> None:
                for _ in range(self.launches):
                    device.launch(issue26_fake.jitter(ms))

            state.run(fake)
            return
        state.run(self.gpu_call(n, extra))

    def gpu_call(self, n: int, extra: float) -> Any:
        """The kernel's call on the GPU, its buffers and module built."""
        import cupy as cp

        x = cp.full(int(n * 1.1) + 1, 1.0, dtype=cp.float32)  # room for the planted copy's extra elements
        y = cp.empty_like(x)
        s = cp.empty((), dtype=cp.float32)
        module = cp.RawModule(code=CODE)
        grid = (min((n + BLOCK - 1) // BLOCK, 132 * 32),)
        fn: Any
        if self.kernel == "copy":
            kernel, count = module.get_function("copy_floats"), np.uint64(round(n * (1 + extra)))

            def fn() -> None:
                for _ in range(self.launches):
                    kernel(grid, (BLOCK,), (x, y, count))
        elif self.kernel == "fma":
            kernel, steps = module.get_function("fma_steps"), np.int32(round(FMA_STEPS * (1 + extra)))

            def fn() -> None:
                for _ in range(self.launches):
                    kernel(grid, (BLOCK,), (x, y, np.uint64(n), steps))
        elif self.kernel == "scale":
            xs, ys = x[:n], y[:n]

            def fn() -> None:
                for _ in range(self.launches):
                    cp.multiply(xs, 1.5, out=ys)
        else:
            xs = x[:n]

            def fn() -> None:
                for _ in range(self.launches):
                    cp.sum(xs, out=s)
        return fn


def main() -> None:
    ex = pb.Executor(device=issue26_fake.device() if issue26_fake.enabled() else None)
    for kernel in KERNELS:
        for size in SIZES:
            for launches in (1, 2) if size == TWICE_AT else (1,):
                ex.queue(EnergyKernel(kernel, size, launches))
    ex.main()


if __name__ == "__main__":
    main()
