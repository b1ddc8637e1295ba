"""The fourth evaluation suite of issue "Verdicts that speak", written after compare's method was frozen
at 7104e5d (the priors pooled over the first and third suites' A/A processes) and before any of its
data existed (`eval4-plan.md`): ten kernels of kinds used by none of the tuning suite
(`../variance/tuning_suite.py`), `eval_suite.py`, `eval_suite2.py` or `eval_suite3.py`, and no copy
kernel.

Ten kernels, library calls included: cuRAND's XORWOW uniform generator (`cupy.cuda.curand`), a batch
norm in inference mode (`torch.nn.functional.batch_norm`), a cuDNN LSTM layer (`torch.nn.LSTM`), a
batched Cholesky factorisation (`torch.linalg.cholesky_ex`, cuSOLVER / MAGMA), pairwise Euclidean
distances (`torch.cdist`), a cross-entropy loss (`torch.nn.functional.cross_entropy`: log-softmax and
NLL), a Triton fp16 matrix product by `tl.dot` (tensor cores), a Triton dropout by `tl.rand`
(in-kernel Philox), a RawKernel of 32-bit integer hashing (MurmurHash3's finaliser, eight rounds), and
a RawKernel of fp64 pairwise forces (64 partners a body, `rsqrt`).

`state.size` is the bytes of each kernel's main input (64 KiB .. 64 MiB), with minimum shapes where
that is tiny; every setup is outside the timed call. **Planted changes** are those of `eval_suite.py`
(its `Kernel.run`, inherited: a one-thread tail kernel after each call). Collect with

    SUITE=tests/benchmarks/verdicts/eval_suite4.py SIZES=4MiB bash tests/benchmarks/verdicts/h200_eval2.sh
    python tests/benchmarks/verdicts/eval_suite4.py --size 4MiB --json-out aa-1.json
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

SUMMARY = ("cuRAND XORWOW uniform, batch_norm (inference), cuDNN LSTM, batched Cholesky, cdist, cross_entropy, "
           "Triton fp16 tl.dot matmul, Triton dropout (tl.rand), integer hash RawKernel, fp64 forces RawKernel "
           "(no copy kernel, no kind of the tuning suite or of eval_suite.py, eval_suite2.py, eval_suite3.py)")

HASH = r"""
extern "C" __global__ void hash32(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    unsigned int h = in[i];
    #pragma unroll
    for(int r = 0; r < 8; ++r) {
        h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
        h += 0x9e3779b9u * (r + 1);
    }
    out[i] = h;
}
"""
FORCES = r"""
extern "C" __global__ void forces(const double* __restrict__ pos, double* __restrict__ acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i >= n) return;
    double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
    double ax = 0.0, ay = 0.0, az = 0.0;
    for(int k = 1; k <= 64; ++k) {
        int j = (i + k * 97) % n;
        double dx = pos[3 * j] - xi, dy = pos[3 * j + 1] - yi, dz = pos[3 * j + 2] - zi;
        double inv = rsqrt(dx * dx + dy * dy + dz * dz + 1e-3);
        double s = inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[3 * i] = ax; acc[3 * i + 1] = ay; acc[3 * i + 2] = az;
}
"""
_CACHE: dict[str, Any] = {}

BN_C, BN_HW = 32, 32  # batch_norm: 32 channels of 32 x 32
LSTM_SEQ, LSTM_IN, LSTM_HIDDEN = 16, 64, 64
CHOL_N = 32  # Cholesky: 32 x 32 matrices
CDIST_DIM, CDIST_REF = 16, 128  # cdist: points of 16 floats against 128 reference points
CLASSES = 1000  # cross_entropy
DOT_K, DOT_N, DOT_BLOCK = 64, 64, 64  # the Triton matmul: (M x 64) @ (64 x 64), 64 rows a program
DROP_BLOCK, DROP_P = 1024, 0.1


def curand_uniform(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 4 uniform floats (at least 1024) from cuRAND's XORWOW generator, on the harness stream."""
    from cupy.cuda import curand

    n = max(1024, state.size // 4)
    if "curand" not in _CACHE:
        gen = curand.createGenerator(curand.CURAND_RNG_PSEUDO_XORWOW)
        curand.setPseudoRandomGeneratorSeed(gen, state.seed)
        _CACHE["curand"] = gen
    gen = _CACHE["curand"]
    curand.setStream(gen, state.stream.ptr)
    out = cp.empty(n, dtype=cp.float32)
    state.set_items(n)
    state.add_writes(np.float32, n)
    return lambda: curand.generateUniform(gen, out.data.ptr, n)


def batch_norm(state: pb.State, cp: Any) -> Callable[[], None]:
    """Inference-mode batch norm of a batch of 32-channel 32 x 32 float images, running statistics,
    weight and bias per channel."""
    import torch

    batch = max(1, state.size // 4 // (BN_C * BN_HW * BN_HW))
    gen = _generator(state)
    x = torch.randn((batch, BN_C, BN_HW, BN_HW), device="cuda", generator=gen)
    mean, weight, bias = (torch.randn(BN_C, device="cuda", generator=gen) for _ in range(3))
    var = torch.rand(BN_C, device="cuda", generator=gen) + 0.5
    state.set_items(x.numel())
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, x.numel())
    return _torch_on_stream(state, lambda: torch.nn.functional.batch_norm(
        x, mean, var, weight, bias, training=False))


def lstm(state: pb.State, cp: Any) -> Callable[[], None]:
    """One cuDNN LSTM layer (64 in, 64 hidden) over sequences of 16 steps; the input is `state.size`
    bytes of floats (a batch of at least 16 sequences)."""
    import torch

    batch = max(16, state.size // 4 // (LSTM_SEQ * LSTM_IN))
    torch.manual_seed(state.seed)
    layer = torch.nn.LSTM(LSTM_IN, LSTM_HIDDEN).cuda().eval()
    x = torch.randn((LSTM_SEQ, batch, LSTM_IN), device="cuda", generator=_generator(state))
    state.set_items(LSTM_SEQ * batch)
    state.add_reads(np.float32, x.numel())
    state.add_writes(np.float32, LSTM_SEQ * batch * LSTM_HIDDEN)

    def op() -> None:
        with torch.no_grad():
            layer(x)

    return _torch_on_stream(state, op)


def cholesky(state: pb.State, cp: Any) -> Callable[[], None]:
    """The Cholesky factors of a batch of 32 x 32 symmetric positive definite float matrices that
    together are `state.size` (at least 16), without the info check's synchronisation."""
    import torch

    batch = max(16, state.size // 4 // (CHOL_N * CHOL_N))
    a = torch.randn((batch, CHOL_N, CHOL_N), device="cuda", generator=_generator(state))
    spd = a @ a.transpose(1, 2) + CHOL_N * torch.eye(CHOL_N, device="cuda")
    out = torch.empty_like(spd)
    info = torch.empty(batch, device="cuda", dtype=torch.int32)
    state.set_items(batch)
    state.add_reads(np.float32, spd.numel())
    state.add_writes(np.float32, spd.numel())
    return _torch_on_stream(state, lambda: torch.linalg.cholesky_ex(spd, out=(out, info)))


def cdist(state: pb.State, cp: Any) -> Callable[[], None]:
    """Euclidean distances from size / 64 points of 16 floats (at least 256) to 128 reference points."""
    import torch

    rows = max(256, state.size // 4 // CDIST_DIM)
    gen = _generator(state)
    x = torch.randn((rows, CDIST_DIM), device="cuda", generator=gen)
    y = torch.randn((CDIST_REF, CDIST_DIM), device="cuda", generator=gen)
    state.set_items(rows * CDIST_REF)
    state.add_reads(np.float32, x.numel() + y.numel())
    state.add_writes(np.float32, rows * CDIST_REF)
    return _torch_on_stream(state, lambda: torch.cdist(x, y))


def cross_entropy(state: pb.State, cp: Any) -> Callable[[], None]:
    """The mean cross-entropy of rows of 1000 float logits (size / 4000 rows, at least 16) against
    random class labels."""
    import torch

    rows = max(16, state.size // 4 // CLASSES)
    gen = _generator(state)
    logits = torch.randn((rows, CLASSES), device="cuda", generator=gen)
    labels = torch.randint(0, CLASSES, (rows,), device="cuda", generator=gen)
    state.set_items(rows)
    state.add_reads(np.float32, logits.numel())
    state.add_reads(np.int64, rows)
    return _torch_on_stream(state, lambda: torch.nn.functional.cross_entropy(logits, labels))


def _triton_kernels() -> tuple[Any, Any]:
    if "triton" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def matmul_kernel(c_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
            pid = tl.program_id(0)
            rows = pid * BLOCK + tl.arange(0, BLOCK)
            ks = tl.arange(0, K)
            cols = tl.arange(0, N)
            a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
            b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
            c = tl.dot(a, b)
            tl.store(c_ptr + rows[:, None] * N + cols[None, :], c.to(tl.float16))

        @triton.jit
        def dropout_kernel(out_ptr, in_ptr, seed, p, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(in_ptr + offs)
            keep = tl.rand(seed, offs) > p
            tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0))

        _CACHE["triton"] = (matmul_kernel, dropout_kernel)
    return _CACHE["triton"]


def triton_matmul(state: pb.State, cp: Any) -> Callable[[], None]:
    """(M x 64) @ (64 x 64) in fp16 with fp32 accumulation by Triton's `tl.dot`: A is `state.size`
    bytes (M a multiple of 64, at least 64), one program per 64 rows."""
    import torch

    m = max(DOT_BLOCK, state.size // 2 // DOT_K // DOT_BLOCK * DOT_BLOCK)
    gen = _generator(state)
    a = torch.randn((m, DOT_K), device="cuda", dtype=torch.float16, generator=gen)
    b = torch.randn((DOT_K, DOT_N), device="cuda", dtype=torch.float16, generator=gen)
    c = torch.empty((m, DOT_N), device="cuda", dtype=torch.float16)
    kernel = _triton_kernels()[0]
    state.set_items(m * DOT_N)
    state.add_reads(np.float16, a.numel() + b.numel())
    state.add_writes(np.float16, c.numel())
    return _torch_on_stream(state, lambda: kernel[(m // DOT_BLOCK,)](c, a, b, BLOCK=DOT_BLOCK, K=DOT_K, N=DOT_N))


def triton_dropout(state: pb.State, cp: Any) -> Callable[[], None]:
    """Dropout (p 0.1) of size / 4 floats (a multiple of 1024, at least 1024), its mask drawn in the
    kernel by `tl.rand`."""
    import torch

    n = max(DROP_BLOCK, state.size // 4 // DROP_BLOCK * DROP_BLOCK)
    x = torch.randn(n, device="cuda", generator=_generator(state))
    y = torch.empty_like(x)
    kernel = _triton_kernels()[1]
    seed = int(state.seed)
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: kernel[(n // DROP_BLOCK,)](y, x, seed, DROP_P, BLOCK=DROP_BLOCK))


def hash32(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 4 unsigned ints (at least 1024) hashed by eight rounds of MurmurHash3's finaliser."""
    n = max(1024, state.size // 4)
    if "hash32" not in _CACHE:
        _CACHE["hash32"] = cp.RawKernel(HASH, "hash32")
    kernel = _CACHE["hash32"]
    x = cp.random.default_rng(state.seed).integers(0, 1 << 31, n, dtype=cp.int32).view(cp.uint32)
    out = cp.empty(n, dtype=cp.uint32)
    state.set_items(n)
    state.add_reads(np.uint32, n)
    state.add_writes(np.uint32, n)
    return lambda: kernel(((n + 255) // 256,), (256,), (x, out, np.int32(n)))


def forces(state: pb.State, cp: Any) -> Callable[[], None]:
    """The fp64 pull on each of size / 24 bodies (at least 1024) from 64 partners, softened."""
    n = max(1024, state.size // 24)
    if "forces" not in _CACHE:
        _CACHE["forces"] = cp.RawKernel(FORCES, "forces")
    kernel = _CACHE["forces"]
    pos = cp.random.default_rng(state.seed).random(3 * n, dtype=cp.float64)
    acc = cp.empty(3 * n, dtype=cp.float64)
    state.set_items(n)
    state.add_reads(np.float64, 3 * n)
    state.add_writes(np.float64, 3 * n)
    return lambda: kernel(((n + 127) // 128,), (128,), (pos, acc, np.int32(n)))


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "curand.uniform": curand_uniform, "torch.batch_norm": batch_norm, "torch.lstm": lstm,
    "torch.cholesky": cholesky, "torch.cdist": cdist, "torch.cross_entropy": cross_entropy,
    "triton.matmul": triton_matmul, "triton.dropout": triton_dropout, "hash32": hash32, "forces": forces,
}


Kernel = suite_kernel("eval4", SETUPS)


KERNELS = (("curand.uniform", "float"), ("torch.batch_norm", "float"), ("torch.lstm", "float"),
           ("torch.cholesky", "float"), ("torch.cdist", "float"), ("torch.cross_entropy", "float"),
           ("triton.matmul", "half"), ("triton.dropout", "float"), ("hash32", "uint"), ("forces", "double"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
