"""The fifteenth evaluation suite of issue "Verdicts that speak", written on 2026-12-07 for the fifteenth evaluation
(`eval15-plan.md`), after compare's method and the default protocol (`--processes 8 --runs 2 --rounds 2 --min-secs
0.25`, `primbench.settings.DEFAULT_DESIGN`) were frozen at 3613b79, and before any of its data existed: eight kinds
used by none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ... `eval_suite14.py`, the pilots
or the probes, each in three variants, so that a run holds 24 specializations, and no copy kernel.

The kinds, library calls first: a diagonal scaling of a matrix's columns (`cupy.cublas.dgmm`, cuBLAS dgmm: C = A
diag(x)) in fp32, fp64 and complex64; a 64-bit Sobol quasi-random sequence from cuRAND's host API
(`cupy.cuda.curand`: raw 64-bit integers, scrambled raw integers, uniform doubles); a reduction over segments of
varying length (`torch.segment_reduce(..., "max", offsets=...)`, CUB's `DeviceSegmentedReduce` for 1-D data) with
segments of about 64, 512 and 4,096 values; the mode of each row of int32 values (`torch.mode(dim=1)`, one thread
block a row: a bitonic sort in shared memory, a segmented scan of the runs, a block arg-max) over rows of 128, 1,024
and 2,048; a Triton solver of Kepler's equation E - e sin E = M by 4, 8 and 16 Newton steps; a Triton bilinear
demosaicing of an RGGB Bayer mosaic into three planes (uint8, 12-bit int16 and fp32 samples); and two RawKernels: a
look-up of every key of an open-addressing hash table by linear probing (tables 50, 75 and 90 % full) and an
exhaustive block-matching motion search (the 8 x 8 block of a reference frame with the least sum of absolute byte
differences, `__vsadu4`, within +-1, +-2 and +-4 pixels).

Why they are new (`grep -il` over eval_suite.py ... eval_suite14.py, ../variance/tuning_suite.py, probe*.py,
wall_suite.py, clock_probe.py and h200_*.sh finds none of dgmm, sobol, quasi, segment, torch.mode, kepler, newton,
demosaic, bayer, probing, vsad or motion): the suites' cuBLAS calls were GEMM (S, D, fp16 batched, int8), GEMV (S,
Z), trsm, ger, syrk, geam and sbmv, never dgmm; their generators were cuRAND's XORWOW uniform (the fourth), Philox
normals (`torch.randn`), `tl.rand` and `torch.poisson`, never a quasi-random sequence; their reductions were over a
whole array (CUB sum, `torch.sum`, sum of squares, argmax) or over rows of one length (logsumexp, norms), never
over segments of varying length; their sorts and selections (`cp.sort`, bitonic tiles, `torch.median`, `topk`)
never counted runs for a mode; their loops per element (Mandelbrot, integrate-and-fire, gcd, Miller-Rabin) never
solved an equation by Newton's method; their image kernels (stencil, Gaussian and median filters, YCbCr, bicubic
downscale, Game of Life) never demosaiced a colour filter array; their hashes (MurmurHash3's finaliser, CRC-32,
S-box, ChaCha) computed a hash and never probed a table; and their byte arithmetic (`__dp4a`, popcount, Levenshtein)
never searched for a least sum of absolute differences.

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; the work of every
kind is linear in it (one pass, or a fixed amount of work per element, block, segment, row or key); every setup is
outside the timed call, and no timed call synchronises the host. Before any GPU ran it, its RawKernels were built
by nvcc 13.0 and its Triton kernels by Triton 3.6, both for sm_90, on a machine without a GPU; nothing else of it
has run.

**Estimated time a call at 64 MiB** on an H100 or H200 (3.3-4.8 TB/s, about 60 TFLOP/s fp32), written before any
measurement, the tail kernel's launch included; each setup's comment says how it was reached. After the
fourteenth's cuBLAS sbmv (7.2 s a call at 64 MiB), no kind here is superlinear in the size or latency-bound along
it, and none is expected above 2 ms at 64 MiB (nor, with the tail kernel's launch, below about 7 us at 64 KiB):

    cublas.dgmm.float / .double / .complex             0.05 / 0.05 / 0.05 ms
    curand.sobol64 / _scrambled / _double              0.05 / 0.05 / 0.07 ms
    torch.segment_reduce.64 / .512 / .4096             0.3 / 0.06 / 0.04 ms
    torch.mode.128 / .1024 / .2048                     0.25 / 0.55 / 0.55 ms
    triton.kepler.4 / .8 / .16                         0.1 / 0.2 / 0.35 ms
    triton.demosaic.uint8 / .int16 / .float            0.15 / 0.12 / 0.1 ms
    hash_probe.50 / .75 / .90                          0.1 / 0.2 / 0.35 ms
    block_match.1 / .2 / .4                            0.03 / 0.06 / 0.15 ms

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call that spins for ``PRIMBENCH_EVAL_PLANT[name]`` SM cycles, which `collect.py --planted ... --plant-fractions
... --plant-step ...` sets from the A/A runs).

    python tests/benchmarks/verdicts/eval_suite15.py --size 64MiB --json-out aa-1.json
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

SUMMARY = ("diagonal scaling (cuBLAS dgmm; fp32, fp64, complex64), 64-bit Sobol sequence (cuRAND; raw, scrambled, "
           "doubles), segmented max (torch.segment_reduce, CUB; segments of 64, 512, 4,096), row mode (torch.mode; "
           "rows of 128, 1,024, 2,048), Triton Kepler solver (4, 8, 16 Newton steps), Triton Bayer demosaic (uint8, "
           "int16, fp32), hash-table look-ups by linear probing (50, 75, 90 % full), block-matching motion search "
           "(+-1, +-2, +-4): 24 specializations, no copy kernel, no kind of the tuning suite or of eval_suite.py ... "
           "eval_suite14.py")

RAW = r"""
#define PAD 8  // the reference frame's border, in pixels, on every side (at least the largest search radius)

