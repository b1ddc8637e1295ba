"""The evaluation suite of issue "Verdicts that speak", written after the protocol (rounds.py at
the commit that adds this file) and compare's method were frozen. It shares no kernel kind with
the tuning suite (`../variance/tuning_suite.py`: copies, cp.add, CUB sum/scan, cuBLAS SGEMV,
torch.mul/sum) and has no copy kernel.

Ten kernels: cuBLAS SGEMM, CUB/Thrust radix sort (`cp.sort`), cuFFT (batched c2c), softmax in
PyTorch and in Triton, an atomics histogram (RawKernel), a pointer chase (RawKernel, latency
bound), an FMA loop (`ElementwiseKernel`), a sum of squares (`ReductionKernel`) and a strided
transpose (`cp.copyto` of a transposed view).

**Planted changes.** Every call ends with a one-thread tail kernel on the same stream that spins
for ``PRIMBENCH_EVAL_PLANT[name]`` SM cycles (0 when unplanted): the planted and the unplanted
processes run the same code, and a planted change lengthens every call by exactly that time,
whatever the kernel is bound by. `collect.py` sets the cycles from the A/A runs.

    python tests/benchmarks/verdicts/eval_suite.py --size 4MiB --json-out aa-1.json
"""

from __future__ import annotations

import json
import os

import numpy as np

import primbench as pb

pb.register_type(np.float32, "float")
pb.register_type(np.int32, "int")
pb.register_type(np.complex64, "complex float")

SUMMARY = ("SGEMM, sort, FFT, torch and Triton softmax, histogram, pointer chase, FMA, ReductionKernel, "
           "transpose (no copy kernel, no tuning-suite kind)")  # evaluate.py's line "Kernels: ..."

TAIL = r"""
extern "C" __global__ void tail(long long delay)
{
    long long t0 = clock64();
    while(clock64() - t0 < delay) { }
}
extern "C" __global__ void histogram(const unsigned char* in, unsigned int* bins, unsigned int n)
{
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for(unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
extern "C" __global__ void chase(const unsigned int* next, unsigned int* out, unsigned int steps)
{
    unsigned int p = 0;
    for(unsigned int i = 0; i < steps; ++i) p = next[p];
    out[0] = p;
}
"""
_MODULE: list[object] = []


def module():
    import cupy as cp

    if not _MODULE:
        _MODULE.append(cp.RawModule(code=TAIL))
    return _MODULE[0]


def planted() -> dict[str, int]:
    text = os.environ.get("PRIMBENCH_EVAL_PLANT", "")
    return {str(k): int(v) for k, v in json.loads(text).items()} if text else {}


