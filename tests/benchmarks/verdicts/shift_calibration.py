"""The suite shift of every A/A pair collected so far against the standard error compare gives it
(which holds the measured prior of what a whole process shares, `compare.priors` `common`, and the
centre's own estimation variance): if the prior were right, shift / standard error would have
mean square about 1. Per set and size: that mean square over the unordered A/A pairs, and the
per-side common variance that would make it 1 (method of moments, solved by bisection) beside the
prior's. Pairs share processes, so the df of the estimate is about the processes less one.

    python tests/benchmarks/verdicts/shift_calibration.py > tests/benchmarks/verdicts/shift_calibration.txt

(`shift_calibration.txt` was made at fd6fb8c, with the priors of tuning data alone; the sets are
`common_shift.py`'s, whose titles it now prints.)
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

sys.path.insert(0, str(HERE))

from common_shift import aa_folders  # noqa: E402

from primbench.compare.core import compare_runs  # noqa: E402
from primbench.compare.priors import size_class  # noqa: E402
from primbench.results import load_results  # noqa: E402


def solve(d2: list[float], v_est: list[float]) -> float:
    """The per-side common variance c >= 0 with mean(d2 / (v_est + 2c)) = 1 (0 where already <= 1)."""
    def f(c: float) -> float:
        return sum(a / (b + 2 * c) for a, b in zip(d2, v_est, strict=True)) / len(d2) - 1
    if f(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1e-2
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def main() -> None:
    print("| set | size | pairs (processes) | mean square of shift / SE | SD of one side's shared part that makes it 1 "
          "| the prior's (df) |")
    print("|---|---|---|---|---|---|")
    for title, size, nbytes, folder in aa_folders():
        files = sorted(folder.glob("aa-*.json"))
        docs = {f: load_results(f) for f in files}
        prior = size_class(nbytes).rounds
        d2, v_est, z2 = [], [], []
        for a, b in itertools.combinations(files, 2):
            s = compare_runs([docs[a]], [docs[b]]).suite_shift
            if s is None or s.standard_error is None:
                continue
            d = math.log1p(s.change)
            d2.append(d * d)
            v_est.append(max(s.standard_error ** 2 - 2 * prior.common, 1e-12))
            z2.append(d * d / s.standard_error ** 2)
        c = solve(d2, v_est)
        print(f"| {title} | {size} | {len(d2)} ({len(files)}) | {sum(z2) / len(z2):.2f} | "
              f"{math.sqrt(c) * 100:.2f} % | {math.sqrt(prior.common) * 100:.2f} % ({prior.common_df:g}) |")


if __name__ == "__main__":
    main()
