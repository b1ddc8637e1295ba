"""Branch divergence: a 32-entry array R, each entry 1 with probability p, drawn on
the host and copied to the GPU; thread t takes one of two branches by R[t % 32]. Both
branches run the same number of instructions (a chain of dependent FMAs written as inline PTX,
so the compiler can neither merge them into one select nor drop one); only divergence within
a warp separates the specializations.

    python examples/branch_penalty.py [--steps 256]

Items are threads: items per second falls by up to half once a warp has both branches, as
the C++ primbench found.

Checked in the disassembly (nvcc -cubin -arch=sm_90, cuobjdump -sass:
examples/results/h200/branch_penalty.sass.txt): each branch is a loop of the same 7
instructions (UIADD3, 4 FFMA, ISETP, BRA), differing only in the FMA constants; the taken
branch has one more unconditional jump after its loop, once per thread.
"""

from __future__ import annotations

import numpy as np

import primbench as pb

CODE = r"""
#define FMA_A(x) asm volatile("fma.rn.f32 %0, %0, 0f3F800347, 0f3F000000;" : "+f"(x))
#define FMA_B(x) asm volatile("fma.rn.f32 %0, %0, 0f3F7FF972, 0f3E800000;" : "+f"(x))
#define FOUR(M, x) M(x); M(x); M(x); M(x)

extern "C" __global__ void branch_kernel(const int* R, float* out, int steps)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x = 1e-7f * t;
    if (R[t % 32]) {
        #pragma unroll 1
        for (int i = 0; i < steps; ++i) { FOUR(FMA_A, x); }
    } else {
        #pragma unroll 1
        for (int i = 0; i < steps; ++i) { FOUR(FMA_B, x); }
    }
    out[t] = x;
}
"""
PROBABILITIES = (0.0, 1 / 32, 0.1, 0.25, 0.5, 0.75, 0.9, 31 / 32, 1.0)
THREADS = 132 * 2048 * 4  # a few waves on a large GPU


class BranchPenalty(pb.Benchmark):
    def __init__(self, p: float, steps: int) -> None:
        self.p = p
        self.steps = steps

    def meta(self) -> dict:
        return {"algo": "branch_penalty", "p": f"{self.p:.4f}"}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        rng = np.random.default_rng(state.seed)
        r = (rng.random(32) < self.p).astype(np.int32)
        pb.log(f"R has {int(r.sum())} of 32 entries set")
        d_r = cp.asarray(r)
        out = cp.empty(THREADS, dtype=cp.float32)
        kernel = cp.RawKernel(CODE, "branch_kernel")
        state.set_items(THREADS)
        state.add_writes(np.float32, THREADS)
        state.test(lambda: pb.assert_equal(int(cp.isfinite(out).all()), 1))
        state.run(lambda: kernel((THREADS // 256,), (256,), (d_r, out, np.int32(self.steps))))


def main() -> None:
    # Compute-bound and tiny in memory: no cache clearing (hot) by default.
    executor = pb.Executor(settings=pb.Settings(hot=True))
    steps = executor.get("steps", 256, "FMA groups of four per thread in each branch")
    for p in PROBABILITIES:
        executor.queue(BranchPenalty(p, steps))
    executor.main()


if __name__ == "__main__":
    main()
