"""Whether two exports hold the same rows: for every table in both folders, ``EXCEPT ALL`` both
ways (0 rows each way: the same multiset of rows), the row counts, and the columns (names and
types as DuckDB reads them back). Prints one line a table, then the tables only one folder has.

    python same_rows.py DIR_A DIR_B

Exit 1 where a table of both differs.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    import duckdb

    a, b = (Path(p) for p in sys.argv[1:3])
    con = duckdb.connect()
    con.execute("SET threads = 1")
    ta, tb = ({p.stem for p in d.glob("*.parquet")} for d in (a, b))
    bad = 0
    for table in sorted(ta & tb):
        pa, pb = str(a / f"{table}.parquet"), str(b / f"{table}.parquet")
        ca = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [pa]).fetchall()
        cb = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [pb]).fetchall()
        na, nb = (con.execute("SELECT count(*) FROM read_parquet(?)", [p]).fetchone()[0] for p in (pa, pb))  # type: ignore[index]
        only_a = con.execute("SELECT count(*) FROM (SELECT * FROM read_parquet(?) EXCEPT ALL "
                             "SELECT * FROM read_parquet(?))", [pa, pb]).fetchone()[0]  # type: ignore[index]
        only_b = con.execute("SELECT count(*) FROM (SELECT * FROM read_parquet(?) EXCEPT ALL "
                             "SELECT * FROM read_parquet(?))", [pb, pa]).fetchone()[0]  # type: ignore[index]
        columns = [c[:2] for c in ca] == [c[:2] for c in cb]
        same = columns and na == nb and only_a == only_b == 0
        bad += not same
        print(f"{table:18s} rows {na:>10,} / {nb:>10,}  columns {'same' if columns else 'DIFFER'}"
              f"  A EXCEPT ALL B: {only_a}  B EXCEPT ALL A: {only_b}  -> {'same' if same else 'DIFFERENT'}")
    for table in sorted(ta - tb):
        print(f"{table:18s} only in {a}")
    for table in sorted(tb - ta):
        print(f"{table:18s} only in {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
