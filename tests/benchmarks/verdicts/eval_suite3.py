"""The third evaluation suite of issue "Verdicts that speak", written after compare's method was frozen
at 253a087 (the suite's centre) and before any of its data existed (`eval3-plan.md`): ten kernels of
kinds used by none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` or
`eval_suite2.py`, and no copy kernel.

Ten kernels, library calls included: PyTorch's scaled dot-product attention in fp16 (its fused
flash or memory-efficient kernel), an embedding lookup (`torch.nn.functional.embedding`, a gather of
rows), cuDNN's 2x2 max pooling (`max_pool2d`), a bilinear 2x upsampling (`interpolate`), a bilinear
`grid_sample` with a random flow field, a one-hot encoding (`one_hot`, scattered writes), a Triton
row-wise L2 normalisation (a reduction and a rescale in one program), CuPy's `ndimage` Gaussian
filter (`cupyx.scipy.ndimage.gaussian_filter`, separable), `cupy.cumprod` on complex numbers
(a scan with a complex multiply), and a RawKernel of int8 dot products by `__dp4a`.

`state.size` is the bytes of each kernel's main input (64 KiB .. 64 MiB), with minimum shapes where
that is tiny; every setup is outside the timed call. **Planted changes** are those of `eval_suite.py`
(its `Kernel.run`, inherited). Collect with

    python tests/benchmarks/verdicts/collect.py --suite tests/benchmarks/verdicts/eval_suite3.py \\
        --sizes 4MiB --out DIR
    python tests/benchmarks/verdicts/eval_suite3.py --size 4MiB --json-out aa-1.json
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

SUMMARY = ("scaled dot-product attention (fp16), embedding, max_pool2d (cuDNN), bilinear interpolate, "
           "grid_sample, one_hot, Triton L2 row norm, ndimage Gaussian filter, complex cumprod, int8 dp4a "
           "(no copy kernel, no kind of the tuning suite, eval_suite.py or eval_suite2.py)")

DP4A = r"""
extern "C" __global__ void dot4(const int* __restrict__ a, const int* __restrict__ b, int* __restrict__ out,
                                int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) out[i] = __dp4a(a[i], b[i], 0);
}
"""
_CACHE: dict[str, Any] = {}

HEADS, HEAD_DIM = 8, 64  # attention: 8 heads of 64
EMBED_DIM = 256  # embedding rows of 256 floats
IMAGE_C, IMAGE_HW = 16, 64  # pooling, interpolation and grid_sample: 16 channels of 64 x 64
CLASSES = 64  # one_hot
NORM_ROW = 1024  # the Triton L2 norm's rows
SIGMA = 2.0  # the Gaussian filter's sigma, in pixels


def _images(state: pb.State) -> int:
    """How many 16 x 64 x 64 float images `state.size` holds (at least one)."""
    return max(1, state.size // 4 // (IMAGE_C * IMAGE_HW * IMAGE_HW))


def attention(state: pb.State, cp: Any) -> Callable[[], None]:
    """Q, K and V of fp16 together are `state.size`: a batch of sequences of 8 heads x 64, 256 tokens
    each (at least one sequence; fewer tokens where the size is smaller), not causal."""
    import torch

    per_token = 3 * HEADS * HEAD_DIM * 2
    tokens = min(256, max(16, state.size // per_token))
    batch = max(1, state.size // (per_token * tokens))
    gen = _generator(state)
    q, k, v = (torch.randn((batch, HEADS, tokens, HEAD_DIM), device="cuda", dtype=torch.float16, generator=gen)
               for _ in range(3))
    state.set_items(batch * HEADS * tokens)
    state.add_reads(np.float16, 3 * batch * HEADS * tokens * HEAD_DIM)
    state.add_writes(np.float16, batch * HEADS * tokens * HEAD_DIM)
    return _torch_on_stream(state, lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))


def embedding(state: pb.State, cp: Any) -> Callable[[], None]:
    """A table of `state.size` bytes (rows of 256 floats, at least 64), and as many random lookups
    as it has rows."""
    import torch

    rows = max(64, state.size // 4 // EMBED_DIM)
    gen = _generator(state)
    table = torch.randn((rows, EMBED_DIM), device="cuda", generator=gen)
    index = torch.randint(0, rows, (rows,), device="cuda", generator=gen)
    state.set_items(rows)
    state.add_reads(np.float32, rows * EMBED_DIM)
    state.add_reads(np.int64, rows)
    state.add_writes(np.float32, rows * EMBED_DIM)
    return _torch_on_stream(state, lambda: torch.nn.functional.embedding(index, table))


def max_pool(state: pb.State, cp: Any) -> Callable[[], None]:
    """2 x 2 max pooling, stride 2, of a batch of 16-channel 64 x 64 float images."""
    import torch

    batch = _images(state)
    x = torch.randn((batch, IMAGE_C, IMAGE_HW, IMAGE_HW), device="cuda", generator=_generator(state))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel() // 4)
    return _torch_on_stream(state, lambda: torch.nn.functional.max_pool2d(x, 2))


def interpolate(state: pb.State, cp: Any) -> Callable[[], None]:
    """Bilinear 2x upsampling of a batch of 16-channel 64 x 64 float images (to 128 x 128)."""
    import torch

    batch = _images(state)
    x = torch.randn((batch, IMAGE_C, IMAGE_HW, IMAGE_HW), device="cuda", generator=_generator(state))
    state.set_items(4 * x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, 4 * x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.interpolate(
        x, scale_factor=2, mode="bilinear", align_corners=False))


def grid_sample(state: pb.State, cp: Any) -> Callable[[], None]:
    """Bilinear sampling of a batch of 16-channel 64 x 64 float images at a random flow field of the
    same size (coordinates uniform in [-1, 1])."""
    import torch

    batch = _images(state)
    gen = _generator(state)
    x = torch.randn((batch, IMAGE_C, IMAGE_HW, IMAGE_HW), device="cuda", generator=gen)
    grid = torch.rand((batch, IMAGE_HW, IMAGE_HW, 2), device="cuda", generator=gen) * 2 - 1
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel() + grid.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.grid_sample(
        x, grid, mode="bilinear", padding_mode="zeros", align_corners=False))


def one_hot(state: pb.State, cp: Any) -> Callable[[], None]:
    """Random labels (int64) of 64 classes, one-hot encoded (int64): the encoding is `state.size`
    bytes (at least 1024 labels)."""
    import torch

    n = max(1024, state.size // (8 * CLASSES))
    labels = torch.randint(0, CLASSES, (n,), device="cuda", generator=_generator(state))
    state.set_items(n)
    state.add_reads(np.int64, n)
    state.add_writes(np.int64, n * CLASSES)
    return _torch_on_stream(state, lambda: torch.nn.functional.one_hot(labels, CLASSES))


def _l2norm_kernel() -> Any:
    if "l2norm" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def l2norm_kernel(out_ptr, in_ptr, ROW: tl.constexpr):
            row = tl.program_id(0)
            offs = row * ROW + tl.arange(0, ROW)
            x = tl.load(in_ptr + offs)
            scale = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) + 1e-12)
            tl.store(out_ptr + offs, x * scale)

        _CACHE["l2norm"] = l2norm_kernel
    return _CACHE["l2norm"]


def l2norm(state: pb.State, cp: Any) -> Callable[[], None]:
    """Each row of 1024 floats scaled to unit L2 norm, size / 4 KiB rows (at least one), one Triton
    program a row."""
    import torch

    rows = max(1, state.size // 4 // NORM_ROW)
    x = torch.randn((rows, NORM_ROW), device="cuda", generator=_generator(state))
    y = torch.empty_like(x)
    kernel = _l2norm_kernel()
    state.set_items(rows * NORM_ROW)
    state.add_reads(np.float32, rows * NORM_ROW)
    state.add_writes(np.float32, rows * NORM_ROW)
    return _torch_on_stream(state, lambda: kernel[(rows,)](y, x, ROW=NORM_ROW))


def gaussian(state: pb.State, cp: Any) -> Callable[[], None]:
    """A Gaussian filter (sigma 2 pixels, separable, reflecting borders) of an n x n float image,
    n = sqrt(size / 4) (at least 32), into a preallocated output."""
    import cupyx.scipy.ndimage

    n = max(32, math.isqrt(state.size // 4))
    x = cp.random.default_rng(state.seed).random((n, n), dtype=cp.float32)
    y = cp.empty_like(x)
    state.set_items(n * n)
    state.add_reads(np.float32, n * n)
    state.add_writes(np.float32, n * n)
    return lambda: cupyx.scipy.ndimage.gaussian_filter(x, SIGMA, output=y)


def cumprod(state: pb.State, cp: Any) -> Callable[[], None]:
    """The running product of size / 8 complex64 numbers of modulus 1 (at least 1024)."""
    n = max(1024, state.size // 8)
    phase = cp.random.default_rng(state.seed).random(n, dtype=cp.float32) * 0.01
    x = cp.exp(1j * phase).astype(cp.complex64)
    y = cp.empty_like(x)
    state.set_items(n)
    state.add_reads(np.complex64, n)
    state.add_writes(np.complex64, n)
    return lambda: cp.cumprod(x, out=y)


def dp4a(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 8 dot products of four int8 pairs (`__dp4a`), each pair packed in an int (at least 1024)."""
    n = max(1024, state.size // 8)
    if "dp4a" not in _CACHE:
        _CACHE["dp4a"] = cp.RawKernel(DP4A, "dot4")
    kernel = _CACHE["dp4a"]
    rng = cp.random.default_rng(state.seed)
    a = rng.integers(-(1 << 31), (1 << 31) - 1, n, dtype=cp.int32)
    b = rng.integers(-(1 << 31), (1 << 31) - 1, n, dtype=cp.int32)
    out = cp.empty(n, dtype=cp.int32)
    state.set_items(4 * n)
    state.add_reads(np.int8, 8 * n)
    state.add_writes(np.int32, n)
    return lambda: kernel(((n + 255) // 256,), (256,), (a, b, out, np.int32(n)))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "torch.attention": attention, "torch.embedding": embedding, "torch.max_pool2d": max_pool,
    "torch.interpolate": interpolate, "torch.grid_sample": grid_sample, "torch.one_hot": one_hot,
    "triton.l2norm": l2norm, "ndimage.gaussian": gaussian, "cumprod": cumprod, "dp4a": dp4a,
}


Kernel = suite_kernel("eval3", SETUPS)


KERNELS = (("torch.attention", "half"), ("torch.embedding", "float"), ("torch.max_pool2d", "float"),
           ("torch.interpolate", "float"), ("torch.grid_sample", "float"), ("torch.one_hot", "long"),
           ("triton.l2norm", "float"), ("ndimage.gaussian", "float"), ("cumprod", "complex"), ("dp4a", "char"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
