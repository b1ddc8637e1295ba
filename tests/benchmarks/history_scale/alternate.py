"""`history export --parquet` of two checkouts, alternating: each repetition runs every export
command of the first checkout on every store, then the second's, so the load of the shared
machine falls on both alike (`run.py --repeat` runs one checkout's repetitions back to back).
Each command a new process (`measure.timed`); the median of the repetitions (by CPU time) goes to
``results-LABEL.json`` in `run.py`'s format (`report.py` reads it), with the megabytes written.

    python alternate.py BASE_LABEL BASE_ROOT HEAD_LABEL HEAD_ROOT [--work /tmp/hs6]
        [--stores s1k,s10k,s100k] [--repeat 3]

The base runs ``export --parquet`` only (its code may not know ``--documents``); the head runs
``export --parquet`` and ``export --parquet --documents`` (what the base's export writes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import sys  # noqa: E402

sys.path.insert(0, str(HERE))

from measure import Timing, timed  # noqa: E402
from run import STORE_RUNS, _median, _record  # noqa: E402

EXPORT = "export --parquet"
WITH_DOCUMENTS = "export --parquet --documents"


def _commands(db: Path, out: Path, head: bool) -> list[tuple[str, list[str]]]:
    argv = ["history", "export", "--db", str(db), "--parquet", str(out)]
    return [(EXPORT, argv), *([(WITH_DOCUMENTS, [*argv, "--documents"])] if head else [])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_label")
    parser.add_argument("base_root", type=Path)
    parser.add_argument("head_label")
    parser.add_argument("head_root", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/hs6"))
    parser.add_argument("--stores", default="s1k,s10k,s100k")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--rss-limit", type=float, default=4096.0)
    args = parser.parse_args()
    sides = ((args.base_label, args.base_root, False), (args.head_label, args.head_root, True))
    got: dict[tuple[str, str, str], list[Timing]] = {}
    written: dict[tuple[str, str, str], list[float]] = {}
    load = f"{os.getloadavg()[0]:.1f}"
    for k in range(args.repeat):
        for label, root, head in sides:
            for store in args.stores.split(","):
                db = args.work / f"{store}.duckdb"
                out = args.work / f"out-{label}-{store}" / "export"
                for what, argv in _commands(db, out, head):
                    shutil.rmtree(out, ignore_errors=True)
                    t = timed(argv, code_root=root, timeout_s=args.timeout, rss_limit_mb=args.rss_limit)
                    mb = sum(f.stat().st_size for f in out.glob("*.parquet")) / 2**20 if out.exists() else 0.0
                    got.setdefault((label, store, what), []).append(t)
                    written.setdefault((label, store, what), []).append(round(mb, 1))
                    print(f"{k + 1}: {label} {store} {what}: {t.cell()} (exit {t.code}), {mb:.1f} MB written; "
                          f"load average {os.getloadavg()[0]:.1f}", flush=True)
                shutil.rmtree(out, ignore_errors=True)
    for label, root, _ in sides:
        data: dict[str, Any] = {
            "machine": (f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work), Python "
                        f"{platform.python_version()}; load average at the start {load}; {args.repeat} "
                        f"repetitions alternating with {next(s[0] for s in sides if s[0] != label)}"),
            "code_root": str(root), "stores": {}}
        for store in args.stores.split(","):
            db = args.work / f"{store}.duckdb"
            figures: dict[str, Any] = {"store_runs": STORE_RUNS[store], "store_mb": round(db.stat().st_size / 2**20, 1)}
            for (lab, st, what), ts in got.items():
                if (lab, st) == (label, store):
                    figures[what] = _median(ts) if len(ts) > 1 else _record(ts[0])
                    figures[what]["mb_written"] = written[(lab, st, what)]
            data["stores"][store] = figures
        (HERE / f"results-{label}.json").write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
