"""Evaluate two runs a side of the design probe15 chose, as `eval14-plan.md` froze it, on the fourteenth
collection (`h200/data14`, `eval_suite14.py`): each label is two runs back to back
(`DESIGNx2/SIZE/LABEL-p1.json`, `-p2.json`). Written with the plan, before any of its data existed.

    python tests/benchmarks/verdicts/evaluate14.py --design DESIGN > tests/benchmarks/verdicts/evaluate14.txt

`evaluate5.main` on the folder, each side's files read whole and split into their workers by
`compare.core.load_side` (as `primbench compare B1 B2 -- H1 H2` reads them), through `evaluate12.whole_files`.
In its tables "2 processes a side" means a label's two files, "1 process a side" each label's first file;
c16539c's method reads the same whole files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402
from evaluate12 import whole_files  # noqa: E402

from primbench.results import Results  # noqa: E402

DATA = HERE / "h200" / "data14"
SIZES = ("4MiB", "1MiB", "64KiB", "64MiB")
#: The two designs probe15 chooses between: (the folder's prefix, the title, the protocol line).
DESIGNS = {
    "p8r2": ("two `--processes 8 --rounds 2 --min-secs 0.25` runs a side",
             "each label two `--processes 8 --rounds 2 --min-secs 0.25` files back to back: 8 workers each, 2 rounds "
             "(both measured) of an eighth of 0.25 s a specialization"),
    "p16r2": ("two `--processes 16 --rounds 2 --min-secs 0.2` runs a side",
              "each label two `--processes 16 --rounds 2 --min-secs 0.2` files back to back: 16 workers each, 2 "
              "rounds (both measured) of a sixteenth of 0.2 s a specialization"),
}
#: The plan's minimum a size, written before any data: A/A labels, planted labels.
MIN_AA, MIN_PLANTED = 6, 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=sorted(DESIGNS), required=True, help="the design probe15.txt names")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    title, protocol = DESIGNS[args.design]
    data = args.data.resolve() / f"{args.design}x2"  # the earlier method runs in its own checkout: absolute
    cache: dict[Path, list[Results]] = {}
    print(f"# The fourteenth evaluation: {title}\n")
    evaluate5.PROCESSES = 2
    sizes = [s for s in args.sizes.split(",") if (data / s).is_dir()]
    for s in list(sizes):
        aa, planted = evaluate5.aa_runs(data / s), evaluate5.planted_runs(data / s)
        if aa < MIN_AA or planted < MIN_PLANTED:
            print(f"({s}: {aa} A/A and {planted} planted labels, under the plan's minimum of {MIN_AA} and "
                  f"{MIN_PLANTED}: not evaluated)\n")
            sizes.remove(s)
    if not sizes:
        print(f"(no sizes of {args.sizes} in {data})")
        return
    evaluate5.main(["--data", str(data), "--sizes", ",".join(sizes)], title=title, protocol=protocol,
                   suite_path=HERE / "eval_suite14.py", new=lambda ps, _c: whole_files(ps, cache))


if __name__ == "__main__":
    main()
