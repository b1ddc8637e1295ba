"""Probe (tuning data, for the next protocol): do the whole-process states of `../verdicts/h200/data4`
(at 64 KiB, identical processes on one H200 in two levels 3.5 % apart in every kernel) come from
where the buffers land?

Each process measures `eval_suite4.py`'s ten kernels with default settings. With
``PROBE_REPLACE=1`` every round first lets go of all pooled device memory (CuPy's pool, PyTorch's
caching allocator) and holds a spacer of 2-256 MiB (a random multiple of 2 MiB, from fresh
entropy) by `cudaMalloc` while it runs, so that each round's buffers land elsewhere. If the states
are placement, the re-placed rounds move between the levels within a process (the rounds see it)
and the processes' means come closer; if not, the rounds stay as they were.

    PROBE_REPLACE=1 python3 tests/benchmarks/variance/placement_probe.py --size 64KiB --json-out r-1.json
    python3 tests/benchmarks/variance/placement_probe.py analyse DIR
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "verdicts"))

_SPACER: list[int] = []


def _replace() -> None:
    import cupy as cp

    for ptr in _SPACER:
        cp.cuda.runtime.free(ptr)
    _SPACER.clear()
    cp.get_default_memory_pool().free_all_blocks()
    try:
        import torch

        torch.cuda.empty_cache()
    except ImportError:
        pass
    n = int(np.random.default_rng().integers(1, 129)) * (2 << 20)
    _SPACER.append(cp.cuda.runtime.malloc(n))


def measure() -> None:
    import eval_suite4 as s4
    from eval_suite import main as run_suite

    import primbench as pb

    class Probe(s4.Kernel):  # type: ignore[misc, valid-type]
        def run(self, state: pb.State) -> None:
            if os.environ.get("PROBE_REPLACE") == "1":
                _replace()
            super().run(state)

    run_suite(Probe, s4.KERNELS)


def analyse(folder: str) -> None:
    """Per process: its shift (median over kernels of its kernels' deviation from the median
    process) and the SD of its rounds' shared pattern (each round's median deviation over kernels)."""
    runs: dict[str, Any] = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        d = json.loads(Path(f).read_text())
        if "specializations" not in d:
            continue
        # kernels x measured rounds (a precision stop may end a kernel early: the shortest kept)
        rounds = [[np.log(r["gpu_ms_per_call"]) for r in s["rounds"][1:]] for s in d["specializations"]]
        keep = min(len(r) for r in rounds)
        runs[Path(f).stem] = (np.array([np.mean(r) for r in rounds]), np.array([r[:keep] for r in rounds]))
    if not runs:
        raise SystemExit(f"no results files in {folder}")
    names = list(runs)
    means = np.array([runs[n][0] for n in names])  # processes x kernels
    centre = np.median(means, axis=0)
    print("| process | shift % | rounds' shared pattern SD % | median round SD per kernel % |")
    print("|---|---|---|---|")
    for n, m in zip(names, means, strict=True):
        rounds = runs[n][1]
        pattern = np.median(rounds - centre[:, None], axis=0)
        print(f"| {n} | {np.median(m - centre) * 100:+.2f} | {np.std(pattern, ddof=1) * 100:.2f} | "
              f"{np.median(np.std(rounds, axis=1, ddof=1)) * 100:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "analyse":
        analyse(sys.argv[2])
    else:
        measure()
