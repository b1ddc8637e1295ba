"""The ninth evaluation suite of issue "Verdicts that speak", written after the protocol and compare's
method were frozen at the commit before the one that adds it, and before any of its data existed
(`eval9-plan.md`): eight kernels of kinds used by none of the tuning suite (`../variance/tuning_suite.py`),
`eval_suite.py` ... `eval_suite8.py`, the pilots or the probes, and no copy kernel.

Eight kernels, library calls included: batched LU factorisation of 16 x 16 matrices
(`torch.linalg.lu_factor_ex`: cuBLAS / cuSOLVER batched getrf), a 3 x 3 median filter
(`cupyx.scipy.ndimage.median_filter`), the median of each row (`torch.median`), an embedding bag (sum of 8
rows a bag, `torch.nn.functional.embedding_bag`), a depthwise 1-D convolution (`torch.nn.functional.conv1d`
with one group a channel, cuDNN), a Triton per-row int8 quantisation (absolute maximum, scale, convert), a
k-means assignment RawKernel (the nearest of 16 centroids in 8 dimensions) and a run-counting RawKernel
(value changes in 64-byte chunks: integer, branchy).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every
setup is outside the timed call. **Planted changes** are those of `eval_suite.py` (its `Kernel.run`,
inherited: a one-thread tail kernel after each call).

    python tests/benchmarks/verdicts/eval_suite9.py --size 1MiB --processes 8 --json-out aa-1.json
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

SUMMARY = ("batched 16x16 LU (torch.linalg.lu_factor_ex), 3x3 median filter (cupyx.scipy.ndimage), row median "
           "(torch.median), embedding_bag (sum), depthwise conv1d (cuDNN), Triton int8 row quantisation, k-means "
           "assignment RawKernel, run-counting RawKernel (no copy kernel, no kind of the tuning suite or of "
           "eval_suite.py ... eval_suite8.py)")

KMEANS = r"""
extern "C" __global__ void kmeans_assign(const float* __restrict__ points, const float* __restrict__ centroids,
                                         int* __restrict__ label, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    float p[8];
    for(int d = 0; d < 8; d++) p[d] = points[i * 8 + d];
    float best = 3.0e38f;
    int arg = 0;
    for(int c = 0; c < 16; c++) {
        float s = 0.0f;
        for(int d = 0; d < 8; d++) {
            float t = p[d] - __ldg(&centroids[c * 8 + d]);
            s += t * t;
        }
        if(s < best) { best = s; arg = c; }
    }
    label[i] = arg;
}
"""
RUNS = r"""
extern "C" __global__ void count_runs(const unsigned char* __restrict__ data, int* __restrict__ runs, int chunks)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= chunks) return;
    const unsigned char* c = data + (size_t)i * 64;
    int count = 1;
    unsigned char last = c[0];
    for(int k = 1; k < 64; k++) {
        unsigned char v = c[k];
        if(v != last) { count++; last = v; }
    }
    runs[i] = count;
}
"""
_CACHE: dict[str, Any] = {}

LU_N = 16  # batched LU: 16 x 16 fp32 matrices
MEDIAN_ROW = 255  # row median: rows of 255 floats
BAG = 8  # embedding_bag: 8 rows a bag
EMBED_DIM = 64  # embedding_bag: rows of 64 floats
CHANNELS = 64  # depthwise conv1d: 64 channels, a kernel of 7 taps
TAPS = 7
QUANT_ROW = 256  # int8 quantisation: rows of 256 halves


def lu(state: pb.State, cp: Any) -> Callable[[], None]:
    """The LU factorisation with partial pivoting of `state.size` bytes of 16 x 16 fp32 matrices (at least 4),
    each diagonally dominant, by `torch.linalg.lu_factor_ex` (no error check: nothing synchronises)."""
    import torch

    batch = max(4, state.size // (LU_N * LU_N * 4))
    a = torch.rand((batch, LU_N, LU_N), device="cuda", generator=_generator(state))
    a += LU_N * torch.eye(LU_N, device="cuda")
    state.set_items(batch)
    state.add_reads(np.float32, a.numel())
    state.add_writes(np.float32, a.numel())
    return _torch_on_stream(state, lambda: torch.linalg.lu_factor_ex(a))


def median_filter(state: pb.State, cp: Any) -> Callable[[], object]:
    """A 3 x 3 median filter of a square float image of `state.size` bytes (at least 64 x 64) by
    `cupyx.scipy.ndimage.median_filter`, into a preallocated output."""
    import cupyx.scipy.ndimage as ndimage

    side = max(64, math.isqrt(state.size // 4))
    img = cp.random.default_rng(state.seed).random((side, side), dtype=cp.float32)
    out = cp.empty_like(img)
    state.set_items(img.size)
    state.add_reads(np.float32, img.size)
    state.add_writes(np.float32, img.size)
    return lambda: ndimage.median_filter(img, size=3, output=out)


def row_median(state: pb.State, cp: Any) -> Callable[[], None]:
    """The median (and its index) of each row of 255 floats (`state.size` bytes, at least one row) by
    `torch.median(dim=1)`."""
    import torch

    rows = max(1, state.size // 4 // MEDIAN_ROW)
    x = torch.randn((rows, MEDIAN_ROW), device="cuda", generator=_generator(state))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, rows)
    state.add_writes(np.int64, rows)
    return _torch_on_stream(state, lambda: torch.median(x, dim=1))


def embedding_bag(state: pb.State, cp: Any) -> Callable[[], None]:
    """Bags of 8 rows of a table of 64-float rows summed (`torch.nn.functional.embedding_bag`, mode "sum");
    `state.size` bytes of rows gathered (at least 8 bags), from a table of twice as many rows as bags
    (at least 1,024)."""
    import torch

    bags = max(8, state.size // (BAG * EMBED_DIM * 4))
    gen = _generator(state)
    table = torch.randn((max(1024, 2 * bags), EMBED_DIM), device="cuda", generator=gen)
    idx = torch.randint(0, table.shape[0], (bags, BAG), device="cuda", dtype=torch.int64, generator=gen)
    state.set_items(bags)
    state.add_reads(np.float32, bags * BAG * EMBED_DIM)
    state.add_reads(np.int64, bags * BAG)
    state.add_writes(np.float32, bags * EMBED_DIM)
    return _torch_on_stream(state, lambda: torch.nn.functional.embedding_bag(idx, table, mode="sum"))


def conv1d_depthwise(state: pb.State, cp: Any) -> Callable[[], None]:
    """A depthwise 1-D convolution (one group a channel, 7 taps, zero padding) of 64 float channels of
    `state.size` bytes together (at least 256 samples each) by `torch.nn.functional.conv1d` (cuDNN)."""
    import torch

    length = max(256, state.size // 4 // CHANNELS)
    gen = _generator(state)
    x = torch.randn((1, CHANNELS, length), device="cuda", generator=gen)
    w = torch.randn((CHANNELS, 1, TAPS), device="cuda", generator=gen)
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.conv1d(x, w, padding=TAPS // 2, groups=CHANNELS))


def _quant_kernel() -> Any:
    if "quant" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def quant8(x_ptr, q_ptr, scale_ptr, ROW: tl.constexpr):
            row = tl.program_id(0)
            j = tl.arange(0, ROW)
            x = tl.load(x_ptr + row * ROW + j).to(tl.float32)
            amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-8)
            tl.store(q_ptr + row * ROW + j, (x * (127.0 / amax)).to(tl.int8))
            tl.store(scale_ptr + row, amax / 127.0)

        _CACHE["quant"] = quant8
    return _CACHE["quant"]


def triton_quant(state: pb.State, cp: Any) -> Callable[[], None]:
    """Each row of 256 halves (`state.size` bytes, at least one row) quantised to int8 by Triton: its
    absolute maximum, a scale, the converted row and the row's scale written."""
    import torch

    rows = max(1, state.size // 2 // QUANT_ROW)
    x = torch.randn((rows, QUANT_ROW), device="cuda", generator=_generator(state)).half()
    q = torch.empty((rows, QUANT_ROW), device="cuda", dtype=torch.int8)
    scale = torch.empty(rows, device="cuda")
    kernel = _quant_kernel()
    state.set_items(x.numel())
    state.add_reads(np.float16, x.numel())
    state.add_writes(np.int8, x.numel())
    state.add_writes(np.float32, rows)
    return _torch_on_stream(state, lambda: kernel[(rows,)](x, q, scale, ROW=QUANT_ROW))


def kmeans(state: pb.State, cp: Any) -> Callable[[], object]:
    """Each of `state.size` bytes of 8-dimensional float points (at least 1,024) labelled with the nearest
    of 16 centroids, one thread a point."""
    if "kmeans" not in _CACHE:
        _CACHE["kmeans"] = cp.RawKernel(KMEANS, "kmeans_assign")
    kernel = _CACHE["kmeans"]
    n = max(1024, state.size // 32)
    rng = cp.random.default_rng(state.seed)
    points = rng.random((n, 8), dtype=cp.float32)
    centroids = rng.random((16, 8), dtype=cp.float32)
    label = cp.empty(n, dtype=cp.int32)
    blocks = (n + 255) // 256
    state.set_items(n)
    state.add_reads(np.float32, points.size)
    state.add_writes(np.int32, n)
    return lambda: kernel((blocks,), (256,), (points, centroids, label, np.int32(n)))


def count_runs(state: pb.State, cp: Any) -> Callable[[], object]:
    """The number of runs of equal bytes in each 64-byte chunk of `state.size` bytes (at least 64 KiB) of
    values 0-3, one thread a chunk."""
    if "runs" not in _CACHE:
        _CACHE["runs"] = cp.RawKernel(RUNS, "count_runs")
    kernel = _CACHE["runs"]
    n = max(65536, state.size) // 64 * 64
    data = cp.random.default_rng(state.seed).integers(0, 4, n, dtype=cp.uint8)
    chunks = n // 64
    runs = cp.empty(chunks, dtype=cp.int32)
    blocks = (chunks + 255) // 256
    state.set_items(n)
    state.add_reads(np.uint8, n)
    state.add_writes(np.int32, chunks)
    return lambda: kernel((blocks,), (256,), (data, runs, np.int32(chunks)))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "torch.lu_factor": lu, "cupyx.median_filter": median_filter, "torch.median": row_median,
    "torch.embedding_bag": embedding_bag, "torch.conv1d_dw": conv1d_depthwise, "triton.quant8": triton_quant,
    "kmeans": kmeans, "count_runs": count_runs,
}


Kernel = suite_kernel("eval9", SETUPS)


KERNELS = (("torch.lu_factor", "float"), ("cupyx.median_filter", "float"), ("torch.median", "float"),
           ("torch.embedding_bag", "float"), ("torch.conv1d_dw", "float"), ("triton.quant8", "half"),
           ("kmeans", "float"), ("count_runs", "uint8"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