__device__ __forceinline__ unsigned int fmix32(unsigned int h)
{
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}

// key i (non-zero) into an open-addressing table of mask + 1 slots (key, value), linear probing from its hash
extern "C" __global__ void hash_insert(unsigned int* __restrict__ table, const unsigned int* __restrict__ keys, int n,
                                       unsigned int mask)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int key = keys[i];
    unsigned int slot = fmix32(key) & mask;
    while(true) {
        unsigned int prev = atomicCAS(&table[2 * slot], 0u, key);
        if(prev == 0u || prev == key) { table[2 * slot + 1] = key ^ 0x5bd1e995u; return; }
        slot = (slot + 1) & mask;
    }
}

// the value of each query (0xffffffff when absent): linear probing from its hash to its key or an empty slot
extern "C" __global__ void hash_lookup(const uint2* __restrict__ table, const unsigned int* __restrict__ queries,
                                       unsigned int* __restrict__ values, int n, unsigned int mask)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int key = queries[i];
    unsigned int slot = fmix32(key) & mask;
    unsigned int value = 0xffffffffu;
    while(true) {
        uint2 e = table[slot];
        if(e.x == key) { value = e.y; break; }
        if(e.x == 0u) break;
        slot = (slot + 1) & mask;
    }
    values[i] = value;
}

// exhaustive block matching: for each 8 x 8 block of `cur` (width x rows, width a multiple of 16), the displacement
// (dy, dx) in [-R, R]^2 (R <= 4) of the 8 x 8 block of `ref` (the same frame with PAD pixels on every side, `pitch`
// bytes a row) with the least sum of absolute differences, and that sum; one thread a block, four bytes at a time
template<int R>
__device__ __forceinline__ void block_match(const unsigned char* __restrict__ cur,
                                            const unsigned char* __restrict__ ref, unsigned int* __restrict__ best_sad,
                                            int* __restrict__ best_mv, int blocks_x, int blocks, int width, int pitch)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if(b >= blocks) return;
    int by = b / blocks_x;
    int x0 = (b - by * blocks_x) * 8, y0 = by * 8;
    unsigned int c[16];
