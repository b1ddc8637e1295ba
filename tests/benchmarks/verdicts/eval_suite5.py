"""The fifth evaluation suite of issue "Verdicts that speak", written after compare's method was frozen
at the commit that adds it and before any of its data existed (`eval5-plan.md`): eight kernels of kinds
used by none of the tuning suite (`../variance/tuning_suite.py`) or `eval_suite.py` ... `eval_suite4.py`,
and no copy kernel. It evaluates the several-process protocol (a run of 4 processes, `eval5-plan.md`).

Eight kernels, library calls included: an int8 matrix product on the tensor cores (`torch._int_mm`,
cuBLASLt), a batched triangular solve (`torch.linalg.solve_triangular`, cuBLAS trsm), a group norm
(`torch.nn.functional.group_norm`), im2col (`torch.nn.functional.unfold`), a CuPy `cupy.fuse` kernel
(a fused polynomial and sum of squares), a Triton scatter-add by `tl.atomic_add`, a RawKernel sum by
warp shuffles (`__shfl_down_sync`), and a RawKernel bitonic sort of 1024-key tiles in shared memory.

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every
setup is outside the timed call. **Planted changes** are those of `eval_suite.py` (its `Kernel.run`,
inherited: a one-thread tail kernel after each call).

    python tests/benchmarks/verdicts/eval_suite5.py --size 256KiB --json-out aa-1-p1.json
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import primbench as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_suite import main as run_suite
from eval_suite2 import _generator, _torch_on_stream, suite_kernel  # the second suite's helpers

SUMMARY = ("int8 tensor-core GEMM (torch._int_mm), batched triangular solve (cuBLAS trsm), group_norm, "
           "im2col (unfold), cupy.fuse polynomial + sum of squares, Triton atomic scatter-add, warp-shuffle "
           "sum RawKernel, shared-memory bitonic sort RawKernel (no copy kernel, no kind of the tuning suite "
           "or of eval_suite.py ... eval_suite4.py)")

SHFL = r"""
extern "C" __global__ void shfl_sum(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float warp_sums[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for(int j = i; j < n; j += gridDim.x * blockDim.x) v += in[j];
    for(int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if(threadIdx.x < 8) {
        v = warp_sums[threadIdx.x];
        for(int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffu, v, o);
        if(threadIdx.x == 0) out[blockIdx.x] = v;
    }
}
"""
BITONIC = r"""
extern "C" __global__ void bitonic1024(const unsigned int* __restrict__ in, unsigned int* __restrict__ out)
{
    __shared__ unsigned int s[1024];
    unsigned int base = blockIdx.x * 1024u;
    unsigned int t = threadIdx.x;
    s[t] = in[base + t];
    s[t + 512] = in[base + t + 512];
    __syncthreads();
    for(unsigned int k = 2; k <= 1024; k <<= 1) {
        for(unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int i = 2 * t - (t & (j - 1));
            unsigned int p = i + j;
            bool up = ((i & k) == 0);
            unsigned int a = s[i], b = s[p];
            if((a > b) == up) { s[i] = b; s[p] = a; }
            __syncthreads();
        }
    }
    out[base + t] = s[t];
    out[base + t + 512] = s[t + 512];
}
"""
_CACHE: dict[str, Any] = {}

MM_K, MM_N = 64, 64  # int8 GEMM: (M x 64) @ (64 x 64)
TRSM_N, TRSM_RHS = 32, 8  # batched 32 x 32 lower-triangular systems, 8 right-hand sides
GN_C, GN_HW, GN_GROUPS = 32, 32, 8
UNF_C, UNF_HW = 8, 32  # unfold: 8-channel 32 x 32 images, 3 x 3 patches
SCATTER_BINS, SCATTER_BLOCK = 4096, 1024


def int_mm(state: pb.State, cp: Any) -> Callable[[], None]:
    """(M x 64) int8 @ (64 x 64) int8 -> int32 (cuBLASLt, tensor cores); A is `state.size` bytes
    (M a multiple of 8, at least 32)."""
    import torch

    m = max(32, state.size // MM_K // 8 * 8)
    gen = _generator(state)
    a = torch.randint(-64, 64, (m, MM_K), device="cuda", dtype=torch.int8, generator=gen)
    b = torch.randint(-64, 64, (MM_K, MM_N), device="cuda", dtype=torch.int8, generator=gen)
    state.set_items(m * MM_N)
    state.add_reads(np.int8, a.numel() + b.numel())
    state.add_writes(np.int32, m * MM_N)
    return _torch_on_stream(state, lambda: torch._int_mm(a, b))


def trsm(state: pb.State, cp: Any) -> Callable[[], None]:
    """A batch of 32 x 32 lower-triangular float systems with 8 right-hand sides each; the matrices
    are `state.size` bytes (at least 4)."""
    import torch

    batch = max(4, state.size // 4 // (TRSM_N * TRSM_N))
    gen = _generator(state)
    a = torch.rand((batch, TRSM_N, TRSM_N), device="cuda", generator=gen).tril_()
    a.diagonal(dim1=1, dim2=2).add_(TRSM_N)  # well conditioned
    b = torch.randn((batch, TRSM_N, TRSM_RHS), device="cuda", generator=gen)
    state.set_items(batch * TRSM_N * TRSM_RHS)
    state.add_reads(np.float32, a.numel() + b.numel())
    state.add_writes(np.float32, b.numel())
    return _torch_on_stream(state, lambda: torch.linalg.solve_triangular(a, b, upper=False))


def group_norm(state: pb.State, cp: Any) -> Callable[[], None]:
    """Group norm (8 groups) of a batch of 32-channel 32 x 32 float images, weight and bias per channel."""
    import torch

    batch = max(1, state.size // 4 // (GN_C * GN_HW * GN_HW))
    gen = _generator(state)
    x = torch.randn((batch, GN_C, GN_HW, GN_HW), device="cuda", generator=gen)
    weight, bias = (torch.randn(GN_C, device="cuda", generator=gen) for _ in range(2))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.group_norm(x, GN_GROUPS, weight, bias))


def unfold(state: pb.State, cp: Any) -> Callable[[], None]:
    """im2col of a batch of 8-channel 32 x 32 float images into 3 x 3 patches (padding 1): the output
    is nine times the input."""
    import torch

    batch = max(1, state.size // 4 // (UNF_C * UNF_HW * UNF_HW))
    x = torch.randn((batch, UNF_C, UNF_HW, UNF_HW), device="cuda", generator=_generator(state))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, 9 * x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.unfold(x, 3, padding=1))


def fused(state: pb.State, cp: Any) -> Callable[[], object]:
    """One `cupy.fuse` kernel over size / 4 floats (at least 1024): a cubic polynomial of each element,
    summed as squares."""
    if "fuse" not in _CACHE:
        @cp.fuse()
        def poly_sq_sum(x: Any) -> Any:
            y = ((x * 0.5 + 1.0) * x - 2.0) * x + 0.25
            return cp.sum(y * y)

        _CACHE["fuse"] = poly_sq_sum
    f = _CACHE["fuse"]
    n = max(1024, state.size // 4)
    x = cp.random.default_rng(state.seed).random(n, dtype=cp.float32)
    state.set_items(n)
    state.add_reads(np.float32, n)
    return lambda: f(x)


def _scatter_kernel() -> Any:
    if "scatter" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def scatter_add(out_ptr, idx_ptr, val_ptr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            idx = tl.load(idx_ptr + offs)
            val = tl.load(val_ptr + offs)
            tl.atomic_add(out_ptr + idx, val)

        _CACHE["scatter"] = scatter_add
    return _CACHE["scatter"]


def scatter(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 8 float values (a multiple of 1024, at least 1024) added into 4,096 bins at random int32
    indices by Triton's `tl.atomic_add`."""
    import torch

    n = max(SCATTER_BLOCK, state.size // 8 // SCATTER_BLOCK * SCATTER_BLOCK)
    gen = _generator(state)
    idx = torch.randint(0, SCATTER_BINS, (n,), device="cuda", dtype=torch.int32, generator=gen)
    val = torch.rand(n, device="cuda", generator=gen)
    out = torch.zeros(SCATTER_BINS, device="cuda")
    kernel = _scatter_kernel()
    state.set_items(n)
    state.add_reads(np.float32, 2 * n)
    return _torch_on_stream(state, lambda: kernel[(n // SCATTER_BLOCK,)](out, idx, val, BLOCK=SCATTER_BLOCK))


def shfl_sum(state: pb.State, cp: Any) -> Callable[[], object]:
    """size / 4 floats (at least 1024) summed per block of 256 threads by warp shuffles (a grid of at
    most 1,024 blocks, grid-stride), one partial sum a block."""
    if "shfl" not in _CACHE:
        _CACHE["shfl"] = cp.RawKernel(SHFL, "shfl_sum")
    kernel = _CACHE["shfl"]
    n = max(1024, state.size // 4)
    blocks = min(1024, (n + 255) // 256)
    x = cp.random.default_rng(state.seed).random(n, dtype=cp.float32)
    out = cp.empty(blocks, dtype=cp.float32)
    state.set_items(n)
    state.add_reads(np.float32, n)
    return lambda: kernel((blocks,), (256,), (x, out, np.int32(n)))


def bitonic(state: pb.State, cp: Any) -> Callable[[], object]:
    """size / 4 unsigned keys (a multiple of 1024, at least 1024) sorted in tiles of 1,024 by a bitonic
    network in shared memory, 512 threads a tile."""
    if "bitonic" not in _CACHE:
        _CACHE["bitonic"] = cp.RawKernel(BITONIC, "bitonic1024")
    kernel = _CACHE["bitonic"]
    n = max(1024, state.size // 4 // 1024 * 1024)
    keys = cp.random.default_rng(state.seed).integers(0, 2**31, n, dtype=cp.uint32)
    out = cp.empty_like(keys)
    state.set_items(n)
    state.add_reads(np.uint32, n)
    state.add_writes(np.uint32, n)
    return lambda: kernel((n // 1024,), (512,), (keys, out))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "torch.int_mm": int_mm, "torch.trsm": trsm, "torch.group_norm": group_norm, "torch.unfold": unfold,
    "cupy.fuse": fused, "triton.scatter_add": scatter, "shfl_sum": shfl_sum, "bitonic": bitonic,
}


Kernel = suite_kernel("eval5", SETUPS)


KERNELS = (("torch.int_mm", "int8"), ("torch.trsm", "float"), ("torch.group_norm", "float"),
           ("torch.unfold", "float"), ("cupy.fuse", "float"), ("triton.scatter_add", "float"),
           ("shfl_sum", "float"), ("bitonic", "uint"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
