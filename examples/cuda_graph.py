"""A CUDA graph captured once and replayed per call, beside the same kernel launches made one by
one: a chain of 10 small CuPy kernels (``y = a * x + y``, 1 MiB of floats by default).

``launch: graph`` captures the chain in setup (``stream.begin_capture()`` ... ``end_capture()``
on the harness stream) and times one ``graph.launch(stream)`` per call; ``launch: stream`` times
the 10 launches themselves. Both run the same kernels on the same data, and the test after the
warmup call checks that all 10 ran (y = 10 * 0.5 from zeros). The time per call is the GPU
time of the whole chain, from the start event before the first kernel to the stop event after
the last: the gaps between the kernels are in it, the host's launch cost is not (the stream is
held by the spin kernel while a call is enqueued).

    python examples/cuda_graph.py                 # or: primbench run examples/cuda_graph.py
    python examples/cuda_graph.py --size 64KiB --kernels 20
"""

from __future__ import annotations

import numpy as np

import primbench as pb

CODE = r"""
extern "C" __global__ void axpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned int n)
{
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n)
        y[i] = a * x[i] + y[i];
}
"""
BLOCK = 256
A = 0.5


class KernelChain(pb.Benchmark):
    def __init__(self, launch: str, kernels: int) -> None:
        self.launch = launch
        self.kernels = kernels

    def meta(self) -> dict:
        return {"algo": "axpy_chain", "launch": self.launch, "kernels": self.kernels}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        n = state.size // 4
        x = cp.ones(n, dtype=cp.float32)
        y = cp.zeros(n, dtype=cp.float32)
        kernel = cp.RawKernel(CODE, "axpy")
        grid = ((n + BLOCK - 1) // BLOCK,)
        args = (x, y, np.float32(A), np.uint32(n))
        stream = state.stream  # current during setup and calls: CuPy launches on it

        def chain() -> None:
            for _ in range(self.kernels):
                kernel(grid, (BLOCK,), args)

        # compile and load the kernel before any capture: a launch with a = 0 leaves y as it is
        kernel(grid, (BLOCK,), (x, y, np.float32(0.0), np.uint32(n)))
        if self.launch == "graph":
            pb.log(f"Capturing {self.kernels} launches into a CUDA graph")
            stream.synchronize()
            stream.begin_capture()
            try:
                chain()
            finally:
                graph = stream.end_capture()
            graph.upload(stream)

            def fn() -> None:
                graph.launch(stream)
        else:
            fn = chain
        # the warmup call has run the chain once when this checks
        state.test(lambda: pb.assert_equal(y[[0, n // 2, n - 1]], [self.kernels * A] * 3))
        state.run(fn)


def main() -> None:
    executor = pb.Executor(settings=pb.Settings(size=pb.MiB))
    kernels = executor.get("kernels", 10, "Kernels in the chain (captured into one graph, or launched one by one)")
    executor.queue(KernelChain("graph", kernels))
    executor.queue(KernelChain("stream", kernels))
    executor.main()


if __name__ == "__main__":
    main()
