"""The twelfth evaluation suite of issue "Verdicts that speak", written for the twelfth evaluation after compare's
method was frozen at the commit that adds it, and before any of its data existed: eight kinds used by none of the
tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ... `eval_suite11.py`, the pilots or the probes,
each in three variants, so that a run holds 24 specializations, and no copy kernel.

The kinds, library calls included: a symmetric rank-k update (`cupy.cublas.syrk`, cuBLAS syrk, C = A A^T of a
square A) in fp32, fp64 and complex64; a sampled dense-dense product (`torch.sparse.sampled_addmm`, cuSPARSE
SDDMM: the products of two dense factors of 32 columns at a CSR pattern's entries) at 8, 32 and 128 entries a
row; a 3-D average pooling (`torch.nn.functional.avg_pool3d`) over 2^3 windows of stride 2, 3^3 windows of
stride 1 (overlapping, padding 1) and 4^3 windows of stride 4; a Triton leaky integrate-and-fire neuron
simulation (a loop over 8, 32 or 128 time steps, one spike train written a step); a Triton Black-Scholes
pricing of European calls and puts (`tl.erf`, `tl.log`, `tl.exp`) with fp32, fp16 and bf16 storage; and three
RawKernels: one Floyd-Warshall relaxation step (all pairs through one pivot vertex, min-plus) on int32, fp32
and fp64 distances, a deterministic Miller-Rabin primality test (witnesses 2, 7 and 61; odd numbers of 16, 24
and 32 bits) and UTF-8 decoding (one code point a byte position; text of 1-, 2- and 3-byte characters).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every setup is
outside the timed call, and no timed call synchronises the host.

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call).

    python tests/benchmarks/verdicts/eval_suite12.py --size 1MiB --processes 16 --rounds 4 --min-secs 0.5
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

SUMMARY = ("symmetric rank-k update (cuBLAS syrk; fp32, fp64, complex64), SDDMM (torch.sparse.sampled_addmm, "
           "cuSPARSE; 8, 32, 128 a row), avg_pool3d (2^3 stride 2, 3^3 stride 1, 4^3 stride 4), Triton leaky "
           "integrate-and-fire (8, 32, 128 steps), Triton Black-Scholes (fp32, fp16, bf16), Floyd-Warshall step "
           "(int32, fp32, fp64), Miller-Rabin primality (16, 24, 32 bits), UTF-8 decoding (1-, 2-, 3-byte "
           "characters): 24 specializations, no copy kernel, no kind of the tuning suite or of eval_suite.py ... "
           "eval_suite11.py")

RAW = r"""
// one Floyd-Warshall step: every pair (i, j) through the pivot k, out of place (the same work every call)
template<typename T>
__device__ void relax(const T* __restrict__ d, T* __restrict__ out, int n, int k)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if(i >= n || j >= n) return;
    size_t row = (size_t)i * n;
    T via = d[row + k] + d[(size_t)k * n + j];
    T cur = d[row + j];
    out[row + j] = via < cur ? via : cur;
}

extern "C" __global__ void fw_int(const int* __restrict__ d, int* __restrict__ out, int n, int k)
{
    relax(d, out, n, k);
}

extern "C" __global__ void fw_float(const float* __restrict__ d, float* __restrict__ out, int n, int k)
{
    relax(d, out, n, k);
}

extern "C" __global__ void fw_double(const double* __restrict__ d, double* __restrict__ out, int n, int k)
{
    relax(d, out, n, k);
}

__device__ unsigned int mulmod(unsigned int a, unsigned int b, unsigned int m)
{
    return (unsigned int)(((unsigned long long)a * b) % m);
}

__device__ unsigned int powmod(unsigned int a, unsigned int e, unsigned int m)
{
    unsigned int r = 1u;
    while(e) {
        if(e & 1u) r = mulmod(r, a, m);
        a = mulmod(a, a, m);
        e >>= 1;
    }
    return r;
}

// n odd and > 2, n - 1 = d 2^s: whether n is a strong probable prime to the base a
__device__ bool strong_probable_prime(unsigned int n, unsigned int a, unsigned int d, int s)
{
    a %= n;
    if(a == 0u) return true;
    unsigned int x = powmod(a, d, n);
    if(x == 1u || x == n - 1u) return true;
    for(int r = 1; r < s; r++) {
        x = mulmod(x, x, n);
        if(x == n - 1u) return true;
    }
    return false;
}

