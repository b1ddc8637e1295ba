"""The thirteenth evaluation suite of issue "Verdicts that speak", written for the thirteenth evaluation after
compare's method was frozen at the commit that adds it, and before any of its data existed: eight kinds used by
none of the tuning suite (`../variance/tuning_suite.py`), `eval_suite.py` ... `eval_suite12.py`, the pilots or the
probes, each in three variants, so that a run holds 24 specializations, and no copy kernel.

The kinds, library calls first: a general matrix add with B transposed (`cupy.cublas.geam`, cuBLAS geam: C = A +
0.5 B^T) in fp32, fp64 and complex64; a log-cumulative-sum-exp (`torch.logcumsumexp`, PyTorch's scan) over one
fp32 array, one fp64 array and rows of 1,024 fp32; a short-time Fourier transform (`torch.stft`, cuFFT R2C, Hann
window, hop a quarter) of 64, 256 and 1,024 points; an antialiased bicubic downscale of an RGB image
(`torch.nn.functional.interpolate`, `antialias=True`) by 2, 3 and 4; a Triton RGB to YCbCr conversion (BT.601,
interleaved in, planar out) with uint8, fp16 and fp32 storage; a Triton Game of Life step (B3/S23, dead cells
outside) on int8, int32 and fp32 cells; and two RawKernels: the nearest of 1, 8 or 32 spheres each ray hits, and
the Levenshtein distance of string pairs 8, 16 and 32 bytes long (one thread a pair).

`state.size` is the bytes of each kernel's main input, with minimum shapes where that is tiny; every setup is
outside the timed call, and no timed call synchronises the host.

**Planted changes** are those of `eval_suite.py` (its `Kernel.run`, inherited: a one-thread tail kernel after
each call).

    python tests/benchmarks/verdicts/eval_suite13.py --size 4MiB --processes 8 --rounds 2 --min-secs 0.25
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

SUMMARY = ("matrix add with B transposed (cuBLAS geam; fp32, fp64, complex64), logcumsumexp (torch; fp32, fp64, "
           "rows of 1,024), STFT (torch.stft, cuFFT; 64, 256, 1,024 points), antialiased bicubic downscale (torch "
           "interpolate; by 2, 3, 4), Triton RGB to YCbCr (uint8, fp16, fp32), Triton Game of Life step (int8, "
           "int32, fp32 cells), ray-sphere nearest hit (1, 8, 32 spheres), Levenshtein distance (8, 16, 32 bytes): "
           "24 specializations, no copy kernel, no kind of the tuning suite or of eval_suite.py ... eval_suite12.py")

RAW = r"""
// the nearest sphere each ray from the origin hits: its distance (infinity when none) and index (-1 when none)
extern "C" __global__ void ray_spheres(const float4* __restrict__ dirs, const float4* __restrict__ spheres,
                                       float* __restrict__ hit_t, int* __restrict__ hit_index, int n, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    float4 d = dirs[i];
    float best = __int_as_float(0x7f800000);
    int index = -1;
    for(int s = 0; s < count; s++) {
        float4 c = __ldg(&spheres[s]);  // centre and radius
        float b = d.x * c.x + d.y * c.y + d.z * c.z;
        float disc = b * b - (c.x * c.x + c.y * c.y + c.z * c.z - c.w * c.w);
        if(disc < 0.0f) continue;
        float root = sqrtf(disc);
        float t = b - root > 0.0f ? b - root : b + root;
        if(t > 0.0f && t < best) { best = t; index = s; }
    }
    hit_t[i] = best;
    hit_index[i] = index;
}

