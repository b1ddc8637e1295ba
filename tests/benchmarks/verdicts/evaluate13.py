"""Evaluate two p8r2 runs a side as `eval13-plan.md` froze it, on the thirteenth collection (`h200/data13`,
`eval_suite13.py`): each label is two `--processes 8 --rounds 2 --min-secs 0.25` files back to back
(`p8r2x2/SIZE/LABEL-p1.json`, `-p2.json`). Written with the plan, before any of its data existed.

    python tests/benchmarks/verdicts/evaluate13.py > tests/benchmarks/verdicts/evaluate13.txt

`evaluate5.main` on the folder, each side's files read whole and split into their workers by
`compare.core.load_side` (as `primbench compare B1 B2 -- H1 H2` reads them), through `evaluate12.whole_files`.
In its tables "2 processes a side" means a label's two files (the CI recipe's design with `--rounds 2`), "1
process a side" each label's first file; c16539c's method reads the same whole files.
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

DATA = HERE / "h200" / "data13"
SIZES = ("4MiB", "1MiB", "64MiB", "64KiB")
FOLDER = "p8r2x2"
TITLE = "two `--processes 8 --rounds 2 --min-secs 0.25` runs a side"
PROTOCOL = ("each label two `--processes 8 --rounds 2 --min-secs 0.25` files back to back: 8 workers each, 2 "
            "rounds (both measured) of an eighth of 0.25 s a specialization")
#: The plan's minimum a size, written before any data: A/A labels, planted labels.
MIN_AA, MIN_PLANTED = 6, 2


def evaluate_folder(data: Path, sizes_arg: str, *, heading: str, title: str, protocol: str, suite: Path,
                    files: int = 2, shown: Path | None = None) -> None:
    """`evaluate5.main` on `data` (a design's folder of SIZE/LABEL-p1.json ... -pFILES.json), each side's `files`
    files read whole, the sizes under the plan's minimum of labels said and left out (the thirteenth's and later
    plans). `shown`: the folder the output names, where `data` is a copy of it (`evaluate15.mirror`)."""
    cache: dict[Path, list[Results]] = {}
    print(f"{heading}\n")
    evaluate5.PROCESSES = files
    sizes = [s for s in sizes_arg.split(",") if (data / s).is_dir()]
    for s in list(sizes):
        aa, planted = evaluate5.aa_runs(data / s), evaluate5.planted_runs(data / s)
        if aa < MIN_AA or planted < MIN_PLANTED:
            print(f"({s}: {aa} A/A and {planted} planted labels, under the plan's minimum of {MIN_AA} and "
                  f"{MIN_PLANTED}: not evaluated)\n")
            sizes.remove(s)
    if not sizes:
        print(f"(no sizes of {sizes_arg} in {shown or data})")
        return
    evaluate5.main(["--data", str(data), "--sizes", ",".join(sizes)], title=title, protocol=protocol, shown=shown,
                   suite_path=suite, new=lambda ps, _c: whole_files(ps, cache))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    data = args.data.resolve() / FOLDER  # the earlier method runs in its own checkout: a relative path would miss
    evaluate_folder(data, args.sizes, heading="# The thirteenth evaluation: two p8r2 runs a side", title=TITLE,
                    protocol=PROTOCOL, suite=HERE / "eval_suite13.py")


if __name__ == "__main__":
    main()
