"""How far is compare's reported detectable change from the floor the runs themselves set? For each
collection of `--processes` files (data7: 4 workers, data8: 8), every ordered A/A pair through
`compare_runs`: per kernel, the SD of the pair's relative change over the pairs (what one pair of
identical runs spreads) and compare's median reported detectable change. The floor is what a test
knowing that SD exactly would report at the same 80 % power for a lone change among the suite's
kernels (Bonferroni's first BH step, as `compare.stats.min_detectable_change`):
(z(1 - 0.05 / (2 m)) + z(0.8)) x SD. A reported figure below the floor would be dishonest; the
gap above it is what a better variance model could still win; the floor itself falls only with
runs that spread less (more workers, or a longer budget).

    python3 tests/benchmarks/verdicts/floor.py > tests/benchmarks/verdicts/floor.txt
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from pathlib import Path

from scipy.stats import norm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402

SETS = (("data7", 4, ("64KiB", "1MiB", "4MiB", "64MiB")), ("data8", 8, ("1MiB", "4MiB")))
TARGET = {"64KiB": None, "1MiB": 1.0, "4MiB": 1.0, "64MiB": 0.5}


def sets_from(argv: list[str]) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """`SETS`, or the collections named on the command line as DATA:WORKERS:SIZE,SIZE (data9/p16:16:1MiB)."""
    if not argv:
        return SETS
    return tuple((d, int(w), tuple(s.split(","))) for d, w, s in (a.split(":") for a in argv))


def main() -> None:
    sets = sets_from(sys.argv[1:])
    print("# compare's detectable change against the floor one pair of identical runs sets (floor.py)\n")
    print("| data | workers | size | kernels | floor (median over kernels) | compare reports (median) | "
          "ratio | target | variance the floor needs, as a share of today's |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data, workers, sizes in sets:
        for size in sizes:
            files = sorted(f for f in (HERE / "h200" / data / size).glob("aa-[0-9].json"))
            sides = [load_side(f) for f in files]
            change: dict[str, list[float]] = {}
            reported: dict[str, list[float]] = {}
            for a, b in itertools.permutations(range(len(sides)), 2):
                for row in compare_runs(sides[a], sides[b]).to_dict()["specializations"]:
                    if row.get("relative_change") is None or row.get("min_detectable_change") is None:
                        continue
                    change.setdefault(row["name"], []).append(math.log1p(row["relative_change"]))
                    reported.setdefault(row["name"], []).append(abs(row["min_detectable_change"]) * 100)
            m = len(change)
            k = norm.isf(0.05 / (2 * m)) + norm.isf(0.2)
            floor = {n: k * statistics.pstdev(v) * 100 for n, v in change.items()}
            rep = {n: statistics.median(v) for n, v in reported.items()}
            f, r = statistics.median(floor.values()), statistics.median(rep.values())
            target = TARGET[size]
            need = f"{(target / f) ** 2:.2f}" if target else "-"
            print(f"| {data} | {workers} | {size} | {m} | {f:.2f} % | {r:.2f} % | {r / f:.2f} | "
                  f"{f'{target:g} %' if target else '-'} | {need} |")
    print("\nThe last column: the floor scales with the runs' SD, so reaching the target needs the runs' "
          "variance times this (below 1: less spread than today's runs have).")


if __name__ == "__main__":
    main()