#pragma unroll
    for(int r = 0; r < 8; r++) {
        uint2 w = *reinterpret_cast<const uint2*>(cur + (size_t)(y0 + r) * width + x0);
        c[2 * r] = w.x;
        c[2 * r + 1] = w.y;
    }
    unsigned int best = 0xffffffffu;
    int mv = 0;
#pragma unroll 1
    for(int dy = -R; dy <= R; dy++) {
        unsigned int sad[2 * R + 1];
#pragma unroll
        for(int k = 0; k <= 2 * R; k++) sad[k] = 0u;
#pragma unroll
        for(int r = 0; r < 8; r++) {
            // the reference row's bytes x0 - 4 .. x0 + 15 (word-aligned), displaced by dy
            const unsigned int* row = reinterpret_cast<const unsigned int*>(
                ref + (size_t)(y0 + PAD + dy + r) * pitch + x0 + PAD - 4);
            unsigned int w[5];
#pragma unroll
            for(int k = 0; k < 5; k++) w[k] = __ldg(row + k);
#pragma unroll
            for(int dx = -R; dx <= R; dx++) {
                const int o = dx + 4, k = o >> 2, s = (o & 3) * 8;  // bytes o .. o + 7 of the window
                unsigned int lo = __funnelshift_r(w[k], w[k + 1], s);
                unsigned int hi = __funnelshift_r(w[k + 1], w[k + 2], s);
                sad[dx + R] += __vsadu4(lo, c[2 * r]) + __vsadu4(hi, c[2 * r + 1]);
            }
        }
#pragma unroll
        for(int dx = -R; dx <= R; dx++) {
            if(sad[dx + R] < best) { best = sad[dx + R]; mv = ((dy + 128) << 8) | (dx + 128); }
        }
    }
    best_sad[b] = best;
    best_mv[b] = mv;
}

#define BLOCK_MATCH(R) \
extern "C" __global__ void block_match_##R(const unsigned char* __restrict__ cur, \
                                           const unsigned char* __restrict__ ref, unsigned int* __restrict__ best_sad, \
                                           int* __restrict__ best_mv, int blocks_x, int blocks, int width, int pitch) \
{ block_match<R>(cur, ref, best_sad, best_mv, blocks_x, blocks, width, pitch); }

