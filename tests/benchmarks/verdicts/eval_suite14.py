"""The fourteenth evaluation suite of issue "Verdicts that speak", written for the fourteenth evaluation after
compare's method was frozen at the commit that adds it, and before any of its data existed: eight kinds used by
none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ... `eval_suite13.py`, the pilots or the
probes, each in three variants, so that a run holds 24 specializations, and no copy kernel.

The kinds, library calls first: a symmetric band matrix-vector product (`cupy.cublas.sbmv`, cuBLAS ssbmv) of
half-bandwidth 1, 8 and 32 in fp32; a multi-dimensional complex-to-real inverse FFT (`cupy.fft.irfftn`, one cuFFT
C2R N-D plan) of a square complex64 and complex128 spectrum and a cube of complex64; the greatest common divisor
of integer pairs (`torch.gcd`, Euclid's loop of remainders) in int16, int32 and int64; Poisson variates
(`torch.poisson`, cuRAND's device sampler from a Philox generator) at rates about 4, 256 and 16,384, one in each
of the sampler's three regimes (product of uniforms, incomplete gamma, normal approximation); a Triton one-level
1-D discrete wavelet transform of rows of 1,024 by lifting (Haar, LeGall 5/3, CDF 9/7; periodic ends); a Triton
Sinkhorn-Knopp balancing (8 alternate row and column normalisations, one program a matrix) of 16 x 16, 32 x 32
and 64 x 64 positive matrices; and two RawKernels: a ChaCha keystream XORed into 64-byte blocks (8, 12 and 20
rounds; add, rotate, xor) and a batched tridiagonal solve by the Thomas algorithm (one thread a system of 16, 64
or 256 equations, interleaved).

Why they are new: the suites' cuBLAS calls were GEMM (S, D, fp16 batched, int8), GEMV (S, Z), trsm, ger, syrk and
geam, never a band matrix; their FFTs were 1-D (batched C2C in `eval_suite.py`, the STFT's R2C in
`eval_suite13.py`), never an inverse C2R nor more than one dimension in one plan; no suite had an integer gcd, a
Poisson sampler (their generators were cuRAND's uniform, `torch.randn`'s normal and Triton's `tl.rand`), a
wavelet, a Sinkhorn iteration, a cipher's rounds (the eleventh's S-box is one table look-up a byte, the fourth's
and seventh's hash and CRC are no cipher) or a tridiagonal solve (the dense factorisations were Cholesky, LU, QR
and a triangular solve).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every setup is
outside the timed call, and no timed call synchronises the host.

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call).

    python tests/benchmarks/verdicts/eval_suite14.py --size 4MiB --processes 8 --rounds 2 --min-secs 0.25
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

SUMMARY = ("symmetric band matrix-vector product (cuBLAS sbmv; half-bandwidth 1, 8, 32), N-D C2R inverse FFT "
           "(cupy.fft.irfftn, cuFFT; 2-D complex64, 2-D complex128, 3-D complex64), integer gcd (torch.gcd; int16, "
           "int32, int64), Poisson variates (torch.poisson; rates 4, 256, 16,384), Triton lifting wavelet of rows "
           "(Haar, LeGall 5/3, CDF 9/7), Triton Sinkhorn-Knopp balancing (16, 32, 64 square), ChaCha keystream XOR "
           "(8, 12, 20 rounds), Thomas tridiagonal solve (16, 64, 256 equations): 24 specializations, no copy "
           "kernel, no kind of the tuning suite or of eval_suite.py ... eval_suite13.py")

RAW = r"""
__device__ __forceinline__ unsigned int rotl32(unsigned int v, int n) { return __funnelshift_l(v, v, n); }

#define CHACHA_QUARTER(a, b, c, d) \
    a += b; d ^= a; d = rotl32(d, 16); \
    c += d; b ^= c; b = rotl32(b, 12); \
    a += b; d ^= a; d = rotl32(d, 8); \
    c += d; b ^= c; b = rotl32(b, 7);

