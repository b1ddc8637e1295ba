"""The second evaluation suite of issue "Verdicts that speak": ten kernels of kinds used neither by
the tuning suite (`../variance/tuning_suite.py`: copies, cp.add, CUB sum/scan, cuBLAS SGEMV,
torch.mul/sum) nor by the first evaluation suite (`eval_suite.py`: SGEMM, sort, FFT, softmax,
histogram, pointer chase, FMA, sum of squares, transpose), and no copy kernel, so that compare's
verdicts are judged on kernels that played no part in choosing or checking the method.

Ten kernels, library calls included: cuBLAS batched GEMM in fp16 on tensor cores (`torch.bmm`),
`torch.nn.functional.layer_norm`, a cuDNN 3x3 convolution (`torch.nn.functional.conv2d`, with
`torch.backends.cudnn.benchmark = False`), `torch.topk` (k = 16 on rows of 1024), `torch.randn`
into an out tensor from a CUDA `torch.Generator` (Philox), a Triton GELU (tanh approximation,
BLOCK 1024), cuSPARSE SpMV (`cupyx.scipy.sparse.csr_matrix @ vector`, 8 nonzeros per row), a
RawKernel 5-point stencil on an n x n float grid, `cupy.searchsorted` (n/4 queries into a sorted
array of n) and `cupy.argmax`.

`state.size` is the bytes of each kernel's main input (64 KiB .. 64 MiB), with minimum shapes
where that is tiny; every setup is outside the timed call. **Planted changes** are those of
`eval_suite.py` (its `Kernel.run`, inherited: after the body, a one-thread tail kernel on the
harness stream spins for ``PRIMBENCH_EVAL_PLANT[name]`` SM cycles). Collect with

    python tests/benchmarks/verdicts/collect.py --suite tests/benchmarks/verdicts/eval_suite2.py \
        --sizes 64KiB,1MiB --out DIR
    python tests/benchmarks/verdicts/eval_suite2.py --size 4MiB --json-out aa-1.json
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
from eval_suite import Kernel as EvalKernel
from eval_suite import main as run_suite

pb.register_type(np.float16, "half")
pb.register_type(np.float32, "float")

SUMMARY = ("torch.bmm (fp16, tensor cores), layer_norm, conv2d (cuDNN), topk, randn (Philox), Triton GELU, "
           "cuSPARSE SpMV, stencil, searchsorted, argmax (no copy kernel, no kind of the tuning suite or of "
           "eval_suite.py)")

STENCIL = r"""
extern "C" __global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if(x >= n || y >= n) return;
    int i = y * n + x;
    if(x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}
