"""CPU time per series at 1,000 commits: this checkout beside main at abbe481 (`versions.load`;
``CP_BEFORE=REV``: at REV, the fifth pass's record ``speed_cpu-fresh4.txt`` beside 07dc46a),
each `analyse_many` over 30 series (flat, and with three steps and a fixed regression; 0.5 %
noise, the series of `compare_detectors.py`'s speed section), the two alternating, median of 7.
Process CPU time, so that the other sessions on the shared machine weigh less than in wall time.

Run: ``python tests/benchmarks/changepoints/speed_cpu.py`` (prints; ``speed_cpu-fresh3.txt`` is
its output)."""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from generate import Noise, series  # noqa: E402
from versions import load  # noqa: E402

import primbench.history.changepoints as cp  # noqa: E402

BEFORE = os.environ.get("CP_BEFORE", "abbe481")


def main() -> None:
    old = load(BEFORE)
    rng = np.random.default_rng(99)
    flat = [series("flat", 1000, Noise(0.005, tails="t5"), rng).values for _ in range(30)]
    moved = [series("steps3", 1000, Noise(0.005, tails="t5"), rng).values
             * series("fixed", 1000, Noise(0.005), rng).values / 1e12 for _ in range(30)]
    res: dict[str, tuple[list[float], list[float]]] = {BEFORE: ([], []), "this checkout": ([], [])}
    for _ in range(7):
        for name, mod in ((BEFORE, old), ("this checkout", cp)):
            for k, batch in enumerate((flat, moved)):
                t0 = time.process_time()
                mod.analyse_many(batch)
                res[name][k].append((time.process_time() - t0) / len(batch) * 1e3)
    print("analyse_many of 30 series of 1,000 commits: CPU ms per series, median of 7 runs (min), alternating")
    for name, (f, m) in res.items():
        print(f"  {name:<14} flat {statistics.median(f):6.2f} ({min(f):.2f})   "
              f"with changes {statistics.median(m):6.2f} ({min(m):.2f})")


if __name__ == "__main__":
    main()