// block i of n 64-byte blocks XORed with ChaCha's keystream block (`rounds` rounds, even) for the 256-bit key
// key[0..7], the 96-bit nonce key[8..10] and the block counter i
extern "C" __global__ void chacha_xor(const uint4* __restrict__ in, uint4* __restrict__ out,
                                      const unsigned int* __restrict__ key, int n, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int s[16];
    s[0] = 0x61707865u; s[1] = 0x3320646eu; s[2] = 0x79622d32u; s[3] = 0x6b206574u;
#pragma unroll
    for(int k = 0; k < 8; k++) s[4 + k] = __ldg(&key[k]);
    s[12] = (unsigned int)i;
    s[13] = __ldg(&key[8]); s[14] = __ldg(&key[9]); s[15] = __ldg(&key[10]);
    unsigned int x[16];
#pragma unroll
    for(int k = 0; k < 16; k++) x[k] = s[k];
    for(int r = 0; r < rounds; r += 2) {
        CHACHA_QUARTER(x[0], x[4], x[8], x[12])  // columns
        CHACHA_QUARTER(x[1], x[5], x[9], x[13])
        CHACHA_QUARTER(x[2], x[6], x[10], x[14])
        CHACHA_QUARTER(x[3], x[7], x[11], x[15])
        CHACHA_QUARTER(x[0], x[5], x[10], x[15])  // diagonals
        CHACHA_QUARTER(x[1], x[6], x[11], x[12])
        CHACHA_QUARTER(x[2], x[7], x[8], x[13])
        CHACHA_QUARTER(x[3], x[4], x[9], x[14])
    }
#pragma unroll
    for(int w = 0; w < 4; w++) {
        uint4 p = in[(size_t)i * 4 + w];
        uint4 c;
        c.x = p.x ^ (x[4 * w] + s[4 * w]);
        c.y = p.y ^ (x[4 * w + 1] + s[4 * w + 1]);
        c.z = p.z ^ (x[4 * w + 2] + s[4 * w + 2]);
        c.w = p.w ^ (x[4 * w + 3] + s[4 * w + 3]);
        out[(size_t)i * 4 + w] = c;
    }
}

// `count` tridiagonal systems of n equations, interleaved (equation j of system s at j * count + s), each solved
// by one thread (Thomas: forward elimination into scratch and x, then back substitution in x); no pivoting, so
// the systems are diagonally dominant
extern "C" __global__ void thomas(const float* __restrict__ lower, const float* __restrict__ diag,
                                  const float* __restrict__ upper, const float* __restrict__ rhs,
                                  float* __restrict__ scratch, float* __restrict__ x, int count, int n)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if(s >= count) return;
    float c = upper[s] / diag[s];
    float d = rhs[s] / diag[s];
    scratch[s] = c;
    x[s] = d;
#pragma unroll 4
    for(int j = 1; j < n; j++) {
        size_t at = (size_t)j * count + s;
        float a = lower[at];
        float m = 1.0f / (diag[at] - a * c);
        c = upper[at] * m;
        d = (rhs[at] - a * d) * m;
        scratch[at] = c;
        x[at] = d;
    }
