"""An exploration after the twelfth evaluation (in sample on data12, not a method change): the file-level term
(`compare.core._between_files`) with each kernel's between-file spread pooled over its two sides (2 df with two
files a side) in place of one estimate a side (1 df each), beside the frozen method, on data12's p8r4x2 files.

    python tests/benchmarks/verdicts/pooled_sides12.py frozen|pooled > pooled_sides12-{frozen,pooled}.txt
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))
from primbench.compare import core  # noqa: E402


def _between_files_pooled(suite: Any, relative: np.ndarray, per_slot: np.ndarray, own: np.ndarray,
                          own_df: np.ndarray) -> None:
    spread, aligned = core._file_spreads(suite, per_slot)
    df = np.where(per_slot >= 2, per_slot - 1, 0.0)
    s2 = np.where(np.isnan(spread), 0.0, spread)
    ok = aligned & (per_slot >= 2) & ~np.isnan(spread)
    w = np.where(ok, df, 0.0).reshape(-1, 2)
    tot = w.sum(axis=1)
    pooled = np.where(tot > 0, (w * s2.reshape(-1, 2)).sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)
    both = (w > 0).all(axis=1)
    spread = np.where(np.repeat(both, 2), np.repeat(pooled, 2), spread)
    dfp = np.where(np.repeat(both, 2), np.repeat(tot, 2), per_slot - 1)
    use = relative & aligned & (per_slot >= 2) & (own > 0)
    core._take_wider(own, own_df, use, core._files_variance(spread, dfp, use, own, per_slot))

if __name__ == "__main__":
    if sys.argv[1:] == ["pooled"]:
        core._between_files = _between_files_pooled  # type: ignore[assignment]
    sys.argv = [sys.argv[0], "--sizes", "4MiB,1MiB"]
    import evaluate12

    evaluate12.PROTOCOLS = {k: v for k, v in evaluate12.PROTOCOLS.items() if k == "p8r4x2"}
    evaluate12.main()
