"""The tuning set of the seventh pass (issue 24): which pieces PELT cut are left to the
short-regression scan, and where the scan locates its interval, on new tuning seeds only (7701
t5, 7702 Gaussian, 7703 Laplace, 7704 AR(1) 0.3; ``CP_SCRATCH=1``: every cell on 7711, not
recorded); every block of 100 series of one case analysed together (`analyse_many`), the cells
and the scoring of `tune_scan5.py` (the fifth pass's), and the 3-step staircase and the
alternating levels at 1 % noise (the cells at equal precision with Otava that were missed).

Variants (switches of `history.changepoints` as it was at f9b3f15, the commit that added them,
which is loaded; ``CP_FROZEN=REV``: another commit's; ``CP_FROZEN=""``: this checkout's module,
which keeps only the chosen rule, ``ret``).
* ``main``: the method before this pass;
* ``ret``: a piece of 4-16 points that PELT cut out and that goes away and comes back is left
  to the scan (`_leave_to_scan`) only where its two neighbours are one level by PELT's own
  penalty (`_RETURN_ONLY`): the scan's model is an excursion with both sides at one level;
* ``loc``: the scan locates its interval on the points pulled in to 2.5 sds that it tests, not
  on the winsorized ones (`_LOCATE_CLIPPED`; heavy-tailed series only).

Run: ``python tests/benchmarks/changepoints/tune_scan7.py VARIANT [VARIANT ...]``; ``CP_ONLY``
and ``CP_NS`` narrow a run as in `tune_scan.py`."""

from __future__ import annotations

import sys

import tuning  # this folder is the script's: sys.path[0]; tune_scan5 puts the checkout on the path
from compare_detectors import Config
from generate import Noise
from tune_scan5 import blocks_at
from tune_scan5 import cases as cases5

cp = tuning.frozen_module("f9b3f15")
SEEDS = tuning.seeds({"t5": 7701, "normal": 7702, "laplace": 7703, "ar": 7704}, 7711)


def cases() -> list[tuple[Config, int, str]]:
    """`tune_scan5.py`'s cells and the alternating levels at 1 % t5 noise."""
    return [*cases5(), (Config("alternating3", Noise(0.01, tails="t5")), 2, "recall")]


def variant(name: str) -> None:
    """Set this module's switches for the variant `name` (its words; the docstring)."""
    words = name.split()
    cp._RETURN_ONLY = "ret" in words
    cp._LOCATE_CLIPPED = "loc" in words


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, tuning.NS, tuning.ONLY, blocks_at)


if __name__ == "__main__":
    main()
