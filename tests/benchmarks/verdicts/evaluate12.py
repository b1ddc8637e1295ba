"""Evaluate one run a side against two as `eval12-plan.md` froze it, on the twelfth collection (`h200/data12`,
`eval_suite12.py`): each label is two `--processes 16 --rounds 4 --min-secs 0.5` files (`p16r4x2/SIZE/LABEL-p1.json`,
`-p2.json`) and two `--processes 8 --rounds 4 --min-secs 0.25` files (`p8r4x2`). Written with the plan, before any
of its data existed; after the plan's amendment (before any evaluation run) a label may have one p16r4 file
(`p16r4/SIZE/LABEL-p1.json`), read as one file a side.

    python tests/benchmarks/verdicts/evaluate12.py > tests/benchmarks/verdicts/evaluate12.txt

`evaluate5.main` on each protocol's folder, with two changes: a side's files are read whole, each split into its
workers by `compare.core.load_side` (as `primbench compare` reads them; not split into one file a worker, which
would hide which workers share a run), and one more column, the method before the file-level term (55964e4, the
workers of a side's files pooled). In its tables "2 processes a side" means the label's two files and "1 process
a side" each label's first file; c16539c's method reads the same whole files.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402
from evaluate import old_method, old_tree  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.results import Results  # noqa: E402

DATA = HERE / "h200" / "data12"
SIZES = ("4MiB", "1MiB", "64MiB", "64KiB")
#: The method before `compare.core._between_files`.
BEFORE = "55964e4"
#: Each protocol's folder: its title, what a label holds, and its files a label.
PROTOCOLS = {
    "p16r4": ("one `--processes 16 --rounds 4 --min-secs 0.5` run a label (the amendment)",
              "each label one `--processes 16 --rounds 4 --min-secs 0.5` file, then the label's two p8r4 files: "
              "16 workers, 4 rounds (the first a warm-up) of a sixteenth of 0.5 s a specialization", 1),
    "p16r4x2": ("two `--processes 16 --rounds 4 --min-secs 0.5` runs a label",
                "each label two `--processes 16 --rounds 4 --min-secs 0.5` files back to back: 16 workers each, 4 "
                "rounds (the first a warm-up) of a sixteenth of 0.5 s a specialization", 2),
    "p8r4x2": ("two `--processes 8 --rounds 4 --min-secs 0.25` runs a label (together one p16r4's budget)",
               "each label two `--processes 8 --rounds 4 --min-secs 0.25` files back to back (right after the "
               "label's p16r4 files where there are any): 8 workers each, 4 rounds of an eighth of 0.25 s a "
               "specialization", 2),
}


def whole_files(pairs: list[tuple[list[Path], list[Path]]], cache: dict[Path, list[Results]]) -> list[dict[str, Any]]:
    """compare as `primbench compare B1 B2 -- H1 H2` judges each pair: every file split into its workers."""
    out = []
    for b, h in pairs:
        sides = [[r for p in s for r in cache.setdefault(p, load_side(p))] for s in (b, h)]
        c = compare_runs(sides[0], sides[1])
        out.append({"failed": c.failed(),
                    "rows": {r.name: [r.verdict.value, r.min_detectable_change] for r in c.rows}})
    return out


#: The plan's minimum a size, written before any data: A/A labels, planted labels.
MIN_AA, MIN_PLANTED = 5, 2


def enough(d: Path) -> bool:
    """Whether the size has the plan's minimum of labels (a call's budget may have cut it short)."""
    return evaluate5.aa_runs(d) >= MIN_AA and evaluate5.planted_runs(d) >= MIN_PLANTED


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--suite", type=Path, default=HERE / "eval_suite12.py")
    args = ap.parse_args()
    args.data = args.data.resolve()  # the earlier methods run in their own checkouts: a relative path would miss
    cache: dict[Path, list[Results]] = {}
    print("# The twelfth evaluation: one run a side against two, at equal measurement budget\n")
    with tempfile.TemporaryDirectory() as tmp:
        before = old_tree(Path(tmp), BEFORE)
        for folder, (title, protocol, files) in PROTOCOLS.items():
            data = args.data / folder
            evaluate5.PROCESSES = files
            sizes = [s for s in args.sizes.split(",") if (data / s).is_dir()]
            for s in [s for s in sizes if not enough(data / s)]:
                print(f"({folder} {s}: {evaluate5.aa_runs(data / s)} A/A and {evaluate5.planted_runs(data / s)} "
                      f"planted labels, under the plan's minimum of {MIN_AA} and {MIN_PLANTED}: not evaluated)\n")
                sizes.remove(s)
            if not sizes:
                print(f"(no sizes of {args.sizes} in {data})\n")
                continue
            # one file a label (the amendment's p16r4): the two designs are one, and the method before the
            # file-level term is today's on one file a side
            extra = {} if files == 1 else {
                f"{BEFORE} (files' workers pooled), 2 files a side":
                lambda ps, t=before: old_method(ps, t, relabel=False)}
            evaluate5.main(["--data", str(data), "--sizes", ",".join(sizes)], title=title, protocol=protocol,
                           suite_path=args.suite, new=lambda ps, _c: whole_files(ps, cache), extra=extra)
            print()


if __name__ == "__main__":
    main()
