"""Where `history export --parquet`'s CPU goes without the documents (issue 28, s6): one table's
``COPY … TO … (FORMAT parquet)`` under one setting, or one column of it, each in a fresh process
(as the command runs: a cold buffer pool, DuckDB held to 384 MB, main's
`history.export.EXPORT_MEMORY` before s6, and one thread; the variants ``m768_*`` and ``mem_*``
set their own), timed by the parent from the child's rusage (user + system CPU, minor faults), the
child's own start-up (Python, DuckDB's import, the connection) measured apart and subtracted.

    python export_settings.py STORE [--table specializations] [--repeat 3] [--variants a,b,...]
    python export_settings.py STORE --columns [--table specializations]
    python export_settings.py STORE --selects 'COLS;COLS;...' [--table specializations]

A variant is a name in `VARIANTS` (settings and COPY options); ``--columns`` times each column
alone (``COPY (SELECT col FROM table)``), the base variant's options; ``--selects`` each list
of columns (a SELECT's projections). Variants alternate within
each repetition; medians printed. The code measured is this checkout's (`primbench.history.export`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

#: DuckDB's memory for every variant that sets none: main's `history.export.EXPORT_MEMORY` before s6.
MAIN_MEMORY = "384MB"
#: name -> (SET statements before the COPY, COPY options after FORMAT parquet, the SELECT's columns or
#: None for every column). "base" is what `history.export` does at main for a table other than the
#: documents.
VARIANTS: dict[str, tuple[list[str], str, str | None]] = {
    "base": ([], "ROW_GROUP_SIZE 100000", None),
    "no_order": (["SET preserve_insertion_order = false"], "ROW_GROUP_SIZE 100000", None),
    "rg_bytes_64mb": ([], "ROW_GROUP_SIZE 100000, ROW_GROUP_SIZE_BYTES '64MB'", None),
    "rg_1m": ([], "ROW_GROUP_SIZE 1000000", None),
    "mem_768mb": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 100000", None),
    "uncompressed": ([], "ROW_GROUP_SIZE 100000, COMPRESSION uncompressed", None),
    "zstd1": ([], "ROW_GROUP_SIZE 100000, COMPRESSION zstd, COMPRESSION_LEVEL 1", None),
    "v2": ([], "ROW_GROUP_SIZE 100000, PARQUET_VERSION V2", None),
    "no_dict": ([], "ROW_GROUP_SIZE 100000, DICTIONARY_SIZE_LIMIT 1", None),
    "mem_512mb": (["SET memory_limit = '512MB'"], "ROW_GROUP_SIZE 100000", None),
    "mem_640mb": (["SET memory_limit = '640MB'"], "ROW_GROUP_SIZE 100000", None),
    "mem_896mb": (["SET memory_limit = '896MB'"], "ROW_GROUP_SIZE 100000", None),
    "rg_50k": ([], "ROW_GROUP_SIZE 50000", None),
    "rg_200k": ([], "ROW_GROUP_SIZE 200000", None),
    "v2_zstd1": ([], "ROW_GROUP_SIZE 100000, PARQUET_VERSION V2, COMPRESSION zstd, COMPRESSION_LEVEL 1", None),
    "m768_v2": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 100000, PARQUET_VERSION V2", None),
    "m768_v2_zstd1": (["SET memory_limit = '768MB'"],
                      "ROW_GROUP_SIZE 100000, PARQUET_VERSION V2, COMPRESSION zstd, COMPRESSION_LEVEL 1", None),
    "m768_v2_lz4": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 100000, PARQUET_VERSION V2, COMPRESSION lz4", None),
    "m768_uncompressed": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 100000, COMPRESSION uncompressed", None),
    "m768_no_dict": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 100000, DICTIONARY_SIZE_LIMIT 1", None),
    "m768_flush512": (["SET memory_limit = '768MB'", "SET allocator_flush_threshold = '512MB'"],
                      "ROW_GROUP_SIZE 100000", None),
    "m768_no_order": (["SET memory_limit = '768MB'", "SET preserve_insertion_order = false"],
                      "ROW_GROUP_SIZE 100000", None),
    "m768_rg_50k": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 50000", None),
    "m768_rg_25k": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 25000", None),
    "m768_rg_10k": (["SET memory_limit = '768MB'"], "ROW_GROUP_SIZE 10000", None),
    "m768_no_order_16mb": (["SET memory_limit = '768MB'", "SET preserve_insertion_order = false"],
                           "ROW_GROUP_SIZE 100000, ROW_GROUP_SIZE_BYTES '16MB'", None),
    "m768_no_order_64mb": (["SET memory_limit = '768MB'", "SET preserve_insertion_order = false"],
                           "ROW_GROUP_SIZE 100000, ROW_GROUP_SIZE_BYTES '64MB'", None),
    "read_only": ([], "", None),  # not a COPY: every column hashed, nothing written
    "startup": ([], "", None),  # nothing: the child's start-up alone
}


def child(store: str, table: str, variant: str, columns: str | None, out: str) -> None:
    import duckdb

    sets, options, select = VARIANTS[variant]
    select = columns or select or "*"
    con = duckdb.connect(store, read_only=True)
    con.execute(f"SET memory_limit = '{MAIN_MEMORY}'")
    con.execute("SET threads = 1")
    for s in sets:
        con.execute(s)
    before = resource.getrusage(resource.RUSAGE_SELF)
    if variant == "read_only":
        con.execute(f"SELECT count(*), sum(hash(COLUMNS({select if select != '*' else '*'}))) FROM {table}").fetchall()
    elif variant != "startup":
        con.execute(f"COPY (SELECT {select} FROM {table}) TO ? (FORMAT parquet, {options})", [out])
    after = resource.getrusage(resource.RUSAGE_SELF)
    size = os.path.getsize(out) if os.path.exists(out) else 0
    print(json.dumps({"user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
                      "faults": after.ru_minflt - before.ru_minflt, "mb": size / 2**20,
                      "maxrss_mb": after.ru_maxrss / 1024}))


def run_one(store: Path, table: str, variant: str, columns: str | None) -> dict[str, float]:
    tmp = tempfile.mkdtemp(prefix="export_settings.")
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = [sys.executable, __file__, str(store), "--child", variant, "--table", table,
               "--out", str(Path(tmp) / "t.parquet")]
        if columns:
            cmd += ["--select", columns]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        inner = json.loads(done.stdout.strip().splitlines()[-1])
        inner["process"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return inner
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--table", default="specializations")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default="base,no_order,rg_bytes_64mb,rg_1m,mem_768mb,read_only")
    parser.add_argument("--columns", action="store_true", help="each column alone, the base options")
    parser.add_argument("--selects", help="column lists separated by ';', each timed alone with the base options")
    parser.add_argument("--select-variant", default="base", help="the variant --selects and --columns run under")
    parser.add_argument("--child")
    parser.add_argument("--select")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        child(str(args.store), args.table, args.child, args.select, args.out)
        return
    import duckdb

    if args.columns:
        con = duckdb.connect(str(args.store), read_only=True)
        cols = [r[0] for r in con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                          "WHERE schema_name = 'main' AND table_name = ? ORDER BY column_index",
                                          [args.table]).fetchall()]
        con.close()
        jobs = [(f"col {c}", args.select_variant, f'"{c}"') for c in cols]
    elif args.selects:
        jobs = [(f"select {c}", args.select_variant, c) for c in args.selects.split(";")]
    else:
        jobs = [(v, v, None) for v in args.variants.split(",")]
    print(f"{args.store} ({args.store.stat().st_size / 2**20:.0f} MB), table {args.table}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    got: dict[str, list[dict[str, float]]] = {}
    for k in range(args.repeat):
        for label, variant, columns in jobs:
            r = run_one(args.store, args.table, variant, columns)
            got.setdefault(label, []).append(r)
            print(f"  {k + 1}: {label:28s} {r['user']:6.2f} + {r['sys']:5.2f} s (user + system)  "
                  f"{r['faults']:>10,.0f} faults  {r['mb']:8.1f} MB  process {r['process']:6.2f} s  "
                  f"RSS {r['maxrss_mb']:5.0f} MB", flush=True)
    print(f"medians of {args.repeat} (the COPY's user + system CPU, system, minor faults, MB written, "
          f"whole child process CPU, peak RSS); load average {os.getloadavg()[0]:.1f}:")
    for label, rs in got.items():
        m = {f: statistics.median(x[f] for x in rs) for f in ("user", "sys", "faults", "mb", "process", "maxrss_mb")}
        print(f"  {label:28s} {m['user'] + m['sys']:6.2f} s ({m['sys']:5.2f} system, {m['faults']:>10,.0f} faults) "
              f"{m['mb']:8.1f} MB  process {m['process']:6.2f} s  RSS {m['maxrss_mb']:5.0f} MB")


if __name__ == "__main__":
    main()
