"""The tenth evaluation suite of issue "Verdicts that speak", written after the protocol and compare's
method were frozen at the commit before the one that adds it, and before any of its data existed
(`eval10-plan.md`): eight kernels of kinds used by none of the tuning suite (`../variance/tuning_suite.py`),
`eval_suite.py` ... `eval_suite9.py`, the pilots or the probes, and no copy kernel.

Eight kernels, library calls included: batched QR of 16 x 16 matrices (`torch.linalg.qr(mode="r")`: the
batched Householder factorisation, geqrf), a transposed 2-D convolution (`torch.nn.functional.conv_transpose2d`,
cuDNN), col2im (`torch.nn.functional.fold`: overlapping 3 x 3 patches summed; the fifth suite had its
inverse, `unfold`), a sparse-dense product (a CSR
matrix of 16 entries a row times 8 dense columns, `torch.sparse.mm`: cuSPARSE SpMM), the exponentially
scaled Bessel function I0 (`torch.special.i0e`), a Triton fused Adam step (four fp32 arrays read, three
written), a Hamming-distance RawKernel (256-bit codes, `__popcll`) and one pull step of a breadth-first search
RawKernel (each unvisited vertex reads its 8 neighbours' levels: irregular gathers).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every setup is
outside the timed call, and no timed call synchronises the host. **Planted changes** are those of
`eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after each call).

    python tests/benchmarks/verdicts/eval_suite10.py --size 1MiB --processes 16 --json-out aa-1.json
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import primbench as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_suite import main as run_suite
from eval_suite2 import _generator, _torch_on_stream, suite_kernel  # the second suite's helpers

SUMMARY = ("batched 16x16 QR, R only (torch.linalg.qr), conv_transpose2d (cuDNN), col2im (torch fold), CSR SpMM "
           "(torch.sparse.mm, cuSPARSE), Bessel i0e (torch.special), Triton fused Adam step, Hamming-distance "
           "RawKernel (popcount), BFS pull-step RawKernel (no copy kernel, no kind of the tuning suite or of "
           "eval_suite.py ... eval_suite9.py)")

HAMMING = r"""
extern "C" __global__ void hamming(const unsigned long long* __restrict__ codes,
                                   const unsigned long long* __restrict__ query, int* __restrict__ dist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    const unsigned long long* c = codes + (size_t)i * 4;
    int d = 0;
    for(int k = 0; k < 4; k++) d += __popcll(c[k] ^ __ldg(&query[k]));
    dist[i] = d;
}
"""
BFS = r"""
extern "C" __global__ void bfs_pull(const int* __restrict__ neighbours, const int* __restrict__ level_in,
                                    int* __restrict__ level_out, int n, int current)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if(v >= n) return;
    int level = level_in[v];
    if(level < 0) {
        const int* nb = neighbours + (size_t)v * 8;
        for(int k = 0; k < 8; k++) {
            if(__ldg(&level_in[nb[k]]) == current) { level = current + 1; break; }
        }
    }
    level_out[v] = level;
}
"""
_CACHE: dict[str, Any] = {}

QR_N = 16  # batched QR: 16 x 16 fp32 matrices
DECONV_CHANNELS = 16  # conv_transpose2d: 16 channels in and out, 3 x 3, stride 1, padding 1
FOLD_CHANNELS = 4  # col2im: 4 channels of 3 x 3 patches
SPMM_ROW = 16  # CSR SpMM: 16 entries a row
SPMM_COLUMNS = 8  # times 8 dense columns
ADAM_BLOCK = 1024
BFS_DEGREE = 8


def qr(state: pb.State, cp: Any) -> Callable[[], None]:
    """The R factor of the QR decomposition of `state.size` bytes of 16 x 16 fp32 matrices (at least 4) by
    `torch.linalg.qr(mode="r")`: the batched Householder factorisation (geqrf) alone. Q is not formed:
    PyTorch forms it one matrix at a time (orgqr in a loop over the batch), 65,536 library calls a call
    at 64 MiB."""
    import torch

    batch = max(4, state.size // (QR_N * QR_N * 4))
    a = torch.randn((batch, QR_N, QR_N), device="cuda", generator=_generator(state))
    state.set_items(batch)
    state.add_reads(np.float32, a.numel())
    state.add_writes(np.float32, a.numel())
    return _torch_on_stream(state, lambda: torch.linalg.qr(a, mode="r"))


def conv_transpose(state: pb.State, cp: Any) -> Callable[[], None]:
    """A transposed 3 x 3 convolution (stride 1, padding 1: the same size out) of a square image of 16 float
    channels, `state.size` bytes (at least 16 x 16), by `torch.nn.functional.conv_transpose2d` (cuDNN)."""
    import torch

    side = max(16, math.isqrt(state.size // 4 // DECONV_CHANNELS))
    gen = _generator(state)
    x = torch.randn((1, DECONV_CHANNELS, side, side), device="cuda", generator=gen)
    w = torch.randn((DECONV_CHANNELS, DECONV_CHANNELS, 3, 3), device="cuda", generator=gen)
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.conv_transpose2d(x, w, padding=1))


def col2im(state: pb.State, cp: Any) -> Callable[[], None]:
    """The 3 x 3 patches (stride 1, padding 1) of a square image of 4 float channels summed back into it by
    `torch.nn.functional.fold`: `state.size` bytes of patches (nine values a pixel and channel; at least a
    16 x 16 image)."""
    import torch

    side = max(16, math.isqrt(state.size // 4 // (FOLD_CHANNELS * 9)))
    cols = torch.randn((1, FOLD_CHANNELS * 9, side * side), device="cuda", generator=_generator(state))
    state.set_items(side * side * FOLD_CHANNELS)
    state.add_reads(np.float32, cols.numel())
    state.add_writes(np.float32, side * side * FOLD_CHANNELS)
    return _torch_on_stream(state, lambda: torch.nn.functional.fold(cols, (side, side), 3, padding=1))


def spmm(state: pb.State, cp: Any) -> Callable[[], None]:
    """A square CSR matrix of 16 random columns a row (fp32 values and int32 indices: `state.size` bytes, at
    least 1,024 rows) times a dense matrix of 8 columns, by `torch.sparse.mm` (cuSPARSE SpMM)."""
    import torch

    rows = max(1024, state.size // 8 // SPMM_ROW)
    nnz = rows * SPMM_ROW
    gen = _generator(state)
    crow = torch.arange(0, nnz + 1, SPMM_ROW, device="cuda", dtype=torch.int32)
    col = torch.randint(0, rows, (nnz,), device="cuda", dtype=torch.int32, generator=gen)
    col = col.view(rows, SPMM_ROW).sort(dim=1).values.reshape(-1).contiguous()
    values = torch.randn(nnz, device="cuda", generator=gen)
    a = torch.sparse_csr_tensor(crow, col, values, (rows, rows))
    b = torch.randn((rows, SPMM_COLUMNS), device="cuda", generator=gen)
    state.set_items(nnz)
    state.add_reads(np.float32, nnz + rows * SPMM_COLUMNS)
    state.add_reads(np.int32, nnz + rows + 1)
    state.add_writes(np.float32, rows * SPMM_COLUMNS)
    return _torch_on_stream(state, lambda: torch.sparse.mm(a, b))


def bessel_i0e(state: pb.State, cp: Any) -> Callable[[], None]:
    """i0e(x) = exp(-|x|) I0(x) of `state.size` bytes of floats (`torch.special.i0e`, into a preallocated
    output)."""
    import torch

    n = max(1024, state.size // 4)
    x = 20 * torch.rand(n, device="cuda", generator=_generator(state)) - 10
    out = torch.empty_like(x)
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: torch.special.i0e(x, out=out))


def _adam_kernel() -> Any:
    if "adam" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def adam(p_ptr, g_ptr, m_ptr, v_ptr, n, lr, beta1, beta2, eps, bias1, bias2, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            p = tl.load(p_ptr + offs, mask=mask)
            g = tl.load(g_ptr + offs, mask=mask)
            m = beta1 * tl.load(m_ptr + offs, mask=mask) + (1.0 - beta1) * g
            v = beta2 * tl.load(v_ptr + offs, mask=mask) + (1.0 - beta2) * g * g
            p = p - lr * (m / bias1) / (tl.sqrt(v / bias2) + eps)
            tl.store(p_ptr + offs, p, mask=mask)
            tl.store(m_ptr + offs, m, mask=mask)
            tl.store(v_ptr + offs, v, mask=mask)

        _CACHE["adam"] = adam
    return _CACHE["adam"]


def triton_adam(state: pb.State, cp: Any) -> Callable[[], None]:
    """One Adam step in place over fp32 parameters, gradients and both moments (`state.size` bytes of the four
    together, at least 1,024 parameters) by one Triton kernel."""
    import torch

    n = max(1024, state.size // 16)
    gen = _generator(state)
    p, g = torch.randn(n, device="cuda", generator=gen), torch.randn(n, device="cuda", generator=gen)
    m, v = torch.zeros(n, device="cuda"), torch.rand(n, device="cuda", generator=gen)
    kernel = _adam_kernel()
    grid = ((n + ADAM_BLOCK - 1) // ADAM_BLOCK,)
    state.set_items(n)
    state.add_reads(np.float32, 4 * n)
    state.add_writes(np.float32, 3 * n)
    return _torch_on_stream(state, lambda: kernel[grid](p, g, m, v, n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 0.001,
                                                        BLOCK=ADAM_BLOCK))


def hamming(state: pb.State, cp: Any) -> Callable[[], object]:
    """The Hamming distance of each of `state.size` bytes of 256-bit codes (at least 1,024) to one query code,
    one thread a code."""
    if "hamming" not in _CACHE:
        _CACHE["hamming"] = cp.RawKernel(HAMMING, "hamming")
    kernel = _CACHE["hamming"]
    n = max(1024, state.size // 32)
    rng = cp.random.default_rng(state.seed)
    codes = rng.integers(0, 2**31 - 1, n * 8, dtype=cp.int32).view(cp.uint64)
    query = rng.integers(0, 2**31 - 1, 8, dtype=cp.int32).view(cp.uint64)
    dist = cp.empty(n, dtype=cp.int32)
    blocks = (n + 255) // 256
    state.set_items(n)
    state.add_reads(np.uint64, 4 * n)
    state.add_writes(np.int32, n)
    return lambda: kernel((blocks,), (256,), (codes, query, dist, np.int32(n)))


def bfs_pull(state: pb.State, cp: Any) -> Callable[[], object]:
    """One pull step of a breadth-first search on a random graph of 8 neighbours a vertex (`state.size` bytes
    of int32 neighbour lists, at least 1,024 vertices): each unvisited vertex (70 %) takes the next level if a
    neighbour is on the current one (10 %). It reads one level array and writes another, so every call does
    the same work."""
    if "bfs" not in _CACHE:
        _CACHE["bfs"] = cp.RawKernel(BFS, "bfs_pull")
    kernel = _CACHE["bfs"]
    n = max(1024, state.size // (4 * BFS_DEGREE))
    rng = cp.random.default_rng(state.seed)
    neighbours = rng.integers(0, n, n * BFS_DEGREE, dtype=cp.int32)
    r = rng.random(n, dtype=cp.float32)
    level_in = cp.ones(n, dtype=cp.int32)
    level_in[r < 0.8] = 3
    level_in[r < 0.7] = -1
    level_out = cp.empty_like(level_in)
    blocks = (n + 255) // 256
    state.set_items(n)
    state.add_reads(np.int32, n * BFS_DEGREE + n)
    state.add_writes(np.int32, n)
    return lambda: kernel((blocks,), (256,), (neighbours, level_in, level_out, np.int32(n), np.int32(3)))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "torch.qr": qr, "torch.conv_transpose2d": conv_transpose, "torch.fold": col2im, "torch.spmm_csr": spmm,
    "torch.i0e": bessel_i0e, "triton.adam": triton_adam, "hamming": hamming, "bfs_pull": bfs_pull,
}


Kernel = suite_kernel("eval10", SETUPS)


KERNELS = (("torch.qr", "float"), ("torch.conv_transpose2d", "float"), ("torch.fold", "float"),
           ("torch.spmm_csr", "float"), ("torch.i0e", "float"), ("triton.adam", "float"), ("hamming", "uint64"),
           ("bfs_pull", "int32"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
