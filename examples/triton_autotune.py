"""A `@triton.autotune`d kernel: every autotune config is a specialization of its own, plus the
config the autotuner itself picks.

The configs (BLOCK_SIZE x num_warps) are plain data, `CONFIGS`, from which the autotuner is built,
so that the specializations are known without Triton (--help, --dry, --filter). Each config's
specialization launches the kernel under the autotuner with that config fixed:
``kernel.fn[grid](..., **kernel.configs[i].all_kwargs())``, which is what the autotuner runs once
it has chosen (``kernel.fn`` is the `triton.jit` function, ``all_kwargs()`` the config's
meta-parameters with num_warps, num_stages and num_ctas). The specialization
``block_size: auto, num_warps: auto`` calls the autotuner, ``kernel[grid](...)``, which
benchmarks every config during setup (outside the measurement) and keeps its choice, logged as
"autotune chose ...". So each config's time is measured, and `primbench compare` and history
track each config under its own name.

Launches go to PyTorch's current stream, made the harness's stream with
`torch.cuda.ExternalStream(state.stream.ptr)` (see examples/torch_triton.py).

    python examples/triton_autotune.py
    python examples/triton_autotune.py --filter 'num_warps: 8'
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import primbench as pb

pb.register_type(np.float32, "float")

#: The autotune configs: meta-parameters and launch options of each.
CONFIGS: list[dict[str, int]] = [
    {"BLOCK_SIZE": block, "num_warps": warps} for block in (256, 1024, 4096) for warps in (4, 8)
]
AUTO = "auto"


@functools.cache
def autotuned_add() -> tuple[Any, Any]:
    """triton and the autotuned kernel, built from `CONFIGS` (once: its autotune cache is kept)."""
    import triton
    import triton.language as tl

    configs = [triton.Config({"BLOCK_SIZE": c["BLOCK_SIZE"]}, num_warps=c["num_warps"]) for c in CONFIGS]

    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    return triton, add_kernel


class AutotunedAdd(pb.Benchmark):
    """One autotune config (`config` is its index in `CONFIGS`), or None: the autotuner's choice."""

    def __init__(self, config: int | None) -> None:
        self.config = config

    def meta(self) -> dict:
        c = CONFIGS[self.config] if self.config is not None else {"BLOCK_SIZE": AUTO, "num_warps": AUTO}
        return {"algo": "vector_add_autotune", "block_size": c["BLOCK_SIZE"], "num_warps": c["num_warps"],
                "type": "float"}

    def run(self, state: pb.State) -> None:
        import torch

        stream = torch.cuda.ExternalStream(state.stream.ptr)
        n = state.size // 4
        with torch.cuda.stream(stream):
            x = torch.rand(n, device="cuda")
            y = torch.rand(n, device="cuda")
            out = torch.empty_like(x)
        triton, kernel = autotuned_add()
        state.set_items(n)
        state.add_reads(np.float32, 2 * n)
        state.add_writes(np.float32, n)
        if self.config is None:
            with torch.cuda.stream(stream):
                kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)  # autotunes, in setup
            pb.log(f"autotune chose {kernel.best_config}")

            def op() -> None:
                kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        else:
            config = kernel.configs[self.config]
            assert config.kwargs["BLOCK_SIZE"] == CONFIGS[self.config]["BLOCK_SIZE"]
            assert config.num_warps == CONFIGS[self.config]["num_warps"]
            launch = kernel.fn[(triton.cdiv(n, config.kwargs["BLOCK_SIZE"]),)]
            options = config.all_kwargs()

            def op() -> None:
                launch(x, y, out, n, **options)

        def fn() -> None:
            with torch.cuda.stream(stream):
                op()

        state.test(lambda: pb.assert_equal(int(torch.equal(out, x + y)), 1))
        state.run(fn)


def main() -> None:
    executor = pb.Executor()
    for i in range(len(CONFIGS)):
        executor.queue(AutotunedAdd(i))
    executor.queue(AutotunedAdd(None))
    executor.main()


if __name__ == "__main__":
    main()
