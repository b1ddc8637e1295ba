"""Calibration of the short-regression scan (`history.segmentation.scan`), on simulated white
Gaussian noise of known spread (seed 4242: part of the tuning side, never the eval sets), and
what any detector can reach on a regression fixed 5-10 commits later.

1. The null: the largest standardized excursion of a flat series, by n. Bonferroni over every
   interval tried overstates the multiplicity (the intervals overlap); the ratio of the true
   tail to Bonferroni's at the 0.99-0.999 quantiles is the scan's effective share
   (`changepoints._EXCURSION_EFFECTIVE`).
2. The bound: with the noise known and Gaussian (the best case), the share of regressions of
   2 noise units (-2 % at 1 % noise), 5-10 commits long, whose own excursion beats the null's
   0.995 quantile (a false excursion, two false points, in 1 of 200 flat series: the issue's
   budget of 1 false point per 100), and its 0.999 quantile (primbench's alpha of 0.001), each
   edge within 2 commits of the truth (the benchmark's tolerance). No detector with that
   false-point rate finds much more: the scan is the likelihood ratio for this alternative.

Run: ``python tests/benchmarks/changepoints/calibrate_scan.py`` (about 30 s); output in
``calibrate_scan.txt``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy import stats

from primbench.history.segmentation import scan

HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(4242)
    lines = ["Short-regression scan: null tail against Bonferroni, and the best reachable recall (calibrate_scan.py)",
             "n  intervals  quantile  z  Bonferroni p  effective share"]
    bound = []
    for n, count in ((30, 20000), (100, 20000), (300, 10000), (1000, 6000)):
        t = time.perf_counter()
        top = min(16, n - 6)
        lengths = range(4, top + 1)
        w = np.ones(n)
        zs = np.empty(count)
        tried = 0
        for i in range(count):
            ex = scan(rng.standard_normal(n), w, 0, n, lengths=lengths, margin=3)
            assert ex is not None
            zs[i], tried = ex.z, ex.tried
        for q in (0.99, 0.995, 0.999):
            z = float(np.quantile(zs, q))
            p = 2 * float(stats.norm.sf(z)) * tried
            lines.append(f"{n:5d} {tried:6d} {q:6.3f} {z:6.3f} {p:8.4f} {(1 - q) / p:6.3f}")
        loose, strict = float(np.quantile(zs, 0.995)), float(np.quantile(zs, 0.999))
        hits = [0, 0]
        total = 0
        for _ in range(2000):
            length = int(rng.integers(5, 11))
            at = int(rng.integers(5, n - length - 5 + 1))
            y = rng.standard_normal(n)
            y[at:at + length] -= 2.0
            ex = scan(y, w, 0, n, lengths=lengths, margin=3)
            assert ex is not None
            total += 2
            placed = (abs(ex.start - at) <= 2) + (abs(ex.stop - at - length) <= 2)
            hits[0] += placed * (ex.z > loose)
            hits[1] += placed * (ex.z > strict)
        bound.append(f"n={n}: {hits[0] / total * 100:.1f} % of the change points at 1 false excursion per 200 "
                     f"flat series (z > {loose:.2f}), {hits[1] / total * 100:.1f} % at 1 per 1,000 (primbench's "
                     f"alpha; z > {strict:.2f}); {time.perf_counter() - t:.1f} s")
    lines += ["", "best reachable recall, regression of 2 noise units fixed 5-10 commits later, known Gaussian noise "
              "(2,000 series per n):", *bound]
    (HERE / "calibrate_scan.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
