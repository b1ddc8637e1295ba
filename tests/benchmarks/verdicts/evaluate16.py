"""Evaluate compare with each kernel's answer to the SM clock measured within the files (17f1c2c,
`compare.core._clock_within`), as `eval16-plan.md` froze it, on the sixteenth collection (`h200/data16/default`,
`eval_suite16.py`): each label one default-protocol file (two runs of 8 workers). Written with the plan, before any
of its data existed.

    cd tests/benchmarks/verdicts && python evaluate16.py --files-one-side > evaluate16.txt
    python evaluate16.py --files-one-side --without-clock-within > evaluate16-before.txt

`evaluate15.mirror` and `evaluate13.evaluate_folder` as the fifteenth read its files (c16539c's method beside, from
its own checkout). `--without-clock-within`: the method before 17f1c2c, which is this one with `_clock_within` left
out (17f1c2c changed nothing else in what compare computes: `shrunk_clock_responses` moved, unchanged). Then, over
every ordered A/A pair: how many had rows whose change the clock measured within the files corrected.

Since 023ed2e compare pools the run state's ratio over a row's two sides (`eval16-plan.md`, amendment 1), so
compare as it is is no longer 17f1c2c's: `--files-one-side` restores 17f1c2c's `_files_variance` (with
`--without-clock-within` too: the method before 17f1c2c), and `--clock-allowance 0.35` sets the amendment's
candidate (`clock_allowance16.allowance`). The title says which.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from evaluate13 import evaluate_folder  # noqa: E402
from evaluate15 import PROTOCOL, SIZES, mirror  # noqa: E402

from primbench.compare import core  # noqa: E402
from primbench.compare.core import compare_runs, load_side  # noqa: E402

DATA = HERE / "h200" / "data16" / "default"
TITLE = "the SM clock measured within the files (17f1c2c), one default-protocol file a side"
# compare's warning ("across each side's runs" at 17f1c2c, "within each side's files" since)
CORRECTED = re.compile(
    r"(\d+) specializations?' change corrected by its answer to the clock measured (?:across|within)")


def corrections(data: Path, sizes: str) -> None:
    """Over every ordered A/A pair of each size: the pairs with rows the clock within the files corrected, and
    how many rows (compare's warning, which counts them where the sides' clocks differ by 0.1 % or more)."""
    print("\n## Where the clock measured within the files corrected rows (A/A pairs)\n")
    print("| size | A/A pairs | pairs with corrected rows | rows corrected (of all A/A rows) |")
    print("|---|---|---|---|")
    for size in sizes.split(","):
        files = sorted((data / size).glob("aa-*.json"), key=lambda p: int(p.stem.split("-")[1]))
        if len(files) < 2:
            continue
        sides = {f: load_side(f) for f in files}
        pairs = with_rows = rows = total = 0
        for a, b in itertools.permutations(files, 2):
            c = compare_runs(sides[a], sides[b])
            found = [int(m[1]) for w in c.warnings if (m := CORRECTED.search(w))]
            pairs += 1
            with_rows += bool(found)
            rows += sum(found)
            total += len(c.rows)
        print(f"| {size} | {pairs} | {with_rows} | {rows} of {total} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--without-clock-within", action="store_true",
                    help="the method before 17f1c2c: compare.core._clock_within left out")
    ap.add_argument("--files-one-side", action="store_true",
                    help="17f1c2c's files' term: each side's files' spread moderated alone (before 023ed2e)")
    ap.add_argument("--clock-allowance", type=float, default=None,
                    help="the slope spread of the clock allowance where no slope was measured (compare: 0.5)")
    args = ap.parse_args()
    data = args.data.resolve()
    title = TITLE if args.files_one_side else (
        "the clock within the files and the run state pooled over both sides (023ed2e), one default-protocol file "
        "a side")
    if args.files_one_side:
        from calibration16 import files_variance_before
        core._files_variance = files_variance_before
    if args.without_clock_within:
        core._clock_within = lambda suite: suite  # type: ignore[assignment]
        title = "the method before 17f1c2c (the clock's prior term only), one default-protocol file a side"
        if not args.files_one_side:
            title = "023ed2e without the clock within the files, one default-protocol file a side"
    if args.clock_allowance is not None:
        from clock_allowance16 import allowance
        core._clock_part = allowance(args.clock_allowance)
        title += f", the clock allowance at {args.clock_allowance:g}"
    with tempfile.TemporaryDirectory() as tmp:
        evaluate_folder(mirror(data, Path(tmp) / "default"), args.sizes,
                        heading="# The sixteenth evaluation: the SM clock measured within the files", title=title,
                        protocol=PROTOCOL, suite=HERE / "eval_suite16.py", files=1, shown=data)
    if not args.without_clock_within:
        corrections(data, ",".join(s for s in args.sizes.split(",") if (data / s).is_dir()))


if __name__ == "__main__":
    main()
