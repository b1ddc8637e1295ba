"""The short-regression scan's tuning set (issue 24, fourth pass): variants of the noise the scan
is tested in and of its level, on new tuning seeds only (7401-7410; no record used them before),
every block of 100 series of one case analysed together (`analyse_many`, as the records and the
history commands do).

Variants (module switches of `history.changepoints` as it was at 27dbb3c, where the method was
frozen: the module of that commit is loaded, `versions.load`, and its switches set here; the
switches are gone from the module since, its defaults kept; `variant`):
* ``main``: the method before this pass (`_CLEAN_ALPHA` = 0: the noise measured about PELT's
  levels alone; `_POOL_ROBUST` off: limma's moments; the scan at `alpha`);
* ``chosen``: the module's defaults: the noise (spread and autocorrelation) measured with each
  segment's strongest short excursion as a level of its own where it stands out at
  `_CLEAN_ALPHA` = 0.1 in the noise first measured, its autocorrelation included
  (`_with_excursions`), pooled with robust moments and the kurtosis's effective degrees of freedom;
* ``chosen`` less or plus one piece (`variant`'s words): the rejected alternatives.

Cells: flat series (false points per 100; 1,000 series, 300 at n = 1,000), bursts of 2 (series
with a point), the -2 % and -3 % regression fixed 5-10 commits later at 1 % noise, three steps of
+-3 % at 0.5 % noise (alternating too), a single 3 % step and three steps at 1 % noise (the cells
of the Otava target), at n = 30 / 100 / 1,000; noise t(5), Laplace, Gaussian, AR(1) 0.3.

Run: ``python tests/benchmarks/changepoints/tune_scan.py VARIANT [VARIANT ...]``; prints one
line per cell (``tune_scan.txt`` is its output). ``CP_ONLY`` (a part of the case's label) and
``CP_NS`` (``30,100``) narrow a scratch run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import tuning  # noqa: E402
from compare_detectors import Config  # noqa: E402
from generate import Noise  # noqa: E402
from versions import load  # noqa: E402

#: The commit whose module holds the variants' switches (the method frozen there).
FROZEN = "27dbb3c"
_cp = load(FROZEN)
if _cp is None:
    raise SystemExit(f"error: git cannot show history/changepoints.py at {FROZEN}")
cp = _cp

SEEDS = {"t5": 7401, "normal": 7402, "laplace": 7403, "ar": 7404}
NS = tuple(int(n) for n in os.environ.get("CP_NS", "30,100,1000").split(","))
ONLY = os.environ.get("CP_ONLY", "")  # only the cases whose label holds this (scratch runs)


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
    """Set `history.changepoints`' switches for the variant `name` (its words): ``main`` the
    method before this pass; otherwise the method chosen (the module's defaults) less or plus:
    ``gP`` the gate `_CLEAN_ALPHA` = P; ``uncleaned-rho`` the autocorrelation about PELT's levels
    alone; ``uninflated-gate`` the gate's z in the white noise (not inflated by the series' first
    autocorrelation); ``xK`` the scan at K alpha; ``z`` the scan's normal tail. (``own``, in the
    record: each side of a heavy-tailed scan test pulled in about its own median rather than the
    segment's; rejected, its 12 lines removed from `_excursions` before the first commit.)"""
    words = name.split()
    main = "main" in words
    cp._CLEAN_ALPHA = 0.0 if main else next((float(w[1:]) for w in words if w.startswith("g")), 0.1)
    cp._POOL_ROBUST = not main
    cp._RHO_UNCLEANED = "uncleaned-rho" in words
    cp._GATE_INFLATED = "uninflated-gate" not in words
    cp._SCAN_ALPHA = next((float(w[1:]) for w in words if w.startswith("x")), 1.0)
    cp._SCAN_NORMAL = "z" in words
    if "own" in words:
        raise SystemExit("the 'own' variant was removed from history/changepoints.py after tune_scan.txt")


def blocks_at(blocks: int, n: int, what: str) -> int:
    """Blocks of 100 series a cell runs: a tenth of them, times 3, at n = 1,000."""
    return blocks if n < 1000 else max(1, (3 * blocks) // 10)


def main() -> None:
    tuning.run(cp, sys.argv[1:], variant, cases(), SEEDS, NS, ONLY, blocks_at)


if __name__ == "__main__":
    main()
