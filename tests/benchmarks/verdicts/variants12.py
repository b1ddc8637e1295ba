"""Why the twelfth evaluation's two-run sides report too wide a standard error (`calibration12.txt`: the A/A changes
spread 0.69-0.84x it), and four variants of the two places that set it, each on every A/A pair of `h200/data12`
(4 MiB, 1 MiB) and `h200/data12b` (64 MiB, 64 KiB), two p8r4 files a side. In sample: a diagnosis, no method is
changed by it.

    python tests/benchmarks/verdicts/variants12.py > tests/benchmarks/verdicts/variants12.txt

The two places (`primbench/compare/core.py`): `_relative_spreads` (each kernel's spread over a side's 16 workers,
each worker's value less that worker's mean over the suite's kernels: the shape of what each kernel is predicted
to vary by) and `_between_files` (each kernel's spread over the side's two files, 1 df, moderated across the suite
over that prediction, and taken where it is wider). First, for each size, the prior `_between_files` fits on one
pair (df0, s0^2 relative to the workers' prediction). Then per variant: A/A exit 1, rows unchanged, the RMS of
the A/A changes over their standard errors (1 is right), the same per kernel (its range over the kernels and
the SD of its log: the error's shape, 0 where every kernel is off by one factor), the median detectable change
over every row.

- `frozen`: the method as it is.
- `nomax`: `_between_files` takes the moderated files' variance even where it is narrower than the workers'.
- `raw`: each kernel's spread over the workers as it is, no suite mean taken out.
- `lesser`: the smaller of `raw` and the frozen spread about the suite.
- `median`: the workers' spread about each worker's median over the kernels, not its mean.
- `median2`: `median`, and the files' spread about the suite's median too.
"""

from __future__ import annotations

import itertools
import math
import statistics as st
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

import primbench.compare.core as core  # noqa: E402
from primbench.compare import stats  # noqa: E402

SETS = (("4MiB", "data12"), ("1MiB", "data12"), ("64MiB", "data12b"), ("64KiB", "data12b"))
FROZEN_ABOUT, FROZEN_SPREADS, FROZEN_FILES = core._about_the_suite, core._relative_spreads, core._between_files


def raw(values: np.ndarray) -> np.ndarray:
    return values.var(axis=1, ddof=1)


def about_median(values: np.ndarray) -> np.ndarray:
    return (values - np.median(values, axis=0, keepdims=True)).var(axis=1, ddof=1)


def lesser(values: np.ndarray) -> np.ndarray:
    return np.minimum(FROZEN_ABOUT(values), raw(values))


def spreads_with(spread: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], tuple[np.ndarray, np.ndarray]]:
    """`_relative_spreads` with `spread` in place of the spread about the suite's mean (there alone: the files'
    stage keeps whatever `_about_the_suite` is outside the call)."""
    def relative_spreads(suite: Any) -> tuple[np.ndarray, np.ndarray]:
        outside = core._about_the_suite
        core._about_the_suite = spread
        try:
            return FROZEN_SPREADS(suite)
        finally:
            core._about_the_suite = outside
    return relative_spreads


def files_without_max(suite: Any, relative: np.ndarray, per_slot: np.ndarray, own: np.ndarray,
                      own_df: np.ndarray) -> None:
    """`_between_files`, the moderated files' variance taken everywhere it can be."""
    spread, aligned = core._file_spreads(suite, per_slot)
    use = relative & aligned & (per_slot >= 2) & (own > 0)
    if (files := core._files_variance(spread, per_slot - 1, use, own, per_slot)) is not None:
        own[use], own_df[use] = files


VARIANTS: dict[str, dict[str, Any]] = {
    "frozen": {},
    "nomax": {"_between_files": files_without_max},
    "raw": {"_relative_spreads": spreads_with(raw)},
    "lesser": {"_relative_spreads": spreads_with(lesser)},
    "median": {"_relative_spreads": spreads_with(about_median)},
    "median2": {"_relative_spreads": spreads_with(about_median), "_about_the_suite": about_median},
}


