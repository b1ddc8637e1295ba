"""The short-regression scan's tuning set, sixth pass (issue 24): how much of the flat-series
budget the scan may spend where its Bonferroni count is small, on new tuning seeds only (7601
t5, 7602 Gaussian, 7603 Laplace, 7604 AR(1) 0.3; 7611 scratch, ``CP_SCRATCH=1``: every cell on
it, not recorded); every block of 100 series of one case analysed together (`analyse_many`),
the cells and the scoring of `tune_scan5.py` (the fifth pass's).

Variants (switches of `history.changepoints` as it was at the commit named by ``CP_FROZEN``,
where the variants' switches were; ``CP_FROZEN=""``: this checkout's module):
* ``main``: the method before this pass (the scan at alpha);
* ``spendF``: the scan's excursion counts where its p is under F alpha (`_SCAN_SPEND`), where
  the scan's count of intervals is at most C (`_SPEND_COUNT`, ``countC``; default 3,000: about
  n = 250; at n = 1,000 the count is about 13,000 and the scan stays at alpha).

Run: ``python tests/benchmarks/changepoints/tune_scan6.py VARIANT [VARIANT ...]``; ``CP_ONLY``
and ``CP_NS`` narrow a run as in `tune_scan.py`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import tuning  # noqa: E402
from tune_scan5 import cases  # noqa: E402
from versions import load  # noqa: E402

FROZEN = os.environ.get("CP_FROZEN", "")
if FROZEN:
    _cp = load(FROZEN)
    if _cp is None:
        raise SystemExit(f"error: git cannot show history/changepoints.py at {FROZEN}")
    cp = _cp
else:
    from primbench.history import changepoints as cp

SEEDS = ({"t5": 7611, "normal": 7611, "laplace": 7611, "ar": 7611} if os.environ.get("CP_SCRATCH")
         else {"t5": 7601, "normal": 7602, "laplace": 7603, "ar": 7604})
NS = tuple(int(n) for n in os.environ.get("CP_NS", "30,100,1000").split(","))
ONLY = os.environ.get("CP_ONLY", "")


def variant(name: str) -> None:
    """Set this module's switches for the variant `name` (its words; the docstring)."""
    words = name.split()
    cp._GATE_POOLED = "gatepooled" in words
    cp._KEEP_RHO = "keeprho" in words
    cp._GATE_WHITE = 1.1 if "white" in words else 0.0
    cp._GATE_RHO_CLEAN = "gaterho" in words


def blocks_at(blocks: int, n: int, what: str) -> int:
    """`tune_scan5.py`'s blocks: 15 of flat series at n = 1,000."""
    return blocks if n < 1000 else 15 if what == "fp" else max(1, (3 * blocks) // 10)


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, NS, ONLY, blocks_at)


if __name__ == "__main__":
    main()