"""
_CACHE: dict[str, Any] = {}

BMM_N = 128  # each matrix of torch.bmm is BMM_N x BMM_N
ROW = 1024  # the row length of layer_norm and topk
TOPK = 16
CONV_C, CONV_HW = 16, 32  # conv2d: 16 channels in and out, 32 x 32 images, 3 x 3 filters
NNZ_PER_ROW = 8
GELU_BLOCK = 1024


def _torch_on_stream(state: pb.State, op: Callable[[], object]) -> Callable[[], None]:
    """`op` run on the harness stream (as eval_suite's softmax), after the setup has finished."""
    import torch

    torch.cuda.synchronize()
    stream = torch.cuda.ExternalStream(state.stream.ptr)

    def call() -> None:
        with torch.cuda.stream(stream):
            op()

    return call


def _generator(state: pb.State) -> Any:
    import torch

    return torch.Generator(device="cuda").manual_seed(state.seed)


def bmm(state: pb.State, cp: Any) -> Callable[[], None]:
    """A and B together are `state.size`: a batch of size / 64 KiB pairs of 128 x 128 half matrices."""
    import torch

    n = BMM_N
    batch = max(1, state.size // (2 * 2 * n * n))
    gen = _generator(state)
    a = torch.randn((batch, n, n), device="cuda", dtype=torch.float16, generator=gen)
    b = torch.randn((batch, n, n), device="cuda", dtype=torch.float16, generator=gen)
    c = torch.empty((batch, n, n), device="cuda", dtype=torch.float16)
    state.set_items(batch * n * n)
    state.add_reads(np.float16, 2 * batch * n * n)
    state.add_writes(np.float16, batch * n * n)
    return _torch_on_stream(state, lambda: torch.bmm(a, b, out=c))


def layer_norm(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 4 KiB rows of 1024 floats (at least one), normalized per row with a weight and a bias."""
    import torch

    rows = max(1, state.size // 4 // ROW)
    gen = _generator(state)
    x = torch.randn((rows, ROW), device="cuda", generator=gen)
    w = torch.rand(ROW, device="cuda", generator=gen)
    b = torch.rand(ROW, device="cuda", generator=gen)
    state.set_items(rows * ROW)
    state.add_reads(np.float32, rows * ROW + 2 * ROW)
    state.add_writes(np.float32, rows * ROW)
    return _torch_on_stream(state, lambda: torch.nn.functional.layer_norm(x, (ROW,), w, b, 1e-5))


def conv2d(state: pb.State, cp: Any) -> Callable[[], None]:
    """A batch of size / 64 KiB images (at least one) of 16 channels x 32 x 32 floats, 3 x 3 filters
    to 16 channels, padding 1 (cuDNN's heuristic algorithm: benchmark mode off)."""
    import torch

    torch.backends.cudnn.benchmark = False
    image = CONV_C * CONV_HW * CONV_HW
    batch = max(1, state.size // 4 // image)
    gen = _generator(state)
    x = torch.randn((batch, CONV_C, CONV_HW, CONV_HW), device="cuda", generator=gen)
    w = torch.randn((CONV_C, CONV_C, 3, 3), device="cuda", generator=gen)
    state.set_items(batch * image)
    state.add_reads(np.float32, batch * image + w.numel())
    state.add_writes(np.float32, batch * image)
    return _torch_on_stream(state, lambda: torch.nn.functional.conv2d(x, w, padding=1))


def topk(state: pb.State, cp: Any) -> Callable[[], None]:
    """The 16 largest of each row of 1024 floats, size / 4 KiB rows (at least one)."""
    import torch

    rows = max(1, state.size // 4 // ROW)
    x = torch.rand((rows, ROW), device="cuda", generator=_generator(state))
    values = torch.empty((rows, TOPK), device="cuda")
    indices = torch.empty((rows, TOPK), device="cuda", dtype=torch.int64)
    state.set_items(rows * ROW)
    state.add_reads(np.float32, rows * ROW)
    state.add_writes(np.float32, rows * TOPK)
    state.add_writes(np.int64, rows * TOPK)
    return _torch_on_stream(state, lambda: torch.topk(x, TOPK, dim=1, out=(values, indices)))


def randn(state: pb.State, cp: Any) -> Callable[[], None]:
    """size / 4 normal floats (at least 1024) into one out tensor, from a CUDA (Philox) generator."""
    import torch

    n = max(1024, state.size // 4)
    gen = _generator(state)
    y = torch.empty(n, device="cuda")
    state.set_items(n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: torch.randn((n,), generator=gen, out=y))


def _gelu_kernel() -> Any:
    if "gelu" not in _CACHE:
        import triton
        import triton.language as tl

        @triton.jit
        def gelu_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(in_ptr + offs, mask=mask, other=0.0)
            u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
            # 0.5 x (1 + tanh(u)) = x * sigmoid(2u), written with exp alone (tanh's name moves
            # between Triton versions)
            tl.store(out_ptr + offs, x / (1.0 + tl.exp(-2.0 * u)), mask=mask)

        _CACHE["gelu"] = gelu_kernel
    return _CACHE["gelu"]


def gelu(state: pb.State, cp: Any) -> Callable[[], None]:
    """GELU (tanh approximation) of size / 4 floats (at least 1024), Triton, 1024 per program."""
    import torch

    n = max(1024, state.size // 4)
    x = torch.randn(n, device="cuda", generator=_generator(state))
    y = torch.empty_like(x)
    kernel = _gelu_kernel()
    grid = (math.ceil(n / GELU_BLOCK),)
    state.set_items(n)
    state.add_reads(np.float32, n)
    state.add_writes(np.float32, n)
    return _torch_on_stream(state, lambda: kernel[grid](y, x, n, BLOCK=GELU_BLOCK))


def spmv(state: pb.State, cp: Any) -> Callable[[], None]:
    """A square CSR matrix whose values and column indices are `state.size` (64 bytes a row: size / 64
    rows, at least 1024), 8 nonzeros per row, one in each eighth of the columns, times a vector."""
    import cupyx.scipy.sparse

    n = max(1024, state.size // (NNZ_PER_ROW * 8))
    width = n // NNZ_PER_ROW
    host = np.random.default_rng(state.seed)
    cols = (np.arange(NNZ_PER_ROW) * width + host.integers(0, width, (n, NNZ_PER_ROW))).astype(np.int32)
    rng = cp.random.default_rng(state.seed)
    data = rng.random(n * NNZ_PER_ROW, dtype=cp.float32)
    indptr = cp.arange(0, n * NNZ_PER_ROW + 1, NNZ_PER_ROW, dtype=cp.int32)
    m = cupyx.scipy.sparse.csr_matrix((data, cp.asarray(cols.ravel()), indptr), shape=(n, n))
    m.sum_duplicates()  # none to sum; the timed call then skips it
    v = rng.random(n, dtype=cp.float32)
    state.set_items(n * NNZ_PER_ROW)
    state.add_reads(np.float32, n * NNZ_PER_ROW + 2 * n)
    state.add_reads(np.int32, n * NNZ_PER_ROW + n + 1)
    state.add_writes(np.float32, n)
    return lambda: m @ v


def stencil(state: pb.State, cp: Any) -> Callable[[], None]:
    """One Jacobi step of a 5-point stencil on an n x n float grid, n = sqrt(size / 4) (at least 32),
    blocks of 32 x 8 threads, the border copied."""
    n = max(32, math.isqrt(state.size // 4))
    if "stencil" not in _CACHE:
        _CACHE["stencil"] = cp.RawKernel(STENCIL, "stencil5")
    kernel = _CACHE["stencil"]
    rng = cp.random.default_rng(state.seed)
    x, y = rng.random((n, n), dtype=cp.float32), cp.empty((n, n), dtype=cp.float32)
    grid = ((n + 31) // 32, (n + 7) // 8)
    state.set_items(n * n)
    state.add_reads(np.float32, n * n)
    state.add_writes(np.float32, n * n)
    return lambda: kernel(grid, (32, 8), (x, y, np.int32(n)))


def searchsorted(state: pb.State, cp: Any) -> Callable[[], None]:
    """n / 4 random queries into a sorted array of n = size / 4 floats (at least 1024)."""
    n = max(1024, state.size // 4)
    rng = cp.random.default_rng(state.seed)
    a = cp.sort(rng.random(n, dtype=cp.float32))
    q = rng.random(n // 4, dtype=cp.float32)
    state.set_items(n // 4)
    state.add_reads(np.float32, n // 4)
    state.add_writes(np.int64, n // 4)
    return lambda: cp.searchsorted(a, q)


def argmax(state: pb.State, cp: Any) -> Callable[[], None]:
    """The index of the largest of size / 4 floats (at least 1024)."""
    n = max(1024, state.size // 4)
    x = cp.random.default_rng(state.seed).random(n, dtype=cp.float32)
    state.set_items(n)
    state.add_reads(np.float32, n)
    return lambda: cp.argmax(x)


SETUPS: dict[str, Callable[[pb.State, Any], Callable[[], object]]] = {
    "torch.bmm": bmm, "torch.layer_norm": layer_norm, "torch.conv2d": conv2d, "torch.topk": topk,
    "torch.randn": randn, "triton.gelu": gelu, "spmv": spmv, "stencil": stencil,
    "searchsorted": searchsorted, "argmax": argmax,
}


def suite_kernel(algo: str, setups: dict[str, Callable[[pb.State, Any], Callable[[], object]]]) -> type[EvalKernel]:
    """eval_suite's kernel (its `run` and planted tail) under the algorithm `algo`, its bodies the
    `setups` (op -> setup returning the timed call): this suite's, and the third suite's."""

    class Kernel(EvalKernel):
        def meta(self) -> dict[str, object]:
            return {"algo": algo, "op": self.op, "type": self.type_name}

        def body(self, state: pb.State, cp: Any) -> Callable[[], object]:
            return setups[self.op](state, cp)

    return Kernel


Kernel = suite_kernel("eval2", SETUPS)


KERNELS = (("torch.bmm", "half"), ("torch.layer_norm", "float"), ("torch.conv2d", "float"),
           ("torch.topk", "float"), ("torch.randn", "float"), ("triton.gelu", "float"), ("spmv", "float"),
           ("stencil", "float"), ("searchsorted", "float"), ("argmax", "float"))


def main() -> None:
    run_suite(Kernel, KERNELS)


if __name__ == "__main__":
    main()
