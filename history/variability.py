"""Run-to-run variability of a specialization, estimated from the base branch's history.

`compare` weighs a change against how much runs of unchanged code differ (about
0.1 % on the H200, five times the noise within a run). History estimates it per
specialization from the base branch's recent runs on the same GPU.

The estimate must not be inflated by the very level shifts (real regressions and
improvements) that history also holds, nor by one bad run. So it uses successive
differences of ``ln(value)`` in date order, which a level shift touches only once, and
their median absolute deviation, which one outlier barely moves:
``cv = 1.4826 * MAD(diff(ln x)) / sqrt(2)``, a consistent estimate of the SD of ln x for
independent Gaussian runs. It needs `MIN_RUNS` runs; with fewer, compare relies on the runs'
own rounds and repeats.

An estimate from a few runs is itself uncertain, so it travels with its degrees of freedom:
the MAD of successive differences carries about `MAD_EFFICIENCY` of the information of a
sample variance, ``df = MAD_EFFICIENCY * (n - 1)``, and compare's t-test uses them (it never
treats history's variance as known). compare uses history's variance in place of what the
compared runs' own spread says, moderated across the suite's kernels relative to what those runs
predict for it (`primbench.compare.core._moderated_history`): from 6 runs a CV is worth 1.85 df.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from primbench.compare.clock import MIN_CLOCK_RANGE, shrunk_clock_responses

if TYPE_CHECKING:
    import pandas as pd

MIN_RUNS = 6
WINDOW = 30  # newest runs used
#: Huber's tuning constant (95 % efficiency at the normal) and the IRLS passes of `clock_response`.
HUBER_K = 1.345
HUBER_ITERATIONS = 10
#: Asymptotic efficiency of the MAD against the SD for Gaussian data (0.37): what a robust
#: estimate from n runs is worth in degrees of freedom, per run.
MAD_EFFICIENCY = 0.37


def degrees_of_freedom(runs: int) -> float:
    """What a robust CV from `runs` runs is worth in degrees of freedom (at least 1)."""
    return max(1.0, MAD_EFFICIENCY * (runs - 1))


def robust_cv(values: Sequence[float]) -> float | None:
    """Run-to-run CV (as a fraction) of values in run order; None when too few or degenerate."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x) and x > 0], dtype=float)
    if v.size < MIN_RUNS:
        return None
    d = np.diff(np.log(v))
    mad = float(np.median(np.abs(d - np.median(d))))
    cv = 1.4826 * mad / math.sqrt(2)
    return cv if cv > 0 else None


def run_to_run_cvs(frame: pd.DataFrame, window: int = WINDOW, *,
                   runs: Sequence[tuple[tuple[str, str], pd.DataFrame]] | None = None
                   ) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (algorithm, name): (robust CV, degrees of freedom) over the newest `window` runs of a series frame
    (`history.queries.series`, one GPU, oldest first). Runs of one config only: where a
    specialization was measured with several (``config_key``), the newest run's. `runs`: `newest_runs`
    of the same frame and window, where the caller split it already (`clock_responses` takes it too)."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for key, group in (_newest_runs(frame, window) if runs is None else runs):
        values = group["value"].astype(float).to_list()
        cv = robust_cv(values)
        if cv is not None:
            out[key] = (cv, degrees_of_freedom(len(values)))
    return out


def newest_runs(frame: pd.DataFrame, window: int = WINDOW) -> list[tuple[tuple[str, str], pd.DataFrame]]:
    """Each (algorithm, name) of a series frame with its newest `window` runs of one config (`_newest_runs`),
    as a list: what `run_to_run_cvs` and `clock_responses` of one frame take as `runs` (split once for both)."""
    return list(_newest_runs(frame, window))


def _newest_runs(frame: pd.DataFrame, window: int) -> Iterator[tuple[tuple[str, str], pd.DataFrame]]:
    """Each (algorithm, name) of a series frame with its newest `window` runs of one config: where
    a specialization was measured with several (``config_key``), the newest run's."""
    if frame.empty:
        return
    for (algorithm, name), group in frame.groupby(["algorithm", "name"], sort=False):
        if "config_key" in group.columns:
            group = group[group["config_key"] == group["config_key"].iloc[-1]]
        yield (str(algorithm), str(name)), group.tail(window)


