"""Kernels shared by the measurement-loop experiments: the copy example's RawKernel and CuPy
library calls, each as a zero-argument callable on the current stream."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _copy import copy_example

EX = copy_example()
DTYPES = {"char": np.int8, "long long": np.int64, "float": np.float32}


def copy_call(tname: str, size: int, ipt: int = 4) -> tuple[Callable[[], object], int]:
    """The copy kernel over `size` bytes of `tname`; (call, bytes moved per call)."""
    dtype = np.dtype(DTYPES[tname])
    expr = f"copy_kernel<{EX['C_TYPES'][dtype]}, 256, {ipt}>"
    kernel = cp.RawModule(code=EX["CODE"], options=("-std=c++17",), name_expressions=[expr]).get_function(expr)
    per_block = 256 * ipt
    n = size // dtype.itemsize
    items = per_block * ((n + per_block - 1) // per_block)
    a = cp.arange(items).astype(dtype)
    b = cp.empty_like(a)
    grid = (items // per_block,)

    def call() -> None:
        kernel(grid, (256,), (a, b))

    return call, items * dtype.itemsize * 2


def sum_call(size: int) -> tuple[Callable[[], object], int]:
    """``cp.sum`` of `size` bytes of float32 into a preallocated result."""
    a = cp.random.default_rng(1).random(size // 4, dtype=cp.float32)
    out = cp.empty((), dtype=cp.float32)

    def call() -> None:
        cp.sum(a, out=out)

    return call, a.nbytes
