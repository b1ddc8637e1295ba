"""The SM clock measured within the files (`compare.core._clock_within`, 17f1c2c) on the ninth to eleventh
evaluations' A/A files judged two files a side (every split of 7 files into two disjoint pairs, at most 70, as
`repeats11.py`), beside compare with that step left out. Written after `calibration16.py` showed data11's 64 MiB
failing 8 of 70 such pairs; descriptive (it chooses nothing). Cells: SD(z) / A/A exit 1 / median detectable
change, as `calibration16.py`.

    python tests/benchmarks/verdicts/clock_within_splits.py > tests/benchmarks/verdicts/clock_within_splits.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import calibration16  # noqa: E402

import primbench.compare.core as core  # noqa: E402

SETS = ("data9/p16", "data9/p8", "data10/p16", "data10/p16r4", "data11/p16r4")
SIZES = ("64MiB", "4MiB", "1MiB", "64KiB")


def main() -> None:
    within = core._clock_within
    print("# The clock within the files on two p16 / p16r4 / p8 files a side (clock_within_splits.py)\n")
    print("| collection | size | pairs | compare | without the clock within the files |")
    print("|---|---|---|---|---|")
    for data in SETS:
        for size in SIZES:
            folder = calibration16.DATA / data / size
            if not folder.is_dir():
                continue
            pairs = calibration16.split_pairs(folder)
            cells = []
            for step in (within, lambda suite: suite):
                core._clock_within = step
                sd, failed, detectable = calibration16.judged(pairs)
                cells.append(f"{sd:.2f} / {failed} / {detectable:.2f} %")
            core._clock_within = within
            print(f"| {data} | {size} | {len(pairs)} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--data"]:
        calibration16.DATA = Path(sys.argv[2])
    main()
