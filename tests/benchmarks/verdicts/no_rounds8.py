"""Runs without rounds (a C++ primbench file, `--rounds 1`, files made before rounds existed), out of
sample: the seventh and eighth evaluations' files (`h200/data7`, `h200/data8`; both collected long
after the rule for such runs was frozen, `evaluate-after.txt`) with their rounds dropped, as
`evaluate.strip_rounds` does: each run one value per specialization, a side one file; each run's value
either its first worker's alone (what one process without rounds reports) or the whole run's. Every ordered
A/A pair (exit 1, rows unchanged) and every planted run against every A/A run both ways (the rows
planted 5 % found the right way, and the planted 2 %), through `compare_runs` as it is.

    python3 tests/benchmarks/verdicts/no_rounds8.py > tests/benchmarks/verdicts/no_rounds8.txt
    python3 tests/benchmarks/verdicts/no_rounds8.py --file-suffix=-p1 data13/p8r2x2:4MiB,1MiB \
        data13b/p8r2x2:64MiB,64KiB data14/p8r2x2:4MiB,1MiB,64KiB > tests/benchmarks/verdicts/no_rounds14.txt
        (each label's first file: two-run labels)
    python3 tests/benchmarks/verdicts/no_rounds8.py data15/default:64MiB,4MiB,1MiB,64KiB data16/default:64MiB \
        > tests/benchmarks/verdicts/no_rounds16.txt   (one default-protocol file a label)

Issue 30's targets for such runs: A/A exit 1 at most 5 %; a 5 % drop found in at least 90 % of
pairs at 64 MiB and above.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402
from primbench.rounds import measured_rounds  # noqa: E402

SETS = (("data7", ("64KiB", "1MiB", "4MiB", "64MiB")), ("data8", ("1MiB", "4MiB")))


def stripped(p: Path, work: Path, worker: int | None) -> Path:
    """The file without rounds. `worker` None: the whole run's value (every worker's rounds: a
    quieter run than one process gives); else that worker's alone, as one process without rounds
    would have reported it (the mean of its measured rounds' time per call, throughputs scaled)."""
    target = work / f"{p.parent.parent.name}-{p.parent.name}-{p.stem}-{worker}.json"
    doc = json.loads(p.read_text())
    for s in doc["specializations"]:
        if worker is not None:
            mine = [r["gpu_ms_per_call"] for r in s["rounds"] if r.get("process") == worker]
            mine = mine[measured_rounds(len(mine))]
            t = sum(mine) / len(mine) / 1e3
            ratio = t / s["gpu_seconds_per_call"]
            s["gpu_seconds_per_call"] = t
            for field in ("bytes_per_second", "items_per_second"):
                if s.get(field):
                    s[field] /= ratio
        s.pop("rounds", None)
        s.pop("between_rounds", None)
    target.write_text(json.dumps(doc))
    return target


def numbered(d: Path, label: str, suffix: str = "") -> list[Path]:
    """A collection's files of `label` in their order: LABEL-N.json, or LABEL-N{suffix}.json (``-p1``: each label's
    first file, where a label is two runs)."""
    return sorted((f for f in d.glob(f"{label}-*.json") if re.fullmatch(rf"{label}-\d+{suffix}\.json", f.name)),
                  key=lambda f: int(f.stem.split("-")[1]))


def sets_from(argv: list[str] | None, default: tuple[tuple[str, tuple[str, ...]], ...] = SETS,
              ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`default`, or the collections named on the command line as DATA:SIZE,SIZE (e.g. data9/p16:1MiB,4MiB)."""
    if not argv:
        return default
    return tuple((d, tuple(sizes.split(","))) for d, _, sizes in (a.partition(":") for a in argv))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    suffix = next((a.removeprefix("--file-suffix=") for a in args if a.startswith("--file-suffix=")), "")
    sets = sets_from([a for a in args if not a.startswith("--file-suffix=")])
    print("# Runs without rounds, out of sample (no_rounds8.py): data7 and data8 with their rounds dropped\n")
    print("| data | size | a run's value | A/A exit 1 | A/A rows unchanged | planted 5 % found the right way "
          "| planted 2 % found | "
          "unplanted rows flagged |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for data, sizes in sets:
            for size, worker in itertools.product(sizes, (0, None)):
                d = HERE / "h200" / data / size
                aa = [load_side(stripped(f, work, worker)) for f in numbered(d, "aa", suffix)]
                planted = [load_side(stripped(f, work, worker)) for f in numbered(d, "planted", suffix)]
                plants = [json.loads((d / f"plant-{k}.json").read_text())["fraction"]
                          for k in range(1, len(planted) + 1)]
                failed = unchanged = rows = 0
                for a, b in itertools.permutations(aa, 2):
                    c = compare_runs(a, b)
                    failed += c.failed()
                    unchanged += c.summary.counts[Verdict.UNCHANGED]
                    rows += len(c.rows)
                found = {0.05: [0, 0], 0.02: [0, 0]}
                unplanted = [0, 0]
                for k, p in enumerate(planted):
                    for a in aa:
                        for base, head, want in ((a, p, "regression"), (p, a, "improvement")):
                            for row in compare_runs(base, head).to_dict()["specializations"]:
                                fraction = plants[k].get(row["name"], 0.0)
                                flagged = row["verdict"] in ("regression", "improvement")
                                if fraction in found:
                                    found[fraction][1] += 1
                                    found[fraction][0] += row["verdict"] == want
                                elif not fraction:
                                    unplanted[1] += 1
                                    unplanted[0] += flagged
                pairs = len(aa) * (len(aa) - 1)
                f5, f2 = found[0.05], found[0.02]
                share = f"{unchanged}/{rows} ({100 * unchanged / rows:.0f} %)"
                five = f"{f5[0]}/{f5[1]} ({100 * f5[0] / f5[1]:.0f} %)"
                two = f"{f2[0]}/{f2[1]} ({100 * f2[0] / f2[1]:.0f} %)"
                other = f"{unplanted[0]}/{unplanted[1]}"
                what = "worker 0's" if worker == 0 else "every worker's"
                print(f"| {data} | {size} | {what} | {failed}/{pairs} | {share} | {five} | {two} | {other} |")


if __name__ == "__main__":
    main()
