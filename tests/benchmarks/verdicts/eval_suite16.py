"""The sixteenth evaluation suite of issue "Verdicts that speak", written on 2026-12-07 for the sixteenth evaluation
(`eval16-plan.md`, run by `h200_eval16.sh`), before any of its data existed: eight kinds used by none of the tuning
suite (`../variance/tuning_suite.py`), `eval_suite.py` ... `eval_suite15.py`, the pilots or the probes, each in
three variants, so that a run holds 24 specializations, and no copy kernel.

The kinds, library calls first: y += a x (`cupy.cublas.axpy`, cuBLAS saxpy, daxpy, caxpy) in fp32, fp64 and
complex64; the evaluation of a B-spline at scattered points (`cupyx.scipy.interpolate.BSpline.__call__`: a
binary search of the knots, then de Boor's recursion) of degree 1, 2 and 3; the Legendre polynomial P_n(x)
(`torch.special.legendre_polynomial_p`, PyTorch's jiterated three-term recurrence, one division a step) of degree
8, 16 and 32; the multi-label hinge loss (`torch.nn.functional.multilabel_margin_loss`, one thread block a row, a
hinge over every pair of a target and a non-target class) with 4, 16 and 64 targets of 1,024 classes; a Triton
fractal sum of 2-D Perlin gradient noise (hashed lattice gradients, quintic fade) over 1, 4 and 16 octaves; a
Triton cyclic Jacobi eigenvalue solver of symmetric 3 x 3 matrices (2, 8 and 32 sweeps of three rotations); and
two RawKernels: sine and cosine by CORDIC in Q2.30 fixed point (8, 16 and 32 shift-and-add rotations) and
Reed-Solomon parity over GF(2^8) (8 data shards, 2, 4 and 8 parity shards, multiplication tables in shared memory).

Why they are new (`grep -il` over eval_suite.py ... eval_suite15.py, ../variance/tuning_suite.py, probe*.py,
wall_suite.py, clock_probe.py and h200_*.sh finds none of axpy, spline, boor, knot, legendre, recurrence,
multilabel, margin, hinge, fbm, octave, lattice, eigen, cordic, solomon, galois or erasure; "perlin" is found only
inside "superlinear", "eig" only inside weight, height, eight and neighbour, "jacobi" only as eval_suite2's Jacobi
step of a stencil, "parity" only as eval_suite12's put-call parity, "polynomial" only as eval_suite5's fused
polynomial): the suites' cuBLAS calls were GEMM (S, D, fp16 batched, int8), GEMV (S, Z), trsm, ger, syrk, geam,
sbmv and dgmm, never a level-1 routine; their interpolations resampled images on grids (bilinear, grid_sample,
bicubic) and never evaluated a spline from its coefficients; their polynomials were fixed ones by Horner (cupy.fuse)
and their special functions closed forms (i0e, gammaln, erfinv), never a degree-n recurrence; their only loss was
cross-entropy, never a hinge over class pairs; their procedural data were random generators, never a noise field;
their matrix routines factorised or solved (Cholesky, LU, QR, trsm, Thomas, Sinkhorn's scaling), never an
eigenvalue problem; their fixed-point and integer loops (gcd, Miller-Rabin, CRC, ChaCha) never rotated a vector by
shifts; and their byte tables (S-box, CRC-32) substituted or checked bytes, never multiplied in a finite field.

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; the work of every
kind is linear in it (a fixed amount of work an element, point, row, matrix or word; the spline's knots and the
loss's classes are fixed in number); every setup is outside the timed call, and no timed call synchronises the host
(the CuPy 14.2 source of `cupy.cublas.axpy` and `BSpline.__call__`, and PyTorch's `legendre_polynomial_p_string`
and `MultiLabelMarginCriterion.cu`, were read for host synchronisations and copies from the host: none). Before
any GPU ran it, its RawKernels were built by nvcc 13.0 and its Triton kernels by Triton 3.6, both for sm_90, on a
machine without a GPU; nothing else of it has run.

**Estimated time a call at 64 MiB** on an H100 or H200 (3.3-4.8 TB/s, about 60 TFLOP/s fp32), written before any
measurement, the tail kernel's launch included; each setup's comment says how it was reached. No kind is
superlinear in the size or latency-bound along it, and none is expected above 2 ms at 64 MiB:

    cublas.axpy.float / .double / .complex             0.07 / 0.07 / 0.07 ms
    cupyx.bspline.1 / .2 / .3                          0.3 / 0.6 / 1.2 ms
    torch.legendre.8 / .16 / .32                       0.1 / 0.2 / 0.45 ms
    torch.multilabel_margin.4 / .16 / .64              0.06 / 0.15 / 0.5 ms
    triton.fbm.1 / .4 / .16                            0.05 / 0.13 / 0.55 ms
    triton.jacobi3.2 / .8 / .32                        0.05 / 0.12 / 0.45 ms
    cordic.8 / .16 / .32                               0.11 / 0.2 / 0.37 ms
    reed_solomon.2 / .4 / .8                           0.05 / 0.1 / 0.2 ms

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call that spins for ``PRIMBENCH_EVAL_PLANT[name]`` SM cycles, which `collect.py --planted ... --plant-fractions
... --plant-step ...` sets from the A/A runs).

    python tests/benchmarks/verdicts/eval_suite16.py --size 64MiB --json-out aa-1.json
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

SUMMARY = ("y += a x (cuBLAS axpy; fp32, fp64, complex64), B-spline evaluation (cupyx BSpline, de Boor; degree 1, "
           "2, 3), Legendre polynomial (torch.special, recurrence; degree 8, 16, 32), multi-label hinge loss (torch "
           "multilabel_margin_loss; 4, 16, 64 targets of 1,024), Triton Perlin fBm noise (1, 4, 16 octaves), Triton "
           "Jacobi eigenvalues of 3 x 3 symmetric matrices (2, 8, 32 sweeps), CORDIC sine and cosine (8, 16, 32 "
           "rotations), Reed-Solomon GF(2^8) parity (2, 4, 8 of 8 shards): 24 specializations, no copy kernel, no "
           "kind of the tuning suite or of eval_suite.py ... eval_suite15.py")

CORDIC_ATAN = [round(math.atan(2.0 ** -k) * 2**30) for k in range(32)]  # atan(2^-k) in Q2.30
RAW = r"""
__constant__ int CORDIC_ATAN[32] = {@ATAN@};

