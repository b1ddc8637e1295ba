"""What reading a PostgreSQL history through the driver costs at 10,000 runs x 100
specializations, against the DuckDB file of the same runs.

Run: ``python tests/benchmarks/storage_concurrency/read_cost.py`` (writes read_cost.txt beside
it). PostgreSQL: ``$PRIMBENCH_TEST_POSTGRES``, else a throw-away server (initdb/pg_ctl).

Both stores are filled by the real ingest, 10 calls of 1,000 files. Then, each in a new
process (so that its peak RSS is its own), 3 times: open the store for reading (the DuckDB file:
open read-only; PostgreSQL: copy the rows through the driver into an in-memory DuckDB store,
documents left on the server), query one series (10,000 rows), and on PostgreSQL fetch one
run's results document (what `compare` and the report do per run). Wall time and the
process's peak RSS (``VmHWM``: ``ru_maxrss`` is kept across exec, so it would be the parent's)
are reported, and the peak of the same process after its imports only.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from primbench.history.storage.contract import open_store  # noqa: E402
from tests import history_data as hd  # noqa: E402
from tests.backends import postgres as pg  # noqa: E402

RUNS = 10_000
SPECS = 100
CHUNK = 1_000
REPS = 3

PROBE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from primbench.history.selector import Selector
from primbench.history.storage.contract import open_store
import duckdb, pandas  # the imports every reader pays, before the clock starts
def hwm():  # peak RSS of this process in KiB (ru_maxrss would be the parent's, kept across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
base = hwm()
name = sys.argv[3]
scope = [Selector(branch="main", name=name)] if sys.argv[4] == "scoped" else []
t0 = time.perf_counter()
with open_store(sys.argv[2]).read(*scope) as r:
    t1 = time.perf_counter()
    frame = r.series(Selector(branch="main", name=name))
    t2 = time.perf_counter()
    run_id = str(frame["run_id"].iloc[-1])
    doc = r.results(run_id)
    t3 = time.perf_counter()
peak = hwm()
print(json.dumps({"open": t1 - t0, "series": t2 - t1, "document": t3 - t2, "rows": len(frame),
                  "rss_base_mib": base / 1024, "rss_peak_mib": peak / 1024}))
"""


def fill(location: str, tmp: Path) -> float:
    took = 0.0
    for chunk in range(RUNS // CHUNK):
        folder = tmp / f"chunk{chunk}"
        folder.mkdir(exist_ok=True)
        levels = hd.noisy_levels(CHUNK, specs=SPECS, cv=0.002, seed=chunk)
        for j, row in enumerate(levels):
            i = chunk * CHUNK + j
            doc = hd.document(row, commit=hd.sha(f"main-{i}"), date=hd.START + dt.timedelta(hours=i))
            (folder / f"run-{i:05d}.json").write_text(json.dumps(doc))
        t = time.perf_counter()
        report = open_store(location).ingest([folder])
        took += time.perf_counter() - t
        assert len(report.stored) == CHUNK and not report.errors, report.errors[:1]
        for f in folder.iterdir():
            f.unlink()
    return took


def probe(location: str, mode: str = "whole") -> list[dict[str, float]]:
    out = []
    for _ in range(REPS):
        done = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), location, hd.spec_name(42), mode],
                              capture_output=True, text=True, check=True)
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def describe(kind: str, runs: list[dict[str, float]]) -> list[str]:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return [f"{kind}: open for reading median {med['open']:.2f} s (runs: "
            + ", ".join(f"{r['open']:.2f}" for r in runs) + f"), series query {med['series'] * 1000:.0f} ms "
            f"({int(med['rows']):,} rows), one document {med['document'] * 1000:.0f} ms; peak RSS "
            f"{med['rss_peak_mib']:.0f} MiB (after imports: {med['rss_base_mib']:.0f} MiB)"]


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the throw-away server on the way out
    lines = [f"primbench history: reading {RUNS:,} runs x {SPECS} specializations through the PostgreSQL driver "
             "(tests/benchmarks/storage_concurrency/read_cost.py)",
             f"machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other work), Python "
             f"{platform.python_version()}", ""]
    server = None
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        try:
            base = os.environ.get(pg.ENV)
            if not base:
                found = pg.binaries()
                if found is None:
                    raise SystemExit("no PostgreSQL: set PRIMBENCH_TEST_POSTGRES or install initdb/pg_ctl")
                server = pg.ThrowAwayServer(found, fsync=True)
                base = server.start()
            url = pg.fresh_database(base)
            duck = str(tmp / "history.duckdb")
            took = fill(url, tmp)
            lines.append(f"PostgreSQL filled by 10 ingest calls of 1,000 files in {took:.0f} s")
            took = fill(duck, tmp)
            lines.append(f"DuckDB file filled the same way in {took:.0f} s "
                         f"({Path(duck).stat().st_size / 2**20:.0f} MiB)")
            import psycopg

            with psycopg.connect(url) as conn:
                sizes = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database())), "
                                     "pg_size_pretty(pg_total_relation_size('runs')), "
                                     "pg_size_pretty(pg_total_relation_size('specializations'))").fetchone()
            lines.append(f"PostgreSQL database {sizes[0]} (runs {sizes[1]}, with the documents; specializations "
                         f"{sizes[2]})")
            lines.append("")
            lines += describe("PostgreSQL, everything copied (Store.read(), what direct SQL gets)", probe(url))
            lines += describe("PostgreSQL, what `history series NAME -b main` copies (Store.read(scope): values of "
                              "main's NAME rows, keys of the rest)", probe(url, "scoped"))
            lines += describe("DuckDB file (read-only)", probe(duck))
        finally:
            if server is not None:
                server.stop()
    text = "\n".join(lines) + "\n"
    Path(__file__).with_suffix(".txt").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
