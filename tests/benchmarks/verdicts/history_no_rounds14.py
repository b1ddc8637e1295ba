"""Runs without rounds judged with history (issue 30: "use what is known: ... history where it exists"), on the
p8r2 collections where one process a side fails (`no_rounds14.txt`; written after it, descriptive: nothing in
history's variance model was chosen on these files). Each label's first file is stripped of its rounds to worker
0's value (`no_rounds8.stripped`: what one process without rounds reports). For each ordered pair, the base
branch's history is every A/A run but the head's (what `history compare` reads: the base's own run included), one
stripped run each; compare gets each kernel's run-to-run CV from it (`history.variability.run_to_run_cvs`), no
clock model. Beside it, plain compare of the same two stripped files.

    python tests/benchmarks/verdicts/history_no_rounds14.py > tests/benchmarks/verdicts/history_no_rounds14.txt
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from no_rounds8 import numbered, stripped  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.history.variability import run_to_run_cvs  # noqa: E402

SETS = (("data13/p8r2x2", ("4MiB", "1MiB")), ("data13b/p8r2x2", ("64MiB", "64KiB")),
        ("data14/p8r2x2", ("4MiB", "1MiB", "64KiB")))


def values(f: Path) -> dict[tuple[str, str], float]:
    """A stripped run's value per (algorithm, name): its GPU time per call."""
    return {(s["meta"]["algo"], s["name"]): s["gpu_seconds_per_call"]
            for s in json.loads(f.read_text())["specializations"] if not s.get("error")}


def judge(sides: dict[Path, list], vals: dict[Path, dict], base: Path, head: Path,
          history: list[Path] | None) -> tuple[bool, dict[str, str]]:
    kw = {}
    if history is not None:
        rows = [{"algorithm": k[0], "name": k[1], "value": v} for f in history for k, v in vals[f].items()]
        kw = {"run_to_run_cv": run_to_run_cvs(pd.DataFrame(rows))}
    c = compare_runs(sides[base], sides[head], **kw)
    return c.failed(), {r.name: r.verdict.value for r in c.rows}


def main() -> None:
    print("# Runs without rounds (worker 0's value a run) judged with a history of the other A/A runs\n")
    print("Each cell: with history / plain compare of the same two stripped files.\n")
    print("| data | size | A/A exit 1 | A/A rows unchanged | planted 5 % found the right way | planted 2 % found |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for data, sizes in SETS:
            for size in sizes:
                d = HERE / "h200" / data / size
                work = Path(tmp) / data.replace("/", "-") / size
                work.mkdir(parents=True)
                aa = [stripped(f, work, 0) for f in numbered(d, "aa", "-p1")]
                planted = [stripped(f, work, 0) for f in numbered(d, "planted", "-p1")]
                plants = [json.loads((d / f"plant-{k}.json").read_text())["fraction"]
                          for k in range(1, len(planted) + 1)]
                sides = {f: load_side(f) for f in (*aa, *planted)}
                vals = {f: values(f) for f in (*aa, *planted)}
                cells: list[list[str]] = [[], [], [], []]
                for with_history in (True, False):
                    failed = unchanged = rows = 0
                    for a, b in itertools.permutations(aa, 2):
                        hist = [f for f in aa if f != b] if with_history else None
                        bad, verdicts = judge(sides, vals, a, b, hist)
                        failed += bad
                        unchanged += sum(v == "unchanged" for v in verdicts.values())
                        rows += len(verdicts)
                    found = {0.05: [0, 0], 0.02: [0, 0]}
                    for k, p in enumerate(planted):
                        for a in aa:
                            for base, head, want in ((a, p, "regression"), (p, a, "improvement")):
                                hist = [f for f in aa if f != head] if with_history else None
                                _, verdicts = judge(sides, vals, base, head, hist)
                                for name, verdict in verdicts.items():
                                    frac = plants[k].get(name, 0.0)
                                    if frac in found:
                                        found[frac][0] += verdict == want
                                        found[frac][1] += 1
                    n = len(aa) * (len(aa) - 1)
                    cells[0].append(f"{failed}/{n}")
                    cells[1].append(f"{100 * unchanged / rows:.0f} %")
                    for i, frac in ((2, 0.05), (3, 0.02)):
                        hit, tot = found[frac]
                        cells[i].append(f"{hit}/{tot} ({100 * hit / max(tot, 1):.0f} %)")
                print(f"| {data} | {size} | " + " | ".join(" / ".join(c) for c in cells) + " |")


if __name__ == "__main__":
    main()
