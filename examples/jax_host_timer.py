"""JAX measured with the host timer, beside the same saxpy (``a * x + y``) in CuPy measured both
ways, so that the cost of host timing shows on a kernel both can run.

JAX (XLA) launches on streams of its own: the harness's CUDA events and the spin kernel that
holds its stream cannot see them. ``state.run(fn, timer="host", sync=jax.block_until_ready)``
times each batch on the host clock around its calls and one ``block_until_ready`` of the last
result; each cold call (the default) is timed alone after the cache is cleared on the harness
stream and the whole device is synchronized. results.json marks these specializations
``"timer": "host"``, and `primbench compare` warns when it would compare one with an event time.

Host times include the launch (JAX's dispatch) and the synchronization: a small kernel reads
slower than with events, and the noise is higher. ``impl: cupy, timer: host`` against
``impl: cupy, timer: events`` shows that overhead on the same CuPy kernel.

    pip install 'jax[cuda13]'              # or jax[cuda12]
    python examples/jax_host_timer.py      # or: primbench run examples/jax_host_timer.py
    python examples/jax_host_timer.py --size 16MiB
"""

from __future__ import annotations

import os

import numpy as np

import primbench as pb

# JAX takes 75 % of the GPU's memory when it starts unless told not to; the harness and CuPy
# need theirs. Set before JAX is imported (it reads the variable once).
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

pb.register_type(np.float32, "float")

A = 2.0


class Saxpy(pb.Benchmark):
    def __init__(self, impl: str, timer: str) -> None:
        self.impl = impl
        self.timer = timer

    def meta(self) -> dict:
        return {"algo": "saxpy_timers", "impl": self.impl, "timer": self.timer, "type": "float"}

    def run(self, state: pb.State) -> None:
        n = state.size // 4
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        if self.impl == "jax":
            self._jax(state, n)
        else:
            self._cupy(state, n)

    def _cupy(self, state: pb.State, n: int) -> None:
        import cupy as cp

        x = cp.arange(n, dtype=cp.float32)
        y = cp.ones(n, dtype=cp.float32)
        out = cp.empty_like(x)
        a = np.float32(A)
        kernel = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out", "out = a * x + y", "saxpy")
        state.test(lambda: pb.assert_equal(out[:3], [1.0, 3.0, 5.0]))
        if self.timer == "host":
            state.run(lambda: kernel(a, x, y, out), timer="host")  # no sync=: the whole device is synchronized
        else:
            state.run(lambda: kernel(a, x, y, out))

    def _jax(self, state: pb.State, n: int) -> None:
        import jax

        device = jax.devices("gpu")[getattr(state.device, "index", 0)]  # the GPU the harness measures
        x = jax.device_put(np.arange(n, dtype=np.float32), device)
        y = jax.device_put(np.ones(n, dtype=np.float32), device)
        a = jax.device_put(np.float32(A), device)
        saxpy = jax.jit(lambda a, x, y: a * x + y)
        pb.log("Compiling with XLA")
        saxpy(a, x, y).block_until_ready()  # compiled here, in setup, not in the measurement
        state.test(lambda: pb.assert_equal(np.asarray(saxpy(a, x, y)[:3]), [1.0, 3.0, 5.0]))
        state.run(lambda: saxpy(a, x, y), timer="host", sync=jax.block_until_ready)


def main() -> None:
    executor = pb.Executor()
    executor.queue(Saxpy("cupy", "events"))
    executor.queue(Saxpy("cupy", "host"))
    executor.queue(Saxpy("jax", "host"))
    executor.main()


if __name__ == "__main__":
    main()
