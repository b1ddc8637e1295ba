"""How compare's verdicts scale with the number of workers a run, in sample: the seventh and eighth
evaluations' `--processes` files (`h200/data7`: 4 workers, `h200/data8`: 8) with each run cut to its first K
workers (the rounds of the others dropped, the file otherwise as written: compare takes a --processes file's
workers from its rounds). For K = 2, 4 (and 8): every ordered A/A pair, compare's A/A exit-1 rate, its rows
unchanged, the median smallest detectable change (median per kernel) and the 5 % and 2 % plants found the
right way. The projection behind the ninth plan (16 workers: about 0.7 times the detectable change of 8) is
the step from 4 to 8 here, read from the same runs.

    python3 tests/benchmarks/verdicts/workers_subset.py > tests/benchmarks/verdicts/workers_subset.txt
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from no_rounds8 import numbered  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402

SETS = (("data7", 4, ("64KiB", "1MiB", "4MiB", "64MiB")), ("data8", 8, ("1MiB", "4MiB")))


def cut(p: Path, work: Path, k: int) -> Path:
    """The file with the rounds of its first `k` workers only."""
    target = work / f"{p.parent.parent.name}-{p.parent.name}-{p.stem}-{k}.json"
    doc = json.loads(p.read_text())
    for s in doc["specializations"]:
        if s.get("rounds"):
            s["rounds"] = [r for r in s["rounds"] if (r.get("process") or 0) < k]
    target.write_text(json.dumps(doc))
    return target


def main() -> None:
    print("# compare's verdicts against the workers a run (workers_subset.py; in sample)\n")
    print("| data | size | workers a run | A/A exit 1 | A/A rows unchanged | median detectable | "
          "planted 5 % / 2 % found the right way |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for data, most, sizes in SETS:
            for size in sizes:
                d = HERE / "h200" / data / size
                plants = [json.loads((d / f"plant-{k}.json").read_text())["fraction"] for k in (1, 2, 3)]
                for k in sorted({2, 4, most}):
                    aa = [load_side(cut(f, work, k)) for f in numbered(d, "aa")]
                    planted = [load_side(cut(f, work, k)) for f in numbered(d, "planted")]
                    failed = unchanged = rows = 0
                    detect: dict[str, list[float]] = {}
                    for a, b in itertools.permutations(aa, 2):
                        c = compare_runs(a, b)
                        failed += c.failed()
                        for r in c.rows:
                            rows += 1
                            unchanged += r.verdict.value == "unchanged"
                            if r.min_detectable_change is not None:
                                detect.setdefault(r.name, []).append(abs(r.min_detectable_change) * 100)
                    found = {0.05: [0, 0], 0.02: [0, 0]}
                    for j, p in enumerate(planted):
                        for a in aa:
                            for base, head, want in ((a, p, "regression"), (p, a, "improvement")):
                                for r in compare_runs(base, head).rows:
                                    frac = plants[j].get(r.name)
                                    if frac in found:
                                        found[frac][1] += 1
                                        found[frac][0] += r.verdict.value == want
                    pairs = len(aa) * (len(aa) - 1)
                    med = statistics.median(statistics.median(v) for v in detect.values())
                    print(f"| {data} | {size} | {k} | {failed}/{pairs} | {100 * unchanged / rows:.0f} % | "
                          f"{med:.2f} % | {found[0.05][0]}/{found[0.05][1]} / {found[0.02][0]}/{found[0.02][1]} |",
                          flush=True)


if __name__ == "__main__":
    main()
