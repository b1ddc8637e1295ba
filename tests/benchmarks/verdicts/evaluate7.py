"""Evaluate `primbench run --processes 4` as `eval7-plan.md` froze it, on the seventh collection
(`h200/data7`, `eval_suite7.py`): each run is one results.json of 4 worker processes; a side of a
comparison is one file. Written after the protocol and the method were frozen (the plan's commit).

    python tests/benchmarks/verdicts/evaluate7.py > tests/benchmarks/verdicts/evaluate7.txt

`evaluate6.py`'s split and `evaluate5.py`'s statistics: 4 processes a side (this method), each run's
process 0 alone, the method of c16539c with 4 processes a side, and main's method before the plan
(98cdbcf: the workers by the class prior) on the same files, given the whole files (it tells the
workers of one file from separate files by their rounds' process, which the split files drop).
`calibration6.py --data h200/data7` gives the table of compare's standard error against the spread
of the A/A changes on these files (`calibration7.txt`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402
import evaluate6  # noqa: E402
from evaluate import old_method, old_tree  # noqa: E402

DATA = HERE / "h200" / "data7"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
BEFORE = "98cdbcf"  # main before the seventh plan: the workers of --processes files by the class prior


def whole_files(pairs: list[tuple[list[Path], list[Path]]], data: Path) -> list[tuple[list[Path], list[Path]]]:
    """The pairs of split files (SPLIT/SIZE/LABEL-pJ.json) as the whole `--processes` files they came
    from (DATA/SIZE/LABEL.json): a method before this plan tells the workers of one file from
    separate files only there (their rounds name their process; the split files' do not)."""
    def whole(side: list[Path]) -> list[Path]:
        return list(dict.fromkeys(data / p.parent.name / (p.stem.rsplit("-p", 1)[0] + ".json") for p in side))

    return [(whole(b), whole(h)) for b, h in pairs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--clock-response-sd", type=float, default=None,
                    help="after the evaluation only: this method with compare.priors.CLOCK_RESPONSE_SD set to this "
                         "(not the frozen method; its records say so)")
    args = ap.parse_args()
    if args.clock_response_sd is not None:
        from primbench.compare import priors

        priors.CLOCK_RESPONSE_SD = args.clock_response_sd
        print(f"**Not the frozen method:** compare.priors.CLOCK_RESPONSE_SD = {args.clock_response_sd:g} "
              "(the frozen method's is 0.5), chosen after reading evaluate7.txt.\n")
    evaluate(args.data, args.sizes.split(","), 4, "a quarter", HERE / "eval_suite7.py")


def evaluate(data: Path, sizes: list[str], processes: int, share: str, suite: Path,
             protocol: str | None = None,
             extra: dict[str, Callable[[list[tuple[list[Path], list[Path]]]], list[dict]]] | None = None) -> None:
    """The evaluation of a collection of `--processes` files (`processes` workers a run, each with
    `share` of the default budget) of `suite`: `evaluate5`'s statistics on the files split into
    their processes, main before the seventh plan on the whole files, `extra` methods on the split
    files, and the split's check. `protocol` describes a run where it is not 8 rounds a worker of
    the default budget's `share`."""
    evaluate5.PROCESSES = processes  # each run's workers, split into one file each
    with tempfile.TemporaryDirectory() as tmp:
        checks = evaluate6.split_sizes(data, sizes, Path(tmp))
        before = old_tree(Path(tmp), BEFORE)
        evaluate5.main(["--data", str(evaluate6.SPLIT), "--sizes", ",".join(sizes)],
                       title=f"`primbench run --processes {processes}`, one file a side",
                       protocol=protocol or (f"each run one `--processes {processes}` file: {processes} workers, each "
                                             f"`--rounds 8` (the default) of batches of at least 0.5 ms and {share} of "
                                             "the default 1 s"),
                       shown=data, suite_path=suite,
                       extra={f"{BEFORE} (before the plan), {processes} processes a side":
                              lambda ps: old_method(whole_files(ps, data), before, relabel=False), **(extra or {})})
        evaluate6.print_split(checks)

if __name__ == "__main__":
    main()
