"""The short-regression scan's budget by excursion length (issue 24, eighth pass), on simulated
Gaussian noise with its scale known (not the evaluation's generator, not primbench's code): how
much a -2 sd excursion of 5-10 points (the issue's regression fixed 5-10 commits later at 1 %
noise) gains when the scan's false-alarm budget is split by length rather than equally over
every interval of 4-16 points.

One segment of n points (margin 3 at each end), z of every interval's mean against the rest's.
(1) The scan's rule in primbench's form, Bonferroni times `excursion_share`: a flat share per
interval (before), and a share per length (``prior``: lengths 5-10 a weight of 1, the others
`other`), each length's share split over its intervals; the rejection rate on flat series and
the power on the regressions at a p-value threshold of 0.001 (primbench's alpha) and 0.005 (the
issue's budget of 1 false point per 100 series: one false excursion per 200). (2) The same
statistics with each length's null tail taken from the simulation itself (no Bonferroni), at a
fixed rate of false excursions: what the weighting is worth once calibrated, beside
Dümbgen-Spokoiny-like weights that favour the longer intervals (in proportion to sqrt(L) or L).

Run: ``python tests/benchmarks/changepoints/length_prior.py`` (about a minute); writes
``length_prior.txt``. Seeds 7801 (flat) and 7802 (regressions): this pass's scratch seeds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.special import ndtr

HERE = Path(__file__).resolve().parent
LENGTHS = np.arange(4, 17)
MARGIN = 3


def best_by_length(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each series' largest |z| at each length (columns), and the intervals each length compares."""
    rows, n = y.shape
    c = np.concatenate([np.zeros((rows, 1)), np.cumsum(y, 1)], 1)
    total = c[:, -1:]
    best, counts = [], []
    for length in LENGTHS:
        first = np.arange(MARGIN, n - MARGIN - length + 1)
        inside = c[:, first + length] - c[:, first]
        z = np.abs(inside / length - (total - inside) / (n - length)) / np.sqrt(1 / length + 1 / (n - length))
        best.append(z.max(1))
        counts.append(len(first))
    return np.stack(best, 1), np.array(counts)


def share(count: int) -> float:
    """primbench's `excursion_share`."""
    return min(max(0.46 - 0.092 * math.log10(count / 66), 0.2), 0.5)


def regressions(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    y = rng.standard_normal((rows, n))
    for i in range(rows):
        length = int(rng.integers(5, 11))
        at = int(rng.integers(5, n - length - 5 + 1))
        y[i, at:at + length] -= 2.0
    return y


def empirical_p(m: np.ndarray, ref: np.ndarray) -> np.ndarray:
    out = np.empty_like(m)
    for j in range(m.shape[1]):
        r = np.sort(ref[:, j])
        out[:, j] = (len(r) - np.searchsorted(r, m[:, j], side="left") + 1) / (len(r) + 1)
    return out


def main() -> None:
    lines = ["length_prior.py: the short-regression scan's budget by excursion length, on Gaussian noise with its "
             "scale known (seeds 7801 flat, 7802 regressions)", ""]
    for n, flat_rows in ((30, 200_000), (100, 60_000)):
        null, counts = best_by_length(np.random.default_rng([7801, n]).standard_normal((flat_rows, n)))
        alt, _ = best_by_length(regressions(np.random.default_rng([7802, n]), 20_000, n))
        total = int(counts.sum())
        lines.append(f"n = {n}: {total} intervals, share {share(total):.3f}; "
                     f"{flat_rows:,} flat series, 20,000 regressions")
        lines.append("  (1) Bonferroni x share: rule, p threshold: false excursions per flat series, power")
        for other in (None, 0.1, 0.2, 0.3):
            if other is None:
                factors = np.full(len(LENGTHS), float(total))
                name = "flat share per interval"
            else:
                prior = np.where((LENGTHS >= 5) & (LENGTHS <= 10), 1.0, other)
                factors = counts / (prior / prior.sum())
                name = f"prior, other lengths {other:g}"
            for alpha in (0.001, 0.005):
                p_null = (2 * ndtr(-null) * factors * share(total)).min(1)
                p_alt = (2 * ndtr(-alt) * factors * share(total)).min(1)
                lines.append(f"    {name:<28} {alpha:<6g}: {100 * np.mean(p_null < alpha):.3f} %, "
                             f"{100 * np.mean(p_alt < alpha):.1f} %")
        half = flat_rows // 2
        ref, test = null[:half], null[half:]
        lines.append("  (2) each length's null tail simulated: weights, false-excursion rate: power")
        p_test, p_alt = empirical_p(test, ref), empirical_p(alt, ref)
        for rate in (0.001, 0.005):
            threshold = float(np.quantile(test.max(1), 1 - rate))
            power = 100 * np.mean(alt.max(1) > threshold)
            lines.append(f"    largest z of any length (no weights)  {rate:<6g}: {power:.1f} %")
            for name, weights in (("equal per length", np.ones(len(LENGTHS))),
                                  ("prior, other lengths 0.1", np.where((LENGTHS >= 5) & (LENGTHS <= 10), 1.0, 0.1)),
                                  ("sqrt(L)", np.sqrt(LENGTHS)), ("L", LENGTHS * 1.0)):
                w = weights / weights.sum()
                stat_test, stat_alt = (p_test / w).min(1), (p_alt / w).min(1)
                cut = float(np.quantile(stat_test, rate))
                lines.append(f"    {name:<37} {rate:<6g}: {100 * np.mean(stat_alt <= cut):.1f} %")
        lines.append("")
    (HERE / "length_prior.txt").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
