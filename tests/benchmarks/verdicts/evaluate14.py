"""Evaluate two runs a side of the design probe15 chose, as `eval14-plan.md` froze it, on the fourteenth
collection (`h200/data14`, `eval_suite14.py`): each label is two runs back to back
(`DESIGNx2/SIZE/LABEL-p1.json`, `-p2.json`). Written with the plan, before any of its data existed.

    python tests/benchmarks/verdicts/evaluate14.py --design DESIGN > tests/benchmarks/verdicts/evaluate14.txt

`evaluate13.evaluate_folder` (the plan's minimum of 6 A/A and 2 planted labels a size): `evaluate5.main` on
the folder, each side's files read whole and split into their workers by
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

from evaluate13 import evaluate_folder  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=sorted(DESIGNS), required=True, help="the design probe15.txt names")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    title, protocol = DESIGNS[args.design]
    data = args.data.resolve() / f"{args.design}x2"  # the earlier method runs in its own checkout: absolute
    evaluate_folder(data, args.sizes, heading=f"# The fourteenth evaluation: {title}", title=title,
                    protocol=protocol, suite=HERE / "eval_suite14.py")


if __name__ == "__main__":
    main()
