"""`history regressions -b main` and `history report -b main` (and `-b feat-0`) of two checkouts, alternating,
on the stores `build.py` made: the pooled noise's three passes read the store once where the points are few
(`trends.CACHED_POINT_ROWS`), against three reads. Each command a new process (`measure.timed`: CPU seconds,
peak RSS); per store and command the median of the repetitions; the regressions' CSV of both checkouts
compared byte for byte, and the reports' HTML with the moment it was made left out.

    python report_passes.py BASE_ROOT HEAD_ROOT --work /tmp/hs12 --stores s10k,s100k --repeat 3
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import timed  # noqa: E402


def commands(store: Path, out: Path) -> dict[str, list[str]]:
    d = str(store)
    return {
        "regressions -b main": ["history", "regressions", "--db", d, "-b", "main", "-f", "csv"],
        "report -b main": ["history", "report", "--db", d, "-b", "main", "--no-git", "-o", str(out / "report.html")],
        "report -b feat-0": ["history", "report", "--db", d, "-b", "feat-0", "--no-git", "-o",
                             str(out / "report-feat.html")],
    }


def stripped(path: Path) -> str:
    """A report's HTML without the moment it was made (the only part two runs of one store may differ in)."""
    return re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?(\.\d+)?( UTC)?", "TIME", path.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("head", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/history_scale"))
    ap.add_argument("--stores", default="s10k,s100k")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# The pooled noise's passes: {args.base} (base) against {args.head} (head), alternating\n")
    print("| store | command | base: CPU s (each), peak MB | head: CPU s (each), peak MB | same output |")
    print("|---|---|---|---|---|")
    for store in args.stores.split(","):
        db = args.work / f"{store}.duckdb"
        outs = {side: args.work / f"passes-{side}-{store}" for side in ("base", "head")}
        for o in outs.values():
            o.mkdir(parents=True, exist_ok=True)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.repeat):
            for side, root in (("base", args.base), ("head", args.head)):
                for label, argv in commands(db, outs[side]).items():
                    t = timed(argv, code_root=root, timeout_s=300.0)
                    if t.code != 0 or t.killed:
                        raise SystemExit(f"{side} {label} on {store}: exit {t.code} {t.killed or ''}")
                    if label.startswith("regressions"):
                        (outs[side] / "regressions.csv").write_text(t.out)
                    times.setdefault((side, label), []).append((t.cpu_s, t.rss_mb))
        for label in commands(db, outs["base"]):
            cells = []
            for side in ("base", "head"):
                got = times[(side, label)]
                cpu = [c for c, _ in got]
                cells.append(f"{statistics.median(cpu):.2f} ({', '.join(f'{c:.2f}' for c in cpu)}), "
                             f"{max(m for _, m in got):.0f}")
            name = {"regressions -b main": "regressions.csv", "report -b main": "report.html",
                    "report -b feat-0": "report-feat.html"}[label]
            a, b = outs["base"] / name, outs["head"] / name
            same = (a.read_bytes() == b.read_bytes()) if name.endswith(".csv") else stripped(a) == stripped(b)
            print(f"| {store} | {label} | {cells[0]} | {cells[1]} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