// rotation-mode CORDIC: cos and sin of angle[i] (Q2.30 radians, |angle| <= pi / 2) in Q2.30, by ITERS rotations of
// (x, y) through +-atan(2^-k), each two arithmetic shifts and three conditional negations; gain = 2^30 / K_ITERS
template<int ITERS>
__device__ __forceinline__ void cordic(const int* __restrict__ angle, int2* __restrict__ out, int n, int gain)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    int z = angle[i];
    int x = gain, y = 0;
#pragma unroll
    for(int k = 0; k < ITERS; k++) {
        int d = z >> 31;  // 0 to turn by +atan(2^-k) (z >= 0), -1 to turn back
        int xs = x >> k, ys = y >> k;
        x -= (ys ^ d) - d;
        y += (xs ^ d) - d;
        z -= (CORDIC_ATAN[k] ^ d) - d;
    }
    out[i] = make_int2(x, y);
}

#define CORDIC(N) \
extern "C" __global__ void cordic_##N(const int* __restrict__ angle, int2* __restrict__ out, int n, int gain) \
{ cordic<N>(angle, out, n, gain); }

CORDIC(8)
CORDIC(16)
CORDIC(32)

#define RS_K 8  // data shards

// Reed-Solomon parity: word w of parity shard j is the XOR over data shards i of the GF(2^8) product, byte by byte,
// of word w of shard i and coefficient (j, i), read from that coefficient's 256-byte multiplication table; the
// M x 8 tables staged in shared memory once a block, the words taken in a grid-stride loop (4 bytes a thread)
template<int M>
__device__ __forceinline__ void rs_parity(const unsigned int* __restrict__ data, unsigned int* __restrict__ parity,
                                          const uint4* __restrict__ tables, long long words)
{
    __shared__ uint4 tab4[M * RS_K * 16];
    for(int t = threadIdx.x; t < M * RS_K * 16; t += blockDim.x) tab4[t] = tables[t];
    __syncthreads();
    const unsigned char* tab = reinterpret_cast<const unsigned char*>(tab4);
    for(long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < words;
        w += (long long)gridDim.x * blockDim.x) {
        unsigned int d[RS_K];
#pragma unroll
        for(int i = 0; i < RS_K; i++) d[i] = data[i * words + w];
#pragma unroll
        for(int j = 0; j < M; j++) {
            unsigned int acc = 0u;
#pragma unroll
            for(int i = 0; i < RS_K; i++) {
                const unsigned char* t = tab + (j * RS_K + i) * 256;
                unsigned int v = d[i];
                acc ^= (unsigned int)t[v & 255u] | ((unsigned int)t[(v >> 8) & 255u] << 8)
                     | ((unsigned int)t[(v >> 16) & 255u] << 16) | ((unsigned int)t[v >> 24] << 24);
            }
            parity[j * words + w] = acc;
        }
    }
}

