"""A PyTorch operation and a Triton kernel timed on the harness's stream.

The state's stream is a CuPy stream; PyTorch and Triton launch on PyTorch's current stream,
so the benchmark wraps the same CUDA stream for PyTorch (`torch.cuda.ExternalStream`) and
makes it current around each call. Triton launches on PyTorch's current stream.

    python examples/torch_triton.py
"""

from __future__ import annotations

import numpy as np

import primbench as pb

pb.register_type(np.float32, "float")


def _triton_add():
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    def add(x, y, out) -> None:
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

    return add


class VectorAdd(pb.Benchmark):
    def __init__(self, impl: str) -> None:
        self.impl = impl

    def meta(self) -> dict:
        return {"algo": "vector_add", "impl": self.impl, "type": "float"}

    def run(self, state: pb.State) -> None:
        import torch

        n = state.size // 4
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        torch.cuda.synchronize()
        stream = torch.cuda.ExternalStream(state.stream.ptr)
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        if self.impl == "torch":
            def op() -> None:
                torch.add(x, y, out=out)
        else:
            add = _triton_add()

            def op() -> None:
                add(x, y, out)

        def fn() -> None:
            with torch.cuda.stream(stream):
                op()

        state.test(lambda: pb.assert_equal(int(torch.allclose(out, x + y)), 1))
        state.run(fn)


def main() -> None:
    executor = pb.Executor()
    executor.queue(VectorAdd("torch"))
    executor.queue(VectorAdd("triton"))
    executor.main()


if __name__ == "__main__":
    main()
