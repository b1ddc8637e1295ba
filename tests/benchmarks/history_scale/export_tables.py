"""Where `history export --parquet`'s CPU goes, a table at a time: for a store file, each exported
table's ``COPY … TO … (FORMAT parquet)`` as `history.export` runs it (its row groups, options,
memory limit and one thread), and the same table only *read* (every column hashed, nothing
written), in one process, each timed by `getrusage` (user and system CPU, minor page faults) with
the bytes written.

    python export_tables.py STORE [--rows N] [--repeat K] [--out DIR]

``--rows``: the row-group size of the tables other than the documents (`DEFAULT_ROW_GROUP_ROWS`;
100,000 before issue 28's s5, 10,000 after). Prints one line a table and repetition, then the
medians. The code measured is this checkout's (`primbench.history.export`).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.history import export  # noqa: E402
from primbench.history.bounded import bounded  # noqa: E402


def _usage() -> tuple[float, float, int, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt, time.monotonic()


def _delta(a: tuple[float, float, int, float], b: tuple[float, float, int, float]) -> dict[str, float]:
    return {"user": b[0] - a[0], "sys": b[1] - a[1], "faults": b[2] - a[2], "wall": b[3] - a[3]}


def main() -> None:
    import duckdb

    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--rows", type=int, default=export.DEFAULT_ROW_GROUP_ROWS)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/export_tables"))
    args = parser.parse_args()
    export.DEFAULT_ROW_GROUP_ROWS = args.rows
    con = duckdb.connect(str(args.store), read_only=True)
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    tables = [t for t in export.EXPORTED if t in present]
    print(f"{args.store} ({args.store.stat().st_size / 2**20:.0f} MB), row groups of {args.rows:,} rows "
          f"(documents {export.ROW_GROUP_ROWS['documents']:,}); load average {os.getloadavg()[0]:.1f}")
    got: dict[tuple[str, str], list[dict[str, float]]] = {}
    with bounded(con, export.EXPORT_MEMORY, threads=1):
        for k in range(args.repeat):
            shutil.rmtree(args.out, ignore_errors=True)
            args.out.mkdir(parents=True)
            for table in tables:
                a = _usage()
                con.execute(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {table}").fetchall()
                read = _delta(a, _usage())
                a = _usage()
                path, rows = export._export(con, table, args.out)
                wrote = _delta(a, _usage())
                wrote["mb"] = path.stat().st_size / 2**20
                read["mb"] = 0.0
                got.setdefault((table, "read"), []).append(read)
                got.setdefault((table, "export"), []).append(wrote)
                print(f"  {k + 1}: {table:18s} {rows:>10,} rows  read {read['user']:5.2f} + {read['sys']:5.2f} s"
                      f"  export {wrote['user']:5.2f} + {wrote['sys']:5.2f} s (user + system), "
                      f"{wrote['faults']:>9,.0f} faults, {wrote['mb']:7.1f} MB", flush=True)
    print("medians (user + system CPU s, minor faults, MB written):")
    total = 0.0
    for table in tables:
        r, w = ({f: statistics.median(x[f] for x in got[(table, what)]) for f in ("user", "sys", "faults", "mb")}
                for what in ("read", "export"))
        total += w["user"] + w["sys"]
        print(f"  {table:18s} read {r['user'] + r['sys']:6.2f} s ({r['sys']:.2f} system)   export "
              f"{w['user'] + w['sys']:6.2f} s ({w['sys']:.2f} system, {w['faults']:,.0f} faults)  {w['mb']:8.1f} MB")
    print(f"  every table's export: {total:.2f} s of CPU")
    shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