#define RS_PARITY(M) \
extern "C" __global__ void rs_parity_##M(const unsigned int* __restrict__ data, unsigned int* __restrict__ parity, \
                                         const uint4* __restrict__ tables, long long words) \
{ rs_parity<M>(data, parity, tables, words); }

RS_PARITY(2)
RS_PARITY(4)
RS_PARITY(8)
""".replace("@ATAN@", ", ".join(map(str, CORDIC_ATAN)))
_CACHE: dict[str, Any] = {}

AXPY_TYPES = {"cublas.axpy.float": np.float32, "cublas.axpy.double": np.float64, "cublas.axpy.complex": np.complex64}
SPLINE_DEGREES = {"cupyx.bspline.1": 1, "cupyx.bspline.2": 2, "cupyx.bspline.3": 3}
LEGENDRE_DEGREES = {"torch.legendre.8": 8, "torch.legendre.16": 16, "torch.legendre.32": 32}
MARGIN_TARGETS = {"torch.multilabel_margin.4": 4, "torch.multilabel_margin.16": 16, "torch.multilabel_margin.64": 64}
FBM_OCTAVES = {"triton.fbm.1": 1, "triton.fbm.4": 4, "triton.fbm.16": 16}
JACOBI_SWEEPS = {"triton.jacobi3.2": 2, "triton.jacobi3.8": 8, "triton.jacobi3.32": 32}
CORDIC_ITERS = {"cordic.8": 8, "cordic.16": 16, "cordic.32": 32}
RS_PARITY = {"reed_solomon.2": 2, "reed_solomon.4": 4, "reed_solomon.8": 8}
AXPY_ALPHA = 1e-6  # y grows by about 1e-6 a call: no overflow in any run's calls
SPLINE_INTERVALS = 64  # the spline's knot intervals on [0, 1]: a 6-step search, knots and coefficients in L1
MARGIN_CLASSES = 1024
BLOCK = 1024  # Triton elements (points, matrices) a program
RS_K = 8  # Reed-Solomon data shards (the RawKernel's RS_K)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def axpy(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: x read (64 MiB), y read and written (128 MiB): 192 MiB of HBM, about 50-70 us at 2.9-4 TB/s achieved
    # (eval_suite15's dgmm estimated 128 MiB at 40-50 us), plus the launches. One pass: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """y += a x of two vectors of `state.size` bytes each (at least 1,024 values, 0-1, complex with both parts),
        a = 1e-6 from the host, in place by cuBLAS axpy (`cupy.cublas.axpy`: saxpy, daxpy, caxpy)."""
        import cupy.cublas as cublas

        dtype = AXPY_TYPES[op]
        n = max(1024, state.size // np.dtype(dtype).itemsize)
        rng = cp.random.default_rng(state.seed)
        if np.dtype(dtype).kind == "c":
            x = (rng.random(n, dtype=cp.float32) + 1j * rng.random(n, dtype=cp.float32)).astype(dtype)
            y = (rng.random(n, dtype=cp.float32) + 1j * rng.random(n, dtype=cp.float32)).astype(dtype)
        else:
            x = rng.random(n, dtype=cp.float32).astype(dtype)
            y = rng.random(n, dtype=cp.float32).astype(dtype)
        state.set_items(n)
        state.add_reads(dtype, 2 * n)
        state.add_writes(dtype, n)
        return lambda: cublas.axpy(AXPY_ALPHA, x, y)

    return setup


def bspline(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: 8.4 M fp64 points. find_interval: a binary search of 65 knots, 6-7 steps (~63 L1 wavefronts a warp), and
    # 128 MiB of HBM, about 0.07 ms. d_boor keeps h and hh in a global scratch of 2k + 1 doubles a point (k the
    # degree; 24, 40, 56 bytes apart, so a warp's access spans 6, 10, 14 lines): about 90, 300 and 710 L1
    # wavefronts a warp, and 5, 12 and 22 scattered 8-byte stores a point to L2 (1.3, 3.2, 5.9 GB of sectors), so
    # about 0.3, 0.6 and 1.2 ms with the search. A fixed number of knots: fixed work a point, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """A B-spline of degree `SPLINE_DEGREES[op]` on 64 uniform intervals of [0, 1] (end knots repeated, random
        normal coefficients, fp64) evaluated at `state.size` bytes of uniform fp64 points (at least 1,024) by
        `cupyx.scipy.interpolate.BSpline.__call__`: CuPy's find_interval and d_boor kernels, into fresh arrays
        (the constructor's checks, which synchronise, run here in the setup)."""
        from cupyx.scipy.interpolate import BSpline

        k = SPLINE_DEGREES[op]
        n = max(1024, state.size // 8)
        rng = cp.random.default_rng(state.seed)
        knots = cp.concatenate([cp.zeros(k), cp.linspace(0.0, 1.0, SPLINE_INTERVALS + 1), cp.ones(k)])
        spline = BSpline(knots, rng.standard_normal(SPLINE_INTERVALS + k), k)
        x = rng.random(n)
        state.set_items(n)
        state.add_reads(np.float64, 2 * n)  # the points, by each kernel
        state.add_reads(np.int64, n)
        state.add_writes(np.int64, n)  # each point's interval
        state.add_writes(np.float64, n)
        return lambda: spline(x)

    return setup


def legendre(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 16.8 M fp32 values, n - 1 steps each of three int64-to-float conversions (16 a clock an SM on sm_90:
    # the bound, 6 SM cycles a warp-step), a division (MUFU.RCP and its Newton steps) and three multiplies: about
    # 13 us a step over 132 SMs, so about 0.1, 0.2 and 0.45 ms for degree 8, 16, 32 with the launches, the 128 MiB
    # of HBM (45 us) overlapped. A fixed degree: fixed work an element, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """P_n(x) of `state.size` bytes of fp32 x uniform in -1 .. 1 (at least 1,024), n = `LEGENDRE_DEGREES[op]`,
        by `torch.special.legendre_polynomial_p` (the jiterated recurrence (k + 1) P_k+1 = (2k + 1) x P_k - k P_k-1,
        compiled by the warm-up call) into a preallocated output."""
        import torch

        degree = LEGENDRE_DEGREES[op]
        n = max(1024, state.size // 4)
        x = 2 * torch.rand(n, device="cuda", generator=_generator(state)) - 1
        y = torch.empty_like(x)
        state.set_items(n)
        state.add_reads(np.float32, n)
        state.add_writes(np.float32, n)
        return _torch_on_stream(state, lambda: torch.special.legendre_polynomial_p(x, degree, out=y))

    return setup


def multilabel_margin(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 16 k rows of 1,024, one block of 128 threads a row: is_target zeroed and written (64 MiB), then for
    # each of T targets a pass over the row from L1 (two loads, a conversion and about 7 more instructions an
    # element): T x 320 warp instructions a row, 2.5 M an SM for T = 64 at 2.5-4 a clock, so about 0.5 ms;
    # 4 and 16 targets are near the 128 MiB of HBM (45 us) and thread 0's serial marking of the targets. Fixed
    # classes and targets: fixed work a row, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The multi-label hinge loss of each row of 1,024 fp32 scores (standard normal, `state.size` bytes of rows,
        at least 16) against `MARGIN_TARGETS[op]` distinct random target classes (int64, -1 after them), by
        `torch.nn.functional.multilabel_margin_loss(..., reduction="none")`: a loss a row, and is_target."""
        import torch

        targets = MARGIN_TARGETS[op]
        rows = max(16, state.size // (4 * MARGIN_CLASSES))
        gen = _generator(state)
        x = torch.randn((rows, MARGIN_CLASSES), device="cuda", generator=gen)
        order = torch.rand((rows, MARGIN_CLASSES), device="cuda", generator=gen).argsort(dim=1)
        target = torch.full((rows, MARGIN_CLASSES), -1, device="cuda", dtype=torch.int64)
        target[:, :targets] = order[:, :targets]
        del order
        loss = torch.nn.functional.multilabel_margin_loss
        state.set_items(rows * MARGIN_CLASSES)
        state.add_reads(np.float32, rows * MARGIN_CLASSES)
        state.add_reads(np.int64, rows * (targets + 1))
        state.add_writes(np.float32, rows * MARGIN_CLASSES + rows)
        return _torch_on_stream(state, lambda: loss(x, target, reduction="none"))

    return setup


def _fbm_kernel() -> Any:
    if "fbm" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def lattice_hash(ix, iy, salt):  # type: ignore[no-untyped-def]
            h = ix * 0x8DA6B343 + iy * 0xD8163841 + salt  # uint32, wrapping
            h = h ^ (h >> 15)
            h = h * 0x2C1B3C6D
            return h ^ (h >> 12)

        @triton.jit  # type: ignore[untyped-decorator]
        def gradient(h, dx, dy):  # type: ignore[no-untyped-def]
            # the dot product of (dx, dy) with one of the four diagonal gradients (+-1, +-1) that h selects
            return tl.where((h & 1) != 0, -dx, dx) + tl.where((h & 2) != 0, -dy, dy)

        @triton.jit  # type: ignore[untyped-decorator]
        def fbm(xy_ptr, out_ptr, n, OCTAVES: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(xy_ptr + offs, mask=mask, other=0.0)
            y = tl.load(xy_ptr + n + offs, mask=mask, other=0.0)
            total = tl.zeros([BLOCK], dtype=tl.float32)
            amp = tl.full([BLOCK], 0.5, tl.float32)
            for octave in range(OCTAVES):
                salt = octave.to(tl.uint32) * 0x632BE5AB  # an independent lattice an octave
                xf = tl.floor(x)
                yf = tl.floor(y)
                fx = x - xf
                fy = y - yf
                ix = xf.to(tl.uint32)
                iy = yf.to(tl.uint32)
                n00 = gradient(lattice_hash(ix, iy, salt), fx, fy)
                n10 = gradient(lattice_hash(ix + 1, iy, salt), fx - 1.0, fy)
                n01 = gradient(lattice_hash(ix, iy + 1, salt), fx, fy - 1.0)
                n11 = gradient(lattice_hash(ix + 1, iy + 1, salt), fx - 1.0, fy - 1.0)
                u = fx * fx * fx * (fx * (fx * 6.0 - 15.0) + 10.0)  # the quintic fade
                v = fy * fy * fy * (fy * (fy * 6.0 - 15.0) + 10.0)
                near = n00 + u * (n10 - n00)
                far = n01 + u * (n11 - n01)
                total += amp * (near + v * (far - near))
                amp = amp * 0.5
                x = 2.0 * x + 0.37  # twice the frequency, shifted; wrapped to the lattice's 0 .. 1,024
                y = 2.0 * y + 0.71
                x = x - 1024.0 * tl.floor(x * (1.0 / 1024.0))
                y = y - 1024.0 * tl.floor(y * (1.0 / 1024.0))
            tl.store(out_ptr + offs, total, mask=mask)

        _CACHE["fbm"] = fbm
    return _CACHE["fbm"]


def fbm(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 8.4 M points. Triton 3.6 for sm_90 makes an octave loop of about 700 SASS instructions for a thread's
    # 8 points (four lattice hashes, four gradients, two fades, three lerps, floors, the wrap): 300 integer ones
    # (LOP3, IMAD, SHF; 64 a clock an SM) and 380 fp32, about 250 SM cycles a warp-octave, 35 us an octave over 132
    # SMs (104 registers, 16 warps an SM); with the 96 MiB of HBM (35 us) about 0.05, 0.13 and 0.55 ms for 1, 4, 16
    # octaves. A fixed number of octaves: fixed work a point, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """A fractal sum of `FBM_OCTAVES[op]` octaves of 2-D Perlin gradient noise (amplitude halved and frequency
        doubled an octave) at `state.size` bytes of fp32 points (x plane then y plane, uniform in 0 .. 64; at least
        1,024 points), one Triton program of 1,024 points."""
        import torch

        octaves = FBM_OCTAVES[op]
        n = max(1024, state.size // 8)
        xy = 64.0 * torch.rand((2, n), device="cuda", generator=_generator(state))
        out = torch.empty(n, device="cuda")
        kernel = _fbm_kernel()
        grid = (_cdiv(n, BLOCK),)
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        return _torch_on_stream(state, lambda: kernel[grid](xy, out, n, OCTAVES=octaves, BLOCK=BLOCK))

    return setup


def _jacobi_kernel() -> Any:
    if "jacobi" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def rotation(app, aqq, apq, arp, arq):  # type: ignore[no-untyped-def]
            # the plane rotation that zeroes a_pq (t = tan phi, the smaller root; none where a_pq is already zero):
            # the new a_pp, a_qq and the third row's a_rp, a_rq
            theta = (aqq - app) / (2.0 * apq)
            t = 1.0 / (tl.abs(theta) + tl.sqrt(theta * theta + 1.0))
            t = tl.where(theta < 0.0, -t, t)
            t = tl.where(apq == 0.0, 0.0, t)
            c = 1.0 / tl.sqrt(t * t + 1.0)
            s = t * c
            return app - t * apq, aqq + t * apq, c * arp - s * arq, s * arp + c * arq

        @triton.jit  # type: ignore[untyped-decorator]
        def jacobi3(a_ptr, out_ptr, n, SWEEPS: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            a00 = tl.load(a_ptr + offs, mask=mask, other=1.0)
            a11 = tl.load(a_ptr + n + offs, mask=mask, other=2.0)
            a22 = tl.load(a_ptr + 2 * n + offs, mask=mask, other=3.0)
            a01 = tl.load(a_ptr + 3 * n + offs, mask=mask, other=0.0)
            a02 = tl.load(a_ptr + 4 * n + offs, mask=mask, other=0.0)
            a12 = tl.load(a_ptr + 5 * n + offs, mask=mask, other=0.0)
            for _sweep in range(SWEEPS):
                a00, a11, a02, a12 = rotation(a00, a11, a01, a02, a12)  # (p, q) = (0, 1), r = 2
                a01 = tl.zeros_like(a01)
                a00, a22, a01, a12 = rotation(a00, a22, a02, a01, a12)  # (0, 2), r = 1
                a02 = tl.zeros_like(a02)
                a11, a22, a01, a02 = rotation(a11, a22, a12, a01, a02)  # (1, 2), r = 0
                a12 = tl.zeros_like(a12)
            low = tl.minimum(tl.minimum(a00, a11), a22)
            high = tl.maximum(tl.maximum(a00, a11), a22)
            tl.store(out_ptr + offs, low, mask=mask)
            tl.store(out_ptr + n + offs, a00 + a11 + a22 - low - high, mask=mask)
            tl.store(out_ptr + 2 * n + offs, high, mask=mask)

        _CACHE["jacobi"] = jacobi3
    return _CACHE["jacobi"]


def jacobi3(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 2.8 M matrices. Triton 3.6 for sm_90 makes a sweep loop of about 1,100 SASS instructions for a
    # thread's 8 matrices (three rotations of 5 MUFU each: two divisions, two square roots, a reciprocal; FSETP and
    # FMUL of div.full's range checks): about 300 SM cycles a warp-sweep, issue- and MUFU-bound, 14 us a sweep over
    # 132 SMs; with 96 MiB of HBM (35 us) about 0.05, 0.12 and 0.45 ms for 2, 8, 32 sweeps (converged after about
    # 5; later sweeps cost the same). Fixed sweeps: fixed work a matrix, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The eigenvalues, in ascending order, of symmetric 3 x 3 fp32 matrices (standard normal entries, the six
        distinct ones in planes, `state.size` bytes of them, at least 1,024 matrices) by `JACOBI_SWEEPS[op]`
        cyclic Jacobi sweeps (rotations in the planes (0, 1), (0, 2), (1, 2)), one Triton program of 1,024."""
        import torch

        sweeps = JACOBI_SWEEPS[op]
        n = max(1024, state.size // 24)
        a = torch.randn((6, n), device="cuda", generator=_generator(state))
        out = torch.empty((3, n), device="cuda")
        kernel = _jacobi_kernel()
        grid = (_cdiv(n, BLOCK),)
        state.set_items(n)
        state.add_reads(np.float32, 6 * n)
        state.add_writes(np.float32, 3 * n)
        return _torch_on_stream(state, lambda: kernel[grid](a, out, n, SWEEPS=sweeps, BLOCK=BLOCK))

    return setup


def cordic(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: 16.8 M angles; nvcc 13.0 for sm_90 makes 95, 179 and 346 SASS instructions of the three kernels
    # (about 10.5 integer ones a rotation: LOP3, SHF, IADD3, IMAD, LEA at 64 a clock an SM; 14 registers), so about
    # 50, 90 and 165 SM cycles a warp: 0.11, 0.2 and 0.37 ms of issue over 132 SMs at 1.75 GHz for 8, 16, 32
    # rotations, against 192 MiB of HBM (the angles read, (cos, sin) pairs written: 65 us). Fixed rotations: fixed
    # work an angle, linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """The cosine and sine (Q2.30 int32 pairs) of `state.size` bytes of int32 angles uniform in -pi/2 .. pi/2
        (Q2.30; at least 1,024), by `CORDIC_ITERS[op]` CORDIC rotations from (1 / K, 0), one RawKernel thread an
        angle, into a preallocated array."""
        iters = CORDIC_ITERS[op]
        kernel = _module(cp).get_function(f"cordic_{iters}")
        gain = round(2**30 * math.prod(1.0 / math.sqrt(1.0 + 4.0 ** -k) for k in range(iters)))
        n = max(1024, state.size // 4)
        bound = round(math.pi / 2 * 2**30)
        angles = ((2 * cp.random.default_rng(state.seed).random(n) - 1) * bound).astype(cp.int32)
        out = cp.empty((n, 2), dtype=cp.int32)
        blocks = _cdiv(n, 256)
        state.set_items(n)
        state.add_reads(np.int32, n)
        state.add_writes(np.int32, 2 * n)
        return lambda: kernel((blocks,), (256,), (angles, out, np.int32(n), np.int32(gain)))

    return setup


def _gf_mul_tables(parity: int) -> np.ndarray:
    """The 256-byte GF(2^8) multiplication table (polynomial 0x11d) of each coefficient alpha^(i (j + 1)), parity
    shard j and data shard i: a Vandermonde code's encoding matrix, `parity` x 8 x 256 bytes."""
    exp = np.zeros(510, dtype=np.int64)
    log = np.zeros(256, dtype=np.int64)
    v = 1
    for e in range(255):
        exp[e] = v
        log[v] = e
        v <<= 1
        if v & 0x100:
            v ^= 0x11D
    exp[255:] = exp[:255]
    tables = np.zeros((parity, RS_K, 256), dtype=np.uint8)
    for j in range(parity):
        for i in range(RS_K):
            tables[j, i, 1:] = exp[log[1:] + (i * (j + 1)) % 255]
    return tables


def reed_solomon(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: each byte looked up once a parity shard in a 256-byte shared table (at most 2-way bank conflicts):
    # nvcc 13.0 for sm_90 makes loops of 64, 128 and 256 LDS (and 48-192 PRMT) a word; 2.1 M words, 496 warp-words
    # an SM, so about 35, 70 and 145 us of shared memory at 1.75 GHz, against 64 MiB read and 16, 32, 64 MiB
    # written (30-45 us): about 0.05, 0.1 and 0.2 ms for 2, 4, 8 parity shards. Fixed shards: fixed work a word,
    # linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """`RS_PARITY[op]` Reed-Solomon parity shards of 8 data shards of random bytes (`state.size` bytes together,
        at least 1,024 bytes a shard), GF(2^8) with the tables of `_gf_mul_tables` staged in shared memory, one
        RawKernel thread a 4-byte word in a grid-stride loop of 4 blocks of 256 an SM (all resident at 56
        registers), into preallocated shards."""
        parity = RS_PARITY[op]
        kernel = _module(cp).get_function(f"rs_parity_{parity}")
        words = max(256, state.size // (4 * RS_K))
        rng = cp.random.default_rng(state.seed)
        data = rng.integers(0, 256, (RS_K, 4 * words), dtype=cp.int32).astype(cp.uint8).view(cp.uint32)
        tables = cp.asarray(_gf_mul_tables(parity))
        out = cp.empty((parity, words), dtype=cp.uint32)
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        blocks = min(_cdiv(words, 256), 4 * sms)
        state.set_items(RS_K * 4 * words)
        state.add_reads(np.uint8, RS_K * 4 * words)
        state.add_writes(np.uint8, parity * 4 * words)
        return lambda: kernel((blocks,), (256,), (data, out, tables, np.int64(words)))

    return setup


KERNELS = (
    ("cublas.axpy.float", "float"), ("cublas.axpy.double", "double"), ("cublas.axpy.complex", "complex float"),
    ("cupyx.bspline.1", "double"), ("cupyx.bspline.2", "double"), ("cupyx.bspline.3", "double"),
    ("torch.legendre.8", "float"), ("torch.legendre.16", "float"), ("torch.legendre.32", "float"),
    ("torch.multilabel_margin.4", "float"), ("torch.multilabel_margin.16", "float"),
    ("torch.multilabel_margin.64", "float"),
    ("triton.fbm.1", "float"), ("triton.fbm.4", "float"), ("triton.fbm.16", "float"),
    ("triton.jacobi3.2", "float"), ("triton.jacobi3.8", "float"), ("triton.jacobi3.32", "float"),
    ("cordic.8", "int"), ("cordic.16", "int"), ("cordic.32", "int"),
    ("reed_solomon.2", "uint8"), ("reed_solomon.4", "uint8"), ("reed_solomon.8", "uint8"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    **{op: axpy(op) for op in AXPY_TYPES},
    **{op: bspline(op) for op in SPLINE_DEGREES},
    **{op: legendre(op) for op in LEGENDRE_DEGREES},
    **{op: multilabel_margin(op) for op in MARGIN_TARGETS},
    **{op: fbm(op) for op in FBM_OCTAVES},
    **{op: jacobi3(op) for op in JACOBI_SWEEPS},
    **{op: cordic(op) for op in CORDIC_ITERS},
    **{op: reed_solomon(op) for op in RS_PARITY},
}


Kernel = suite_kernel("eval16", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
