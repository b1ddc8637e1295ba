"""A PyTorch training step (an MLP's forward and backward, one call) in eager mode and compiled
with `torch.compile`: two specializations of the same step.

One call is ``model.zero_grad(); loss(x).backward()`` for a two-layer MLP (Linear, GELU, Linear)
in bfloat16 with the mean square of its output as the loss: the forward kernels, then the
backward ones (autograd runs them on the stream the forward ran on). ``mode: compiled`` wraps the
loss in ``torch.compile`` (Inductor, default mode: no CUDA graphs of its own); its forward and
backward graphs are compiled in setup, by two untimed steps, so no compilation is measured. The
model, input and compiled function are made once and kept for every round.

PyTorch launches on its current stream, made the harness's stream with
`torch.cuda.ExternalStream(state.stream.ptr)` (see examples/torch_triton.py). Items are tokens
(rows of the input): items/s is tokens per second.

    python examples/torch_train_step.py
    python examples/torch_train_step.py --tokens 4096 --width 512
"""

from __future__ import annotations

from typing import Any

import primbench as pb

MODES = ("eager", "compiled")


class TrainStep(pb.Benchmark):
    def __init__(self, mode: str, tokens: int, width: int) -> None:
        self.mode = mode
        self.tokens = tokens
        self.width = width
        self._made: tuple[Any, Any, Any] | None = None  # model, input, loss function: kept across rounds

    def meta(self) -> dict:
        return {"algo": "mlp_train_step", "mode": self.mode}

    def _make(self, torch: Any, seed: int) -> tuple[Any, Any, Any]:
        torch.manual_seed(seed)
        model = torch.nn.Sequential(
            torch.nn.Linear(self.width, 4 * self.width),
            torch.nn.GELU(),
            torch.nn.Linear(4 * self.width, self.width),
        ).to(device="cuda", dtype=torch.bfloat16)
        x = torch.randn(self.tokens, self.width, device="cuda", dtype=torch.bfloat16)

        def loss(inputs: Any) -> Any:
            return model(inputs).float().square().mean()

        return model, x, torch.compile(loss) if self.mode == "compiled" else loss

    def run(self, state: pb.State) -> None:
        import torch

        stream = torch.cuda.ExternalStream(state.stream.ptr)
        if self._made is None:
            pb.log("Building the model" + (" and compiling its step" if self.mode == "compiled" else ""))
            with torch.cuda.stream(stream):
                self._made = self._make(torch, state.seed)
        model, x, loss = self._made

        def step() -> None:
            with torch.cuda.stream(stream):
                model.zero_grad()
                loss(x).backward()

        step()  # compiles forward and backward (compiled mode), outside the measurement
        step()
        state.set_items(self.tokens)
        state.test(lambda: pb.assert_equal(
            [int(p.grad is not None and bool(torch.isfinite(p.grad).all())) for p in model.parameters()],
            [1] * len(list(model.parameters()))))
        state.run(step)


def main() -> None:
    executor = pb.Executor()
    tokens = executor.get("tokens", 8192, "Rows of the input batch (tokens)")
    width = executor.get("width", 1024, "Model width: the MLP is width -> 4 x width -> width")
    for mode in MODES:
        executor.queue(TrainStep(mode, tokens, width))
    executor.main()


if __name__ == "__main__":
    main()
