"""The eleventh evaluation suite of issue "Verdicts that speak", written after the protocol and compare's
method were frozen at the commit before the one that adds it, and before any of its data existed
(`eval11-plan.md`): eight kinds used by none of the tuning suite (`../variance/tuning_suite.py`),
`eval_suite.py` ... `eval_suite10.py`, the pilots or the probes, each in three variants, so that a run held
24 specializations (a suite of the size the wall a specialization is judged at: `h200/probe10/README.md`), and
no copy kernel.

The kinds, library calls included: a 3-D convolution (`torch.nn.functional.conv3d`, cuDNN) in fp32, fp16 and
bf16; a rank-1 update (`cupy.cublas.geru`, cuBLAS ger) in fp32, fp64 and complex64; a Triton LayerNorm
backward (the input gradient, one program a row) over rows of 256, 1,024 and 4,096; and four RawKernels: stream
compaction by an atomic counter (10, 50 and 90 % of the elements kept), an S-box substitution (a 256-byte table
in shared, constant or global memory), a substring count (patterns of 4, 8 and 16 bytes) and Morton codes
(bit interleaving: 2-D of 16 bits, 3-D of 10 bits, 2-D of 32 bits).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every setup is
outside the timed call, and no timed call synchronises the host.

**Amended after the first device call, before any evaluation run** (`eval11-plan.md`, "Amendment"): the
suite's CSR-to-CSC conversion (`cupyx.scipy.sparse.csr_matrix.tocsc` in fp32, fp64, complex64) synchronised
the host in the smoke run (stream blocking timed out after 10 s in all three; `h200/data11/smoke-1MiB.log`)
and stalled the 16-worker runs, so that kind is dropped: seven kinds, 21 specializations a run.

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call).

    python tests/benchmarks/verdicts/eval_suite11.py --size 1MiB --processes 16 --rounds 4 --min-secs 0.5
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

SUMMARY = ("conv3d (cuDNN; fp32, fp16, bf16), rank-1 update "
           "(cuBLAS ger; fp32, fp64, complex64), Triton LayerNorm backward (rows of 256, 1024, 4096), atomic "
           "stream compaction (10, 50, 90 % kept), S-box substitution (shared, constant, global table), substring "
           "count (4, 8, 16 bytes), Morton codes (2-D 16 bit, 3-D 10 bit, 2-D 32 bit): 21 specializations (the "
           "CSR-to-CSC kind dropped, eval11-plan.md), no copy kernel, no kind of the tuning suite or of eval_suite.py "
           "... eval_suite10.py")

RAW = r"""
extern "C" __global__ void compact(const float* __restrict__ x, float threshold, float* __restrict__ out,
                                   unsigned int* __restrict__ count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    float v = x[i];
    if(v < threshold) out[atomicAdd(count, 1u)] = v;
}

__constant__ unsigned char SBOX_CONST[256];

// where an S-box variant reads its table: shared memory, constant memory, global memory through the read-only cache
struct SharedTable {
    const unsigned char* t;
    __device__ unsigned char operator()(unsigned char v) const { return t[v]; }
};
struct ConstantTable {
    __device__ unsigned char operator()(unsigned char v) const { return SBOX_CONST[v]; }
};
struct GlobalTable {
    const unsigned char* t;
    __device__ unsigned char operator()(unsigned char v) const { return __ldg(&t[v]); }
};

template<typename Table>
__device__ void substitute(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int n, Table table)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) {
        uchar4 v = ((const uchar4*)in)[i];
        ((uchar4*)out)[i] = make_uchar4(table(v.x), table(v.y), table(v.z), table(v.w));
    }
}

extern "C" __global__ void sbox_shared(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                       const unsigned char* __restrict__ table, int n)
{
    __shared__ unsigned char t[256];
    t[threadIdx.x] = table[threadIdx.x];
    __syncthreads();
    substitute(in, out, n, SharedTable{t});
}

extern "C" __global__ void sbox_constant(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                         const unsigned char* __restrict__ table, int n)
{
    substitute(in, out, n, ConstantTable{});
}

