"""Evaluate `primbench run --processes 8` as `eval8-plan.md` froze it, on the eighth collection
(`h200/data8`, `eval_suite8.py`): each run is one results.json of 8 worker processes; a side of a
comparison is one file. Written after the protocol and the method were frozen (the plan's commit).

    python tests/benchmarks/verdicts/evaluate8.py > tests/benchmarks/verdicts/evaluate8.txt

`evaluate7.evaluate` with 8 workers a run: this method, each run's process 0 alone, the method of
c16539c with the 8 processes a side, and main before the seventh plan (98cdbcf) on the whole files.
`calibration6.py --data h200/data8` gives `calibration8.txt`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from evaluate7 import evaluate  # noqa: E402

DATA = HERE / "h200" / "data8"
SIZES = ("1MiB", "4MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    evaluate(args.data, args.sizes.split(","), 8, "an eighth", HERE / "eval_suite8.py")


if __name__ == "__main__":
    main()
