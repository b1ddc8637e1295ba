"""The store layout's figures (issue 28): a 1,000-file batch ingest (CPU, wall, peak RSS, store
size), the store replicated in SQL to 10,000 runs, and a one-file ingest into stores of 0,
1,000 and 10,000 runs (the median of 3, each into a fresh copy of the store), for the code at
CODE_ROOT (this checkout, or an unpacked older one: ``git archive c16539c | tar -x -C DIR``).

    python tests/benchmarks/history_scale/generate.py FILES 1003
    python tests/benchmarks/history_scale/layout.py LABEL CODE_ROOT FILES WORK

writes ``WORK/layout-LABEL.json``. The first 1,000 files of FILES make the batch; the last 3
are the one-file ingests' (runs the stores do not hold). Every command is a process of its
own under GNU time, with ``PYTHONPATH=CODE_ROOT`` (so an unpacked checkout's ``primbench``
is the one imported).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import replicate  # build.py's copies of a store's runs, documents included


def timed(args: list[str], code_root: Path) -> dict[str, float]:
    """One process under GNU time: CPU seconds (user + system), wall seconds, peak RSS in MB."""
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %e %M", sys.executable, "-m", "primbench", *args],
                         env=env, capture_output=True, text=True, check=True)
    line = [x for x in out.stderr.splitlines() if x.startswith("TIME ")][-1].split()
    user, system, wall, rss_kb = (float(v) for v in line[1:])
    return {"cpu_s": round(user + system, 2), "wall_s": round(wall, 2), "rss_mb": round(rss_kb / 1024, 1)}


def used_bytes(db: Path) -> tuple[int, int]:
    """(file size, bytes in used blocks) of a DuckDB file: the rest are free blocks that later
    writes reuse."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT block_size, used_blocks FROM pragma_database_size()").fetchone()
    finally:
        con.close()
    assert row is not None
    return db.stat().st_size, int(row[0]) * int(row[1])


def main(label: str, code_root: Path, files: Path, work: Path) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    names = sorted(files.glob("*.json"))
    batch, singles = names[:1000], names[1000:1003]
    out: dict[str, Any] = {"label": label, "code_root": str(code_root)}
    batch_dir = work / f"batch-{label}"
    if not batch_dir.exists():
        batch_dir.mkdir()
        for f in batch:
            (batch_dir / f.name).symlink_to(f)
    s1k = work / f"s1k-{label}.duckdb"
    s1k.unlink(missing_ok=True)
    Path(str(s1k) + ".wal").unlink(missing_ok=True)
    out["batch_ingest_1000"] = timed(["history", "ingest", str(batch_dir), "--db", str(s1k)], code_root)
    size, used = used_bytes(s1k)
    out["s1k_bytes"] = {"file": size, "used": used, "file_kb_per_run": round(size / 1000 / 1024, 1),
                        "used_kb_per_run": round(used / 1000 / 1024, 1)}
    print(label, "batch", out["batch_ingest_1000"], out["s1k_bytes"], flush=True)
    s10k = work / f"s10k-{label}.duckdb"
    replicate(s1k, s10k, 10)
    size, used = used_bytes(s10k)
    out["s10k_bytes"] = {"file": size, "used": used, "file_kb_per_run": round(size / 10000 / 1024, 1),
                         "used_kb_per_run": round(used / 10000 / 1024, 1)}
    print(label, "s10k", out["s10k_bytes"], flush=True)
    out["one_file_ingest"] = {}
    for name, store in (("0", None), ("1000", s1k), ("10000", s10k)):
        rows = []
        for f in singles:
            copy = work / f"one-{label}.duckdb"
            copy.unlink(missing_ok=True)
            if store is not None:
                shutil.copyfile(store, copy)
            rows.append(timed(["history", "ingest", str(f), "--db", str(copy)], code_root))
            copy.unlink(missing_ok=True)
        out["one_file_ingest"][name] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(label, "one file at", name, out["one_file_ingest"][name], flush=True)
    (work / f"layout-{label}.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve(), Path(sys.argv[4]).resolve())
