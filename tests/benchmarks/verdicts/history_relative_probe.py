"""Probe (in sample, on data11; dropped): `history compare` with history's run-to-run CV taken about each
run's suite centre (each run's kernel values over the median of that run's kernels) instead of the values
themselves, through `history_loo.py`'s leave-out.

    python tests/benchmarks/verdicts/history_relative_probe.py --base-in-history data11/p16r4:1MiB,4MiB \
        > tests/benchmarks/verdicts/history_relative_probe.txt

The second variant dropped beside it (the workers' spread about the suite plus history's excess over what it
predicts, a change of `compare.core._side_terms`) is described in README.md ("`history compare` with the base in
its history"); it was measured with `history_loo.py --base-in-history` on a patched checkout and reverted.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import history_loo  # noqa: E402

from primbench.history.variability import run_to_run_cvs  # noqa: E402

Key = tuple[str, str]
Cvs = dict[Key, tuple[float, float]]


def relative_cvs(history: list[Path], summaries: dict[Path, Cvs]) -> Cvs:
    """`history_loo.history_cvs` on each run's values over the median of its kernels' values."""
    rows = []
    for f in history:
        logs = {k: math.log(v[0]) for k, v in summaries[f].items()}
        centre = statistics.median(logs.values())
        rows += [{"algorithm": k[0], "name": k[1], "value": math.exp(x - centre)} for k, x in logs.items()]
    return run_to_run_cvs(pd.DataFrame(rows))


if __name__ == "__main__":
    history_loo.history_cvs = relative_cvs
    history_loo.main()
