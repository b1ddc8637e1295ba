"""A Numba CUDA kernel (``numba.cuda.jit``) launched on the harness's stream, beside the same
saxpy (``out = a * x + y``) as a CuPy ElementwiseKernel.

numba-cuda (NVIDIA's package: ``pip install 'numba-cuda[cu13]'``, ``[cu12]`` for CUDA 12)
launches on the stream named in the launch configuration, ``kernel[grid, block, stream](...)``.
The state's stream is a CuPy stream; the benchmark wraps its handle for Numba once,
``numba.cuda.external_stream(state.stream.ptr)``. The arrays are CuPy's, viewed by Numba once in
setup with ``numba.cuda.as_cuda_array(array, sync=False)``: they were made on the harness stream
and the kernel runs on it, so the stream orders them. (Handed to the kernel as they are, they
would be converted at every launch, and a conversion through the CUDA Array Interface
synchronizes the array's stream: the harness stream, which the spin kernel holds while a call
is timed.)

    python examples/numba_saxpy.py                  # or: primbench run examples/numba_saxpy.py
    python examples/numba_saxpy.py --size 16MiB
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import primbench as pb

if not hasattr(np, "row_stack"):
    # numba-cuda (0.30.4, the newest) registers an overload for np.row_stack, which NumPy 2.5
    # removed: without the old alias its first kernel compilation fails with AttributeError
    # (seen on the H200 with numpy 2.5.2). The alias is what NumPy deprecated it for.
    np.row_stack = np.vstack  # type: ignore[attr-defined]

try:  # needed to run the kernel, not for --help or --dry
    from numba import cuda
except ImportError:
    cuda = None

pb.register_type(np.float32, "float")

BLOCK = 256
A = 2.0


def saxpy(a, x, y, out):
    """The kernel: `jitted` compiles it (``cuda.jit(saxpy)``, as ``@cuda.jit`` would)."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@functools.cache
def jitted() -> Any:
    """The kernel's dispatcher, made once (Numba compiles it at the first launch, the warmup)."""
    if cuda is None:
        raise pb.UsageError("Numba CUDA is not installed: pip install 'numba-cuda[cu13]' (or [cu12])")
    return cuda.jit(saxpy)


class Saxpy(pb.Benchmark):
    def __init__(self, impl: str) -> None:
        self.impl = impl

    def meta(self) -> dict:
        return {"algo": "saxpy", "impl": self.impl, "type": "float"}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        n = state.size // 4
        pb.log("Generating input data")
        x = cp.arange(n, dtype=cp.float32)
        y = cp.ones(n, dtype=cp.float32)
        out = cp.empty_like(x)
        a = np.float32(A)
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        state.test(lambda: pb.assert_equal(out[:3], [1.0, 3.0, 5.0]))
        grid = (n + BLOCK - 1) // BLOCK
        if self.impl == "numba":
            kernel = jitted()
            stream = cuda.external_stream(state.stream.ptr)
            nx, ny, nout = (cuda.as_cuda_array(v, sync=False) for v in (x, y, out))
            launch = kernel[grid, BLOCK, stream]
            state.run(lambda: launch(a, nx, ny, nout))
        else:
            kernel = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out", "out = a * x + y",
                                          "saxpy")
            state.run(lambda: kernel(a, x, y, out))


def main() -> None:
    executor = pb.Executor()
    executor.queue(Saxpy("cupy"))
    executor.queue(Saxpy("numba"))
    executor.main()


if __name__ == "__main__":
    main()
