"""Evaluate the default protocol, one command a label, as `eval15-plan.md` froze it, on the fifteenth collection
(`h200/data15/default`, `eval_suite15.py`): each label is one file (`SIZE/LABEL.json`) of two runs of 8 workers
(`--processes 8 --runs 2 --rounds 2 --min-secs 0.25`, `primbench.settings.DEFAULT_DESIGN`). Written with the plan,
before any of its data existed.

    python tests/benchmarks/verdicts/evaluate15.py > tests/benchmarks/verdicts/evaluate15.txt

`evaluate13.evaluate_folder` on a mirror of the folder whose files carry the names it reads (`LABEL.json` as
`LABEL-p1.json`, a label one file; `collect.log`'s lines renamed the same way), each side's file read whole
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

from evaluate13 import evaluate_folder  # noqa: E402

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
    with tempfile.TemporaryDirectory() as tmp:
        evaluate_folder(mirror(data, Path(tmp) / "default"), args.sizes,
                        heading="# The fifteenth evaluation: the default protocol, one command a label", title=TITLE,
                        protocol=PROTOCOL, suite=HERE / "eval_suite15.py", files=1, shown=data)


if __name__ == "__main__":
    main()
