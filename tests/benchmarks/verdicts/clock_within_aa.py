"""17f1c2c's clock measured within the files against the method before it, on every committed A/A collection at
64 MiB and on data15 at each size (in sample: data15 is where the clock was found, and every other collection was
read before): every ordered pair of A/A labels, as the tests' `_a_a_pairs` judges them (one `--processes` file a
side for data-data11, a label's two files for data12b/data13b, one default-protocol file of two runs for data15).
The method before is this one with `compare.core._clock_within` left out, which is all 17f1c2c changed in what
compare computes.

    python tests/benchmarks/verdicts/clock_within_aa.py > tests/benchmarks/verdicts/clock_within_aa.txt
"""

from __future__ import annotations

import itertools
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare import core  # noqa: E402
from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402
from primbench.results import Results  # noqa: E402

H200 = HERE / "h200"
ONE_FILE = ["data", "data2", "data4", "data7", "data9/p16", "data10/p16r4", "data11/p16r4"]
TWO_FILES = {"data12b/p8r4x2": 5, "data13b/p8r2x2": 6}
DEFAULT = {"64MiB": 8, "4MiB": 8, "1MiB": 6}


def judged(sides: list[list[Results]]) -> tuple[int, int, float, float]:
    """Ordered pairs failing, pairs, the share of rows unchanged, the median row's detectable change (%)."""
    failed = unchanged = rows = 0
    detectable: list[float] = []
    for b, h in itertools.permutations(sides, 2):
        c = compare_runs(b, h)
        failed += c.failed()
        unchanged += c.summary.counts[Verdict.UNCHANGED]
        rows += len(c.rows)
        detectable += [r.min_detectable_change for r in c.rows if r.min_detectable_change is not None]
    return failed, len(sides) * (len(sides) - 1), unchanged / rows, statistics.median(detectable) * 100


def line(name: str, size: str, sides: list[list[Results]]) -> None:
    within = core._clock_within
    core._clock_within = lambda suite: suite  # type: ignore[assignment]
    before = judged(sides)
    core._clock_within = within
    after = judged(sides)
    cells = [f"{f}/{n}, {u * 100:.1f} %, {d:.2f} %" for f, n, u, d in (before, after)]
    print(f"| {name} | {size} | {cells[0]} | {cells[1]} |", flush=True)


def main() -> None:
    print("| collection | size | before 17f1c2c: A/A exit 1, unchanged, median detectable | 17f1c2c |")
    print("|---|---|---|---|")
    for data in ONE_FILE:
        folder = H200 / data / "64MiB"
        files = sorted(f for f in folder.glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name))
        line(f"{data} (one file a side)", "64MiB", [load_side(f) for f in files])
    for data, labels in TWO_FILES.items():
        folder = H200 / data / "64MiB"
        line(f"{data} (two files a side)", "64MiB",
             [[r for j in (1, 2) for r in load_side(folder / f"aa-{k}-p{j}.json")] for k in range(1, labels + 1)])
    for size, labels in DEFAULT.items():
        folder = H200 / "data15" / "default" / size
        line("data15/default (one file of two runs a side)", size,
             [load_side(folder / f"aa-{k}.json") for k in range(1, labels + 1)])


if __name__ == "__main__":
    main()
