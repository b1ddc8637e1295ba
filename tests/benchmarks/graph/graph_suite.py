"""Issue 26's CUDA-graph suite: the harness's graph column (``graph = True``) on kernels whose
launch overhead differs, and on functions whose capture is impossible.

    python tests/benchmarks/graph/graph_suite.py --json-out graph.json

Specializations (1 MiB of floats unless said):

* ``chain10``: 10 launches of a RawKernel ``y = a * x + y`` (the chain of examples/cuda_graph.py);
* ``single``: 1 launch of it;
* ``cupy10``: 10 CuPy elementwise calls (``cp.multiply`` into a preallocated output);
* ``cupy_alloc``: one ``cp.multiply`` that allocates its output each call (the memory pool
  allocates while the stream captures);
* ``host_timer``: ``single`` timed with the host timer: the graph column says why not.

``PRIMBENCH_FAKE=1`` runs it on the fake GPU (`issue26_fake`): logic only, no figure is real.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/benchmarks: issue26_fake
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # cuda_graph: its kernel

import issue26_fake
from cuda_graph import BLOCK, CODE  # the kernel of the chain, as examples/cuda_graph.py has it

import primbench as pb

CASES = ("chain10", "single", "cupy10", "cupy_alloc", "host_timer")


class GraphCase(pb.Benchmark):
    graph = True  # the benchmark asks for the graph column itself (as --graph does for all)

    def __init__(self, case: str) -> None:
        self.case = case

    def meta(self) -> dict[str, Any]:
        return {"algo": "graph", "case": self.case}

    def run(self, state: pb.State) -> None:
        n = state.size // 4
        state.set_items(n)
        launches = 10 if self.case in ("chain10", "cupy10") else 1
        timer = "host" if self.case == "host_timer" else "events"
        if issue26_fake.enabled():
            device: Any = state.device
            ms = 2 * state.size / 4e12 * 1e3 + 0.001

            def fake() -> None:
                for _ in range(launches):
                    device.launch(issue26_fake.jitter(ms))

            state.run(fake, timer=timer)
            return
        import cupy as cp

        x = cp.ones(n, dtype=cp.float32)
        y = cp.zeros(n, dtype=cp.float32)
        fn: Any
        if self.case.startswith("cupy"):
            if self.case == "cupy_alloc":
                def fn() -> Any:
                    return cp.multiply(x, 2.0)  # a new output each call, from the memory pool
            else:
                def fn() -> None:
                    for _ in range(launches):
                        cp.multiply(x, 1.0001, out=y)
        else:
            kernel = cp.RawKernel(CODE, "axpy")
            grid = ((n + BLOCK - 1) // BLOCK,)
            args = (x, y, np.float32(0.5), np.uint32(n))

            def fn() -> None:
                for _ in range(launches):
                    kernel(grid, (BLOCK,), args)
        state.run(fn, timer=timer)


def main() -> None:
    ex = pb.Executor(settings=pb.Settings(size=pb.MiB),
                     device=issue26_fake.device() if issue26_fake.enabled() else None)
    for case in CASES:
        ex.queue(GraphCase(case))
    ex.main()


if __name__ == "__main__":
    main()
