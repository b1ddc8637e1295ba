"""A synchronous operation, benchmarked with the `sync` flag: a reduction whose result is
copied back to the host every call (`cupy.ndarray.get()` waits for the stream). Stream
blocking would deadlock against that wait until its timeout, so the executor is built with
``primbench.flags.sync``: no spin kernel, events still around each call.

    python examples/sync_benchmark.py
"""

from __future__ import annotations

import numpy as np

import primbench as pb

pb.register_type(np.float32, "float")


class SumToHost(pb.Benchmark):
    def __init__(self, dtype: type) -> None:
        self.dtype = np.dtype(dtype)

    def meta(self) -> dict:
        return {"algo": "sum_to_host", "type": pb.type_name(self.dtype)}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        n = state.size // self.dtype.itemsize
        x = cp.ones(n, dtype=self.dtype)
        state.set_items(n)
        state.add_reads(self.dtype, n)
        result: list[float] = []
        state.test(lambda: pb.assert_equal([round(result[-1])], [n]))

        def fn() -> None:
            result.append(float(x.sum().get()))  # .get() synchronizes: a synchronous call
            del result[:-1]

        state.run(fn)


def main() -> None:
    executor = pb.Executor(flags=pb.flags.sync)
    executor.queue(SumToHost(np.float32))
    executor.main()


if __name__ == "__main__":
    main()
