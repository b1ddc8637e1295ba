"""The wall of a run as its suite grows (after the tenth evaluation; no verdict is read from it): the eighth,
ninth and tenth evaluation suites' kernels in one program, `WALL_SUITES` of them (default "10": the tenth's
8 kernels; "9,10": 16; "8,9,10": 24) under one algorithm, each named by its suite, op and type.
`h200_wall11.sh` times it.

    WALL_SUITES=8,9,10 python tests/benchmarks/verdicts/wall_suite.py --size 1MiB --processes 16
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import primbench as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))


def renamed(kernel: type[Any], number: str) -> type[Any]:
    """The suite's kernel under the algorithm "wall", its suite's number in its name."""

    class Wall(kernel):  # type: ignore[misc, valid-type]
        def meta(self) -> dict[str, object]:
            return {"algo": "wall", "suite": number, "op": self.op, "type": self.type_name}

    return Wall


def main() -> None:
    ex = pb.Executor()
    for number in (n.strip() for n in (os.environ.get("WALL_SUITES") or "10").split(",")):
        suite = importlib.import_module(f"eval_suite{number}")
        kernel = renamed(suite.Kernel, number)
        for op, type_name in suite.KERNELS:
            ex.queue(kernel(op, type_name))
    ex.main()


if __name__ == "__main__":
    main()
