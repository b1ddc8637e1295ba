"""The tuning suite: the kernels on which the measurement protocol and compare's variance model
were chosen (issue "Verdicts that speak", step 1). The evaluation suite (`../verdicts/eval_suite.py`)
shares no kernel kind with it.

Eight kinds: RawKernel copies (char, 1 item per thread; long long, 4 items), CuPy's elementwise
`cp.add`, CUB's reduction (`cp.sum`) and scan (`cp.cumsum`), PyTorch's elementwise `torch.mul`
and reduction `torch.sum`, and cuBLAS's SGEMV (`cp.matmul` of a matrix and a vector).

Two study knobs, for `study.py` only (neither is a setting, so names stay as they are):

* ``alloc: shift`` (an axis value of two kernels): before its buffers, each round allocates a
  pad of random size and keeps it alive, so that every round's buffers land elsewhere
  (``alloc: pool`` takes what CuPy's pool hands back).
* ``PRIMBENCH_STUDY_NO_RENEW=1``: rounds keep the stream, the pinned flag and the cache-clear
  buffer instead of renewing them.

    python tests/benchmarks/variance/tuning_suite.py --size 1MiB --rounds 12 --json-out t.json
"""

from __future__ import annotations

import os

import numpy as np

import primbench as pb

pb.register_type(np.int8, "char")
pb.register_type(np.int64, "long long")
pb.register_type(np.float32, "float")
pb.register_type(np.int32, "int")

if os.environ.get("PRIMBENCH_STUDY_NO_RENEW") == "1":
    from primbench.backends import cupy_backend

    cupy_backend.CupyDevice.renew = lambda self: None  # type: ignore[method-assign]

COPY = r"""
template<typename T, unsigned int IPT>
__global__ void copy(const T* __restrict__ in, T* __restrict__ out)
{
    unsigned int idx = threadIdx.x + blockIdx.x * 256u * IPT;
#pragma unroll
    for(unsigned int i = 0; i < IPT; ++i) out[idx + i * 256u] = in[idx + i * 256u];
}
"""
_PAD: list[object] = []


def _pad(alloc: str, rng: np.random.Generator) -> None:
    """`alloc: shift`: a pad of 0-63 x 1 MiB plus 0-255 x 512 B before the buffers, kept alive."""
    import cupy as cp

    _PAD.clear()
    if alloc == "shift":
        _PAD.append(cp.empty(int(rng.integers(0, 64)) * (1 << 20) + int(rng.integers(1, 256)) * 512, dtype=cp.uint8))


class Copy(pb.Benchmark):
    def __init__(self, type_name: str, ipt: int, alloc: str = "pool") -> None:
        self.type_name, self.ipt, self.alloc = type_name, ipt, alloc
        self.rng = np.random.default_rng()

    def meta(self) -> dict[str, object]:
        return {"algo": "tuning", "op": "copy", "type": self.type_name, "ipt": self.ipt, "alloc": self.alloc}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        dtype = np.dtype(np.int8 if self.type_name == "char" else np.int64)
        per_block = 256 * self.ipt
        items = max(per_block, state.size // dtype.itemsize // per_block * per_block)
        c_type = "char" if self.type_name == "char" else "long long"
        expr = f"copy<{c_type}, {self.ipt}>"
        kernel = cp.RawModule(code=COPY, name_expressions=[expr]).get_function(expr)
        _pad(self.alloc, self.rng)
        d_in = cp.arange(items).astype(dtype)
        d_out = cp.empty_like(d_in)
        state.set_items(items)
        state.add_reads(dtype, items)
        state.add_writes(dtype, items)
        grid = (items // per_block,)
        state.run(lambda: kernel(grid, (256,), (d_in, d_out)))


class CupyOp(pb.Benchmark):
    def __init__(self, op: str, type_name: str, alloc: str = "pool") -> None:
        self.op, self.type_name, self.alloc = op, type_name, alloc
        self.rng = np.random.default_rng()

    def meta(self) -> dict[str, object]:
        return {"algo": "tuning", "op": self.op, "type": self.type_name, "ipt": 0, "alloc": self.alloc}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        dtype = np.dtype(np.float32 if self.type_name == "float" else np.int32)
        _pad(self.alloc, self.rng)
        rng = cp.random.default_rng(state.seed)
        if self.op == "gemv":
            n = max(32, int((state.size // 4) ** 0.5))
            m = rng.random((n, n), dtype=cp.float32)
            v = rng.random(n, dtype=cp.float32)
            out = cp.empty(n, dtype=cp.float32)
            state.set_items(n * n)
            state.add_reads(dtype, n * n + n)
            state.add_writes(dtype, n)
            state.run(lambda: cp.matmul(m, v, out=out))
            return
        items = max(1024, state.size // dtype.itemsize)
        a = (rng.random(items, dtype=cp.float32) * 100).astype(dtype)
        state.set_items(items)
        state.add_reads(dtype, items)
        if self.op == "add":
            b = rng.random(items, dtype=cp.float32).astype(dtype)
            out = cp.empty_like(a)
            state.add_reads(dtype, items)
            state.add_writes(dtype, items)
            state.run(lambda: cp.add(a, b, out=out))
        elif self.op == "sum":
            s = cp.empty((), dtype=dtype)
            state.run(lambda: cp.sum(a, out=s))
        else:  # cumsum
            out = cp.empty_like(a)
            state.add_writes(dtype, items)
            state.run(lambda: cp.cumsum(a, out=out))


class TorchOp(pb.Benchmark):
    def __init__(self, op: str) -> None:
        self.op = op

    def meta(self) -> dict[str, object]:
        return {"algo": "tuning", "op": f"torch.{self.op}", "type": "float", "ipt": 0, "alloc": "pool"}

    def run(self, state: pb.State) -> None:
        import torch

        n = max(1024, state.size // 4)
        gen = torch.Generator(device="cuda").manual_seed(state.seed)
        x = torch.rand(n, device="cuda", generator=gen)
        y = torch.rand(n, device="cuda", generator=gen)
        out = torch.empty_like(x) if self.op == "mul" else torch.empty((), device="cuda")
        torch.cuda.synchronize()
        stream = torch.cuda.ExternalStream(state.stream.ptr)
        state.set_items(n)
        state.add_reads(np.float32, 2 * n if self.op == "mul" else n)
        if self.op == "mul":
            state.add_writes(np.float32, n)

        def fn() -> None:
            with torch.cuda.stream(stream):
                if self.op == "mul":
                    torch.mul(x, y, out=out)
                else:
                    torch.sum(x, dim=0, out=out)

        state.run(fn)


def main() -> None:
    ex = pb.Executor()
    ex.queue(Copy("char", 1))
    ex.queue(Copy("long long", 4))
    ex.queue(CupyOp("add", "float"))
    ex.queue(CupyOp("sum", "float"))
    ex.queue(CupyOp("cumsum", "int"))
    ex.queue(CupyOp("gemv", "float"))
    ex.queue(TorchOp("mul"))
    ex.queue(TorchOp("sum"))
    ex.queue(Copy("char", 1, "shift"))
    ex.queue(CupyOp("add", "float", "shift"))
    ex.main()


if __name__ == "__main__":
    main()
