"""The eighth evaluation suite of issue "Verdicts that speak", written after the protocol and compare's
method were frozen at the commit that adds it and before any of its data existed (`eval8-plan.md`): eight
kernels of kinds used by none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ...
`eval_suite7.py`, the pilots or `clock_probe.py`, and no copy kernel. It evaluates `primbench run
--processes 8` as the eighth plan freezes it.

Eight kernels, library calls included: a complex double matrix-vector product (`cupy.matmul`, cuBLAS
ZGEMV), bit packing (`cupy.packbits`: booleans eight to a byte), a row log-sum-exp (`torch.logsumexp`), an atomic
accumulation at random rows (`torch.index_add`), the cosine similarity of row pairs
(`torch.nn.functional.cosine_similarity`), a running maximum with its index (`torch.cummax`), a Triton
rotary position embedding, and a Mandelbrot escape-time RawKernel (compute-bound, divergent).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every
setup is outside the timed call. **Planted changes** are those of `eval_suite.py` (its `Kernel.run`,
inherited: a one-thread tail kernel after each call).

    python tests/benchmarks/verdicts/eval_suite8.py --size 1MiB --processes 8 --json-out aa-1.json
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

pb.register_type(np.complex128, "complex double")

SUMMARY = ("complex fp64 GEMV (cupy.matmul, cuBLAS ZGEMV), bit packing (cupy.packbits), row logsumexp, "
           "index_add at random rows, row-pair cosine similarity, cummax, Triton rotary embedding, Mandelbrot "
           "RawKernel (no copy kernel, no kind of the tuning suite or of eval_suite.py ... eval_suite7.py)")

MANDEL = r"""
extern "C" __global__ void mandel(const float2* __restrict__ c, unsigned short* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    float cr = c[i].x, ci = c[i].y, zr = 0.0f, zi = 0.0f;
    int k = 0;
    for(; k < 128; k++) {
        float r2 = zr * zr, i2 = zi * zi;
        if(r2 + i2 > 4.0f) break;
        zi = 2.0f * zr * zi + ci;
        zr = r2 - i2 + cr;
    }
    out[i] = (unsigned short)k;
}
"""
_CACHE: dict[str, Any] = {}

GEMV_N = 64  # ZGEMV: (M x 64) complex128 matrix times a 64-vector
ROW = 1024  # logsumexp and cosine similarity: rows of 1,024 floats
ROPE_D = 128  # rotary embedding: rows of 128 floats (two halves of 64)
INDEX_ROW = 256  # index_add: rows of 256 floats


def zgemv(state: pb.State, cp: Any) -> Callable[[], object]:
    """(M x 64) complex128 matrix times a 64-vector by `cupy.matmul` (cuBLAS ZGEMV); the matrix is
    `state.size` bytes (M at least 32)."""
    m = max(32, state.size // 16 // GEMV_N)
    rng = cp.random.default_rng(state.seed)
    a = rng.random((m, GEMV_N)) + 1j * rng.random((m, GEMV_N))
    x = rng.random(GEMV_N) + 1j * rng.random(GEMV_N)
    out = cp.empty(m, dtype=cp.complex128)
    state.set_items(m * GEMV_N)
    state.add_reads(np.complex128, a.size + x.size)
    state.add_writes(np.complex128, m)
    return lambda: cp.matmul(a, x, out=out)


def packbits(state: pb.State, cp: Any) -> Callable[[], object]:
    """`state.size` booleans (at least 8,192), about a third of them true, packed eight to a byte by
    `cupy.packbits`."""
    n = max(8192, state.size)
    x = cp.random.default_rng(state.seed).random(n) < 1 / 3
    state.set_items(n)
    state.add_reads(np.uint8, n)
    state.add_writes(np.uint8, n // 8)
    return lambda: cp.packbits(x)


def logsumexp(state: pb.State, cp: Any) -> Callable[[], None]:
    """log(sum(exp)) of each row of 1,024 floats (`state.size` bytes, at least one row)."""
    import torch

    rows = max(1, state.size // 4 // ROW)
    x = torch.randn((rows, ROW), device="cuda", generator=_generator(state))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, rows)
    return _torch_on_stream(state, lambda: torch.logsumexp(x, dim=1))


def index_add(state: pb.State, cp: Any) -> Callable[[], None]:
    """Rows of 256 floats (`state.size` bytes of them, at least 4 rows) added into a table of a quarter
    as many rows at random row indices (`torch.Tensor.index_add_`, atomic adds)."""
    import torch

    rows = max(4, state.size // 4 // INDEX_ROW)
    gen = _generator(state)
    src = torch.rand((rows, INDEX_ROW), device="cuda", generator=gen)
    idx = torch.randint(0, rows // 4, (rows,), device="cuda", dtype=torch.int64, generator=gen)
    table = torch.zeros((rows // 4, INDEX_ROW), device="cuda")
    state.set_items(src.numel())
    state.add_reads(np.float32, src.numel())
    state.add_reads(np.int64, rows)
    state.add_writes(np.float32, src.numel())
    return _torch_on_stream(state, lambda: table.index_add_(0, idx, src))


def cosine(state: pb.State, cp: Any) -> Callable[[], None]:
    """The cosine similarity of matching rows of two float matrices of 1,024 columns (`state.size`
    bytes together, at least one row each)."""
    import torch

    rows = max(1, state.size // 8 // ROW)
    gen = _generator(state)
    a = torch.randn((rows, ROW), device="cuda", generator=gen)
    b = torch.randn((rows, ROW), device="cuda", generator=gen)
    state.set_items(rows * ROW)
    state.add_reads(np.float32, 2 * rows * ROW)
    state.add_writes(np.float32, rows)
    return _torch_on_stream(state, lambda: torch.nn.functional.cosine_similarity(a, b, dim=1))


def cummax(state: pb.State, cp: Any) -> Callable[[], None]:
    """The running maximum and its index over size / 4 floats (at least 1,024) by `torch.cummax`."""
    import torch

    n = max(1024, state.size // 4)
    x = torch.rand(n, device="cuda", generator=_generator(state))
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    state.add_writes(np.int64, n)
    return _torch_on_stream(state, lambda: torch.cummax(x, 0))


def _rope_kernel() -> Any:
    if "rope" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def rope(x_ptr, out_ptr, HALF: tl.constexpr):
            row = tl.program_id(0)
            j = tl.arange(0, HALF)
            base = row * 2 * HALF
            x1 = tl.load(x_ptr + base + j)
            x2 = tl.load(x_ptr + base + HALF + j)
            theta = row.to(tl.float32) * tl.exp(j.to(tl.float32) * (-9.2103 / HALF))  # 10000^(-j/HALF)
            c = tl.cos(theta)
            s = tl.sin(theta)
            tl.store(out_ptr + base + j, x1 * c - x2 * s)
            tl.store(out_ptr + base + HALF + j, x1 * s + x2 * c)

        _CACHE["rope"] = rope
    return _CACHE["rope"]


def triton_rope(state: pb.State, cp: Any) -> Callable[[], None]:
    """A rotary position embedding by Triton: rows of 128 floats (`state.size` bytes, at least one row),
    each row's two halves rotated by angles of its position."""
    import torch

    rows = max(1, state.size // 4 // ROPE_D)
    x = torch.randn(rows * ROPE_D, device="cuda", generator=_generator(state))
    out = torch.empty_like(x)
    kernel = _rope_kernel()
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: kernel[(rows,)](x, out, HALF=ROPE_D // 2))


def mandel(state: pb.State, cp: Any) -> Callable[[], object]:
    """Escape times (at most 128 iterations) of size / 8 points of the complex plane (at least 1,024),
    uniform over [-2, 0.5] x [-1.25, 1.25], one thread a point."""
    if "mandel" not in _CACHE:
        _CACHE["mandel"] = cp.RawKernel(MANDEL, "mandel")
    kernel = _CACHE["mandel"]
    n = max(1024, state.size // 8)
    rng = cp.random.default_rng(state.seed)
    c = cp.empty((n, 2), dtype=cp.float32)
    c[:, 0] = rng.random(n, dtype=cp.float32) * 2.5 - 2.0
    c[:, 1] = rng.random(n, dtype=cp.float32) * 2.5 - 1.25
    out = cp.empty(n, dtype=cp.uint16)
    blocks = (n + 255) // 256
    state.set_items(n)
    state.add_reads(np.float32, 2 * n)
    state.add_writes(np.uint16, n)
    return lambda: kernel((blocks,), (256,), (c, out, np.int32(n)))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "cupy.zgemv": zgemv, "cupy.packbits": packbits, "torch.logsumexp": logsumexp,
    "torch.index_add": index_add, "torch.cosine": cosine, "torch.cummax": cummax,
    "triton.rope": triton_rope, "mandel": mandel,
}


Kernel = suite_kernel("eval8", SETUPS)


KERNELS = (("cupy.zgemv", "complex double"), ("cupy.packbits", "uint8"), ("torch.logsumexp", "float"),
           ("torch.index_add", "float"), ("torch.cosine", "float"), ("torch.cummax", "float"),
           ("triton.rope", "float"), ("mandel", "float"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
