"""Evaluate `primbench run --processes 16` beside `--processes 8` as `eval9-plan.md` froze them, on the
ninth collection (`h200/data9/p16` and `h200/data9/p8`, `eval_suite9.py`, the two protocols interleaved run
by run with the same planted cycles): each run is one results.json; a side of a comparison is one file.
Written after the protocols and the method were frozen (the plan's commit).

    python tests/benchmarks/verdicts/evaluate9.py > tests/benchmarks/verdicts/evaluate9.txt

`evaluate7.evaluate` for each protocol: this method, each run's process 0 alone, the method of c16539c with
every process a side, and main before the seventh plan (98cdbcf) on the whole files. The 16 workers' batches
are at least 0.26 ms (`primbench.processes.process_batch_floor`), not the 0.5 ms evaluate7's protocol line says.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from evaluate7 import evaluate  # noqa: E402

DATA = HERE / "h200" / "data9"
SIZES = ("1MiB", "4MiB")
PROTOCOLS = (("p16", 16, "a sixteenth"), ("p8", 8, "an eighth"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    for name, processes, share in PROTOCOLS:
        sizes = [s for s in args.sizes.split(",") if (args.data / name / s).is_dir()]
        if not sizes:
            print(f"# {name}: no data\n")
            continue
        print(f"# The ninth evaluation: {name} (`--processes {processes}`)\n")
        evaluate(args.data / name, sizes, processes, share, HERE / "eval_suite9.py")
        print()


if __name__ == "__main__":
    main()
