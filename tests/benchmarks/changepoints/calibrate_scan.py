"""Calibration of the short-regression scan (`history.segmentation.scan`), on simulated white
Gaussian noise (seed 4243, part of the tuning side, never the eval sets; the first calibration,
seed 4242 with fewer series, is kept in ``calibrate_scan-4242.txt``), and what any detector can
reach on a regression fixed 5-10 commits later.

1. The null: the largest standardized excursion of a flat series, by n. Bonferroni over every
   interval tried overstates the multiplicity (the intervals overlap); the ratio of the true
   tail to Bonferroni's at the 0.995-0.999 quantiles is the scan's effective share, beside
   the share primbench uses (`changepoints._excursion_share`, fitted to both seeds' 0.999
   column).
2. The bound: the share of the change points of regressions of 2 noise units (-2 % at 1 %
   noise), 5-10 commits long, that beat the null's 0.995 quantile (a false excursion, two
   false points, in 1 of 200 flat series: the issue's budget of 1 false point per 100) or its
   0.999 quantile (primbench's alpha of 0.001), each edge within 2 commits of the truth (the
   benchmark's tolerance); (a) with the noise known (no detector does better: the scan is the
   likelihood ratio for this alternative), (b) with the noise estimated from the series itself,
   as every detector here must (the scan's statistic studentized with the spread about the two
   levels, its own null quantiles: the generalized likelihood ratio test, so again the best at
   that false-point rate). Gaussian noise: t5 tails cost more.

Run: ``python tests/benchmarks/changepoints/calibrate_scan.py`` (about 3 minutes); output in
``calibrate_scan.txt``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from scipy import stats

from primbench.history.changepoints import excursion_share
from primbench.history.segmentation import scan

HERE = Path(__file__).resolve().parent
SIZES = ((20, 60000), (30, 60000), (60, 60000), (100, 60000), (300, 30000), (1000, 20000))
BOUND_SERIES = 4000


def studentized(z: float, y: np.ndarray) -> float:
    """The scan's z with the noise estimated from the series: the spread about two levels
    (the excursion's and the rest's), n - 2 degrees of freedom."""
    rss = float(np.sum((y - y.mean()) ** 2)) - z * z
    return z / math.sqrt(max(rss, 1e-12) / (len(y) - 2))


def main() -> None:
    rng = np.random.default_rng(4243)
    lines = ["Short-regression scan: null tail against Bonferroni, and the best reachable recall (calibrate_scan.py, "
             "seed 4243)",
             "n  intervals  series  quantile  z  Bonferroni p  effective share  (primbench's share)"]
    bound = []
    for n, count in SIZES:
        t = time.perf_counter()
        lengths = range(4, min(16, n - 6) + 1)
        w = np.ones(n)
        zs, ts = np.empty(count), np.empty(count)
        tried = 0
        for i in range(count):
            y = rng.standard_normal(n)
            ex = scan(y, w, 0, n, lengths=lengths, margin=3)
            assert ex is not None
            zs[i], ts[i], tried = ex.z, studentized(ex.z, y), ex.tried
        for q in (0.995, 0.998, 0.999):
            z = float(np.quantile(zs, q))
            p = 2 * float(stats.norm.sf(z)) * tried
            lines.append(f"{n:5d} {tried:6d} {count:6d} {q:6.3f} {z:6.3f} {p:8.4f} {(1 - q) / p:6.3f}"
                         f"  ({excursion_share(tried):.3f})")
        known = float(np.quantile(zs, 0.995)), float(np.quantile(zs, 0.999))
        own = float(np.quantile(ts, 0.995)), float(np.quantile(ts, 0.999))
        hits = [0, 0, 0, 0]
        total = 0
        for _ in range(BOUND_SERIES):
            length = int(rng.integers(5, 11))
            at = int(rng.integers(5, n - length - 5 + 1))
            y = rng.standard_normal(n)
            y[at:at + length] -= 2.0
            ex = scan(y, w, 0, n, lengths=lengths, margin=3)
            assert ex is not None
            total += 2
            placed = (abs(ex.start - at) <= 2) + (abs(ex.stop - at - length) <= 2)
            zt = studentized(ex.z, y)
            for k, beats in enumerate((ex.z > known[0], ex.z > known[1], zt > own[0], zt > own[1])):
                hits[k] += placed * beats
        share = [f"{h / total * 100:.1f} %" for h in hits]
        bound.append(f"n={n}: noise known: {share[0]} (z > {known[0]:.2f}), {share[1]} (z > {known[1]:.2f}); "
                     f"noise estimated: {share[2]} (t > {own[0]:.2f}), {share[3]} (t > {own[1]:.2f}); "
                     f"{time.perf_counter() - t:.0f} s")
    lines += ["", f"best reachable recall, regression of 2 noise units fixed 5-10 commits later, Gaussian noise "
              f"({BOUND_SERIES:,} series per n), at 1 false excursion per 200 flat series (the issue's budget) and "
              "per 1,000 (primbench's alpha):", *bound]
    (HERE / "calibrate_scan.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
