"""Several `--processes` files a side, as `primbench compare B1 B2 -- H1 H2` takes them, on the eleventh
evaluation's A/A files (after the evaluation, in sample; nothing chosen from it): does a second run a side
remove the false alarms that a state shared by every worker of one run makes (`README.md`, the eleventh
evaluation)? Compare pools the files' workers as one side's runs.

For k = 1, 2, 3 files a side: every split of the 7 A/A files of a size into two disjoint sides of k files each
(ordered: base, head), each judged by compare as it is: how many exit 1, the share of rows unchanged and the
median smallest detectable change.

    python tests/benchmarks/verdicts/repeats11.py > tests/benchmarks/verdicts/repeats11.txt
"""

from __future__ import annotations

import itertools
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from clock_history import numbered  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402

DATA = HERE / "h200" / "data11" / "p16r4"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
#: Splits judged at most per k and size (every one of them where there are fewer), the first in order.
MOST = 70


def main() -> None:
    print("# Several `--processes` files a side (repeats11.py, data11/p16r4, in sample)\n")
    print("Each row: disjoint base and head sides of k A/A files each, every ordered split of the 7 files (at most "
          f"{MOST} a cell, the first in order), compare as it is (the workers of a side's files pooled as its runs).\n")
    print("| size | files a side | pairs of sides | exit 1 | rows unchanged | median detectable |")
    print("|---|---|---|---|---|---|")
    for size in SIZES:
        files = numbered(DATA / size, "aa")
        sides = {f: load_side(f) for f in files}
        for k in (1, 2, 3):
            splits = [(b, h) for b in itertools.combinations(files, k) for h in itertools.combinations(files, k)
                      if not set(b) & set(h)][:MOST]
            failed = unchanged = rows = 0
            detectable: list[float] = []
            for b, h in splits:
                c = compare_runs([r for f in b for r in sides[f]], [r for f in h for r in sides[f]])
                failed += c.failed()
                unchanged += c.summary.counts[Verdict.UNCHANGED]
                rows += len(c.rows)
                detectable += [r.min_detectable_change for r in c.rows if r.min_detectable_change]
            n, mdc = len(splits), 100 * statistics.median(detectable)
            print(f"| {size} | {k} | {n} | {failed}/{n} ({100 * failed / n:.0f} %) | "
                  f"{unchanged}/{rows} ({100 * unchanged / rows:.0f} %) | {mdc:.2f} % |")


if __name__ == "__main__":
    main()
