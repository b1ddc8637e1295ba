"""Each kernel's answer to the SM clock measured in history, leave-two-out, on the sixth and seventh
evaluations' A/A files (`h200/data6`, `h200/data7`): not out of sample (the correction was designed
after reading `evaluate7.txt`), but no pair's own files measure the slopes that judge it.

    python tests/benchmarks/verdicts/clock_history.py > tests/benchmarks/verdicts/clock_history.txt

For each ordered pair (A/A: two A/A files; planted: a planted file and an A/A file, both ways) the
other A/A files of the size are the history: each file one run (its workers' measured rounds pooled:
mean ln GPU time per call and mean ln SM clock per kernel), in collection order, given to
`history.variability.clock_response`, shrunk toward the suite's (`shrunk_clock_responses`, as
`history compare` does). compare then corrects each row's change by its slope times the
sides' clocks apart and carries the slope's variance (`compare_runs(clock_response=...)`). Beside it:
the frozen method (no history: the prior's term on every row). Columns as `evaluate5.py`'s.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.history.variability import clock_response, shrunk_clock_responses  # noqa: E402
from primbench.rounds import measured_rounds  # noqa: E402

SETS = (("data6", ("1MiB", "4MiB")), ("data7", ("64KiB", "1MiB", "4MiB", "64MiB")))


def numbered(d: Path, label: str) -> list[Path]:
    files = [f for f in d.glob(f"{label}-*.json") if re.fullmatch(rf"{label}-\d+\.json", f.name)]
    return sorted(files, key=lambda f: int(f.stem.split("-")[1]))


def run_summary(f: Path) -> dict[tuple[str, str], tuple[float, float | None]]:
    """Per (algorithm, name): the run's GPU time per call (geometric mean over its workers' measured
    rounds) and its mean SM clock."""
    out = {}
    for s in json.loads(f.read_text())["specializations"]:
        if s.get("error") or not s.get("rounds"):
            continue
        by: dict[int, list[dict]] = {}
        for r in s["rounds"]:
            by.setdefault(r.get("process", 0), []).append(r)
        kept = [r for rs in by.values() for r in rs[measured_rounds(len(rs))]]
        t = math.exp(statistics.fmean(math.log(r["gpu_ms_per_call"] / 1000) for r in kept))
        clocks = [r["sm_clock_mhz"] for r in kept if r.get("sm_clock_mhz")]
        out[(s["meta"]["algo"], s["name"])] = (t, math.exp(statistics.fmean(map(math.log, clocks))) if clocks else None)
    return out


def responses(history: list[Path], summaries: dict[Path, dict]) -> dict[tuple[str, str], tuple[float, float]]:
    keys = set.intersection(*(set(summaries[f]) for f in history))
    raw = {}
    for k in keys:
        found = clock_response([summaries[f][k][0] for f in history], [summaries[f][k][1] for f in history])
        if found is not None:
            raw[k] = found
    return shrunk_clock_responses(raw)


def judge(b: Path, h: Path, history: list[Path] | None, summaries: dict[Path, dict]) -> tuple[bool, dict]:
    cr = responses(history, summaries) if history is not None else None
    c = compare_runs(load_side(b), load_side(h), clock_response=cr)
    return c.failed(), {r.name: (r.verdict.value, r.min_detectable_change) for r in c.rows}


def main() -> None:
    print("# History's answer to the clock, leave-two-out (tests/benchmarks/verdicts/clock_history.py)\n")
    print("Each cell: with the slopes from the other A/A files / the frozen method (the prior's term).\n")
    print("| set | size | A/A exit 1 | A/A rows unchanged | median detectable (all rows) | planted 2 %, 5 % found | "
          "kernels with a slope (median) |")
    print("|---|---|---|---|---|---|---|")
    for data, sizes in SETS:
        for size in sizes:
            d = HERE / "h200" / data / size
            aa, planted = numbered(d, "aa"), numbered(d, "planted")
            summaries = {f: run_summary(f) for f in (*aa, *planted)}
            cells: dict[str, list] = {"fail": [], "unch": [], "mdc": [], "found": [], "slopes": []}
            for with_history in (True, False):
                failed = unchanged = rows = 0
                mdc: list[float] = []
                slopes: list[int] = []
                for a, b in itertools.permutations(aa, 2):
                    hist = [f for f in aa if f not in (a, b)]
                    f, verdicts = judge(a, b, hist if with_history else None, summaries)
                    failed += f
                    unchanged += sum(v == "unchanged" for v, _ in verdicts.values())
                    rows += len(verdicts)
                    mdc += [m for _, m in verdicts.values() if m]
                    if with_history:
                        slopes.append(len(responses(hist, summaries)))
                found: dict[float, list[int]] = {0.02: [0, 0], 0.05: [0, 0]}
                for p in planted:
                    plant = json.loads((d / f"plant-{p.stem.split('-')[1]}.json").read_text())
                    for a in aa:
                        hist = [f for f in aa if f != a]
                        for b, h in ((a, p), (p, a)):
                            _, verdicts = judge(b, h, hist if with_history else None, summaries)
                            for name, frac in plant["fraction"].items():
                                if name in verdicts and frac in found:
                                    want = "regression" if h == p else "improvement"
                                    found[frac][0] += verdicts[name][0] == want
                                    found[frac][1] += 1
                n = len(aa) * (len(aa) - 1)
                cells["fail"].append(f"{failed}/{n}")
                cells["unch"].append(f"{100 * unchanged / rows:.0f} %")
                cells["mdc"].append(f"{100 * statistics.median(mdc):.2f} %")
                cells["found"].append(", ".join(f"{hit}/{tot}" for hit, tot in found.values()))
                cells["slopes"].append(f"{statistics.median(slopes):.0f} of 8" if slopes else "-")
            print(f"| {data} | {size} | " + " | ".join(" / ".join(v) for v in cells.values()) + " |")


if __name__ == "__main__":
    main()
