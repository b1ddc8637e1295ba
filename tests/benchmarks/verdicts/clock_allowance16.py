"""What the allowance for the sides' SM clocks apart costs where no slope was measured (in sample, descriptive: it
chooses nothing). A row whose sides ran at mean clocks a fraction c apart, with no answer to the clock measured
(history, or `compare.clock.within_files`), carries (0.5 c)^2 (`compare.priors.CLOCK_RESPONSE_SD`, 0.5: the
physics bound on how far kernels answer the clock apart, not fitted; the slopes measured where runs changed regime
spread 0.19-0.54 with their noise, `clock_regimes-all.txt`). On `calibration16.py`'s 25 cells: compare as it is,
the allowance at 0.35 in place of 0.5, and none (cells: SD(z) / A/A exit 1 / median detectable change).

    python tests/benchmarks/verdicts/clock_allowance16.py > tests/benchmarks/verdicts/clock_allowance16.txt
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import calibration16  # noqa: E402

import primbench.compare.core as core  # noqa: E402
from primbench.compare import priors  # noqa: E402

PART = core._clock_part


def allowance(sd: float) -> Callable[..., np.ndarray]:
    """`core._clock_part` with the prior's slope spread `sd` where no slope was measured."""
    def part(suite: core._Suite, relative: np.ndarray) -> np.ndarray:
        out = PART(suite, relative)
        _, measured = suite.clock_responses
        has = np.repeat(np.isfinite(measured), 2)
        return np.where(has, out, out * (sd / priors.CLOCK_RESPONSE_SD) ** 2)
    return part


def main() -> None:
    print("# The allowance for the clocks apart where no slope was measured (clock_allowance16.py)\n")
    print("| collection | size | pairs | 0.5 (compare) | 0.35 | none |")
    print("|---|---|---|---|---|---|")
    totals = [[0, 0] for _ in range(3)]
    for data, size, make in calibration16.CELLS:
        pairs = make(calibration16.DATA / data / size)
        cells = []
        for k, sd in enumerate((0.5, 0.35, 0.0)):
            core._clock_part = allowance(sd)
            z, failed, detectable = calibration16.judged(pairs)
            totals[k][0] += failed
            totals[k][1] += len(pairs)
            cells.append(f"{z:.2f} / {failed} / {detectable:.2f} %")
        core._clock_part = PART
        print(f"| {data} | {size} | {len(pairs)} | {' | '.join(cells)} |", flush=True)
    print()
    for sd, (failed, count) in zip((0.5, 0.35, 0.0), totals, strict=True):
        print(f"- {sd}: A/A exit 1 {failed}/{count}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--data"]:
        calibration16.DATA = Path(sys.argv[2])
    main()
