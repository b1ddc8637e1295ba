"""A tiled reverse swept over block size, items per thread and dtype: a constrained sweep with
one combination that the benchmark skips.

    python examples/skip_and_constrain.py --list      # what runs, and what is excluded and why
    python examples/skip_and_constrain.py             # or: primbench run examples/skip_and_constrain.py

* ``pb.axis.constrain`` excludes the combinations whose tile has more than `MAX_TILE_ITEMS`
  items (block 1024 with 16 items per thread): they are never run nor written, and ``--list``
  shows them as ``# excluded: NAME: REASON`` lines.
* ``state.skip`` inside ``run()`` declines the combination whose tile needs more static shared
  memory than CUDA allows a block (48 KiB: block 1024 x 8 items of float64 is 64 KiB). It is
  written to results.json as ``"skipped": "..."`` and listed in the summary; the run exits 0.

Each kernel loads a tile of ``block * items_per_thread`` elements into shared memory and writes
it back reversed. See docs/axes.md (skip, zip and constrain).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import primbench as pb

#: CUDA's limit on a block's static shared memory (``__shared__`` arrays), every GPU.
STATIC_SHARED_BYTES = 48 * 1024
#: Most items one tile may hold: the constraint of the sweep.
MAX_TILE_ITEMS = 8192

CODE = r"""
template<typename T, unsigned int Block, unsigned int Items>
__global__ __launch_bounds__(Block)
void tile_reverse(const T* __restrict__ input, T* __restrict__ output, unsigned long long n)
{
    __shared__ T tile[Block * Items];
    const unsigned long long base = blockIdx.x * static_cast<unsigned long long>(Block * Items);
    for(unsigned int k = 0; k < Items; ++k) {
        const unsigned long long i = base + k * Block + threadIdx.x;
        tile[k * Block + threadIdx.x] = i < n ? input[i] : T(0);
    }
    __syncthreads();
    for(unsigned int k = 0; k < Items; ++k) {
        const unsigned long long i = base + k * Block + threadIdx.x;
        if(i < n)
            output[i] = tile[Block * Items - 1 - (k * Block + threadIdx.x)];
    }
}
"""
C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


@pb.axis.sweep(
    block=pb.axis.ints([128, 1024]),
    items_per_thread=pb.axis.ints([1, 8, 16]),
    dtype=pb.axis.dtypes([np.float32, np.float64]),
)
@pb.axis.constrain(lambda c: c["block"] * c["items_per_thread"] <= MAX_TILE_ITEMS,
                   f"a tile of more than {MAX_TILE_ITEMS} items")
class TileReverse(pb.Benchmark):
    def meta(self) -> dict[str, Any]:
        return {"algo": "tile_reverse"}

    def run(self, state: pb.State) -> None:
        block, items, dtype = state.axis("block"), state.axis("items_per_thread"), state.axis("dtype")
        tile_bytes = block * items * dtype.itemsize
        if tile_bytes > STATIC_SHARED_BYTES:
            state.skip(f"the tile needs {tile_bytes // 1024} KiB of static shared memory; "
                       f"a block may have {STATIC_SHARED_BYTES // 1024} KiB")
        n = state.size // dtype.itemsize
        state.set_items(n)
        state.add_reads(dtype, n)
        state.add_writes(dtype, n)
        state.run(self.kernel(state, block, items, dtype, n))

    def kernel(self, state: pb.State, block: int, items: int, dtype: np.dtype[Any], n: int) -> Callable[[], object]:
        """The function to time: one launch of the kernel for these axis values."""
        import cupy as cp

        d_input = cp.arange(n, dtype=dtype)
        d_output = cp.empty_like(d_input)
        expr = f"tile_reverse<{C_TYPES[dtype]}, {block}, {items}>"
        fn = cp.RawModule(code=CODE, options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
        grid = ((n + block * items - 1) // (block * items),)
        return lambda: fn(grid, (block,), (d_input, d_output, cp.uint64(n)), stream=state.stream)


if __name__ == "__main__":
    executor = pb.Executor()
    executor.queue(TileReverse())
    executor.main()