def describe(cvs: Mapping[tuple[str, str], tuple[float, float]]) -> str:
    if not cvs:
        return "none (too few base runs): the runs' own rounds and repeats decide"
    values = sorted(cv for cv, _ in cvs.values())
    dfs = sorted(df for _, df in cvs.values())
    return (f"{len(values)} specializations, median {values[len(values) // 2] * 100:.3f} % "
            f"({dfs[len(dfs) // 2]:.1f} df)")


def clock_response(times: Sequence[float], clocks: Sequence[float | None]) -> tuple[float, float] | None:
    """A specialization's answer to the SM clock over runs in run order: the slope of ln(GPU time
    per call) on ln(SM clock MHz) and its variance, from successive differences (a level shift, a
    real regression or improvement, touches one difference only, as in `robust_cv`), a line through
    the origin by Huber's M-estimate (a difference that holds a level shift as well as a clock
    change is down-weighted, not fitted). None with fewer than `MIN_RUNS` runs that read the clock,
    or where their clocks spread less than `MIN_CLOCK_RANGE` (never moved, or only within one regime).

    Why: a GPU runs whole runs in clock regimes about 0.7 % apart (the H100s of
    tests/benchmarks/verdicts/clock_regimes*.txt), and kernels answer the clock unequally (slopes
    -0.7 to +0.6 relative to their suite); a kernel's own slope, measured where its runs differ in
    clock, corrects its change instead of widening it (`clock_responses`)."""
    pairs = [(math.log(t), math.log(c)) for t, c in zip(times, clocks, strict=True)
             if t is not None and c is not None and math.isfinite(t) and math.isfinite(c) and t > 0 and c > 0]
    if len(pairs) < MIN_RUNS:
        return None
    logs = [c for _, c in pairs]
    if max(logs) - min(logs) < MIN_CLOCK_RANGE:
        return None
    y, x = np.diff(np.array(pairs, dtype=float), axis=0).T  # x is not all 0: the clocks spread (above)
    w = np.ones_like(y)
    beta = 0.0
    for _ in range(HUBER_ITERATIONS):  # IRLS
        sxx = float((w * x) @ x)
        if not sxx > 0:
            return None
        beta = float((w * x) @ y) / sxx
        resid = y - beta * x
        scale = 1.4826 * float(np.median(np.abs(resid - np.median(resid))))
        if not scale > 0:
            break
        w = np.minimum(1.0, HUBER_K * scale / np.maximum(np.abs(resid), 1e-300))
    resid = y - beta * x
    sxx = float((w * x) @ x)
    var = float((w * resid) @ resid) / max(1.0, float(w.sum()) - 1.0) / sxx
    return (beta, var) if math.isfinite(var) else None


def clock_responses(frame: pd.DataFrame, window: int = WINDOW, *,
                    runs: Sequence[tuple[tuple[str, str], pd.DataFrame]] | None = None
                    ) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (algorithm, name): `clock_response` over the newest `window` runs of a series frame
    (`history.queries.series`: its ``value`` in its ``metric``, as a time, and ``sm_clock_mhz``,
    one GPU, oldest first), one config only as `run_to_run_cvs` takes it, shrunk toward the
    suite's (`shrunk_clock_responses`). A throughput is the inverse of a time (its slope the
    time's, negated). `runs`: as `run_to_run_cvs` takes it."""
    from primbench.metrics import METRICS

    raw: dict[tuple[str, str], tuple[float, float]] = {}
    if not {"sm_clock_mhz", "value", "metric"} <= set(frame.columns):
        return raw
    for key, group in (_newest_runs(frame, window) if runs is None else runs):
        metric = METRICS.get(str(group["metric"].iloc[-1]))
        if metric is None or metric.higher_is_better is None:
            continue
        values = group["value"].astype(float).to_numpy()
        times = 1.0 / values if metric.higher_is_better else values
        found = clock_response(times.tolist(), group["sm_clock_mhz"].astype(float).to_list())
        if found is not None:
            raw[key] = found
    return shrunk_clock_responses(raw)
