"""`history compare` with a short history, leave-out, on the seventh and eighth evaluations' files
(`h200/data7`: `--processes 4`, `h200/data8`: `--processes 8`). Not out of sample in the strict sense
(these files have been read), but nothing in history's variance or clock model was chosen on them.

For each ordered pair (A/A: two A/A files; planted: a planted file and an A/A file, both ways) the
other A/A files of the size are the base branch's history, one run each in collection order (6 runs
for an A/A pair, 7 for a planted one): compare then gets what `history compare` gives it from such a
store, history's run-to-run CV of each kernel (`history.variability.run_to_run_cvs` on a frame of
those runs) and its answer to the SM clock (`clock_history.responses`, as `clock_responses`).
Beside it, plain compare of the same two files. A planted kernel's real change is its planted run
against the A/A runs' mean (geometric means of the workers' measured rounds).

    python3 tests/benchmarks/verdicts/history_loo.py > tests/benchmarks/verdicts/history_loo.txt

`history_loo-unmoderated.txt` is the same at 7f53306, before history's variances were moderated
across the suite (`compare.core._moderated_history`, chosen after reading it: in sample).

History needs `history.variability.MIN_RUNS` (6) runs of a kernel: with 7 A/A files a size (data9 to data11) the
other five of an A/A pair are too few, so its A/A cells are plain compare's (history_loo9.txt's A/A cells were).
`--base-in-history` gives each pair what `history compare` reads: the base branch's runs include the base run, so
the history is every A/A run but the head (6 for an A/A pair; 7 or 6 for a planted one).

    python3 tests/benchmarks/verdicts/history_loo.py --base-in-history data11/p16r4:64KiB,1MiB,4MiB,64MiB
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from clock_history import numbered, responses, run_summary  # noqa: E402
from no_rounds8 import sets_from  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.history.variability import run_to_run_cvs  # noqa: E402

SETS = (("data7", ("64KiB", "1MiB", "4MiB", "64MiB")), ("data8", ("1MiB", "4MiB")))


def history_cvs(history: list[Path], summaries: dict[Path, dict]) -> dict[tuple[str, str], tuple[float, float]]:
    """What `history compare` gets from a store of `history`'s runs: each kernel's run-to-run CV."""
    rows = [{"algorithm": k[0], "name": k[1], "value": summaries[f][k][0]} for f in history for k in summaries[f]]
    return run_to_run_cvs(pd.DataFrame(rows))


def _judge(sides: dict[Path, list], summaries: dict[Path, dict], b: Path, h: Path,
           hist: list[Path] | None) -> dict:
    """compare of `b` against `h`, with what a store of `hist`'s runs gives `history compare`, or none."""
    kw = {"run_to_run_cv": history_cvs(hist, summaries),
          "clock_response": responses(hist, summaries)} if hist is not None else {}
    c = compare_runs(sides[b], sides[h], **kw)
    return {"failed": c.failed(), "rows": {r.name: (r.verdict.value, r.min_detectable_change) for r in c.rows}}


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    base_in = "--base-in-history" in args
    sets = sets_from([a for a in args if a != "--base-in-history"], SETS)
    if base_in:
        print("# `history compare` with a history of every A/A run but the head's (history_loo.py --base-in-history)\n")
    else:
        print("# `history compare` with a history of the other A/A runs (history_loo.py)\n")
    print("Each cell: with history / plain compare of the same two files.\n")
    print("| set | size | A/A exit 1 | A/A rows unchanged | median detectable | planted 2 %, 5 % found | "
          "found at 0.8-1.25x the detectable change | at >= 2x |")
    print("|---|---|---|---|---|---|---|---|")
    for data, sizes in sets:
        for size in sizes:
            d = HERE / "h200" / data / size
            aa, planted = numbered(d, "aa"), numbered(d, "planted")
            summaries = {f: run_summary(f) for f in (*aa, *planted)}
            sides = {f: load_side(f) for f in (*aa, *planted)}
            cells: dict[str, list[str]] = {k: [] for k in ("fail", "unch", "mdc", "found", "cal", "twice")}
            for with_history in (True, False):
                failed = unchanged = rows = 0
                mdc: list[float] = []
                for a, b in itertools.permutations(aa, 2):
                    hist = [f for f in aa if f != b and (base_in or f != a)]
                    out = _judge(sides, summaries, a, b, hist if with_history else None)
                    failed += out["failed"]
                    unchanged += sum(v == "unchanged" for v, _ in out["rows"].values())
                    rows += len(out["rows"])
                    mdc += [m for _, m in out["rows"].values() if m]
                found = {0.02: [0, 0], 0.05: [0, 0]}
                cal, twice = [0, 0], [0, 0]
                for p in planted:
                    plant = json.loads((d / f"plant-{p.stem.split('-')[1]}.json").read_text())["fraction"]
                    for a in aa:
                        for b, h in ((a, p), (p, a)):
                            hist = [f for f in aa if f != h] if base_in else [f for f in aa if f != a]
                            verdicts = _judge(sides, summaries, b, h, hist if with_history else None)["rows"]
                            want = "regression" if h == p else "improvement"
                            for (algo, name), (t, _) in summaries[p].items():
                                frac = plant.get(name, 0.0)
                                if not frac or name not in verdicts:
                                    continue
                                verdict, detectable = verdicts[name]
                                hit = verdict == want
                                if frac in found:
                                    found[frac][0] += hit
                                    found[frac][1] += 1
                                real = abs(math.log(t) - statistics.fmean(math.log(summaries[f][(algo, name)][0])
                                                                          for f in aa))
                                ratio = real / math.log1p(detectable) if detectable else math.nan
                                for box, ok in ((cal, 0.8 <= ratio <= 1.25), (twice, ratio >= 2.0)):
                                    if ok:
                                        box[0] += hit
                                        box[1] += 1
                n = len(aa) * (len(aa) - 1)
                cells["fail"].append(f"{failed}/{n}")
                cells["unch"].append(f"{100 * unchanged / rows:.0f} %")
                cells["mdc"].append(f"{100 * statistics.median(mdc):.2f} %")
                cells["found"].append(", ".join(f"{hit}/{tot}" for hit, tot in found.values()))
                cells["cal"].append(f"{cal[0]}/{cal[1]}")
                cells["twice"].append(f"{twice[0]}/{twice[1]}")
            print(f"| {data} | {size} | " + " | ".join(" / ".join(v) for v in cells.values()) + " |")


if __name__ == "__main__":
    main()