class Kernel(pb.Benchmark):
    def __init__(self, op: str, type_name: str) -> None:
        self.op, self.type_name = op, type_name

    def meta(self) -> dict[str, object]:
        return {"algo": "eval", "op": self.op, "type": self.type_name}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        tail = module().get_function("tail")
        delay = np.int64(planted().get(pb.specialization_name(self.meta()), 0))
        body = self.body(state, cp)

        def fn() -> None:
            body()
            tail((1,), (1,), (delay,))

        state.run(fn)

    def body(self, state: pb.State, cp):
        rng = cp.random.default_rng(state.seed)
        size = state.size
        if self.op == "sgemm":
            n = max(32, int((size // 12) ** 0.5))
            a, b = rng.random((n, n), dtype=cp.float32), rng.random((n, n), dtype=cp.float32)
            c = cp.empty((n, n), dtype=cp.float32)
            state.set_items(n * n)
            state.add_reads(np.float32, 2 * n * n)
            state.add_writes(np.float32, n * n)
            return lambda: cp.matmul(a, b, out=c)
        if self.op == "sort":
            n = max(1024, size // 4)
            a = rng.integers(0, 1 << 30, n, dtype=cp.int32)
            state.set_items(n)
            state.add_reads(np.int32, n)
            state.add_writes(np.int32, n)
            return lambda: cp.sort(a)
        if self.op == "fft":
            rows = max(1, size // 8 // 4096)
            x = (rng.random((rows, 4096), dtype=cp.float32) + 1j).astype(cp.complex64)
            cp.fft.fft(x)  # the plan, cached
            state.set_items(rows * 4096)
            state.add_reads(np.complex64, rows * 4096)
            state.add_writes(np.complex64, rows * 4096)
            return lambda: cp.fft.fft(x)
        if self.op in ("torch.softmax", "triton.softmax"):
            return self.softmax(state, cp)
        if self.op == "histogram":
            n = max(1024, size)
            x = rng.integers(0, 256, n, dtype=cp.int32).astype(cp.uint8)
            bins = cp.zeros(256, dtype=cp.uint32)
            kernel = module().get_function("histogram")
            blocks = min(1024, max(1, n // 4096))
            state.set_items(n)
            state.add_reads(np.uint8, n)
            return lambda: kernel((blocks,), (256,), (x, bins, np.uint32(n)))
        if self.op == "chase":
            n = max(1024, size // 4)
            perm = np.random.default_rng(state.seed).permutation(n).astype(np.uint32)
            nxt = np.empty(n, dtype=np.uint32)
            nxt[perm] = np.roll(perm, -1)
            d_next = cp.asarray(nxt)
            out = cp.zeros(1, dtype=cp.uint32)
            kernel = module().get_function("chase")
            state.set_items(512)
            return lambda: kernel((1,), (1,), (d_next, out, np.uint32(512)))
        if self.op == "fma":
            n = max(1024, size // 8)
            k = cp.ElementwiseKernel("float32 x", "float32 y",
                                     "float v = x; for (int i = 0; i < 32; ++i) v = v * 0.999f + 0.5f; y = v;",
                                     "eval_fma")
            x, y = rng.random(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
            state.set_items(n)
            state.add_reads(np.float32, n)
            state.add_writes(np.float32, n)
            return lambda: k(x, y)
        if self.op == "sumsq":
            n = max(1024, size // 4)
            k = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = a", "0", "eval_sumsq")
            x, y = rng.random(n, dtype=cp.float32), cp.empty((), dtype=cp.float32)
            state.set_items(n)
            state.add_reads(np.float32, n)
            return lambda: k(x, y)
        # transpose
        n = max(32, int((size // 8) ** 0.5))
        a, out = rng.random((n, n), dtype=cp.float32), cp.empty((n, n), dtype=cp.float32)
        state.set_items(n * n)
        state.add_reads(np.float32, n * n)
        state.add_writes(np.float32, n * n)
        return lambda: cp.copyto(out, a.T)

    def softmax(self, state: pb.State, cp):
        import torch

        cols = 1024
        rows = max(1, state.size // 8 // cols)
        gen = torch.Generator(device="cuda").manual_seed(state.seed)
        x = torch.rand((rows, cols), device="cuda", generator=gen)
        y = torch.empty_like(x)
        torch.cuda.synchronize()
        stream = torch.cuda.ExternalStream(state.stream.ptr)
        state.set_items(rows * cols)
        state.add_reads(np.float32, rows * cols)
        state.add_writes(np.float32, rows * cols)
        if self.op == "torch.softmax":
            def op() -> None:
                torch.softmax(x, dim=1, out=y)
        else:
            kernel = _triton_softmax()

            def op() -> None:
                kernel[(rows,)](y, x, cols, BLOCK=cols)

        def call() -> None:
            with torch.cuda.stream(stream):
                op()

        return call


def _triton_softmax():
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(in_ptr + row * cols + offs, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)

    return softmax_kernel


KERNELS = (("sgemm", "float"), ("sort", "int"), ("fft", "complex float"), ("torch.softmax", "float"),
           ("triton.softmax", "float"), ("histogram", "int"), ("chase", "int"), ("fma", "float"),
           ("sumsq", "float"), ("transpose", "float"))


def main(kernel: type[Kernel] = Kernel, kernels: tuple[tuple[str, str], ...] = KERNELS) -> None:
    """Run a suite of `kernels` (op, type) measured by `kernel` (this suite's, or a subclass)."""
    ex = pb.Executor()
    for op, type_name in kernels:
        ex.queue(kernel(op, type_name))
    ex.main()


if __name__ == "__main__":
    main()
