"""A copy swept over two axes: the block size and the input size (powers of two).

    python examples/axes_sweep.py                     # or: primbench run examples/axes_sweep.py
    python examples/axes_sweep.py --axis 'block=[128,256]' --axis 'size=[2^16:2^28:*16]'
    python examples/axes_sweep.py --size 1MiB         # one size, every block size

Each combination of the axes is one specialization (``block: 128, size: 65536``), run in
the natural order of the names. The axes and the ``--axis`` grammar: docs/axes.md.
"""

from __future__ import annotations

import numpy as np

import primbench as pb

pb.register_type(np.int32, "int")

CODE = r"""
template<typename T, unsigned int BlockSize>
__global__ __launch_bounds__(BlockSize)
void copy_kernel(const T* __restrict__ input, T* __restrict__ output, unsigned long long n)
{
    const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(BlockSize) + threadIdx.x;
    if(i < n)
        output[i] = input[i];
}
"""
C_TYPES = {np.dtype(np.int32): "int"}


@pb.axis.sweep(
    block=pb.axis.ints([64, 128, 256, 512, 1024]),  # threads per block
    size=pb.axis.pow2(16, 28, 4),  # bytes of input: 64 KiB, 1 MiB, 16 MiB, 256 MiB
)
class AxesSweep(pb.Benchmark):
    def __init__(self, dtype: type = np.int32) -> None:
        self.dtype = np.dtype(dtype)

    def meta(self) -> dict:
        # The axis values join the meta by themselves: block: 128, size: 65536, type: int.
        return {"algo": "copy_sweep", "type": pb.type_name(self.dtype)}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        block = state.axis("block")
        n = state.size // self.dtype.itemsize  # the size axis is state.size

        pb.log("Generating input data")
        d_input = cp.arange(n).astype(self.dtype)  # wraps like T(i) in C++
        d_output = cp.empty_like(d_input)

        pb.log("Compiling")
        expr = f"copy_kernel<{C_TYPES[self.dtype]}, {block}>"
        kernel = cp.RawModule(code=CODE, options=("-std=c++17",), name_expressions=[expr]).get_function(expr)

        state.set_items(n)
        state.add_reads(self.dtype, n)
        state.add_writes(self.dtype, n)
        state.test(lambda: pb.assert_equal(d_output[-3:], np.arange(n - 3, n).astype(self.dtype)))

        grid = ((n + block - 1) // block,)
        state.run(lambda: kernel(grid, (block,), (d_input, d_output, np.uint64(n))))


def main() -> None:
    executor = pb.Executor()
    executor.queue(AxesSweep())
    executor.main()


if __name__ == "__main__":
    main()
