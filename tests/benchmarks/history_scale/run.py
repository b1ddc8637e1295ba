"""Time every history command on the stores `build` made, and compare on two tiny files and on
10,000 and 100,000 specializations, for one checkout of primbench: each command a new process
(`measure.timed`: CPU time, wall time, peak RSS), killed past ``--timeout`` seconds or
``--rss-limit`` MB. A command killed (or skipped) on a store is skipped on the larger stores
of that checkout, to spare the shared machine.

Run: ``python run.py LABEL CODE_ROOT [--stores s1k,s10k,...] [--work /tmp/history_scale]``;
the figures go to ``results-LABEL.json`` beside this file (merged with what is there, a store
at a time), and `report.py` makes the tables of the README from them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from measure import Timing, timed  # noqa: E402

STORE_RUNS = {"s1k": 1_000, "s10k": 10_000, "s100k": 100_000, "s100k_lean": 100_000, "s1kx1k": 1_000}
NAME = generate._name(3)[0]  # a specialization with a planted step


def commands(db: Path, out: Path, store: str) -> list[tuple[str, list[str]]]:
    d = str(db)
    name = NAME
    return [
        ("info", ["history", "info", "--db", d]),
        ("runs", ["history", "runs", "--db", d]),
        ("branches", ["history", "branches", "--db", d]),
        ("series --last 30", ["history", "series", "--db", d, "-b", "main", name, "--last", "30"]),
        ("series (whole branch, csv)", ["history", "series", "--db", d, "-b", "main", name, "-f", "csv"]),
        ("compare feat-0 --base main", ["history", "compare", "feat-0", "--base", "main", "--db", d, "--no-git"]),
        ("regressions -b main", ["history", "regressions", "--db", d, "-b", "main", "-f", "csv"]),
        ("report -b main (default chart cap)", ["history", "report", "--db", d, "-b", "main", "--no-git",
                                                "-o", str(out / "report.html")]),
        ("report -b feat-0 (against main)", ["history", "report", "--db", d, "-b", "feat-0", "--no-git",
                                             "-o", str(out / "report-feat.html")]),
        ("regressions -b main, whole history", ["history", "regressions", "--db", d, "-b", "main", "-f", "csv",
                                                "--window", "0"]),
        ("report -b main, whole history", ["history", "report", "--db", d, "-b", "main", "--no-git", "--last", "0",
                                           "-o", str(out / "report-all.html")]),
        ("plot one specialization", ["history", "plot", "--db", d, name, "-o", str(out / "plot.png")]),
        ("export --parquet", ["history", "export", "--db", d, "--parquet", str(out / "export")]),
    ]


def _record(t: Timing) -> dict[str, Any]:
    return {"cpu_s": round(t.cpu_s, 3), "wall_s": round(t.wall_s, 3), "rss_mb": round(t.rss_mb, 1),
            "code": t.code, "killed": t.killed, "stderr": t.err.strip().splitlines()[-1:] if t.code else []}


def _median(ts: list[Timing]) -> dict[str, Any]:
    rec = _record(sorted(ts, key=lambda t: t.cpu_s)[len(ts) // 2])
    rec["cpu_s_all"] = [round(t.cpu_s, 3) for t in ts]
    return rec


def run_ingest(label: str, root: Path, work: Path, store: str, timeout: float, rss: float,
               figures: dict[str, Any]) -> None:
    """One-file ingest (it adds a run, so it comes last): a rounds file, then an
    ``--output-batches`` one, each a run never stored before."""
    db = work / f"{store}.duckdb"
    out = work / f"out-{label}-{store}"
    out.mkdir(parents=True, exist_ok=True)
    for kind, batches in (("ingest one file", False), ("ingest one file with batches", True)):
        index = 10_000_000 + time.time_ns() % 1_000_000_000
        run = generate.Run(index, "main", generate.sha(f"ingest-{label}-{store}-{index}"),
                           generate.START + dt.timedelta(days=50 * 365, minutes=index % 100_000))
        path = out / f"one-{index}.json"
        path.write_text(generate.text(generate.document(run, 1000 if store == "s1kx1k" else 100, batches=batches)))
        t = timed(["history", "ingest", "--db", str(db), str(path)], code_root=root, timeout_s=timeout,
                  rss_limit_mb=rss)
        figures[kind] = {**_record(t), "said": (t.out + t.err).strip().splitlines()[:1]}
        print(f"{label} {store} {kind}: {t.cell()} (exit {t.code}) {figures[kind]['said']}", flush=True)
        path.unlink()


def run_store(label: str, root: Path, work: Path, store: str, timeout: float, rss: float,
              skip: set[str], skip_why: dict[str, str], previous: dict[str, Any] | None = None,
              asked: frozenset[str] | set[str] = frozenset(), repeat: int = 1, ingest: bool = True) -> dict[str, Any]:
    db = work / f"{store}.duckdb"
    out = work / f"out-{label}-{store}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    figures: dict[str, Any] = {"store_runs": STORE_RUNS[store], "store_mb": round(db.stat().st_size / 2**20, 1)}
    for what, argv in commands(db, out, store):
        if what in asked and previous and "cpu_s" in (previous.get(what) or {}):
            figures[what] = previous[what]  # not run this time (--skip): an earlier run's figure is kept
            print(f"{label} {store} {what}: kept from an earlier run", flush=True)
            continue
        if what in skip:
            figures[what] = {"skipped": skip_why.get(what, "killed on a smaller store")}
            print(f"{label} {store} {what}: skipped", flush=True)
            continue
        ts = []
        for _ in range(repeat):
            shutil.rmtree(out / "export", ignore_errors=True)
            t = timed(argv, code_root=root, timeout_s=timeout, rss_limit_mb=rss)
            if what == "export --parquet" and t.code == 0:
                t_mb = sum(f.stat().st_size for f in (out / "export").glob("*.parquet")) / 2**20
                print(f"  {store} export wrote {t_mb:.1f} MB", flush=True)
            ts.append(t)
            if t.killed:
                break
        figures[what] = _record(ts[0]) if len(ts) == 1 else _median(ts)
        if any(t.killed for t in ts):
            skip.add(what)
        print(f"{label} {store} {what}: {' | '.join(t.cell() for t in ts)} (exit {ts[-1].code})", flush=True)
    if ingest and not store.endswith("_lean"):  # a lean store's ingest says nothing of a real one's
        run_ingest(label, root, work, store, timeout, rss, figures)
    return figures


def run_compare(label: str, root: Path, work: Path, timeout: float, rss: float) -> dict[str, Any]:
    import numpy as np

    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE.parents[2]))
    from compare_speed import make_side  # tests/benchmarks/compare_speed.py: results 4.4.0, 3 rounds each

    figures: dict[str, Any] = {}
    for n, reps in ((3, 3), (10_000, 3), (100_000, 1)):
        files = [work / f"compare-{n}-{side}.json" for side in ("base", "head")]
        if not files[0].exists():
            for k, f in enumerate(files):
                doc = make_side(np.random.default_rng(k + 1), n, 0, 0.02 * k, version="4.4.0")
                f.write_text(json.dumps(doc))
        ts = [timed(["compare", *map(str, files)], code_root=root, timeout_s=timeout, rss_limit_mb=rss)
              for _ in range(reps)]
        figures[f"compare {n:,} specializations"] = _median(ts)
        print(f"{label} compare {n}: {[t.cell() for t in ts]}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("code_root", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/history_scale"))
    parser.add_argument("--stores", default="s1k,s10k,s100k,s1kx1k")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--rss-limit", type=float, default=6144.0)
    parser.add_argument("--no-compare", action="store_true")
    parser.add_argument("--only-ingest", action="store_true", help="time the one-file ingests only")
    parser.add_argument("--no-ingest", action="store_true", help="no one-file ingests (the store is left as it is)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command: the median is recorded")
    parser.add_argument("--skip", default="", help="commands not run (names separated by ;), said so in the figures")
    parser.add_argument("--skip-why", default="not run on this store (over the limits on a smaller one, or too "
                        "costly here)", help="why, as the figures say it")
    args = parser.parse_args()
    path = HERE / f"results-{args.label}.json"
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data["machine"] = (f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work), "
                       f"Python {platform.python_version()}; load average at the start "
                       f"{os.getloadavg()[0]:.1f}")
    data["code_root"] = str(args.code_root)
    if not args.no_compare:
        data["compare"] = run_compare(args.label, args.code_root, args.work, args.timeout, args.rss_limit)
        path.write_text(json.dumps(data, indent=1))
    asked = {k.strip() for k in args.skip.split(";") if k.strip()}
    skip_why = dict.fromkeys(asked, args.skip_why)
    skip: set[str] = set(asked)
    stores = data.setdefault("stores", {})
    for store in args.stores.split(","):
        if args.only_ingest:
            run_ingest(args.label, args.code_root, args.work, store, args.timeout, args.rss_limit,
                       stores.setdefault(store, {}))
            path.write_text(json.dumps(data, indent=1))
            continue
        if store == "s1kx1k":
            skip = set(asked)
        stores[store] = run_store(args.label, args.code_root, args.work, store, args.timeout, args.rss_limit, skip,
                                  skip_why, stores.get(store), asked, args.repeat, not args.no_ingest)
        path.write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    statistics.median([1])
    main()