#pragma unroll 4
    for(int j = n - 2; j >= 0; j--) {
        size_t at = (size_t)j * count + s;
        d = x[at] - scratch[at] * d;
        x[at] = d;
    }
}
"""
_CACHE: dict[str, Any] = {}

BANDS = {"cublas.sbmv.1": 1, "cublas.sbmv.8": 8, "cublas.sbmv.32": 32}  # half-bandwidth k: 2k + 1 diagonals
C2R = {"cufft.c2r.2d_float": (2, np.complex64), "cufft.c2r.2d_double": (2, np.complex128),
       "cufft.c2r.3d_float": (3, np.complex64)}  # transformed dimensions, input dtype
GCD_TYPES = {"torch.gcd.int16": ("int16", 2**15 - 1), "torch.gcd.int32": ("int32", 2**31 - 1),
             "torch.gcd.int64": ("int64", 2**62)}  # dtype, the operands' exclusive upper bound (from 1)
POISSON_RATES = {"torch.poisson.4": 4.0, "torch.poisson.256": 256.0, "torch.poisson.16384": 16384.0}
WAVELETS = {"triton.dwt.haar": 0, "triton.dwt.cdf53": 1, "triton.dwt.cdf97": 2}
SINKHORN_SIDES = {"triton.sinkhorn.16": 16, "triton.sinkhorn.32": 32, "triton.sinkhorn.64": 64}
CHACHA_ROUNDS = {"chacha.8": 8, "chacha.12": 12, "chacha.20": 20}
THOMAS_EQUATIONS = {"thomas.16": 16, "thomas.64": 64, "thomas.256": 256}
DWT_ROW = 1024  # the wavelet's row length (even samples and odd samples: 512 each)
SINKHORN_ITERS = 8  # row then column normalisations


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def sbmv(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """y = A x of a symmetric band matrix A of half-bandwidth `BANDS[op]` in upper band storage (a Fortran-
        ordered (k + 1) x n array of `state.size` bytes, n at least 1,024) and a vector x, in fp32, by cuBLAS sbmv
        (`cupy.cublas.sbmv`) into a preallocated y."""
        import cupy.cublas as cublas

        k = BANDS[op]
        n = max(1024, state.size // (4 * (k + 1)))
        rng = cp.random.default_rng(state.seed)
        a = cp.asfortranarray(rng.random((k + 1, n), dtype=cp.float32))
        x = rng.random(n, dtype=cp.float32)
        y = cp.empty(n, dtype=cp.float32)
        state.set_items(n)
        state.add_reads(np.float32, (k + 1) * n + n)
        state.add_writes(np.float32, n)
        return lambda: cublas.sbmv(k, 1.0, a, x, 0.0, y)

    return setup


def _fft_side(n: int, minimum: int) -> int:
    """The largest even length at most `n` (at least `minimum`, even) whose prime factors are 2, 3, 5 and 7."""
    side = max(minimum, n - n % 2)
    while side > minimum:
        m = side
        for p in (2, 3, 5, 7):
            while m % p == 0:
                m //= p
        if m == 1:
            break
        side -= 2
    return side


def c2r(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """The inverse real FFT (`cupy.fft.irfftn`: a copy of the input, which cuFFT's C2R overwrites, one C2R
        plan over every axis, the 1 / N scale) of a square (side at least 64) or cubic (side at least 16) spectrum
        of `state.size` bytes of standard normal `C2R[op]` values, the last axis side / 2 + 1 long, side the
        largest even 7-smooth length that fits; the plan made and cached before the timed call."""
        dims, dtype = C2R[op]
        itemsize = np.dtype(dtype).itemsize
        reals = state.size // (itemsize // 2)  # about side^dims real outputs
        if dims == 2:
            side = _fft_side(math.isqrt(reals), 64)
        else:
            root = round(reals ** (1 / 3))
            while root ** 3 > reals:
                root -= 1
            side = _fft_side(root, 16)
        out_shape = (side,) * dims
        in_shape = (*out_shape[:-1], side // 2 + 1)
        real = np.float32 if dtype == np.complex64 else np.float64
        rng = cp.random.default_rng(state.seed)
        spectrum = (rng.standard_normal(in_shape, dtype=real) + 1j * rng.standard_normal(in_shape, dtype=real))
        spectrum = cp.ascontiguousarray(spectrum.astype(dtype))
        cp.fft.irfftn(spectrum, s=out_shape)  # the plan, cached
        inputs, outputs = math.prod(in_shape), math.prod(out_shape)
        state.set_items(outputs)
        state.add_reads(dtype, inputs)
        state.add_writes(real, outputs)
        return lambda: cp.fft.irfftn(spectrum, s=out_shape)

    return setup


def gcd(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The greatest common divisor of each pair of `GCD_TYPES[op]` integers, uniform from 1 up to the type's
        range (2^62 for int64), the two operands `state.size` bytes together (at least 1,024 pairs), by
        `torch.gcd` (Euclid's loop of remainders) into a preallocated output."""
        import torch

        dtype_name, high = GCD_TYPES[op]
        dtype = getattr(torch, dtype_name)
        itemsize = torch.tensor([], dtype=dtype).element_size()
        n = max(1024, state.size // (2 * itemsize))
        gen = _generator(state)
        a = torch.randint(1, high, (n,), device="cuda", generator=gen, dtype=torch.int64).to(dtype)
        b = torch.randint(1, high, (n,), device="cuda", generator=gen, dtype=torch.int64).to(dtype)
        out = torch.empty_like(a)
        storage = {"int16": np.int16, "int32": np.int32, "int64": np.int64}[dtype_name]
        state.set_items(n)
        state.add_reads(storage, 2 * n)
        state.add_writes(storage, n)
        return _torch_on_stream(state, lambda: torch.gcd(a, b, out=out))

    return setup


def poisson(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """One Poisson variate for each of `state.size` bytes of fp32 rates (at least 4,096), uniform in 0.5-1.5
        times `POISSON_RATES[op]`, by `torch.poisson` (cuRAND's `curand_poisson` from a Philox generator: below
        64 a product of uniforms, up to 4,000 by the incomplete gamma, above it a normal approximation)."""
        import torch

        rate = POISSON_RATES[op]
        n = max(4096, state.size // 4)
        gen = _generator(state)
        rates = rate * (0.5 + torch.rand(n, device="cuda", generator=gen))
        state.set_items(n)
        state.add_reads(np.float32, n)
        state.add_writes(np.float32, n)
        return _torch_on_stream(state, lambda: torch.poisson(rates, generator=gen))

    return setup


def _dwt_kernel() -> Any:
    if "dwt" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def dwt(x_ptr, low_ptr, high_ptr, HALF: tl.constexpr, WAVELET: tl.constexpr):  # type: ignore[no-untyped-def]
            row = tl.program_id(0)
            i = tl.arange(0, HALF)
            src = x_ptr + row * (2 * HALF)
            even = tl.load(src + 2 * i)
            odd = tl.load(src + 2 * i + 1)
            if WAVELET == 0:  # Haar: predict by the even sample, update by half the detail
                high = odd - even
                low = even + 0.5 * high
            elif WAVELET == 1:  # LeGall 5/3: predict by the two even neighbours, update by the two details
                prev = (i + HALF - 1) % HALF
                even_next = tl.load(src + 2 * ((i + 1) % HALF))
                even_prev = tl.load(src + 2 * prev)
                odd_prev = tl.load(src + 2 * prev + 1)
                high = odd - 0.5 * (even + even_next)
                high_prev = odd_prev - 0.5 * (even_prev + even)
                low = even + 0.25 * (high_prev + high)
            else:  # CDF 9/7: predict, update, predict, update, scale
                m2 = (i + HALF - 2) % HALF
                m1 = (i + HALF - 1) % HALF
                p1 = (i + 1) % HALF
                p2 = (i + 2) % HALF
                e_m2 = tl.load(src + 2 * m2)
                e_m1 = tl.load(src + 2 * m1)
                e_p1 = tl.load(src + 2 * p1)
                e_p2 = tl.load(src + 2 * p2)
                o_m2 = tl.load(src + 2 * m2 + 1)
                o_m1 = tl.load(src + 2 * m1 + 1)
                o_p1 = tl.load(src + 2 * p1 + 1)
                d_m2 = o_m2 - 1.586134342 * (e_m2 + e_m1)
                d_m1 = o_m1 - 1.586134342 * (e_m1 + even)
                d_0 = odd - 1.586134342 * (even + e_p1)
                d_p1 = o_p1 - 1.586134342 * (e_p1 + e_p2)
                s_m1 = e_m1 - 0.05298011854 * (d_m2 + d_m1)
                s_0 = even - 0.05298011854 * (d_m1 + d_0)
                s_p1 = e_p1 - 0.05298011854 * (d_0 + d_p1)
                h_m1 = d_m1 + 0.8829110762 * (s_m1 + s_0)
                h_0 = d_0 + 0.8829110762 * (s_0 + s_p1)
                low = (s_0 + 0.4435068522 * (h_m1 + h_0)) * 1.149604398  # gain sqrt(2) at zero frequency
                high = h_0 * 0.8698644516
            out = row * HALF + i
            tl.store(low_ptr + out, low)
            tl.store(high_ptr + out, high)

        _CACHE["dwt"] = dwt
    return _CACHE["dwt"]


def dwt(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """One level of the `WAVELETS[op]` wavelet transform (Haar, LeGall 5/3 or CDF 9/7 by lifting, periodic at
        the row's ends) of each row of 1,024 fp32 samples, `state.size` bytes of rows (at least 16), into a
        plane of approximations and a plane of details, one Triton program a row."""
        import torch

        wavelet = WAVELETS[op]
        rows = max(16, state.size // (4 * DWT_ROW))
        x = torch.randn((rows, DWT_ROW), device="cuda", generator=_generator(state))
        low = torch.empty((rows, DWT_ROW // 2), device="cuda")
        high = torch.empty_like(low)
        kernel = _dwt_kernel()
        state.set_items(rows * DWT_ROW)
        state.add_reads(np.float32, rows * DWT_ROW)
        state.add_writes(np.float32, rows * DWT_ROW)
        return _torch_on_stream(state, lambda: kernel[(rows,)](x, low, high, HALF=DWT_ROW // 2, WAVELET=wavelet))

    return setup


def _sinkhorn_kernel() -> Any:
    if "sinkhorn" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def sinkhorn(m_ptr, out_ptr, SIDE: tl.constexpr, ITERS: tl.constexpr):  # type: ignore[no-untyped-def]
            r = tl.arange(0, SIDE)
            offs = tl.program_id(0) * (SIDE * SIDE) + r[:, None] * SIDE + r[None, :]
            m = tl.load(m_ptr + offs)
            for _step in range(ITERS):
                m = m / tl.sum(m, axis=1)[:, None]
                m = m / tl.sum(m, axis=0)[None, :]
            tl.store(out_ptr + offs, m)

        _CACHE["sinkhorn"] = sinkhorn
    return _CACHE["sinkhorn"]


def sinkhorn(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """Sinkhorn-Knopp balancing of a batch of `SINKHORN_SIDES[op]`-square fp32 matrices of entries in 0.1-1.1,
        `state.size` bytes of matrices (at least 4): 8 times each row divided by its sum and then each column by
        its sum, one Triton program a matrix held in registers, read from one batch and written to another."""
        import torch

        side = SINKHORN_SIDES[op]
        batch = max(4, state.size // (4 * side * side))
        m = 0.1 + torch.rand((batch, side, side), device="cuda", generator=_generator(state))
        out = torch.empty_like(m)
        kernel = _sinkhorn_kernel()
        state.set_items(batch * side * side)
        state.add_reads(np.float32, batch * side * side)
        state.add_writes(np.float32, batch * side * side)
        return _torch_on_stream(state, lambda: kernel[(batch,)](m, out, SIDE=side, ITERS=SINKHORN_ITERS))

    return setup


def chacha(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """`state.size` bytes of random plaintext (at least 1,024 blocks of 64 bytes) XORed with the ChaCha
        keystream of `CHACHA_ROUNDS[op]` rounds (a random 256-bit key and 96-bit nonce, the block's index its
        counter) into a preallocated ciphertext, one thread a block."""
        kernel = _module(cp).get_function("chacha_xor")
        rounds = CHACHA_ROUNDS[op]
        n = max(1024, state.size // 64)
        rng = cp.random.default_rng(state.seed)
        plain = rng.integers(0, 2**32, 16 * n, dtype=cp.uint32)
        key = rng.integers(0, 2**32, 12, dtype=cp.uint32)  # key, nonce, one word unused
        cipher = cp.empty_like(plain)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint32, 16 * n)
        state.add_writes(np.uint32, 16 * n)
        return lambda: kernel((blocks,), (256,), (plain, cipher, key, np.int32(n), np.int32(rounds)))

    return setup


def thomas(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Batched tridiagonal systems of `THOMAS_EQUATIONS[op]` fp32 equations (sub-, main and super-diagonal and
        right-hand side, `state.size` bytes together, at least 32 systems; main diagonal 4-5, the others -1 to 1),
        each solved by one thread with the Thomas algorithm, interleaved so that a warp's loads are contiguous."""
        kernel = _module(cp).get_function("thomas")
        n = THOMAS_EQUATIONS[op]
        count = max(32, state.size // (4 * 4 * n))
        rng = cp.random.default_rng(state.seed)
        lower = 2 * rng.random((n, count), dtype=cp.float32) - 1
        upper = 2 * rng.random((n, count), dtype=cp.float32) - 1
        diag = 4 + rng.random((n, count), dtype=cp.float32)
        rhs = rng.random((n, count), dtype=cp.float32)
        scratch = cp.empty((n, count), dtype=cp.float32)
        x = cp.empty((n, count), dtype=cp.float32)
        blocks = (count + 127) // 128
        state.set_items(n * count)
        state.add_reads(np.float32, 6 * n * count)  # four inputs, then scratch and x in the back substitution
        state.add_writes(np.float32, 3 * n * count)  # scratch and x, then x again
        return lambda: kernel((blocks,), (128,), (lower, diag, upper, rhs, scratch, x, np.int32(count),
                                                  np.int32(n)))

    return setup


KERNELS = (
    ("cublas.sbmv.1", "float"), ("cublas.sbmv.8", "float"), ("cublas.sbmv.32", "float"),
    ("cufft.c2r.2d_float", "complex float"), ("cufft.c2r.2d_double", "complex double"),
    ("cufft.c2r.3d_float", "complex float"),
    ("torch.gcd.int16", "int16"), ("torch.gcd.int32", "int"), ("torch.gcd.int64", "long"),
    ("torch.poisson.4", "float"), ("torch.poisson.256", "float"), ("torch.poisson.16384", "float"),
    ("triton.dwt.haar", "float"), ("triton.dwt.cdf53", "float"), ("triton.dwt.cdf97", "float"),
    ("triton.sinkhorn.16", "float"), ("triton.sinkhorn.32", "float"), ("triton.sinkhorn.64", "float"),
    ("chacha.8", "uint32"), ("chacha.12", "uint32"), ("chacha.20", "uint32"),
    ("thomas.16", "float"), ("thomas.64", "float"), ("thomas.256", "float"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    **{op: sbmv(op) for op in BANDS},
    **{op: c2r(op) for op in C2R},
    **{op: gcd(op) for op in GCD_TYPES},
    **{op: poisson(op) for op in POISSON_RATES},
    **{op: dwt(op) for op in WAVELETS},
    **{op: sinkhorn(op) for op in SINKHORN_SIDES},
    **{op: chacha(op) for op in CHACHA_ROUNDS},
    **{op: thomas(op) for op in THOMAS_EQUATIONS},
}


Kernel = suite_kernel("eval14", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