extern "C" __global__ void sbox_global(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                       const unsigned char* __restrict__ table, int n)
{
    substitute(in, out, n, GlobalTable{table});
}

extern "C" __global__ void substring(const unsigned char* __restrict__ text, int n,
                                     const unsigned char* __restrict__ pattern, int m,
                                     unsigned int* __restrict__ count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int hit = 0;
    if(i + m <= n) {
        hit = 1;
        for(int k = 0; k < m; k++) {
            if(text[i + k] != __ldg(&pattern[k])) { hit = 0; break; }
        }
    }
    hit = __syncthreads_count(hit);
    if(threadIdx.x == 0 && hit) atomicAdd(count, (unsigned int)hit);
}

__device__ unsigned long long spread2(unsigned long long x)  // bits of a 32-bit x into every other bit
{
    x &= 0xffffffffull;
    x = (x | (x << 16)) & 0x0000ffff0000ffffull;
    x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
    x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
    x = (x | (x << 2)) & 0x3333333333333333ull;
    x = (x | (x << 1)) & 0x5555555555555555ull;
    return x;
}

__device__ unsigned int spread3(unsigned int x)  // bits of a 10-bit x into every third bit
{
    x &= 0x3ffu;
    x = (x | (x << 16)) & 0x030000ffu;
    x = (x | (x << 8)) & 0x0300f00fu;
    x = (x | (x << 4)) & 0x030c30c3u;
    x = (x | (x << 2)) & 0x09249249u;
    return x;
}

extern "C" __global__ void morton2d16(const unsigned int* __restrict__ xy, unsigned int* __restrict__ code, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) {
        unsigned int v = xy[i];
        code[i] = (unsigned int)(spread2(v & 0xffffu) | (spread2(v >> 16) << 1));
    }
}

extern "C" __global__ void morton3d10(const unsigned int* __restrict__ xyz, unsigned int* __restrict__ code, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) {
        unsigned int v = xyz[i];
        code[i] = spread3(v) | (spread3(v >> 10) << 1) | (spread3(v >> 20) << 2);
    }
}

