"""The tuning set of the sixth pass (issue 24): the excursions' gate of series analysed
together in their pooled noise, on new tuning seeds only (7601 t5, 7602 Gaussian, 7603 Laplace,
7604 AR(1) 0.3; 7611 and 7612 scratch, ``CP_SCRATCH=1``: every cell on 7611, not recorded);
every block of 100 series of one case analysed together (`analyse_many`), the cells and the
scoring of `tune_scan5.py` (the fifth pass's).

Variants (switches of `history.changepoints` as it was at 7742c19, where the variants' switches
were: that commit's module is loaded, `versions.load`; ``CP_FROZEN=REV`` another commit's,
``CP_FROZEN=""`` this checkout's; the record's first two variants ran on 59e9571, which had
``gatepooled`` only, with the same code paths):
* ``main``: the method before this pass (each series' own autocorrelation in the gate, the
  noise pooled once);
* ``gatepooled``: the gate's z in the first pooling's autocorrelation (`_GATE_POOLED`), the
  noise pooled again from the series' noise so gated (`_clean`);
* ``white``: ``gatepooled`` only where the first pooling's autocorrelation inflates a mean's
  variance by at most 1.1 (`_GATE_WHITE`);
* ``keeprho``: the second pooling keeps the first one's autocorrelation (`_KEEP_RHO`; scratch only).

Run: ``python tests/benchmarks/changepoints/tune_scan6.py VARIANT [VARIANT ...]``; ``CP_ONLY``
and ``CP_NS`` narrow a run as in `tune_scan.py`."""

from __future__ import annotations

import sys

import tuning  # this folder is the script's: sys.path[0]; tune_scan5 puts the checkout on the path
from tune_scan5 import blocks_at, cases

cp = tuning.frozen_module("7742c19")
SEEDS = tuning.seeds({"t5": 7601, "normal": 7602, "laplace": 7603, "ar": 7604}, 7611)


def variant(name: str) -> None:
    """Set this module's switches for the variant `name` (its words; the docstring)."""
    words = name.split()
    cp._GATE_POOLED = "gatepooled" in words
    cp._KEEP_RHO = "keeprho" in words
    cp._GATE_WHITE = 1.1 if "white" in words else 0.0


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, tuning.NS, tuning.ONLY, blocks_at)


if __name__ == "__main__":
    main()
