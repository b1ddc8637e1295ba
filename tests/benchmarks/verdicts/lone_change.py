"""Is the reported smallest detectable change honest for a lone change? (issue 30: "a change of that size is
found in about 80 % of pairs".) Written after evaluate13.txt, with no change to compare: a calibration read.

The evaluations' planted labels change nine of 24 kernels at once, and BH's critical value at the ninth rank is
nine times Bonferroni's, so their "found at the reported detectable change" reads high (93-100 %) for a
figure defined for a lone change (`compare.stats.min_detectable_change`: BH's first step). Here every change
is a lone one: for every ordered A/A pair of labels (two files a side, as `primbench compare B1 B2 -- H1 H2`)
and every kernel, the head side's kernel is slowed by exactly M times the detectable change the unchanged pair
reports for it (every round's time times 1 + c, its throughputs over it), and the pair compared again: is that
row called a regression? M = 1 should be found in about 80 % (the issue's band 70-90 %), M = 2 in at least 95 %.

A synthetic change is a pure shift of the real runs' values (no noise of its own), so this reads the
statistics' calibration on real run-to-run spread; the planted labels read it with real code changes.

    python tests/benchmarks/verdicts/lone_change.py [--data DIR --folder F --sizes ...] > lone_change13.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import statistics
import sys
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402
from primbench.results import Results, Specialization  # noqa: E402

MULTIPLES = (0.5, 1.0, 1.5, 2.0)


def slowed(side: list[Results], name: str, factor: float) -> list[Results]:
    """`side` with the specialization `name` taking `factor` times as long in every round (throughputs over it)."""

    def spec(s: Specialization) -> Specialization:
        if s.name != name:
            return s
        rounds = tuple(msgspec.structs.replace(r, gpu_ms_per_call=r.gpu_ms_per_call * factor,
                                               bytes_per_second=r.bytes_per_second / factor,
                                               items_per_second=r.items_per_second / factor)
                       for r in s.rounds)
        over = {k: v / factor for k in ("bytes_per_second", "items_per_second") if (v := getattr(s, k))}
        return msgspec.structs.replace(s, rounds=rounds, **over)

    return [dataclasses.replace(r, specializations=tuple(map(spec, r.specializations))) for r in side]


def labels(d: Path) -> list[list[Path]]:
    """The A/A labels' two files each, as the evaluations read them (`evaluate5.run_files`); where the labels are one
    file each (`aa-K.json`: the fifteenth evaluation's default protocol, one command a label), that file."""
    if (d / "aa-1.json").is_file():
        return [[d / f"aa-{k}.json"] for k in range(1, 100) if (d / f"aa-{k}.json").is_file()]
    evaluate5.PROCESSES = 2
    return [evaluate5.run_files(d, f"aa-{k}") for k in range(1, evaluate5.aa_runs(d) + 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "h200" / "data13")
    ap.add_argument("--folder", default="p8r2x2")
    ap.add_argument("--sizes", default="4MiB,1MiB")
    ap.add_argument("--files", type=int, default=2, help="files a side: 2, or 1 (each label's first)")
    args = ap.parse_args()
    print(f"# A lone change of M times the reported detectable change: {args.data.name}/{args.folder}, "
          f"{args.files} file(s) a side\n")
    print("| size | rows tried (pairs x kernels) | median detectable of those rows | "
          + " | ".join(f"M = {m:g} found" for m in MULTIPLES) + " | M = 1, other rows flagged |")
    print("|---|---|---|" + "---|" * len(MULTIPLES) + "---|")
    for size in args.sizes.split(","):
        aa = labels(args.data / args.folder / size)
        sides = [[r for p in files[: args.files] for r in load_side(p)] for files in aa]
        found = {m: 0 for m in MULTIPLES}
        tried, others, others_n, mdcs = 0, 0, 0, []
        for a, b in itertools.permutations(range(len(aa)), 2):
            base = compare_runs(sides[a], sides[b])
            for row in base.rows:
                mdc = row.min_detectable_change
                if mdc is None or not mdc > 0 or row.verdict is not Verdict.UNCHANGED:
                    continue  # a row the unchanged pair did not call unchanged has no honest figure to test
                tried += 1
                mdcs.append(mdc)
                for m in MULTIPLES:
                    c = compare_runs(sides[a], slowed(sides[b], row.name, 1.0 + m * mdc))
                    hit = {r.name: r.verdict for r in c.rows}
                    found[m] += hit[row.name] is Verdict.REGRESSION
                    if m == 1.0:
                        flagged = [n for n, v in hit.items() if n != row.name and v in (Verdict.REGRESSION,
                                                                                        Verdict.IMPROVEMENT)]
                        others += len(flagged)
                        others_n += len(hit) - 1
        cells = " | ".join(f"{found[m]}/{tried} ({100 * found[m] / max(tried, 1):.0f} %)" for m in MULTIPLES)
        print(f"| {size} | {tried} | {100 * statistics.median(mdcs):.2f} % | {cells} | {others}/{others_n} |")


if __name__ == "__main__":
    main()