// the edit distance of a[i] and b[i], both `len` bytes (len <= 32), by two rows of the dynamic programme
extern "C" __global__ void levenshtein(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                                       int* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    const unsigned char* s = a + (size_t)i * len;
    const unsigned char* t = b + (size_t)i * len;
    int row[33];
    for(int j = 0; j <= len; j++) row[j] = j;
    for(int k = 1; k <= len; k++) {
        int diagonal = row[0];
        row[0] = k;
        unsigned char c = s[k - 1];
        for(int j = 1; j <= len; j++) {
            int above = row[j];
            int cost = diagonal + (c == t[j - 1] ? 0 : 1);
            int best = min(above + 1, row[j - 1] + 1);
            row[j] = min(best, cost);
            diagonal = above;
        }
    }
    out[i] = row[len];
}
"""
_CACHE: dict[str, Any] = {}

GEAM_TYPES = {"cublas.geam.float": np.float32, "cublas.geam.double": np.float64,
              "cublas.geam.complex": np.complex64}
SCAN_OPS = {"torch.logcumsumexp.float": ("float32", 0), "torch.logcumsumexp.double": ("float64", 0),
            "torch.logcumsumexp.rows": ("float32", 1024)}  # dtype, row length (0: one array)
STFT_POINTS = {"torch.stft.64": 64, "torch.stft.256": 256, "torch.stft.1024": 1024}
DOWNSCALE = {"torch.interpolate_aa.x2": 2, "torch.interpolate_aa.x3": 3, "torch.interpolate_aa.x4": 4}
YCBCR_TYPES = {"triton.ycbcr.uint8": "uint8", "triton.ycbcr.half": "float16", "triton.ycbcr.float": "float32"}
LIFE_TYPES = {"triton.life.int8": "int8", "triton.life.int32": "int32", "triton.life.float": "float32"}
SPHERES = {"ray_spheres.1": 1, "ray_spheres.8": 8, "ray_spheres.32": 32}
EDIT_LENGTH = {"levenshtein.8": 8, "levenshtein.16": 16, "levenshtein.32": 32}
BLOCK = 1024  # Triton programs' elements


def _module(cp: Any) -> Any:
    if "raw" not in _CACHE:
        _CACHE["raw"] = cp.RawModule(code=RAW, options=("-std=c++17",))
    return _CACHE["raw"]


def geam(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """C = A + 0.5 B^T of square Fortran-ordered A and B, `state.size` bytes together (at least 32 x 32), by
        cuBLAS geam (`cupy.cublas.geam`: sgeam, dgeam, cgeam) into a preallocated C."""
        import cupy.cublas as cublas

        dtype = GEAM_TYPES[op]
        n = max(32, math.isqrt(state.size // (2 * np.dtype(dtype).itemsize)))
        rng = cp.random.default_rng(state.seed)
        a = cp.asfortranarray(rng.random((n, n), dtype=cp.float32).astype(dtype))
        b = cp.asfortranarray(rng.random((n, n), dtype=cp.float32).astype(dtype))
        c = cp.empty((n, n), dtype=dtype, order="F")
        state.set_items(n * n)
        state.add_reads(dtype, 2 * n * n)
        state.add_writes(dtype, n * n)
        return lambda: cublas.geam("N", "T", 1.0, a, 0.5, b, out=c)

    return setup


def logcumsumexp(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """log(cumsum(exp(x))) of `state.size` bytes of standard normal values (at least 4,096) along one array,
        or along each row of 1,024, by `torch.logcumsumexp` into a preallocated output."""
        import torch

        dtype_name, row = SCAN_OPS[op]
        dtype = getattr(torch, dtype_name)
        itemsize = torch.tensor([], dtype=dtype).element_size()
        n = max(4096, state.size // itemsize)
        shape = (n // row, row) if row else (n,)
        x = torch.randn(shape, device="cuda", generator=_generator(state), dtype=dtype)
        out = torch.empty_like(x)
        dim = x.dim() - 1
        storage = np.float32 if dtype_name == "float32" else np.float64
        state.set_items(x.numel())
        state.add_reads(storage, x.numel())
        state.add_writes(storage, x.numel())
        return _torch_on_stream(state, lambda: torch.logcumsumexp(x, dim, out=out))

    return setup


def stft(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """The short-time Fourier transform of `state.size` bytes of an fp32 signal (at least 16,384 samples):
        `STFT_POINTS[op]` points a frame, a Hann window, hop a quarter of a frame, centred (reflect padding), a
        complex spectrogram, by `torch.stft` (cuFFT R2C)."""
        import torch

        points = STFT_POINTS[op]
        n = max(16384, state.size // 4)
        signal = torch.randn(n, device="cuda", generator=_generator(state))
        window = torch.hann_window(points, device="cuda")
        hop = points // 4
        frames = n // hop + 1
        state.set_items(n)
        state.add_reads(np.float32, n)
        state.add_writes(np.complex64, frames * (points // 2 + 1))
        return _torch_on_stream(state, lambda: torch.stft(signal, points, hop_length=hop, window=window,
                                                          center=True, return_complex=True))

    return setup


def interpolate_aa(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """A square fp32 RGB image of `state.size` bytes (at least 48 x 48) scaled down by `DOWNSCALE[op]` with an
        antialiased bicubic filter (`torch.nn.functional.interpolate`, `antialias=True`)."""
        import torch
        import torch.nn.functional as F

        factor = DOWNSCALE[op]
        side = max(48, math.isqrt(state.size // (3 * 4)))
        side -= side % 12  # whole outputs for 2, 3 and 4
        image = torch.rand((1, 3, side, side), device="cuda", generator=_generator(state))
        out_side = side // factor
        state.set_items(3 * side * side)
        state.add_reads(np.float32, 3 * side * side)
        state.add_writes(np.float32, 3 * out_side * out_side)
        return _torch_on_stream(state, lambda: F.interpolate(image, size=(out_side, out_side), mode="bicubic",
                                                             antialias=True, align_corners=False))

    return setup


def _ycbcr_kernel() -> Any:
    if "ycbcr" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def ycbcr(rgb_ptr, y_ptr, cb_ptr, cr_ptr, n, scale, BLOCK: tl.constexpr,  # type: ignore[no-untyped-def]
                  ROUND: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            r = tl.load(rgb_ptr + 3 * offs, mask=mask, other=0).to(tl.float32)
            g = tl.load(rgb_ptr + 3 * offs + 1, mask=mask, other=0).to(tl.float32)
            b = tl.load(rgb_ptr + 3 * offs + 2, mask=mask, other=0).to(tl.float32)
            half = 0.5 * scale
            y = 0.299 * r + 0.587 * g + 0.114 * b
            cb = half - 0.168736 * r - 0.331264 * g + 0.5 * b
            cr = half + 0.5 * r - 0.418688 * g - 0.081312 * b
            if ROUND:
                y = tl.minimum(tl.maximum(y + 0.5, 0.0), 255.0)
                cb = tl.minimum(tl.maximum(cb + 0.5, 0.0), 255.0)
                cr = tl.minimum(tl.maximum(cr + 0.5, 0.0), 255.0)
            tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
            tl.store(cb_ptr + offs, cb.to(cb_ptr.dtype.element_ty), mask=mask)
            tl.store(cr_ptr + offs, cr.to(cr_ptr.dtype.element_ty), mask=mask)

        _CACHE["ycbcr"] = ycbcr
    return _CACHE["ycbcr"]


def ycbcr(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """BT.601 full-range RGB to YCbCr of `state.size` bytes of interleaved pixels (at least 1,024), stored in
        `YCBCR_TYPES[op]` and computed in fp32, written as three planes, by one Triton kernel."""
        import torch

        dtype = getattr(torch, YCBCR_TYPES[op])
        itemsize = torch.tensor([], dtype=dtype).element_size()
        n = max(1024, state.size // (3 * itemsize))
        gen = _generator(state)
        if dtype == torch.uint8:
            rgb = torch.randint(0, 256, (3 * n,), device="cuda", generator=gen, dtype=torch.uint8)
            scale, rounding = 256.0, True
        else:
            rgb = torch.rand(3 * n, device="cuda", generator=gen).to(dtype)
            scale, rounding = 1.0, False
        y, cb, cr = (torch.empty(n, device="cuda", dtype=dtype) for _ in range(3))
        kernel = _ycbcr_kernel()
        grid = ((n + BLOCK - 1) // BLOCK,)
        storage = {"uint8": np.uint8, "float16": np.float16, "float32": np.float32}[YCBCR_TYPES[op]]
        state.set_items(n)
        state.add_reads(storage, 3 * n)
        state.add_writes(storage, 3 * n)
        return _torch_on_stream(state, lambda: kernel[grid](rgb, y, cb, cr, n, scale, BLOCK=BLOCK,
                                                            ROUND=rounding))

    return setup


def _life_kernel() -> Any:
    if "life" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit  # type: ignore[untyped-decorator]
        def life(cells_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            r = tl.program_id(0)
            c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
            inside = c < cols
            neighbours = tl.zeros((BLOCK,), dtype=tl.int32)
            for k in tl.static_range(9):
                dr = k // 3 - 1
                dc = k % 3 - 1
                rr = r + dr
                cc = c + dc
                ok = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
                alive = tl.load(cells_ptr + rr * cols + cc, mask=ok, other=0) != 0
                if k != 4:
                    neighbours += alive.to(tl.int32)
            me = tl.load(cells_ptr + r * cols + c, mask=inside, other=0) != 0
            born = (neighbours == 3) | (me & (neighbours == 2))
            tl.store(out_ptr + r * cols + c, born.to(out_ptr.dtype.element_ty), mask=inside)

        _CACHE["life"] = life
    return _CACHE["life"]


def life(op: str) -> Callable[[pb.State, Any], Callable[[], None]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], None]:
        """One Game of Life step (born with 3 neighbours, survives with 2 or 3, dead outside the board) of a
        square board of `state.size` bytes of `LIFE_TYPES[op]` cells (at least 64 x 64), a third alive, read from
        one board and written to another, one Triton program a row's block of 1,024 cells."""
        import torch

        dtype = getattr(torch, LIFE_TYPES[op])
        itemsize = torch.tensor([], dtype=dtype).element_size()
        side = max(64, math.isqrt(state.size // itemsize))
        cells = (torch.rand((side, side), device="cuda", generator=_generator(state)) < 1 / 3).to(dtype)
        out = torch.empty_like(cells)
        kernel = _life_kernel()
        grid = (side, (side + BLOCK - 1) // BLOCK)
        storage = {"int8": np.int8, "int32": np.int32, "float32": np.float32}[LIFE_TYPES[op]]
        state.set_items(side * side)
        state.add_reads(storage, side * side)
        state.add_writes(storage, side * side)
        return _torch_on_stream(state, lambda: kernel[grid](cells, out, side, side, BLOCK=BLOCK))

    return setup


def ray_spheres(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """The nearest of `SPHERES[op]` spheres (centres 5-20 away in front, radii 0.5-3) hit by each of
        `state.size` bytes of ray directions from the origin (unit float3 in a float4, at least 1,024 rays): its
        distance and index, one thread a ray."""
        kernel = _module(cp).get_function("ray_spheres")
        count = SPHERES[op]
        n = max(1024, state.size // 16)
        rng = cp.random.default_rng(state.seed)
        d = 2 * rng.random((n, 3), dtype=cp.float32) - 1
        d[:, 2] = cp.abs(d[:, 2]) + 1.0  # forward
        d /= cp.linalg.norm(d, axis=1, keepdims=True)
        dirs = cp.concatenate([d, cp.zeros((n, 1), dtype=cp.float32)], axis=1)
        spheres = cp.empty((count, 4), dtype=cp.float32)
        spheres[:, :2] = 12 * rng.random((count, 2), dtype=cp.float32) - 6
        spheres[:, 2] = 5 + 15 * rng.random(count, dtype=cp.float32)
        spheres[:, 3] = 0.5 + 2.5 * rng.random(count, dtype=cp.float32)
        hit_t = cp.empty(n, dtype=cp.float32)
        hit_index = cp.empty(n, dtype=cp.int32)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.float32, 4 * n + 4 * count)
        state.add_writes(np.float32, n)
        state.add_writes(np.int32, n)
        return lambda: kernel((blocks,), (256,), (dirs, spheres, hit_t, hit_index, np.int32(n), np.int32(count)))

    return setup


def levenshtein(op: str) -> Callable[[pb.State, Any], Callable[[], object]]:
    def setup(state: pb.State, cp: Any) -> Callable[[], object]:
        """The edit distance of each pair of `EDIT_LENGTH[op]`-byte strings, `state.size` bytes of pairs together
        (at least 1,024 pairs), over a four-letter alphabet with the second string a mutation of the first (a
        quarter of its bytes redrawn), one thread a pair."""
        kernel = _module(cp).get_function("levenshtein")
        length = EDIT_LENGTH[op]
        n = max(1024, state.size // (2 * length))
        rng = cp.random.default_rng(state.seed)
        letters = cp.asarray(np.frombuffer(b"ACGT", dtype=np.uint8))
        a = letters[rng.integers(0, 4, (n, length))]
        redraw = rng.random((n, length), dtype=cp.float32) < 0.25
        b = cp.where(redraw, letters[rng.integers(0, 4, (n, length))], a)
        a, b = cp.ascontiguousarray(a), cp.ascontiguousarray(b)
        out = cp.empty(n, dtype=cp.int32)
        blocks = (n + 255) // 256
        state.set_items(n)
        state.add_reads(np.uint8, 2 * n * length)
        state.add_writes(np.int32, n)
        return lambda: kernel((blocks,), (256,), (a, b, out, np.int32(n), np.int32(length)))

    return setup


KERNELS = (
    ("cublas.geam.float", "float"), ("cublas.geam.double", "double"), ("cublas.geam.complex", "complex float"),
    ("torch.logcumsumexp.float", "float"), ("torch.logcumsumexp.double", "double"),
    ("torch.logcumsumexp.rows", "float"),
    ("torch.stft.64", "float"), ("torch.stft.256", "float"), ("torch.stft.1024", "float"),
    ("torch.interpolate_aa.x2", "float"), ("torch.interpolate_aa.x3", "float"), ("torch.interpolate_aa.x4", "float"),
    ("triton.ycbcr.uint8", "uint8"), ("triton.ycbcr.half", "half"), ("triton.ycbcr.float", "float"),
    ("triton.life.int8", "int8"), ("triton.life.int32", "int"), ("triton.life.float", "float"),
    ("ray_spheres.1", "float"), ("ray_spheres.8", "float"), ("ray_spheres.32", "float"),
    ("levenshtein.8", "uint8"), ("levenshtein.16", "uint8"), ("levenshtein.32", "uint8"),
)

SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    **{op: geam(op) for op in GEAM_TYPES},
    **{op: logcumsumexp(op) for op in SCAN_OPS},
    **{op: stft(op) for op in STFT_POINTS},
    **{op: interpolate_aa(op) for op in DOWNSCALE},
    **{op: ycbcr(op) for op in YCBCR_TYPES},
    **{op: life(op) for op in LIFE_TYPES},
    **{op: ray_spheres(op) for op in SPHERES},
    **{op: levenshtein(op) for op in EDIT_LENGTH},
}


Kernel = suite_kernel("eval13", SETUPS)


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