// deterministic for every 32-bit n: the witnesses 2, 7 and 61 suffice below 4,759,123,141
extern "C" __global__ void miller_rabin(const unsigned int* __restrict__ in, unsigned char* __restrict__ prime, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int v = in[i];
    unsigned char p;
    if(v < 2u) p = 0;
    else if(v < 4u) p = 1;
    else if((v & 1u) == 0u) p = 0;
    else {
        unsigned int d = v - 1u;
        int s = 0;
        while((d & 1u) == 0u) { d >>= 1; s++; }
        p = strong_probable_prime(v, 2u, d, s) && strong_probable_prime(v, 7u, d, s)
            && strong_probable_prime(v, 61u, d, s);
    }
    prime[i] = p;
}

// the code point of the character that starts at each byte; 0xFFFFFFFF at a continuation byte, U+FFFD where
// the bytes are not well-formed UTF-8 (a bad lead byte, a missing continuation, overlong, a surrogate, > U+10FFFF)
extern "C" __global__ void utf8_decode(const unsigned char* __restrict__ in, unsigned int* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int b = in[i];
    unsigned int cp;
    if(b < 0x80u) cp = b;
    else if((b & 0xC0u) == 0x80u) cp = 0xFFFFFFFFu;
    else {
        int len = (b & 0xE0u) == 0xC0u ? 2 : (b & 0xF0u) == 0xE0u ? 3 : (b & 0xF8u) == 0xF0u ? 4 : 0;
        bool ok = len != 0 && i + len <= n;
        cp = b & (0x7Fu >> len);
        for(int k = 1; ok && k < len; k++) {
            unsigned int c = in[i + k];
            if((c & 0xC0u) != 0x80u) ok = false;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        unsigned int least = len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u;
        if(!ok || cp < least || cp > 0x10FFFFu || (cp >= 0xD800u && cp <= 0xDFFFu)) cp = 0xFFFDu;
    }
    out[i] = cp;
}
"""
_CACHE: dict[str, Any] = {}

SDDMM_ROW = {"torch.sddmm.8": 8, "torch.sddmm.32": 32, "torch.sddmm.128": 128}  # CSR entries a row
SDDMM_K = 32  # the dense factors' inner dimension
POOL_CHANNELS = 8  # avg_pool3d: 8 channels
POOL_WINDOWS = {"torch.avg_pool3d.k2s2": (2, 2, 0), "torch.avg_pool3d.k3s1": (3, 1, 1),
                "torch.avg_pool3d.k4s4": (4, 4, 0)}  # kernel, stride, padding
LIF_STEPS = {"triton.lif.8": 8, "triton.lif.32": 32, "triton.lif.128": 128}
LIF_BLOCK = 1024
BS_BLOCK = 1024
FW_TYPES = {"floyd_warshall.int": ("fw_int", np.int32), "floyd_warshall.float": ("fw_float", np.float32),
            "floyd_warshall.double": ("fw_double", np.float64)}
PRIME_BITS = {"miller_rabin.16": 16, "miller_rabin.24": 24, "miller_rabin.32": 32}
UTF8_RANGES = {"utf8.1": (1, 0x20, 0x7F), "utf8.2": (2, 0x400, 0x500), "utf8.3": (3, 0x4E00, 0xA000)}  # bytes, from, to


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def syrk(dtype_name: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """C = A A^T (its upper triangle) of a square A of `state.size` bytes (at least 32 x 32) by cuBLAS syrk
        (`cupy.cublas.syrk`: ssyrk, dsyrk, csyrk) into a preallocated Fortran-ordered C, beta 0."""
        import cupy.cublas as cublas

        dtype = {"float": np.float32, "double": np.float64, "complex float": np.complex64}[dtype_name]
        n = max(32, math.isqrt(state.size // np.dtype(dtype).itemsize))
        rng = cp.random.default_rng(state.seed)
        a = cp.asfortranarray(rng.random((n, n), dtype=cp.float32).astype(dtype) - 0.5)
        c = cp.zeros((n, n), dtype=dtype, order="F")
        state.set_items(n * n)
        state.add_reads(dtype, n * n)
        state.add_writes(dtype, n * (n + 1) // 2)
        return lambda: cublas.syrk("N", a, out=c, alpha=1.0, beta=0.0)

    return setup


def sddmm(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """(A B) sampled at a square CSR pattern of `SDDMM_ROW[op]` distinct columns a row (fp32 values and int32
        indices: `state.size` bytes, at least 1,024 rows), A and B dense of inner dimension 32, by
        `torch.sparse.sampled_addmm` (cuSPARSE SDDMM; beta 0)."""
        import torch

        per_row = SDDMM_ROW[op]
        rows = max(1024, state.size // 8 // per_row)
        nnz = rows * per_row
        step = rows // per_row  # one column in each of `per_row` windows of `step` columns: distinct in a row
        gen = _generator(state)
        base = torch.randint(0, rows, (rows, 1), device="cuda", generator=gen)
        jitter = torch.randint(0, step, (rows, per_row), device="cuda", generator=gen)
        windows = torch.arange(per_row, device="cuda").view(1, per_row) * step
        col = ((base + windows + jitter) % rows).sort(dim=1).values.to(torch.int32).reshape(-1).contiguous()
        crow = torch.arange(0, nnz + 1, per_row, device="cuda", dtype=torch.int32)
        values = torch.rand(nnz, device="cuda", generator=gen)
        pattern = torch.sparse_csr_tensor(crow, col, values, (rows, rows))
        a = torch.randn((rows, SDDMM_K), device="cuda", generator=gen)
        b = torch.randn((SDDMM_K, rows), device="cuda", generator=gen)
        state.set_items(nnz)
        state.add_reads(np.float32, nnz + 2 * rows * SDDMM_K)
        state.add_reads(np.int32, nnz + rows + 1)
        state.add_writes(np.float32, nnz)
        return _torch_on_stream(state, lambda: torch.sparse.sampled_addmm(pattern, a, b, beta=0.0, alpha=1.0))

    return setup


def avg_pool3d(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The averages of 3-D windows (`POOL_WINDOWS[op]`: kernel, stride, padding) over a cube of 8 fp32
        channels, `state.size` bytes of input (at least 16^3 a channel), by `torch.nn.functional.avg_pool3d`."""
        import torch
        import torch.nn.functional as F

        kernel, stride, padding = POOL_WINDOWS[op]
        side = max(16, round((state.size // 4 // POOL_CHANNELS) ** (1 / 3)))
        side -= side % 4  # whole windows of 2 and 4
        x = torch.randn((1, POOL_CHANNELS, side, side, side), device="cuda", generator=_generator(state))
        out_side = (side + 2 * padding - kernel) // stride + 1
        voxels = POOL_CHANNELS * side**3
        state.set_items(voxels)
        state.add_reads(np.float32, voxels)
        state.add_writes(np.float32, POOL_CHANNELS * out_side**3)
        return _torch_on_stream(state, lambda: F.avg_pool3d(x, kernel, stride, padding))

    return setup


def _lif_kernel() -> Any:
    if "lif" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def lif(current_ptr, spikes_ptr, v_ptr, n, steps, decay, threshold,  # type: ignore[no-untyped-def]
                BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            v = tl.zeros((BLOCK,), dtype=tl.float32)
            for t in range(steps):
                i = tl.load(current_ptr + t * n + offs, mask=mask, other=0.0)
                v = v * decay + i
                fired = v >= threshold
                tl.store(spikes_ptr + t * n + offs, fired.to(tl.int8), mask=mask)
                v = tl.where(fired, 0.0, v)
            tl.store(v_ptr + offs, v, mask=mask)

        _CACHE["lif"] = lif
    return _CACHE["lif"]


def lif(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """Leaky integrate-and-fire neurons driven for `LIF_STEPS[op]` time steps by `state.size` bytes of fp32
        input currents (steps x neurons, at least 1,024 neurons), one Triton program a block of neurons looping
        over the steps: the potential decays, integrates, fires at a threshold and resets; an int8 spike train
        a step and the final potentials are written."""
        import torch

        steps = LIF_STEPS[op]
        n = max(1024, state.size // (4 * steps))
        current = 0.3 * torch.rand((steps, n), device="cuda", generator=_generator(state))
        spikes = torch.empty((steps, n), device="cuda", dtype=torch.int8)
        v = torch.empty(n, device="cuda")
        kernel = _lif_kernel()
        grid = ((n + LIF_BLOCK - 1) // LIF_BLOCK,)
        state.set_items(steps * n)
        state.add_reads(np.float32, steps * n)
        state.add_writes(np.int8, steps * n)
        state.add_writes(np.float32, n)
        return _torch_on_stream(state, lambda: kernel[grid](current, spikes, v, n, steps, 0.9, 1.0, BLOCK=LIF_BLOCK))

    return setup


def _black_scholes_kernel() -> Any:
    if "black_scholes" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def black_scholes(s_ptr, k_ptr, t_ptr, call_ptr, put_ptr, n, r, sigma,  # type: ignore[no-untyped-def]
                          BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            s = tl.load(s_ptr + offs, mask=mask, other=1.0).to(tl.float32)
            k = tl.load(k_ptr + offs, mask=mask, other=1.0).to(tl.float32)
            t = tl.load(t_ptr + offs, mask=mask, other=1.0).to(tl.float32)
            sqrt_t = tl.sqrt(t)
            d1 = (tl.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * sqrt_t)
            d2 = d1 - sigma * sqrt_t
            nd1 = 0.5 * (1.0 + tl.erf(d1 * 0.7071067811865476))
            nd2 = 0.5 * (1.0 + tl.erf(d2 * 0.7071067811865476))
            discounted = k * tl.exp(-r * t)
            call = s * nd1 - discounted * nd2
            put = call - s + discounted  # put-call parity
            tl.store(call_ptr + offs, call.to(call_ptr.dtype.element_ty), mask=mask)
            tl.store(put_ptr + offs, put.to(put_ptr.dtype.element_ty), mask=mask)

        _CACHE["black_scholes"] = black_scholes
    return _CACHE["black_scholes"]


def black_scholes(dtype_name: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """European call and put prices (Black-Scholes, rate 2 %, volatility 30 %) of options whose spot, strike
        and expiry arrays are `state.size` bytes together (at least 1,024 options), stored in `dtype_name` and
        computed in fp32, by one Triton kernel."""
        import torch

        dtype = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16}[dtype_name]
        itemsize = torch.tensor([], dtype=dtype).element_size()
        n = max(1024, state.size // (3 * itemsize))
        gen = _generator(state)
        spot = (50 + 50 * torch.rand(n, device="cuda", generator=gen)).to(dtype)
        strike = (50 + 50 * torch.rand(n, device="cuda", generator=gen)).to(dtype)
        expiry = (0.25 + 1.75 * torch.rand(n, device="cuda", generator=gen)).to(dtype)
        call, put = torch.empty_like(spot), torch.empty_like(spot)
        kernel = _black_scholes_kernel()
        grid = ((n + BS_BLOCK - 1) // BS_BLOCK,)
        storage = np.float32 if dtype_name == "float" else np.float16
        state.set_items(n)
        state.add_reads(storage, 3 * n)
        state.add_writes(storage, 2 * n)
        return _torch_on_stream(state, lambda: kernel[grid](spot, strike, expiry, call, put, n, 0.02, 0.3,
                                                            BLOCK=BS_BLOCK))

    return setup


def floyd_warshall(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """One Floyd-Warshall relaxation step through the middle vertex over a dense distance matrix of
        `state.size` bytes (at least 32 x 32; weights 1-999, a quarter of the pairs unconnected, a large finite
        distance), read from one matrix and written to another, so that every call does the same work."""
        name, dtype = FW_TYPES[op]
        kernel = _module(cp).get_function(name)
        n = max(32, math.isqrt(state.size // np.dtype(dtype).itemsize))
        rng = cp.random.default_rng(state.seed)
        weights = rng.integers(1, 1000, (n, n), dtype=cp.int32)
        unconnected = rng.random((n, n), dtype=cp.float32) < 0.25
        d = cp.where(unconnected, 1 << 29, weights).astype(dtype)  # twice 2^29 still fits an int32
        cp.fill_diagonal(d, 0)
        out = cp.empty_like(d)
        blocks = ((n + 255) // 256, n)
        state.set_items(n * n)
        state.add_reads(dtype, n * n + 2 * n)
        state.add_writes(dtype, n * n)
        return lambda: kernel(blocks, (256,), (d, out, np.int32(n), np.int32(n // 2)))

    return setup


def miller_rabin(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Whether each of `state.size` bytes of odd uint32 numbers of exactly `PRIME_BITS[op]` bits (at least
        1,024) is prime, by a deterministic Miller-Rabin test to the witnesses 2, 7 and 61 (64-bit modular
        products), one thread a number."""
        kernel = _module(cp).get_function("miller_rabin")
        bits = PRIME_BITS[op]
        n = max(1024, state.size // 4)
        values = np.random.default_rng(state.seed).integers(0, 1 << bits, n, dtype=np.uint64)
        numbers = cp.asarray((values | (1 << (bits - 1)) | 1).astype(np.uint32))
        prime = cp.empty(n, dtype=cp.uint8)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint32, n)
        state.add_writes(np.uint8, n)
        return lambda: kernel((blocks,), (256,), (numbers, prime, np.int32(n)))

    return setup


def utf8(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """UTF-8 decoding of `state.size` bytes of text (at least 4,096) of characters `UTF8_RANGES[op]` bytes
        long (printable ASCII, Cyrillic, CJK), one thread a byte: the code point of the character starting
        there, a marker at a continuation byte, U+FFFD where the bytes are malformed."""
        kernel = _module(cp).get_function("utf8_decode")
        width, low, high = UTF8_RANGES[op]
        chars = max(4096, state.size) // width
        rng = cp.random.default_rng(state.seed)
        code = rng.integers(low, high, chars, dtype=cp.int32)
        if width == 1:
            parts = [code]
        elif width == 2:
            parts = [0xC0 | (code >> 6), 0x80 | (code & 0x3F)]
        else:
            parts = [0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F)]
        text = cp.stack(parts, axis=1).astype(cp.uint8).ravel()
        n = chars * width
        out = cp.empty(n, dtype=cp.uint32)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint8, n)
        state.add_writes(np.uint32, n)
        return lambda: kernel((blocks,), (256,), (text, out, np.int32(n)))

    return setup


KERNELS = (
    ("cublas.syrk.float", "float"), ("cublas.syrk.double", "double"), ("cublas.syrk.complex", "complex float"),
    ("torch.sddmm.8", "float"), ("torch.sddmm.32", "float"), ("torch.sddmm.128", "float"),
    ("torch.avg_pool3d.k2s2", "float"), ("torch.avg_pool3d.k3s1", "float"), ("torch.avg_pool3d.k4s4", "float"),
    ("triton.lif.8", "float"), ("triton.lif.32", "float"), ("triton.lif.128", "float"),
    ("triton.black_scholes.float", "float"), ("triton.black_scholes.half", "half"),
    ("triton.black_scholes.bfloat16", "bfloat16"),
    ("floyd_warshall.int", "int"), ("floyd_warshall.float", "float"), ("floyd_warshall.double", "double"),
    ("miller_rabin.16", "uint32"), ("miller_rabin.24", "uint32"), ("miller_rabin.32", "uint32"),
    ("utf8.1", "uint8"), ("utf8.2", "uint8"), ("utf8.3", "uint8"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "cublas.syrk.float": syrk("float"), "cublas.syrk.double": syrk("double"),
    "cublas.syrk.complex": syrk("complex float"),
    **{op: sddmm(op) for op in SDDMM_ROW},
    **{op: avg_pool3d(op) for op in POOL_WINDOWS},
    **{op: lif(op) for op in LIF_STEPS},
    **{f"triton.black_scholes.{t}": black_scholes(t) for t in ("float", "half", "bfloat16")},
    **{op: floyd_warshall(op) for op in FW_TYPES},
    **{op: miller_rabin(op) for op in PRIME_BITS},
    **{op: utf8(op) for op in UTF8_RANGES},
}


Kernel = suite_kernel("eval12", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
