"""Each kernel's answer to the SM clock: d ln(time per call) / d ln(SM clock), measured where runs
differ in clock, and shrunk toward the suite's answer.

A GPU runs whole runs, and sometimes parts of a run, in clock regimes about 0.7 % apart (the H100s
of tests/benchmarks/verdicts/clock_regimes*.txt; a boost bin NVML does not report, the cycle counter
does), and kernels answer the clock unequally: one bound by its SMs about -1, one bound by memory
about 0. Where a comparison's sides ran at different clocks, a kernel's own slope corrects its change
instead of widening it (`primbench.compare.core._clock_part`). Two places measure it:

* history, over a branch's successive runs (`primbench.history.variability.clock_response`);
* the compared runs themselves (`within_files`), where the worker processes of a ``--processes``
  run sat in different regimes: the slope of each worker's mean on its clock, both taken about
  their file's mean, so that neither the change compared nor a state a run's workers share plays
  a part in it.

Both go through `shrunk_clock_responses` (empirical Bayes toward the suite's mean slope).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

#: The least spread of the runs' SM clocks (max - min of ln MHz) a slope on the clock is measured over:
#: half the gap between the two clock regimes the H100s ran whole runs in (about 1,977 and 1,991 MHz, 0.7 %:
#: tests/benchmarks/verdicts/clock_regimes.txt). A slope read off runs within one regime (their clocks
#: 0.01-0.05 % apart) is extrapolated tenfold and more to a pair across regimes: on data9's 64 MiB runs
#: six runs 0.01 % apart gave a slope of -5.2 "measured" to +-0.44, which turned one A/A run at the
#: other regime into a -3.2 % regression in six pairs (tests/benchmarks/verdicts/history_loo9-11-floor.txt).
MIN_CLOCK_RANGE = 0.0035
#: The fewest runs (workers) with a clock a side that `within_files` measures a slope from.
MIN_RUNS_A_SIDE = 3


def within_files(row: np.ndarray, side: np.ndarray, file: np.ndarray, clock: np.ndarray, value: np.ndarray,
                 rows: int, *, min_files: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Each row's slope of its runs' `value` (ln of the metric) on their `clock` (ln MHz), both
    taken about their file's mean (a line per file, one slope a row: the workers of one run that sat
    in different clock regimes), and the slope's variance (the residuals' over runs less files less
    one, over the clocks' sum of squares). Within files, so that neither the change compared nor a
    state that a file's workers share (a run's state beyond its clock, tests/benchmarks/verdicts/
    run_states14.txt) can read as an answer to the clock: on data12b's 64 MiB, slopes taken across
    a side's two files, one in each regime, turned such states into three false alarms in 20 A/A
    pairs. NaN for a row with fewer than `MIN_RUNS_A_SIDE` runs that read the clock on a side, or
    fewer than `min_files` files, or whose clocks about their files' means spread less than
    `MIN_CLOCK_RANGE`.

    The residuals are taken as independent; the shrinkage (`shrunk_clock_responses`) and the A/A
    evaluations are what bound the rest (tests/benchmarks/verdicts/README.md)."""
    row = np.asarray(row, dtype=np.int64)
    side = np.asarray(side, dtype=np.int64)
    x, y = np.asarray(clock, dtype=float), np.asarray(value, dtype=float)
    beta, var = np.full(rows, math.nan), np.full(rows, math.nan)
    known = np.isfinite(x) & np.isfinite(y)
    if not known.any():
        return beta, var
    row, side, x, y = row[known], side[known], x[known], y[known]
    slot, slots = 2 * row + side, 2 * rows
    n_slot = np.bincount(slot, minlength=slots)
    g = np.asarray(file, dtype=np.int64)[known]
    _, cell = np.unique(slot * (int(g.max(initial=0)) + 1) + g, return_inverse=True)
    cells = int(cell.max(initial=-1)) + 1
    n_cell = np.bincount(cell, minlength=cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        xc = x - (np.bincount(cell, weights=x, minlength=cells) / n_cell)[cell]
        yc = y - (np.bincount(cell, weights=y, minlength=cells) / n_cell)[cell]
    first = np.unique(cell, return_index=True)[1]  # one run of each cell (a side's file)
    cells_of_row = np.bincount(row[first], minlength=rows)
    files_a_side = np.bincount(slot[first], minlength=slots).reshape(rows, 2)
    high = np.full(rows, -math.inf)
    low = np.full(rows, math.inf)
    np.maximum.at(high, row, xc)
    np.minimum.at(low, row, xc)
    sxx = np.bincount(row, weights=xc * xc, minlength=rows)
    sxy = np.bincount(row, weights=xc * yc, minlength=rows)
    syy = np.bincount(row, weights=yc * yc, minlength=rows)
    n = np.bincount(row, minlength=rows)
    ok = ((n_slot.reshape(rows, 2).min(axis=1) >= MIN_RUNS_A_SIDE) & (files_a_side.min(axis=1) >= min_files)
          & (high - low >= MIN_CLOCK_RANGE) & (sxx > 0))
    at = np.flatnonzero(ok)
    b = sxy[at] / sxx[at]
    rss = np.maximum(syy[at] - b * sxy[at], 0.0)
    beta[at] = b
    var[at] = rss / np.maximum(n[at] - cells_of_row[at] - 1, 1) / sxx[at]
    return beta, var


def shrunk_clock_responses(raw: Mapping[tuple[str, str], tuple[float, float]]
                           ) -> dict[tuple[str, str], tuple[float, float]]:
    """Each kernel's slope shrunk toward its suite's: kernels answer the clock about a mean m with
    a spread V across the suite, so a slope b measured with variance s^2 is worth
    m + (b - m) V / (V + s^2), with variance V s^2 / (V + s^2) (empirical Bayes, as limma
    moderates variances). m is the mean of the slopes more precise than the prior; V their spread
    less their own noise (moments), taken at its upper bound (two standard errors up) and never
    above the prior's (`primbench.compare.priors.CLOCK_RESPONSE_SD`, the physics bound), so that a
    suite of few kernels does not read as answering alike. A kernel whose slope says little gets
    about (m, V): the suite's answer and spread; none where that is no better than the prior
    (compare then uses the prior's term). With fewer than 3 slopes more precise than the prior
    there is no suite to learn from: those slopes as measured, no others."""
    from primbench.compare.priors import CLOCK_RESPONSE_SD

    prior = CLOCK_RESPONSE_SD**2
    if not raw:
        return {}
    # the suite's moments from the slopes that say something (more precise than the prior)
    told = [v for v in raw.values() if v[1] < prior]
    b = np.array([v[0] for v in told], dtype=float)
    s2 = np.array([v[1] for v in told], dtype=float)
    k = len(b)
    if k < 3:  # no suite to learn from: the slopes that say something, as measured
        return {key: v for key, v in raw.items() if v[1] < prior}
    m = float(b.mean())
    noise = float(s2.mean())
    spread = max(0.0, float(b.var(ddof=1)) - noise)
    spread = min(prior, spread + 2.0 * math.sqrt(2.0 / (k - 1)) * (spread + noise))
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for key, (beta, var) in raw.items():
        if spread <= 0.0:
            out[key] = (m, 0.0)
            continue
        keep = spread / (spread + var)
        post_var = spread * var / (spread + var)
        if post_var < prior:
            out[key] = (m + (beta - m) * keep, post_var)
    return out
