"""`history export --parquet` at 100,000 runs, fresh and incremental (issue 28, s10): what an export
costs when the folder already holds an export of the store and only a few runs were added.

    python incremental.py BASE_ROOT [--work /tmp/hs10] [--store s100k] [--repeat 3] > export-incremental-s10.txt

1. Fresh exports of the store, the base checkout (main) and this one alternating, each into an
   emptied folder (`measure.timed`: CPU, wall, peak RSS of the process; the megabytes written).
2. The store copied (``WORK/inc.duckdb``) and exported fresh by this checkout into ``WORK/inc-export``;
   exported again with nothing new (nothing may be written); then, `--repeat` times each, 1 and 100
   new runs (100 specializations, current schema, `generate.document`) ingested and the folder
   exported again (only them may be written: the runs count is checked).
3. The incremental folder against a fresh export of the grown store, every table read whole
   (``<table>*.parquet``): EXCEPT ALL both ways, and the row counts.

Main has no incremental export: its figure after adding runs is its fresh export (step 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from measure import Timing, timed  # noqa: E402


def _mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


def _files(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} if folder.exists() else {}


def _export(root: Path, store: Path, out: Path, timeout: float) -> tuple[Timing, float, list[str]]:
    """One export; the timing, the megabytes of the files it wrote or replaced, their names."""
    before = _files(out)
    t = timed(["history", "export", "--parquet", str(out), "--db", str(store)], code_root=root, timeout_s=timeout,
              rss_limit_mb=4096)
    if t.code != 0:
        raise SystemExit(f"export failed ({root}): {t.err}")
    after = _files(out)
    new = sorted(n for n, m in after.items() if before.get(n) != m)
    return t, _mb([out / n for n in new if n.endswith(".parquet")]), new


def _median(ts: list[Timing]) -> str:
    return (f"median {statistics.median(t.cpu_s for t in ts):.2f} s CPU, "
            f"{statistics.median(t.wall_s for t in ts):.2f} s wall, {max(t.rss_mb for t in ts):.0f} MB peak RSS")


def _add_runs(store: Path, n: int, tag: str, first_hour: int) -> Timing:
    runs = [generate.Run(first_hour + i, f"inc-{tag}", generate.sha(f"inc-{tag}-{i}"),
                         generate.START + dt.timedelta(hours=first_hour + i)) for i in range(n)]
    with tempfile.TemporaryDirectory(dir=store.parent) as tmp:
        for run in runs:
            (Path(tmp) / f"{run.branch}-{run.index:06d}.json").write_text(generate.text(generate.document(run, 100)))
        t = timed(["history", "ingest", "--db", str(store), tmp], code_root=ROOT, timeout_s=1800, rss_limit_mb=8192)
    if t.code != 0:
        raise SystemExit(f"ingest failed: {t.err}")
    return t


def _same_rows(store: Path, first: Path, second: Path) -> list[str]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET memory_limit = '2GB'; SET preserve_insertion_order = false")
    lines = []
    for table in ("runs", "specializations", "batches", "schema_migrations"):
        a, b = str(first / f"{table}*.parquet"), str(second / f"{table}*.parquet")
        counts = [con.execute("SELECT count(*) FROM read_parquet(?)", [x]).fetchone()[0] for x in (a, b)]
        extra = [con.execute("SELECT count(*) FROM (SELECT * FROM read_parquet(?) EXCEPT ALL "
                             "SELECT * FROM read_parquet(?))", [x, y]).fetchone()[0] for x, y in ((a, b), (b, a))]
        parts = sorted(p.name for p in first.glob(f"{table}*.parquet"))
        lines.append(f"{table}: {counts[0]} rows incremental ({len(parts)} files), {counts[1]} fresh; "
                     f"EXCEPT ALL incremental-fresh {extra[0]}, fresh-incremental {extra[1]}"
                     + ("" if extra == [0, 0] and counts[0] == counts[1] else "  ** DIFFERENT **"))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_root", type=Path, help="main's checkout")
    parser.add_argument("--base-label", default="main")
    parser.add_argument("--head-label", default="this branch")
    parser.add_argument("--work", type=Path, default=Path("/tmp/hs10"))
    parser.add_argument("--store", default="s100k")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--skip-fresh", action="store_true", help="step 1 left out")
    args = parser.parse_args()
    store = args.work / f"{args.store}.duckdb"
    print(f"# {platform.node()}, {os.cpu_count()} CPUs; store {store} ({store.stat().st_size / 1e6:,.0f} MB); "
          f"load average {os.getloadavg()[0]:.1f} at the start; {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
          flush=True)
    if not args.skip_fresh:
        print(f"\n## 1. fresh export, {args.base_label} and {args.head_label} alternating", flush=True)
        fresh: dict[str, list[Timing]] = {args.base_label: [], args.head_label: []}
        for rep in range(args.repeat):
            for label, root in ((args.base_label, args.base_root), (args.head_label, ROOT)):
                out = args.work / f"fresh-{'base' if root == args.base_root else 'head'}"
                shutil.rmtree(out, ignore_errors=True)
                t, mb, _ = _export(root, store, out, args.timeout)
                fresh[label].append(t)
                print(f"{label} #{rep + 1}: {t.cell()}, {mb:,.0f} MB written", flush=True)
        for label, ts in fresh.items():
            print(f"{label}: {_median(ts)}", flush=True)

    print(f"\n## 2. incremental, {args.head_label} (load average {os.getloadavg()[0]:.1f})", flush=True)
    inc = args.work / "inc.duckdb"
    shutil.copyfile(store, inc)
    out = args.work / "inc-export"
    shutil.rmtree(out, ignore_errors=True)
    t, mb, _ = _export(ROOT, inc, out, args.timeout)
    print(f"first export (fresh) of the copy: {t.cell()}, {mb:,.0f} MB written", flush=True)
    same: list[Timing] = []
    for rep in range(args.repeat):
        t, mb, new = _export(ROOT, inc, out, args.timeout)
        same.append(t)
        print(f"nothing new #{rep + 1}: {t.cell()}, files written: {new or 'none'}; {t.out.strip()}", flush=True)
    print(f"nothing new: {_median(same)}", flush=True)
    hour = 300_000
    for n in (1, 100):
        ts: list[Timing] = []
        for rep in range(args.repeat):
            ingest = _add_runs(inc, n, f"{n}-{rep}", hour)
            hour += n
            t, mb, new = _export(ROOT, inc, out, args.timeout)
            ts.append(t)
            first = t.out.strip().splitlines()[0] if t.out.strip() else ""
            print(f"{n} run(s) added #{rep + 1} (ingest {ingest.cell()}): export {t.cell()}, {mb:.1f} MB written "
                  f"({', '.join(new)}); {first}", flush=True)
            if f"Added {n} new run" not in t.out:
                print("  ** not the runs added **", flush=True)
        print(f"{n} run(s) added: {_median(ts)}", flush=True)

    print(f"\n## 3. the incremental folder against a fresh export of the grown store "
          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    check = args.work / "inc-fresh"
    shutil.rmtree(check, ignore_errors=True)
    t, mb, _ = _export(ROOT, inc, check, args.timeout)
    print(f"fresh export of the grown store: {t.cell()}, {mb:,.0f} MB written", flush=True)
    for line in _same_rows(inc, out, check):
        print(line, flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; {dt.datetime.now(dt.UTC):%H:%M} UTC", flush=True)


if __name__ == "__main__":
    main()
