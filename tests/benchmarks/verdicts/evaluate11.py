"""Evaluate `primbench run --processes 16 --rounds 4 --min-secs 0.5` on a suite of 21 specializations
(24 as planned, amended: eval11-plan.md) as
`eval11-plan.md` froze it, on the eleventh collection (`h200/data11/p16r4`, `eval_suite11.py`): each run is one
results.json; a side of a comparison is one file. Written with the plan, before any of its data existed.

    python tests/benchmarks/verdicts/evaluate11.py > tests/benchmarks/verdicts/evaluate11.txt

`evaluate7.evaluate` (this method, each run's first worker alone, c16539c's method with every worker a side,
main before the seventh plan, 98cdbcf, on the whole files), with one more column decided with the plan: this
method with `compare.priors.CLOCK_RESPONSE_SD` at 0.3 instead of 0.5 (the kernels' answer to the SM clock read
on data10 after the tenth evaluation, `clock_regimes-all.txt`: slopes SD 0.19-0.34); then
`calibration9_diag.py`'s detection at the reported change by both truths (the kernel's real change, and that
change less the median of the run's 21 kernels); then `clock_split10.py`'s split of the A/A pairs by SM clock
regime.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import calibration9_diag  # noqa: E402
import clock_split10  # noqa: E402
from evaluate import new_method  # noqa: E402
from evaluate7 import evaluate  # noqa: E402

from primbench.compare import priors  # noqa: E402

DATA = HERE / "h200" / "data11"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
PROTOCOL = ("each run one `--processes 16 --rounds 4 --min-secs 0.5` file: 16 workers, each 4 rounds (the first a "
            "warm-up) of batches of at least 0.26 ms and a sixteenth of 0.5 s")
#: The second column's prior of how unequally kernels answer the SM clock (decided with the plan).
CLOCK_RESPONSE_SD_ALT = 0.3


def with_clock_prior(value: float) -> Callable[[list[tuple[list[Path], list[Path]]]], list[dict]]:
    """`evaluate.new_method` with `priors.CLOCK_RESPONSE_SD` at `value` (restored after every call)."""
    cache: dict[Path, object] = {}

    def method(pairs: list[tuple[list[Path], list[Path]]]) -> list[dict]:
        kept = priors.CLOCK_RESPONSE_SD
        priors.CLOCK_RESPONSE_SD = value
        try:
            return new_method(pairs, cache)
        finally:
            priors.CLOCK_RESPONSE_SD = kept

    return method


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--suite", type=Path, default=HERE / "eval_suite11.py", help="the suite the files ran (a check "
                    "of this script on other files)")
    args = ap.parse_args()
    data = args.data / "p16r4"
    sizes = [s for s in args.sizes.split(",") if (data / s).is_dir()]
    if not sizes:
        raise SystemExit(f"error: no sizes of {args.sizes} in {data}")
    print("# The eleventh evaluation: p16r4, 21 specializations a run\n")
    evaluate(data, sizes, 16, "a sixteenth", args.suite, protocol=PROTOCOL,
             extra={f"new with CLOCK_RESPONSE_SD {CLOCK_RESPONSE_SD_ALT}, 16 processes a side":
                    with_clock_prior(CLOCK_RESPONSE_SD_ALT)})
    print()
    calibration9_diag.main(["--data", str(data), "--sizes", ",".join(sizes)])
    print()
    clock_split10.DATA = args.data
    clock_split10.TITLE = "The eleventh evaluation's A/A pairs by SM clock regime (clock_split10.py)"
    clock_split10.main()


if __name__ == "__main__":
    main()