def sampling_alone(labels: int, reps: int = 5000) -> tuple[float, float, float]:
    """The SD of the log of one kernel's RMS(change) / (true SE) over every ordered pair of `labels` labels when
    the error is exactly right (Gaussian label means, seed 12), and its 5-95 % range: how far per-kernel ratios
    spread from sampling alone."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=(reps, labels))
    d = np.array([(x[:, i] - x[:, j]) ** 2 for i, j in itertools.permutations(range(labels), 2)])
    logs = np.log(np.sqrt(d.mean(axis=0) / 2))
    lo, hi = np.exp(np.percentile(logs, [5, 95]))
    return float(logs.std()), float(lo), float(hi)


def pairs(size: str, root: str) -> tuple[list[list[Path]], dict[Path, Any]]:
    d = HERE / "h200" / root / "p8r4x2" / size
    ks = sorted({int(f.stem.split("-")[1]) for f in d.glob("aa-*-p1.json")})
    aa = [[d / f"aa-{k}-p1.json", d / f"aa-{k}-p2.json"] for k in ks]
    return aa, {p: core.load_side(p) for lab in aa for p in lab}


def the_prior(aa: list[list[Path]], loaded: dict[Path, Any]) -> str:
    """The prior `_between_files` fits on the first A/A pair (its ratio of the files' spread to the prediction)."""
    seen: list[Any] = []
    moderated_over = stats.moderated_over

    def spy(s_sq: np.ndarray, df: np.ndarray, predicted: np.ndarray) -> Any:
        seen.append((df.max(), stats.fit_prior(s_sq / predicted, df)))
        return moderated_over(s_sq, df, predicted)
    stats.moderated_over = spy
    try:
        core.compare_runs([r for p in aa[0] for r in loaded[p]], [r for p in aa[1] for r in loaded[p]])
    finally:
        stats.moderated_over = moderated_over
    return "; ".join(f"{'files' if df == 1 else 'workers'} ({df:.0f} df a kernel): df0 {p.df0:.1f}, s0^2 {p.s0_sq:.2f}"
                     for df, p in seen if p is not None)


def main() -> None:
    print("# Two p8r4 files a side: where the standard error's width comes from (variants12.py, in sample)\n")
    for size, root in SETS:
        aa, loaded = pairs(size, root)
        print(f"## {size} ({root}): {len(aa)} A/A labels, {len(aa) * (len(aa) - 1)} ordered pairs\n")
        print(f"Priors fitted on aa-1 against aa-2: {the_prior(aa, loaded)}\n")
        print("| variant | A/A exit 1 | rows unchanged | RMS of change / SE | per kernel: range, SD of its log "
              "| median detectable (rows) |")
        print("|---|---|---|---|---|---|")
        for name, patch in VARIANTS.items():
            saved = {k: getattr(core, k) for k in patch}
            for k, v in patch.items():
                setattr(core, k, v)
            try:
                failed, z_sq, mdc, unchanged = 0, [], [], 0
                by_kernel: dict[str, list[float]] = {}
                for a, b in itertools.permutations(aa, 2):
                    c = core.compare_runs([r for p in a for r in loaded[p]], [r for p in b for r in loaded[p]])
                    failed += c.failed()
                    for row in c.to_dict()["specializations"]:
                        if row.get("standard_error"):
                            z_sq.append((math.log1p(row["relative_change"]) / row["standard_error"]) ** 2)
                            by_kernel.setdefault(row["name"], []).append(z_sq[-1])
                            mdc.append(row["min_detectable_change"])
                            unchanged += row["verdict"] == "unchanged"
            finally:
                for k, v in saved.items():
                    setattr(core, k, v)
            n = len(aa) * (len(aa) - 1)
            ratios = [math.sqrt(st.fmean(v)) for v in by_kernel.values()]
            print(f"| {name} | {failed}/{n} | {unchanged}/{len(mdc)} | {math.sqrt(st.fmean(z_sq)):.2f} | "
                  f"{min(ratios):.2f}-{max(ratios):.2f}, {st.stdev(math.log(r) for r in ratios):.2f} | "
                  f"{st.median(mdc) * 100:.2f} % |")
        sd, lo, hi = sampling_alone(len(aa))
        print(f"\nWere the error exactly right, one kernel's ratio would spread from sampling alone with an SD of its "
              f"log of {sd:.2f} (5-95 %: {lo:.2f}-{hi:.2f}) over {len(aa)} labels (`sampling_alone`).\n")


if __name__ == "__main__":
    main()
