"""The copy kernel under NVBench's Python bindings (cuda-bench), for tests/benchmarks/vs_tools.py.

    PB_SIZE=bytes python nvbench_copy.py -b copy_longlong --json out.json
"""

from __future__ import annotations

import os
import sys

import cuda.bench as bench
import cupy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _copy import copy_example

EX = copy_example()
TYPES = {"char": np.int8, "longlong": np.int64}


def make(tname: str):
    dtype = np.dtype(TYPES[tname])
    expr = f"copy_kernel<{EX['C_TYPES'][dtype]}, 256, 4>"
    module = cp.RawModule(code=EX["CODE"], options=("-std=c++17",), name_expressions=[expr])

    def copy(state) -> None:
        n = int(os.environ.get("PB_SIZE", 128 * 2**20)) // dtype.itemsize
        per_block = 1024
        items = per_block * ((n + per_block - 1) // per_block)
        a = cp.arange(items).astype(dtype)
        b = cp.empty_like(a)
        kernel = module.get_function(expr)
        state.add_element_count(items)
        state.add_global_memory_reads(items * dtype.itemsize)
        state.add_global_memory_writes(items * dtype.itemsize)

        def launcher(launch) -> None:
            with cp.cuda.ExternalStream(launch.get_stream().addressof()):
                kernel((items // per_block,), (256,), (a, b))

        state.exec(launcher)

    copy.__name__ = "copy_" + tname
    return copy


for name in TYPES:
    bench.register(make(name))

if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)
