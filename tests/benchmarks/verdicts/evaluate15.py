"""Evaluate the default protocol, one command a label, as `eval15-plan.md` froze it, on the fifteenth collection
(`h200/data15/default`, `eval_suite15.py`): each label is one file (`SIZE/LABEL.json`) of two runs of 8 workers
(`--processes 8 --runs 2 --rounds 2 --min-secs 0.25`, `primbench.settings.DEFAULT_DESIGN`). Written with the plan,
before any of its data existed.

    python tests/benchmarks/verdicts/evaluate15.py > tests/benchmarks/verdicts/evaluate15.txt

`evaluate5.main` on a mirror of the folder whose files carry the names it reads (`LABEL.json` as `LABEL-p1.json`, a
label one file: `evaluate5.PROCESSES` 1; `collect.log`'s lines renamed the same way), each side's file read whole
and split into its runs and workers by `compare.core.load_side` (as `primbench compare aa-1.json aa-2.json` reads
two default-protocol files), through `evaluate12.whole_files`; c16539c's method reads the same files. A size under
the plan's minimum of 6 A/A and 2 planted labels is said and left out (`evaluate13`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402
from evaluate12 import whole_files  # noqa: E402
from evaluate13 import MIN_AA, MIN_PLANTED  # noqa: E402

from primbench.results import Results  # noqa: E402

DATA = HERE / "h200" / "data15" / "default"
SIZES = ("64MiB", "4MiB", "1MiB", "64KiB")
TITLE = "the default protocol, one file a side"
PROTOCOL = ("each label one command with no option of the protocol: `--processes 8 --runs 2 --rounds 2 --min-secs "
            "0.25`, two runs of 8 workers of 2 rounds (both measured) in one file")
LABEL = re.compile(r"^(?P<label>(?:aa|planted)-\d+)\.json$")


def mirror(data: Path, into: Path) -> Path:
    """`data`'s size folders with each `LABEL.json` as `LABEL-p1.json`, the plant files as they are, and
    `collect.log`'s lines naming `LABEL.json` renamed alike (`evaluate5.wall` reads them)."""
    for size in sorted(p for p in data.iterdir() if p.is_dir()):
        out = into / size.name
        out.mkdir(parents=True)
        for f in size.iterdir():
            if m := LABEL.match(f.name):
                shutil.copyfile(f, out / f"{m['label']}-p1.json")
            elif f.name.startswith("plant-") and f.suffix == ".json":
                shutil.copyfile(f, out / f.name)
        log = size / "collect.log"
        if log.is_file():
            (out / "collect.log").write_text(re.sub(r"\b((?:aa|planted)-\d+)\.json:", r"\1-p1.json:", log.read_text()))
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    data = args.data.resolve()
    print("# The fifteenth evaluation: the default protocol, one command a label\n")
    cache: dict[Path, list[Results]] = {}
    evaluate5.PROCESSES = 1
    with tempfile.TemporaryDirectory() as tmp:
        view = mirror(data, Path(tmp) / "default")
        sizes = [s for s in args.sizes.split(",") if (view / s).is_dir()]
        for s in list(sizes):
            aa, planted = evaluate5.aa_runs(view / s), evaluate5.planted_runs(view / s)
            if aa < MIN_AA or planted < MIN_PLANTED:
                print(f"({s}: {aa} A/A and {planted} planted labels, under the plan's minimum of {MIN_AA} and "
                      f"{MIN_PLANTED}: not evaluated)\n")
                sizes.remove(s)
        if not sizes:
            print(f"(no sizes of {args.sizes} in {data})")
            return
        evaluate5.main(["--data", str(view), "--sizes", ",".join(sizes)], title=TITLE, protocol=PROTOCOL,
                       shown=data, suite_path=HERE / "eval_suite15.py", new=lambda ps, _c: whole_files(ps, cache))


if __name__ == "__main__":
    main()
