"""Evaluate `primbench run --processes 16 --rounds 4 --min-secs 0.5` beside `--processes 16` as `eval10-plan.md`
froze them, on the tenth collection (`h200/data10/p16r4` and `h200/data10/p16`, `eval_suite10.py`; at 1 MiB and
4 MiB the two protocols interleaved run by run with the same planted cycles): each run is one results.json; a
side of a comparison is one file. Written with the plan, before any of its data existed.

    python tests/benchmarks/verdicts/evaluate10.py > tests/benchmarks/verdicts/evaluate10.txt

For each protocol `evaluate7.evaluate`: this method, each run's first worker alone, the method of c16539c with
every worker a side, and main before the seventh plan (98cdbcf) on the whole files; then
`calibration9_diag.py`'s detection at the reported change by both truths (the kernel's real change, and that
change less the median of the run's eight kernels: with three of eight kernels planted a run, the two should
agree).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import calibration9_diag  # noqa: E402
from evaluate7 import evaluate  # noqa: E402

DATA = HERE / "h200" / "data10"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
PROTOCOLS = (
    ("p16r4", "each run one `--processes 16 --rounds 4 --min-secs 0.5` file: 16 workers, each 4 rounds (the "
              "first a warm-up) of batches of at least 0.26 ms and a sixteenth of 0.5 s"),
    ("p16", "each run one `--processes 16` file: 16 workers, each `--rounds 8` (the default) of batches of at "
            "least 0.26 ms and a sixteenth of the default 1 s (the ninth evaluation's protocol)"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    for name, protocol in PROTOCOLS:
        sizes = [s for s in args.sizes.split(",") if (args.data / name / s).is_dir()]
        if not sizes:
            print(f"# {name}: no data\n")
            continue
        print(f"# The tenth evaluation: {name}\n")
        evaluate(args.data / name, sizes, 16, "a sixteenth", HERE / "eval_suite10.py", protocol=protocol)
        print()
        calibration9_diag.main(["--data", str(args.data / name), "--sizes", ",".join(sizes)])
        print()


if __name__ == "__main__":
    main()
