"""The out-of-sample suite for compare's evaluation (issue: verdicts that hold across processes).

Eleven specializations: RawKernel copies of char, short, int and long long with 1 and 4 items
per thread, and three CuPy library calls (``cp.add`` of float, ``cp.sum`` of float,
``cp.cumsum`` of int). Run it as separate processes of identical code:

    python tests/benchmarks/rounds/suite.py --size 1MiB --json-out aa-1.json

**Planted changes.** ``PRIMBENCH_EVAL_PLANT`` (JSON: specialization name -> SM cycles) makes
the last block of that copy kernel wait that many cycles before it exits, which lengthens
every call by exactly that time whatever the grid; names and settings stay unchanged (the
variable is not a setting). Every copy kernel counts finished blocks with an atomic, planted
or not, so planted and unplanted kernels are the same code. `collect.py` sets the cycles from
the A/A runs' time per call (a 1 % change at 5 µs is about 99 cycles at 1.98 GHz).
"""

from __future__ import annotations

import json
import os

import numpy as np

import primbench as pb

for dtype, name in ((np.int8, "char"), (np.int16, "short"), (np.int32, "int"), (np.int64, "long long"),
                    (np.float32, "float")):
    pb.register_type(dtype, name)

CODE = r"""
template<typename T, unsigned int BlockSize, unsigned int ItemsPerThread>
__global__ __launch_bounds__(BlockSize)
void copy_kernel(const T* input, T* output, unsigned int* done, long long delay)
{
    unsigned int idx = threadIdx.x + blockIdx.x * BlockSize * ItemsPerThread;
#pragma unroll
    for(unsigned int i = 0; i < ItemsPerThread; ++i)
        output[idx + i * BlockSize] = input[idx + i * BlockSize];
    __syncthreads();
    if(threadIdx.x == 0)
    {
        __threadfence();
        if(atomicAdd(done, 1u) == gridDim.x - 1)
        {   // the last block: wait (planted only), then reset the counter for the next call
            long long t0 = clock64();
            while(clock64() - t0 < delay) { }
            *done = 0u;
        }
    }
}
"""
C_TYPES = {"char": "char", "short": "short", "int": "int", "long long": "long long"}
DTYPES = {"char": np.int8, "short": np.int16, "int": np.int32, "long long": np.int64}
BLOCK = 256


def planted() -> dict[str, int]:
    text = os.environ.get("PRIMBENCH_EVAL_PLANT", "")
    return {str(k): int(v) for k, v in json.loads(text).items()} if text else {}


class Copy(pb.Benchmark):
    def __init__(self, type_name: str, ipt: int) -> None:
        self.type_name = type_name
        self.ipt = ipt

    def meta(self):
        return {"algo": "suite", "op": "copy", "type": self.type_name, "ipt": self.ipt}

    def run(self, state):
        import cupy as cp

        dtype = np.dtype(DTYPES[self.type_name])
        per_block = BLOCK * self.ipt
        items = max(per_block, state.size // dtype.itemsize // per_block * per_block)
        expr = f"copy_kernel<{C_TYPES[self.type_name]}, {BLOCK}, {self.ipt}>"
        kernel = cp.RawModule(code=CODE, options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
        d_in = cp.arange(items).astype(dtype)
        d_out = cp.empty_like(d_in)
        done = cp.zeros(1, dtype=cp.uint32)
        delay = np.int64(planted().get(pb.specialization_name(self.meta()), 0))
        state.set_items(items)
        state.add_reads(dtype, items)
        state.add_writes(dtype, items)
        state.test(lambda: pb.assert_equal(d_out[:3], [0, 1, 2]))
        grid = (items // per_block,)
        state.run(lambda: kernel(grid, (BLOCK,), (d_in, d_out, done, delay)))


class Library(pb.Benchmark):
    def __init__(self, op: str, type_name: str) -> None:
        self.op = op
        self.type_name = type_name

    def meta(self):
        return {"algo": "suite", "op": self.op, "type": self.type_name, "ipt": 0}

    def run(self, state):
        import cupy as cp

        dtype = np.dtype(np.float32 if self.type_name == "float" else np.int32)
        items = max(1024, state.size // dtype.itemsize)
        rng = cp.random.default_rng(state.seed)
        a = rng.random(items, dtype=cp.float32).astype(dtype)
        state.set_items(items)
        if self.op == "add":
            b = rng.random(items, dtype=cp.float32).astype(dtype)
            out = cp.empty_like(a)
            state.add_reads(dtype, 2 * items)
            state.add_writes(dtype, items)
            state.run(lambda: cp.add(a, b, out=out))
        elif self.op == "sum":
            out = cp.empty((), dtype=dtype)
            state.add_reads(dtype, items)
            state.run(lambda: cp.sum(a, out=out))
        else:  # cumsum
            out = cp.empty_like(a)
            state.add_reads(dtype, items)
            state.add_writes(dtype, items)
            state.run(lambda: cp.cumsum(a, out=out))


def main() -> None:
    ex = pb.Executor()
    for type_name in C_TYPES:
        for ipt in (1, 4):
            ex.queue(Copy(type_name, ipt))
    ex.queue(Library("add", "float"))
    ex.queue(Library("sum", "float"))
    ex.queue(Library("cumsum", "int"))
    ex.main()


if __name__ == "__main__":
    main()
