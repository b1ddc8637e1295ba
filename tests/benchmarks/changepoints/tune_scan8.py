"""The tuning set of the eighth pass (issue 24): the short-regression scan's false-alarm budget
weighted by excursion length, on new tuning seeds only (7801 t5, 7802 Gaussian, 7803 Laplace,
7804 AR(1) 0.3; ``CP_SCRATCH=1``: every cell on 7811, not recorded); every block of 100 series
of one case analysed together (`analyse_many`), `tune_scan7.py`'s cells and scoring.

Variants (switches of this checkout's `history.changepoints`, where the pass added them;
``CP_FROZEN=REV``: that commit's module):
* ``main``: the method before this pass (every interval an equal share of the scan's budget);
* ``prior``: the scan's budget by length (`_LENGTH_PRIOR`): lengths 5-10 a full weight each,
  the other lengths 4-16 a tenth (`_PRIOR_OTHER`), each length's share split over its intervals;
  the lengths compared by the p-value so weighted, not by z alone;
* ``otherX``: ``prior`` with the other lengths at X of a weight.

Run: ``python tests/benchmarks/changepoints/tune_scan8.py VARIANT [VARIANT ...]``; ``CP_ONLY``
and ``CP_NS`` narrow a run as in `tune_scan.py`."""

from __future__ import annotations

import sys

import tuning  # this folder is the script's: sys.path[0]; tune_scan5 puts the checkout on the path
from tune_scan5 import blocks_at
from tune_scan7 import cases

cp = tuning.frozen_module("")
SEEDS = tuning.seeds({"t5": 7801, "normal": 7802, "laplace": 7803, "ar": 7804}, 7811)


def variant(name: str) -> None:
    """Set this module's switches for the variant `name` (its words; the docstring)."""
    words = name.split()
    cp._LENGTH_PRIOR = "prior" in words or any(w.startswith("other") for w in words)
    cp._PRIOR_OTHER = next((float(w[5:]) for w in words if w.startswith("other")), 0.1)


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, tuning.NS, tuning.ONLY, blocks_at)


if __name__ == "__main__":
    main()