BLOCK_MATCH(1)
BLOCK_MATCH(2)
BLOCK_MATCH(4)
"""
_CACHE: dict[str, Any] = {}

DGMM_TYPES = {"cublas.dgmm.float": np.float32, "cublas.dgmm.double": np.float64, "cublas.dgmm.complex": np.complex64}
SOBOL = {"curand.sobol64": ("CURAND_RNG_QUASI_SOBOL64", np.uint64),
         "curand.sobol64_scrambled": ("CURAND_RNG_QUASI_SCRAMBLED_SOBOL64", np.uint64),
         "curand.sobol64_double": ("CURAND_RNG_QUASI_SOBOL64", np.float64)}  # generator, output
SEGMENT_MEAN = {"torch.segment_reduce.64": 64, "torch.segment_reduce.512": 512, "torch.segment_reduce.4096": 4096}
MODE_ROWS = {"torch.mode.128": 128, "torch.mode.1024": 1024, "torch.mode.2048": 2048}  # fused kernel sizes
KEPLER_STEPS = {"triton.kepler.4": 4, "triton.kepler.8": 8, "triton.kepler.16": 16}
DEMOSAIC_TYPES = {"triton.demosaic.uint8": ("uint8", 256), "triton.demosaic.int16": ("int16", 4096),
                  "triton.demosaic.float": ("float32", 0)}  # dtype, integer samples' exclusive bound (0: floats)
HASH_LOAD = {"hash_probe.50": 0.50, "hash_probe.75": 0.75, "hash_probe.90": 0.90}  # keys a slot
SEARCH_RADIUS = {"block_match.1": 1, "block_match.2": 2, "block_match.4": 4}
BLOCK = 1024  # Kepler's elements a program
DEMOSAIC_BLOCK = 256  # demosaicing: 2 x 2 quads a program, along one row of quads
FRAME_PAD = 8  # block matching: the reference frame's border (the RawKernel's PAD)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def dgmm(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: A read once (64 MiB) and C written once (64 MiB), elementwise: about 40-50 us of HBM at 2.7-3.3 TB/s
    # achieved, plus the launches; eval_suite13's cuBLAS geam moved 96 MiB in 42 us a call there. One pass: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """C = A diag(x) of a square C-ordered A of `state.size` bytes (at least 32 x 32) and a vector x of 0.5-1.5,
        by cuBLAS dgmm (`cupy.cublas.dgmm`, side R: sdgmm, ddgmm, cdgmm) into a preallocated C."""
        import cupy.cublas as cublas

        dtype = DGMM_TYPES[op]
        n = max(32, math.isqrt(state.size // np.dtype(dtype).itemsize))
        rng = cp.random.default_rng(state.seed)
        a = rng.random((n, n), dtype=cp.float32).astype(dtype)
        x = (0.5 + rng.random(n, dtype=cp.float32)).astype(dtype)
        c = cp.empty((n, n), dtype=dtype)
        state.set_items(n * n)
        state.add_reads(dtype, n * n + n)
        state.add_writes(dtype, n * n)
        return lambda: cublas.dgmm("R", a, x, out=c)

    return setup


def sobol(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: 8.4 M 64-bit values written (64 MiB), each from the previous by one XOR of a direction vector (Gray
    # code): write-bound, about 30-70 us (eval_suite4's cuRAND XORWOW uniform wrote 64 MiB in 69 us a call on an
    # H200). A fixed cost a value: linear. 64-bit, so that the sequence (2^64 points) never wraps within a process.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """`state.size` bytes (at least 1,024 values) of one-dimensional Sobol points from a cuRAND quasi-random
        generator on the harness stream: raw 64-bit integers (plain or scrambled) or uniform doubles, continuing
        the sequence from call to call; the direction vectors uploaded by a first call before the timed ones."""
        from cupy.cuda import curand

        kind, dtype = SOBOL[op]
        if op not in _CACHE:
            _CACHE[op] = curand.createGenerator(getattr(curand, kind))
        gen = _CACHE[op]
        curand.setStream(gen, state.stream.ptr)
        n = max(1024, state.size // 8)
        out = cp.empty(n, dtype=dtype)
        generate = curand.generateLongLong if dtype == np.uint64 else curand.generateUniformDouble
        generate(gen, out.data.ptr, n)  # the first call sets the generator up
        state.set_items(n)
        state.add_writes(dtype, n)
        return lambda: generate(gen, out.data.ptr, n)

    return setup


def segment_reduce(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 16.8 M fp32 values in about 262 k, 33 k or 4.1 k segments, one CUB thread block a segment: the short
    # segments cost a block's start, load and reduction each (about 1-2 us, 8 blocks an SM at once: 0.2-0.5 ms for
    # 64), the long ones are HBM-bound (64 MiB read: 25-50 us); plus the offsets' difference kernel. Fixed work a
    # value and a segment: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The maximum of each segment of `state.size` bytes of standard normal fp32 values (at least 4,096 values
        and 4 segments), segment lengths uniform in L/2 .. 3L/2 - 1 (L = `SEGMENT_MEAN[op]`), given as int64
        offsets, by `torch.segment_reduce(..., "max", offsets=...)` (CUB's DeviceSegmentedReduce for 1-D data)."""
        import torch

        mean = SEGMENT_MEAN[op]
        count = max(4, max(4096, state.size // 4) // mean)
        lengths = np.random.default_rng(state.seed).integers(mean // 2, mean + mean // 2, count)
        bounds = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        n = int(bounds[-1])
        data = torch.randn(n, device="cuda", generator=_generator(state))
        offsets = torch.as_tensor(bounds, device="cuda")
        state.set_items(n)
        state.add_reads(np.float32, n)
        state.add_reads(np.int64, 2 * (count + 1))
        state.add_writes(np.float32, count)
        state.add_writes(np.int64, count)  # the segments' lengths, the offsets' difference
        return _torch_on_stream(state, lambda: torch.segment_reduce(data, "max", offsets=offsets, unsafe=True))

    return setup


def mode(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 131 k, 16 k or 8 k rows, one block a row (`compute_mode<T, 128 / 1024 / 2048>`): a bitonic sort of 28,
    # 55 or 66 stages in shared memory, a segmented scan and two block reductions. Shared-memory bound: about 0.2,
    # 4.5 and 8.5 us of an SM a row, so about 0.25, 0.55 and 0.55 ms over 132 SMs. Fixed work a row: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The most frequent value (and an index of it) of each row of `MODE_ROWS[op]` int32 values, uniform in 0 ..
        row / 8 - 1 (about 8 copies of each), `state.size` bytes of rows (at least 4), by `torch.mode(dim=1)` into
        preallocated outputs (the fused kernel: one block a row of at most 2,048)."""
        import torch

        row = MODE_ROWS[op]
        rows = max(4, state.size // (4 * row))
        x = torch.randint(0, row // 8, (rows, row), device="cuda", generator=_generator(state), dtype=torch.int32)
        values = torch.empty(rows, device="cuda", dtype=torch.int32)
        indices = torch.empty(rows, device="cuda", dtype=torch.int64)
        state.set_items(rows * row)
        state.add_reads(np.int32, 2 * rows * row)  # the row, then again to find the mode's index
        state.add_writes(np.int32, rows)
        state.add_writes(np.int64, rows)
        return _torch_on_stream(state, lambda: torch.mode(x, dim=1, out=(values, indices)))

    return setup


def _kepler_kernel() -> Any:
    if "kepler" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def kepler(m_ptr, e_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            m = tl.load(m_ptr + offs, mask=mask, other=0.0)
            e = tl.load(e_ptr + offs, mask=mask, other=0.0)
            ea = tl.where(e > 0.8, 3.141592653589793, m)  # the usual start: M, or pi when the orbit is eccentric
            for _step in range(STEPS):
                f = ea - e * tl.sin(ea) - m
                ea = ea - f / (1.0 - e * tl.cos(ea))
            tl.store(out_ptr + offs, ea, mask=mask)

        _CACHE["kepler"] = kepler
    return _CACHE["kepler"]


def kepler(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: 8.4 M anomalies, 4, 8 or 16 Newton steps of a sine, a cosine and a division each (libdevice's sinf
    # and cosf fast paths and div.full.f32 in the PTX Triton 3.6 makes for sm_90: about 80 instructions a step):
    # 2.7, 5.4, 10.7 G instructions at about 30 T a second, so 0.1, 0.2 and 0.35 ms, compute-bound (its 96 MiB of
    # HBM traffic take 30 us). A fixed number of steps an element: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The eccentric anomaly E of each pair of mean anomaly M (uniform in 0 .. 2 pi) and eccentricity e
        (uniform in 0 .. 0.95), fp32, `state.size` bytes of pairs (at least 1,024), by `KEPLER_STEPS[op]` Newton
        steps on E - e sin E = M from E = M (E = pi for e > 0.8), one Triton program of 1,024 elements."""
        import torch

        steps = KEPLER_STEPS[op]
        n = max(1024, state.size // 8)
        gen = _generator(state)
        m = 2 * math.pi * torch.rand(n, device="cuda", generator=gen)
        e = 0.95 * torch.rand(n, device="cuda", generator=gen)
        out = torch.empty_like(m)
        kernel = _kepler_kernel()
        grid = (_cdiv(n, BLOCK),)
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        return _torch_on_stream(state, lambda: kernel[grid](m, e, out, n, STEPS=steps, BLOCK=BLOCK))

    return setup


def _demosaic_kernel() -> Any:
    if "demosaic" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def demosaic(m_ptr, out_ptr, H, W, ROUND: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            # one row of 2 x 2 quads (R G / G B) a program: rows y - 1 .. y + 2 and columns x - 1 .. x + 2 around
            # each quad, mirrored at the edges (-1 -> 1, H -> H - 2), which keeps the colour of each site
            y = 2 * tl.program_id(0)
            x = 2 * (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK))
            mask = x < W
            up = m_ptr + tl.abs(y - 1) * W
            r0 = m_ptr + y * W
            r1 = r0 + W
            down = m_ptr + tl.minimum(y + 2, 2 * H - 4 - y) * W
            left = tl.abs(x - 1)
            right = tl.minimum(x + 2, 2 * W - 4 - x)
            m00 = tl.load(up + left, mask=mask, other=0).to(tl.float32)
            m01 = tl.load(up + x, mask=mask, other=0).to(tl.float32)
            m02 = tl.load(up + x + 1, mask=mask, other=0).to(tl.float32)
            m10 = tl.load(r0 + left, mask=mask, other=0).to(tl.float32)
            m11 = tl.load(r0 + x, mask=mask, other=0).to(tl.float32)
            m12 = tl.load(r0 + x + 1, mask=mask, other=0).to(tl.float32)
            m13 = tl.load(r0 + right, mask=mask, other=0).to(tl.float32)
            m20 = tl.load(r1 + left, mask=mask, other=0).to(tl.float32)
            m21 = tl.load(r1 + x, mask=mask, other=0).to(tl.float32)
            m22 = tl.load(r1 + x + 1, mask=mask, other=0).to(tl.float32)
            m23 = tl.load(r1 + right, mask=mask, other=0).to(tl.float32)
            m31 = tl.load(down + x, mask=mask, other=0).to(tl.float32)
            m32 = tl.load(down + x + 1, mask=mask, other=0).to(tl.float32)
            m33 = tl.load(down + right, mask=mask, other=0).to(tl.float32)
            ty = out_ptr.dtype.element_ty
            red = out_ptr + y * W + x
            green = red + H * W
            blue = green + H * W
            # the red site (y, x): green from its 4 neighbours, blue from its 4 diagonals
            tl.store(red, (m11 + ROUND).to(ty), mask=mask)
            tl.store(green, (0.25 * (m01 + m21 + m10 + m12) + ROUND).to(ty), mask=mask)
            tl.store(blue, (0.25 * (m00 + m02 + m20 + m22) + ROUND).to(ty), mask=mask)
            # the green site (y, x + 1) of a red row: red from left and right, blue from above and below
            tl.store(red + 1, (0.5 * (m11 + m13) + ROUND).to(ty), mask=mask)
            tl.store(green + 1, (m12 + ROUND).to(ty), mask=mask)
            tl.store(blue + 1, (0.5 * (m02 + m22) + ROUND).to(ty), mask=mask)
            # the green site (y + 1, x) of a blue row: red from above and below, blue from left and right
            tl.store(red + W, (0.5 * (m11 + m31) + ROUND).to(ty), mask=mask)
            tl.store(green + W, (m21 + ROUND).to(ty), mask=mask)
            tl.store(blue + W, (0.5 * (m20 + m22) + ROUND).to(ty), mask=mask)
            # the blue site (y + 1, x + 1): green from its 4 neighbours, red from its 4 diagonals
            tl.store(red + W + 1, (0.25 * (m11 + m13 + m31 + m33) + ROUND).to(ty), mask=mask)
            tl.store(green + W + 1, (0.25 * (m12 + m32 + m21 + m23) + ROUND).to(ty), mask=mask)
            tl.store(blue + W + 1, (m22 + ROUND).to(ty), mask=mask)

        _CACHE["demosaic"] = demosaic
    return _CACHE["demosaic"]


def demosaic(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    # 64 MiB: the mosaic read once (64 MiB; its 4 x 4 neighbourhoods from L1 / L2) and three planes written (192
    # MiB): about 85-100 us of HBM, more for bytes (64 M pixels of uint8 against 16 M of fp32: about 150, 120 and
    # 100 us). A fixed stencil a pixel: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """Bilinear demosaicing of a square RGGB Bayer mosaic of `state.size` bytes (an even side, at least 64) of
        uint8, 12-bit int16 or fp32 samples into three planes (R, G, B) of the same type, integers rounded, the
        edges mirrored; one Triton program a row of 256 quads."""
        import torch

        name, bound = DEMOSAIC_TYPES[op]
        dtype = getattr(torch, name)
        itemsize = torch.tensor([], dtype=dtype).element_size()
        side = max(64, math.isqrt(state.size // itemsize)) // 2 * 2
        gen = _generator(state)
        if bound:
            mosaic = torch.randint(0, bound, (side, side), device="cuda", generator=gen, dtype=dtype)
        else:
            mosaic = torch.rand((side, side), device="cuda", generator=gen)
        out = torch.empty((3, side, side), device="cuda", dtype=dtype)
        kernel = _demosaic_kernel()
        grid = (side // 2, _cdiv(side // 2, DEMOSAIC_BLOCK))
        rounding = 0.5 if bound else 0.0
        storage = {"uint8": np.uint8, "int16": np.int16, "float32": np.float32}[name]
        state.set_items(side * side)
        state.add_reads(storage, side * side)
        state.add_writes(storage, 3 * side * side)
        return _torch_on_stream(state, lambda: kernel[grid](mosaic, out, side, side, ROUND=rounding,
                                                            BLOCK=DEMOSAIC_BLOCK))

    return setup


def hash_probe(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: 8 M slots; 4.2, 6.3 or 7.5 M look-ups of 1.5, 2.5 or 5.5 expected probes (linear probing, successful
    # search), consecutive probes mostly in one 32-byte sector: about 1.1, 1.4 and 2.1 random sectors a look-up,
    # 0.15-0.5 GB of random reads at 1.5-2.5 TB/s, so about 0.1, 0.2 and 0.35 ms. A fixed expected number of probes
    # a key at a fixed load: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Look up every key of an open-addressing hash table of (key, value) uint32 pairs, `state.size` bytes of
        slots rounded down to a power of two (at least 1,024 slots), filled to `HASH_LOAD[op]` by a RawKernel of
        atomicCAS inserts (keys i x 0x9E3779B1, distinct and non-zero; slot MurmurHash3's finaliser), then
        queried in a strided order by a RawKernel, one thread a key, linear probing to the key, into a
        preallocated array of values."""
        module = _module(cp)
        slots = 1 << (max(1024, state.size // 8).bit_length() - 1)
        mask = np.uint32(slots - 1)
        k = int(slots * HASH_LOAD[op])
        keys = ((cp.arange(1, k + 1, dtype=cp.uint64) * 0x9E3779B1) % (1 << 32)).astype(cp.uint32)
        table = cp.zeros(2 * slots, dtype=cp.uint32)
        blocks = (k + 255) // 256
        module.get_function("hash_insert")((blocks,), (256,), (table, keys, np.int32(k), mask))
        order = (cp.arange(k, dtype=cp.uint64) * 2147483647) % k  # a prime above k: a permutation of 0 .. k - 1
        queries = keys[order.astype(cp.int64)]
        values = cp.empty(k, dtype=cp.uint32)
        lookup = module.get_function("hash_lookup")
        state.set_items(k)
        state.add_reads(np.uint32, 3 * k)  # the queries, and each key's (key, value) slot
        state.add_writes(np.uint32, k)
        return lambda: lookup((blocks,), (256,), (table, queries, values, np.int32(k), mask))

    return setup


def block_match(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    # 64 MiB: two 5,792-square frames, 524 k blocks of 8 x 8, each against 9, 25 or 81 candidates (8 rows of two
    # funnel shifts and two `__vsadu4` each). nvcc 13.0 for sm_90 makes 328, 408 and 536 SASS instructions of the
    # three kernels (the dy loop rolled; no spills, 48-63 registers), about 0.8, 1.7 and 4.1 k executed a thread:
    # 13, 28 and 67 M warp instructions at about 1 T a second, so 0.03, 0.06 and 0.15 ms with the launches (0.3 if
    # VABSDIFF4 issues at a quarter rate); the frames' 64 MiB are read about once (20 us). Fixed work a block: linear.
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """Exhaustive block matching within +-`SEARCH_RADIUS[op]` pixels: a current and a reference uint8 frame,
        `state.size` bytes together (a side that is a multiple of 16, at least 64), the current frame the reference
        displaced by (1, -2); for each 8 x 8 block the displacement of least sum of absolute differences and that
        sum, one RawKernel thread a block."""
        radius = SEARCH_RADIUS[op]
        kernel = _module(cp).get_function(f"block_match_{radius}")
        side = max(64, math.isqrt(state.size // 2)) // 16 * 16
        pitch = side + 2 * FRAME_PAD
        rng = cp.random.default_rng(state.seed)
        ref = rng.integers(0, 256, (pitch, pitch), dtype=cp.int32).astype(cp.uint8)
        cur = cp.ascontiguousarray(ref[FRAME_PAD + 1:FRAME_PAD + 1 + side, FRAME_PAD - 2:FRAME_PAD - 2 + side])
        blocks_x = side // 8
        blocks = blocks_x * blocks_x
        best_sad = cp.empty(blocks, dtype=cp.uint32)
        best_mv = cp.empty(blocks, dtype=cp.int32)
        grid = (blocks + 127) // 128
        state.set_items(side * side)
        state.add_reads(np.uint8, 2 * side * side)
        state.add_writes(np.uint32, 2 * blocks)
        return lambda: kernel((grid,), (128,), (cur, ref, best_sad, best_mv, np.int32(blocks_x), np.int32(blocks),
                                                np.int32(side), np.int32(pitch)))

    return setup


KERNELS = (
    ("cublas.dgmm.float", "float"), ("cublas.dgmm.double", "double"), ("cublas.dgmm.complex", "complex float"),
    ("curand.sobol64", "uint64"), ("curand.sobol64_scrambled", "uint64"), ("curand.sobol64_double", "double"),
    ("torch.segment_reduce.64", "float"), ("torch.segment_reduce.512", "float"),
    ("torch.segment_reduce.4096", "float"),
    ("torch.mode.128", "int"), ("torch.mode.1024", "int"), ("torch.mode.2048", "int"),
    ("triton.kepler.4", "float"), ("triton.kepler.8", "float"), ("triton.kepler.16", "float"),
    ("triton.demosaic.uint8", "uint8"), ("triton.demosaic.int16", "int16"), ("triton.demosaic.float", "float"),
    ("hash_probe.50", "uint32"), ("hash_probe.75", "uint32"), ("hash_probe.90", "uint32"),
    ("block_match.1", "uint8"), ("block_match.2", "uint8"), ("block_match.4", "uint8"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    **{op: dgmm(op) for op in DGMM_TYPES},
    **{op: sobol(op) for op in SOBOL},
    **{op: segment_reduce(op) for op in SEGMENT_MEAN},
    **{op: mode(op) for op in MODE_ROWS},
    **{op: kepler(op) for op in KEPLER_STEPS},
    **{op: demosaic(op) for op in DEMOSAIC_TYPES},
    **{op: hash_probe(op) for op in HASH_LOAD},
    **{op: block_match(op) for op in SEARCH_RADIUS},
}


Kernel = suite_kernel("eval15", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
