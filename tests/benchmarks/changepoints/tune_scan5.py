"""The short-regression scan's tuning set, fifth pass (issue 24): a Huber M-estimate test of a
heavy-tailed series' excursion, on new tuning seeds only (7501 t5, 7502 Gaussian, 7503 Laplace,
7504 AR(1) 0.3; 7511 scratch, ``CP_SCRATCH=1``: every cell on it, not recorded); every block of
100 series of one case analysed together (`analyse_many`), the cells and the scoring of
`tune_scan.py` (the fourth pass's).

Variants (switches of `history.changepoints` as it was at 2bb5183, where the method was frozen:
that commit's module is loaded, `versions.load`, as `tune_scan.py` does, and its switches set by
`variant`; ``CP_FROZEN=REV`` another commit's; the record, ``tune_scan5.txt``, ran
on the uncommitted tree just before 2bb5183: its third process on 2bb5183's code, its first two
with the same code paths under earlier switch names (``_SCAN_M`` for `_SCAN_HUBER`) and without
``only``, which is off in their variants; every variant sets every switch):
* ``main``: the method before this pass (the M-estimate test off);
* ``mK``: the scan's excursion in a heavy-tailed series (kurtosis over `_HEAVY_KURTOSIS`) tested
  by Huber M-estimates of its two levels, psi at K noise sds, their variance
  ``E psi**2 / (E psi')**2`` from the residuals (`NoiseFit.huber`, pooled over the block);
* ``gateF``: the M-estimate test counts only where the clipped means' own p is under F alpha
  (`_SCAN_HUBER_GATE`; without it, the test replaces the clipped means' wherever the series is heavy-tailed);
* ``only``: the M-estimate test only in a block that is heavy-tailed as a whole (``pooled``'s
  rule), not in a series whose own kurtosis alone says so (nor in a series analysed alone);
* ``capC``: the M-estimate test's z counted up to C times the clipped means' (`_SCAN_HUBER_CAP`;
  scratch runs only, not in the record);
* ``rawk``: each series' kurtosis (`NoiseFit.kurtosis`, what the effective degrees of freedom of
  the pooled variance come from) of its residuals as they are, less its small-sample bias, not
  of the residuals pulled in to 3 spreads;
* ``pooled``: a block whose pooled kurtosis (each series' less its small-sample bias) passes
  `_HEAVY_POOLED_KURTOSIS` (3.2) counts as heavy-tailed in every series.

Run: ``python tests/benchmarks/changepoints/tune_scan5.py VARIANT [VARIANT ...]``; ``CP_ONLY``
and ``CP_NS`` narrow a run as in `tune_scan.py`."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import tuning  # noqa: E402
from compare_detectors import Config  # noqa: E402
from generate import Noise  # noqa: E402

#: The commit whose module holds the variants' switches (the method frozen there; the rejected
#: ones have left the module since; ``CP_FROZEN=""``: this checkout's module).
cp = tuning.frozen_module("2bb5183")
SEEDS = tuning.seeds({"t5": 7501, "normal": 7502, "laplace": 7503, "ar": 7504}, 7511)
NS, ONLY = tuning.NS, tuning.ONLY


def cases() -> list[tuple[Config, int, str]]:
    """(case, blocks of 100 at n = 30 and 100, what is reported)."""
    out: list[tuple[Config, int, str]] = []
    for tails in ("t5", "laplace", "normal"):
        one = Noise(0.01, tails=tails)
        out += [(Config("flat", one), 10, "fp"), (Config("fixed", one, 0.02), 2, "recall")]
    t5h, t5 = Noise(0.005, tails="t5"), Noise(0.01, tails="t5")
    out += [(Config("flat", t5h), 10, "fp"), (Config("flat", Noise(0.005, phi=0.3)), 10, "fp"),
            (Config("burst2", t5h), 3, "any"), (Config("fixed", t5, 0.03), 2, "recall"),
            (Config("steps3", t5h), 1, "recall"), (Config("alternating3", t5h), 1, "recall"),
            (Config("step", t5, 0.03), 2, "recall"), (Config("steps3", t5), 2, "recall")]
    return out


def variant(name: str) -> None:
    """Set this module's switches for the variant `name` (its words; `tune_scan5`'s docstring)."""
    words = name.split()
    cp._SCAN_HUBER = next((float(w[1:]) for w in words if w.startswith("m") and w != "main"), 0.0)
    cp._HEAVY_POOLED = "pooled" in words
    cp._SCAN_HUBER_POOLED_ONLY = "only" in words
    cp._RAW_KURTOSIS = "rawk" in words
    cp._SCAN_HUBER_CAP = next((float(w[3:]) for w in words if w.startswith("cap")), 0.0)
    cp._SCAN_HUBER_GATE = next((float(w[4:]) for w in words if w.startswith("gate")), 0.0)


#: Blocks of 100 flat series at n = 1,000 (`tune_scan.py`: 3; here 15, as the scan's false
#: points at n = 1,000 are what the M-estimate test risks).
FLAT_1000 = 15


def blocks_at(blocks: int, n: int, what: str) -> int:
    """Blocks of 100 series a cell runs: `tune_scan.py`'s, but `FLAT_1000` of flat ones at n = 1,000."""
    return blocks if n < 1000 else FLAT_1000 if what == "fp" else max(1, (3 * blocks) // 10)


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, NS, ONLY, blocks_at)


if __name__ == "__main__":
    main()
