"""The seventh evaluation suite of issue "Verdicts that speak", written after the protocol and compare's
method were frozen at the commit that adds it and before any of its data existed (`eval7-plan.md`): eight
kernels of kinds used by none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ...
`eval_suite5.py` or the seventh evaluation's pilot, and no copy kernel. It evaluates `primbench run
--processes 4` as the seventh plan freezes it.

Eight kernels, library calls included: a double-precision matrix product (`cupy.matmul`, cuBLAS DGEMM),
an inclusive scan (`torch.cumsum`, CUB's device scan), a gather at random indices (`torch.gather`),
the inverse error function (`torch.erfinv`), a gated linear unit (`torch.nn.functional.glu`), a Triton
row scan (`tl.cumsum`), a table-driven CRC-32 RawKernel (a 256-entry table in shared memory, one
64-byte chunk a thread) and the log-gamma function (`cupyx.scipy.special.gammaln`).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every
setup is outside the timed call. **Planted changes** are those of `eval_suite.py` (its `Kernel.run`,
inherited: a one-thread tail kernel after each call).

    python tests/benchmarks/verdicts/eval_suite7.py --size 1MiB --processes 4 --json-out aa-1.json
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

SUMMARY = ("fp64 GEMM (cupy.matmul, cuBLAS DGEMM), CUB scan (torch.cumsum), random-index gather (torch.gather), "
           "erfinv, GLU, Triton tl.cumsum row scan, table-driven CRC-32 RawKernel, cupyx gammaln (no copy kernel, "
           "no kind of the tuning suite or of eval_suite.py ... eval_suite5.py)")

CRC = r"""
extern "C" __global__ void crc32_chunks(const unsigned char* __restrict__ in, unsigned int* __restrict__ out,
                                        int chunks)
{
    __shared__ unsigned int table[256];
    for(int i = threadIdx.x; i < 256; i += blockDim.x) {
        unsigned int c = (unsigned int)i;
        for(int k = 0; k < 8; k++) c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
        table[i] = c;
    }
    __syncthreads();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if(t >= chunks) return;
    const unsigned char* p = in + (size_t)t * 64;
    unsigned int crc = 0xFFFFFFFFu;
    for(int k = 0; k < 64; k++) crc = table[(crc ^ p[k]) & 0xFFu] ^ (crc >> 8);
    out[t] = crc ^ 0xFFFFFFFFu;
}
"""
_CACHE: dict[str, Any] = {}

GEMM_K = 64  # DGEMM: (M x 64) @ (64 x 64), float64
GLU_COLS = 512  # GLU: rows of 512 floats, halves of 256
SCAN_BLOCK = 1024  # Triton: one row of 1,024 floats a program


def dgemm(state: pb.State, cp: Any) -> Callable[[], object]:
    """(M x 64) @ (64 x 64) in float64 by `cupy.matmul` (cuBLAS DGEMM); A is `state.size` bytes (M at least 32)."""
    m = max(32, state.size // 8 // GEMM_K)
    rng = cp.random.default_rng(state.seed)
    a = rng.random((m, GEMM_K), dtype=cp.float64)
    b = rng.random((GEMM_K, GEMM_K), dtype=cp.float64)
    out = cp.empty((m, GEMM_K), dtype=cp.float64)
    state.set_items(m * GEMM_K)
    state.add_reads(np.float64, a.size + b.size)
    state.add_writes(np.float64, out.size)
    return lambda: cp.matmul(a, b, out=out)


def cumsum(state: pb.State, cp: Any) -> Callable[[], None]:
    """Inclusive scan of size / 4 floats (at least 1,024) by `torch.cumsum` (CUB's device scan)."""
    import torch

    n = max(1024, state.size // 4)
    x = torch.rand(n, device="cuda", generator=_generator(state))
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: torch.cumsum(x, 0))


def gather(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 4 floats (at least 1,024) gathered from a table of as many at random int64 indices."""
    import torch

    n = max(1024, state.size // 4)
    gen = _generator(state)
    src = torch.rand(n, device="cuda", generator=gen)
    idx = torch.randint(0, n, (n,), device="cuda", dtype=torch.int64, generator=gen)
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_reads(np.int64, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: torch.gather(src, 0, idx))


def erfinv(state: pb.State, cp: Any) -> Callable[[], None]:
    """The inverse error function of size / 4 floats in (-0.9, 0.9) (at least 1,024)."""
    import torch

    n = max(1024, state.size // 4)
    x = torch.rand(n, device="cuda", generator=_generator(state)) * 1.8 - 0.9
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: torch.erfinv(x))


def glu(state: pb.State, cp: Any) -> Callable[[], None]:
    """A gated linear unit over rows of 512 floats (`state.size` bytes, at least one row): the first
    half times the sigmoid of the second."""
    import torch

    rows = max(1, state.size // 4 // GLU_COLS)
    x = torch.randn((rows, GLU_COLS), device="cuda", generator=_generator(state))
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel() // 2)
    return _torch_on_stream(state, lambda: torch.nn.functional.glu(x, dim=-1))


def _scan_kernel() -> Any:
    if "scan" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def row_scan(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))

        _CACHE["scan"] = row_scan
    return _CACHE["scan"]


def triton_scan(state: pb.State, cp: Any) -> Callable[[], None]:
    """Rows of 1,024 floats (size / 4 of them in all, at least one row) each scanned by Triton's `tl.cumsum`."""
    import torch

    rows = max(1, state.size // 4 // SCAN_BLOCK)
    x = torch.rand(rows * SCAN_BLOCK, device="cuda", generator=_generator(state))
    out = torch.empty_like(x)
    kernel = _scan_kernel()
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: kernel[(rows,)](x, out, BLOCK=SCAN_BLOCK))


def crc32(state: pb.State, cp: Any) -> Callable[[], object]:
    """The CRC-32 of each 64-byte chunk of `state.size` bytes (at least 64 chunks), one thread a chunk,
    256 threads a block, the table built in shared memory by each block."""
    if "crc" not in _CACHE:
        _CACHE["crc"] = cp.RawKernel(CRC, "crc32_chunks")
    kernel = _CACHE["crc"]
    chunks = max(64, state.size // 64)
    data = cp.random.default_rng(state.seed).integers(0, 256, chunks * 64, dtype=cp.uint8)
    out = cp.empty(chunks, dtype=cp.uint32)
    blocks = (chunks + 255) // 256
    state.set_items(chunks)
    state.add_reads(np.uint8, data.size)
    state.add_writes(np.uint32, chunks)
    return lambda: kernel((blocks,), (256,), (data, out, np.int32(chunks)))


def gammaln(state: pb.State, cp: Any) -> Callable[[], object]:
    """ln Gamma(x) of size / 4 floats in (0.5, 10.5) (at least 1,024) by `cupyx.scipy.special.gammaln`."""
    from cupyx.scipy import special

    n = max(1024, state.size // 4)
    x = cp.random.default_rng(state.seed).random(n, dtype=cp.float32) * 10 + 0.5
    out = cp.empty_like(x)
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return lambda: special.gammaln(x, out=out)


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "cupy.dgemm": dgemm, "torch.cumsum": cumsum, "torch.gather": gather, "torch.erfinv": erfinv,
    "torch.glu": glu, "triton.cumsum": triton_scan, "crc32": crc32, "cupyx.gammaln": gammaln,
}


Kernel = suite_kernel("eval7", SETUPS)


KERNELS = (("cupy.dgemm", "double"), ("torch.cumsum", "float"), ("torch.gather", "float"),
           ("torch.erfinv", "float"), ("torch.glu", "float"), ("triton.cumsum", "float"),
           ("crc32", "uint8"), ("cupyx.gammaln", "float"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