extern "C" __global__ void morton2d32(const uint2* __restrict__ xy, unsigned long long* __restrict__ code, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) {
        uint2 v = xy[i];
        code[i] = spread2(v.x) | (spread2(v.y) << 1);
    }
}
"""
_CACHE: dict[str, Any] = {}

CONV3D_CHANNELS = 8  # conv3d: 8 channels in and out, 3 x 3 x 3, padding 1
COMPACT_KEPT = {"compact.10": 0.1, "compact.50": 0.5, "compact.90": 0.9}
SBOX_KERNELS = {"sbox.shared": "sbox_shared", "sbox.constant": "sbox_constant", "sbox.global": "sbox_global"}
SUBSTRING_LENGTHS = {"substring.4": 4, "substring.8": 8, "substring.16": 16}
LN_ROWS = {"triton.ln_bwd.256": 256, "triton.ln_bwd.1024": 1024, "triton.ln_bwd.4096": 4096}


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def conv3d(dtype_name: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """A 3 x 3 x 3 convolution (padding 1: the same size out) of a cube of 8 channels, `state.size` bytes of
        input (at least 8^3 a channel), by `torch.nn.functional.conv3d` (cuDNN)."""
        import torch
        import torch.nn.functional as F

        dtype = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16}[dtype_name]
        itemsize = torch.tensor([], dtype=dtype).element_size()
        side = max(8, round((state.size // itemsize // CONV3D_CHANNELS) ** (1 / 3)))
        gen = _generator(state)
        x = torch.randn((1, CONV3D_CHANNELS, side, side, side), device="cuda", generator=gen).to(dtype)
        w = torch.randn((CONV3D_CHANNELS, CONV3D_CHANNELS, 3, 3, 3), device="cuda", generator=gen).to(dtype)
        voxels = CONV3D_CHANNELS * side**3
        state.set_items(voxels)
        state.add_reads(np.float32 if dtype_name == "float" else np.float16, voxels)
        state.add_writes(np.float32 if dtype_name == "float" else np.float16, voxels)
        return _torch_on_stream(state, lambda: F.conv3d(x, w, padding=1))

    return setup


def ger(dtype_name: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """A += x y^T on a square matrix of `state.size` bytes (at least 32 x 32) by cuBLAS ger (`cupy.cublas.geru`:
        sger, dger, cgeru);
        the matrix grows by a small multiple of ones every call, which never overflows in a run."""
        import cupy.cublas as cublas

        dtype = {"float": np.float32, "double": np.float64, "complex float": np.complex64}[dtype_name]
        n = max(32, math.isqrt(state.size // np.dtype(dtype).itemsize))
        rng = cp.random.default_rng(state.seed)
        a = cp.asfortranarray(rng.random((n, n), dtype=cp.float32).astype(dtype))
        x = rng.random(n, dtype=cp.float32).astype(dtype)
        y = rng.random(n, dtype=cp.float32).astype(dtype)
        alpha = dtype(1e-6)
        state.set_items(n * n)
        state.add_reads(dtype, n * n + 2 * n)
        state.add_writes(dtype, n * n)
        return lambda: cublas.geru(alpha, x, y, a)

    return setup


def _ln_bwd_kernel() -> Any:
    if "ln_bwd" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def ln_bwd(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, n, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n
            x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
            dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            mean = tl.load(mean_ptr + row)
            rstd = tl.load(rstd_ptr + row)
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            g = dy * w
            c1 = tl.sum(xhat * g, axis=0) / n
            c2 = tl.sum(g, axis=0) / n
            dx = (g - (xhat * c1 + c2)) * rstd
            tl.store(dx_ptr + row * n + cols, dx, mask=mask)

        _CACHE["ln_bwd"] = ln_bwd
    return _CACHE["ln_bwd"]


def ln_backward(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The input gradient of a LayerNorm over rows of `LN_ROWS[op]` fp32 values (`state.size` bytes of x, at
        least 4 rows), one Triton program a row: two row sums, then dx."""
        import torch
        import triton

        cols = LN_ROWS[op]
        rows = max(4, state.size // (4 * cols))
        gen = _generator(state)
        x = torch.randn((rows, cols), device="cuda", generator=gen)
        dy = torch.randn((rows, cols), device="cuda", generator=gen)
        w = torch.rand(cols, device="cuda", generator=gen) + 0.5
        mean = x.mean(dim=1)
        rstd = torch.rsqrt(x.var(dim=1, correction=0) + 1e-5)
        dx = torch.empty_like(x)
        kernel = _ln_bwd_kernel()
        block = triton.next_power_of_2(cols)
        state.set_items(rows * cols)
        state.add_reads(np.float32, 2 * rows * cols + cols + 2 * rows)
        state.add_writes(np.float32, rows * cols)
        return _torch_on_stream(state, lambda: kernel[(rows,)](dy, x, w, mean, rstd, dx, cols, BLOCK=block,
                                                               num_warps=4 if block <= 1024 else 8))

    return setup


def compact(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Stream compaction of `state.size` bytes of uniform floats (at least 1,024): the elements under
        `COMPACT_KEPT[op]` are appended through one atomic counter (in no fixed order), which a memset clears
        before every call."""
        kernel = _module(cp).get_function("compact")
        n = max(1024, state.size // 4)
        rng = cp.random.default_rng(state.seed)
        x = rng.random(n, dtype=cp.float32)
        out = cp.empty(n, dtype=cp.float32)
        count = cp.zeros(1, dtype=cp.uint32)
        kept = COMPACT_KEPT[op]
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.float32, n)
        state.add_writes(np.float32, int(n * kept))

        def call() -> None:
            count.fill(0)
            kernel((blocks,), (256,), (x, np.float32(kept), out, count, np.int32(n)))

        return call

    return setup


def sbox(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Each of `state.size` bytes (at least 4,096) replaced by a 256-byte table's entry, four bytes a thread,
        the table in shared memory (loaded by every block), in constant memory or read from global memory."""
        module = _module(cp)
        kernel = module.get_function(SBOX_KERNELS[op])
        n = max(1024, state.size // 4)  # four bytes a thread
        rng = cp.random.default_rng(state.seed)
        data = rng.integers(0, 256, 4 * n, dtype=cp.int32).astype(cp.uint8)
        out = cp.empty_like(data)
        table = cp.asarray(np.random.default_rng(state.seed).permutation(256).astype(np.uint8))
        if op == "sbox.constant":
            symbol = module.get_global("SBOX_CONST")
            cp.ndarray((256,), cp.uint8, symbol)[...] = table
        blocks = (n + 255) // 256
        state.set_items(4 * n)
        state.add_reads(np.uint8, 4 * n)
        state.add_writes(np.uint8, 4 * n)
        return lambda: kernel((blocks,), (256,), (data, out, table, np.int32(n)))

    return setup


def substring(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """The occurrences of a pattern of `SUBSTRING_LENGTHS[op]` bytes in `state.size` bytes of text over a
        four-letter alphabet (at least 4,096), one thread a position, counted per block then atomically."""
        kernel = _module(cp).get_function("substring")
        n = max(4096, state.size)
        m = SUBSTRING_LENGTHS[op]
        rng = cp.random.default_rng(state.seed)
        text = (rng.integers(0, 4, n, dtype=cp.int32) + ord("A")).astype(cp.uint8)
        pattern = text[n // 2:n // 2 + m].copy()
        count = cp.zeros(1, dtype=cp.uint32)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint8, n)

        def call() -> None:
            count.fill(0)
            kernel((blocks,), (256,), (text, np.int32(n), pattern, np.int32(m), count))

        return call

    return setup


def morton(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Morton codes of `state.size` bytes of packed coordinates (at least 1,024 points): 2-D of 16 bits a
        coordinate (one uint32 a point), 3-D of 10 bits (one uint32) or 2-D of 32 bits (two uint32, a uint64 code)."""
        name = op.split(".", 1)[1]
        kernel = _module(cp).get_function(name)
        wide = name == "morton2d32"
        n = max(1024, state.size // (8 if wide else 4))
        rng = cp.random.default_rng(state.seed)
        coords = rng.integers(0, 2**31 - 1, 2 * n if wide else n, dtype=cp.int32).view(cp.uint32)
        code = cp.empty(n, dtype=cp.uint64 if wide else cp.uint32)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint32, 2 * n if wide else n)
        state.add_writes(np.uint64 if wide else np.uint32, n)
        return lambda: kernel((blocks,), (256,), (coords, code, np.int32(n)))

    return setup


KERNELS = (
    ("torch.conv3d.float", "float"), ("torch.conv3d.half", "half"), ("torch.conv3d.bfloat16", "bfloat16"),
    ("cublas.ger.float", "float"), ("cublas.ger.double", "double"), ("cublas.ger.complex", "complex float"),
    ("triton.ln_bwd.256", "float"), ("triton.ln_bwd.1024", "float"), ("triton.ln_bwd.4096", "float"),
    ("compact.10", "float"), ("compact.50", "float"), ("compact.90", "float"),
    ("sbox.shared", "uint8"), ("sbox.constant", "uint8"), ("sbox.global", "uint8"),
    ("substring.4", "uint8"), ("substring.8", "uint8"), ("substring.16", "uint8"),
    ("morton.morton2d16", "uint32"), ("morton.morton3d10", "uint32"), ("morton.morton2d32", "uint32"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    **{f"torch.conv3d.{t}": conv3d(t) for t in ("float", "half", "bfloat16")},
    "cublas.ger.float": ger("float"), "cublas.ger.double": ger("double"), "cublas.ger.complex": ger("complex float"),
    **{op: ln_backward(op) for op in LN_ROWS},
    **{op: compact(op) for op in COMPACT_KEPT},
    **{op: sbox(op) for op in SBOX_KERNELS},
    **{op: substring(op) for op in SUBSTRING_LENGTHS},
    **{f"morton.{k}": morton(f"morton.{k}") for k in ("morton2d16", "morton3d10", "morton2d32")},
}


Kernel = suite_kernel("eval11", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
