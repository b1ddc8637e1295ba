"""Several `--processes` files a side, as `primbench compare B1 B2 -- H1 H2` takes them, on the eleventh
evaluation's A/A files and the ninth's and tenth's (after the eleventh evaluation; `core._between_files` was
written after reading data11, so data11 is in sample for it, data9 and data10 were not read for it, and no
constant was fitted on any of them): does a second run a side
remove the false alarms that a state shared by every worker of one run makes (`README.md`, the eleventh
evaluation)?

For k = 1, 2, 3 files a side: every split of the 7 A/A files of a size into two disjoint sides of k files each
(ordered: base, head), each judged by compare as it is: how many exit 1, the share of rows unchanged and the
median smallest detectable change. Sensitivity with a known truth: the same splits with nine of the head's
kernels made slower by exactly 1, 2 and 5 % (three each, every worker's rounds scaled; which nine turns with
the split), and how often compare calls each a regression, and at 0.8-1.25x the detectable change it reports.

    python tests/benchmarks/verdicts/repeats11.py data11/p16r4 data10/p16r4 data10/p16 data9/p16 \
        > tests/benchmarks/verdicts/repeats11.txt

`repeats11-55964e4.txt` is the same on compare before `core._between_files` (the file the unit of a side of
several `--processes` files), `repeats11.txt` after it.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from clock_history import numbered  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402

SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
#: Splits judged at most per k and size (every one of them where there are fewer), the first in order.
MOST = 70
#: The slowdowns put into the head's files, three kernels each.
INJECTED = (0.01, 0.02, 0.05)


def slowed(path: Path, slower: dict[str, float], out: Path) -> Path:
    """A copy of the results file `path` in `out` whose specializations named in `slower` take that much longer
    a call in every round (their throughputs lower by the same factor)."""
    doc = json.loads(path.read_text())
    for spec in doc["specializations"]:
        f = 1.0 + slower.get(spec["name"], 0.0)
        if f == 1.0:
            continue
        for part in (spec, *spec.get("rounds", [])):
            for key in ("bytes_per_second", "items_per_second"):
                if part.get(key):
                    part[key] /= f
            for key in ("gpu_ms_per_call", "gpu_seconds_per_call"):
                if part.get(key):
                    part[key] *= f
        spec["time_per_call"] = {k: v * f for k, v in spec["time_per_call"].items()}
    target = out / f"{path.stem}-slowed.json"
    target.write_text(json.dumps(doc))
    return target


def main(argv: list[str] | None = None) -> None:
    sets = list(sys.argv[1:] if argv is None else argv) or ["data11/p16r4"]
    print(f"# Several `--processes` files a side (repeats11.py, {', '.join(sets)})\n")
    print("Each row: disjoint base and head sides of k A/A files each, every ordered split of the 7 files (at most "
          f"{MOST} a cell, the first in order), compare as it is.\n")
    print("| data | size | files a side | pairs of sides | exit 1 | rows unchanged | median detectable | "
          "injected 1 / 2 / 5 % found | found at 0.8-1.25x the detectable |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data, size in ((d, s) for d in sets for s in SIZES if (HERE / "h200" / d / s).is_dir()):
        files = numbered(HERE / "h200" / data / size, "aa")
        sides = {f: load_side(f) for f in files}
        for k in (1, 2, 3):
            splits = [(b, h) for b in itertools.combinations(files, k) for h in itertools.combinations(files, k)
                      if not set(b) & set(h)][:MOST]
            failed = unchanged = rows = 0
            detectable: list[float] = []
            found = {f: [0, 0] for f in INJECTED}
            at_mdc = [0, 0]
            names = sorted({r.name for f in files for res in sides[f] for r in res.specializations})
            for i, (b, h) in enumerate(splits):
                base = [r for f in b for r in sides[f]]
                c = compare_runs(base, [r for f in h for r in sides[f]])
                failed += c.failed()
                unchanged += c.summary.counts[Verdict.UNCHANGED]
                rows += len(c.rows)
                detectable += [r.min_detectable_change for r in c.rows if r.min_detectable_change]
                slower = {names[(i + j) % len(names)]: INJECTED[j % 3] for j in range(9)}
                with tempfile.TemporaryDirectory() as tmp:
                    head = [r for f in h for r in load_side(slowed(f, slower, Path(tmp)))]
                    for row in compare_runs(base, head).rows:
                        if row.name not in slower:
                            continue
                        hit = row.verdict == Verdict.REGRESSION
                        found[slower[row.name]][0] += hit
                        found[slower[row.name]][1] += 1
                        mdc_row = row.min_detectable_change
                        if mdc_row and 0.8 <= math.log1p(slower[row.name]) / math.log1p(mdc_row) <= 1.25:
                            at_mdc[0] += hit
                            at_mdc[1] += 1
            n, mdc = len(splits), 100 * statistics.median(detectable)
            hits = ", ".join(f"{a}/{t}" for a, t in found.values())
            print(f"| {data} | {size} | {k} | {n} | {failed}/{n} ({100 * failed / n:.0f} %) | "
                  f"{unchanged}/{rows} ({100 * unchanged / rows:.0f} %) | {mdc:.2f} % | {hits} | "
                  f"{at_mdc[0]}/{at_mdc[1]} |")


if __name__ == "__main__":
    main()
