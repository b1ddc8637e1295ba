"""8 processes ingest into one history at once, with readers alongside and kill -9 in the
middle of ingests; after a re-ingest every run must be stored exactly once. For each backend:
a PostgreSQL server, a DuckDB file, a Parquet folder.

Run: ``python tests/benchmarks/storage_concurrency/concurrency.py`` (writes concurrency.txt
beside it). PostgreSQL: ``$PRIMBENCH_TEST_POSTGRES`` (a server URL whose user may create
databases), else a throw-away server (initdb/pg_ctl, fsync on) as the tests start one.

Per backend:

* 160 results files (20 specializations, 5 batches each) in 8 groups of 20; writer i ingests
  its group, one file per call, interleaved with the first half of group i+1 (so every run of
  the first halves is written by two writers at once, and the second halves by one);
* 2 reader processes loop while the writers run, 0.5 s apart: open the store, check that
  every stored run is whole (its specializations and batches all there), query one series
  (back to back, with no pause, two readers of a DuckDB file hold its shared read lock
  between them all the time and its writers wait until they give up: seen on a first run);
* writers 3 and 6 are killed with SIGKILL in the middle of an ingest call (3 as its 5th call
  starts, 6 a random 0-300 ms into its 9th), so some of their runs are never stored;
* then one more process ingests all 160 files again: the runs the killed writers missed are
  stored, the others are duplicates; the store must hold each of the 160 runs exactly once,
  whole.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from primbench.history.storage.contract import open_store  # noqa: E402
from tests import history_data as hd  # noqa: E402
from tests.backends import postgres as pg  # noqa: E402

WRITERS = 8
PER_WRITER = 20
SPECS = 20
BATCHES = 5
READ_PAUSE = 0.5  # seconds between a reader's reads
KILLED = {3: (5, 0.0), 6: (9, 0.3)}  # writer -> (the call it is killed in, at most this many seconds into it)

WRITER = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from primbench.history.storage.contract import open_store
    from primbench.history.storage.parquet import ParquetStore
    location, runner, files = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    store = open_store(location, wait_secs=300)
    if isinstance(store, ParquetStore):
        store.runner = runner
    stored = duplicates = 0
    for k, f in enumerate(files, 1):
        print(f"call {k}", flush=True)
        report = store.ingest([f])
        assert not report.errors, report.errors
        stored += len(report.stored)
        duplicates += len(report.duplicates)
    print(f"done {stored} {duplicates}", flush=True)
""")

READER = textwrap.dedent("""
    import json, os, statistics, sys, time, warnings
    sys.path.insert(0, sys.argv[1])
    from primbench.history.selector import Selector
    from primbench.history.storage.contract import open_store
    location, stop, name = sys.argv[2], sys.argv[3], sys.argv[4]
    specs, batches, pause = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
    warnings.simplefilter("ignore")
    reads, broken, errors, times, seen = 0, 0, [], [], 0
    while not os.path.exists(stop):
        t = time.perf_counter()
        try:
            store = open_store(location, wait_secs=300)
            with store.read() as r:
                runs = r.con.execute("SELECT count(*) FROM runs").fetchone()[0]
                bad = r.con.execute(
                    "SELECT count(*) FROM runs r "
                    "LEFT JOIN (SELECT run_id, count(*) AS n FROM specializations GROUP BY 1) s USING (run_id) "
                    "LEFT JOIN (SELECT run_id, count(*) AS n FROM batches GROUP BY 1) b USING (run_id) "
                    "WHERE coalesce(s.n, 0) <> ? OR coalesce(b.n, 0) <> ?", [specs, specs * batches]).fetchone()[0]
                if runs:
                    r.series(Selector(branch="main", name=name))
        except Exception as exc:
            text = str(exc).splitlines()[0]
            if "no history store" in text or "no such directory" in text or "no runs/ folder" in text \\
                    or "no history stored here yet" in text:
                time.sleep(0.05)  # not created yet
                continue
            errors.append(text[:200])
            continue
        times.append(time.perf_counter() - t)
        time.sleep(pause)  # a dashboard polls; back to back, readers of a DuckDB file starve its writers
        reads += 1
        broken += bad
        seen = max(seen, runs)
    print(json.dumps({"reads": reads, "broken": broken, "errors": errors, "max_runs_seen": seen,
                      "median_s": statistics.median(times) if times else None, "max_s": max(times) if times else None}))
""")


def make_files(directory: Path) -> list[list[Path]]:
    groups = []
    for g in range(WRITERS):
        levels = hd.noisy_levels(PER_WRITER, specs=SPECS, cv=0.002, seed=100 + g)
        groups.append(hd.branch_series(directory / f"g{g}", levels, prefix=f"g{g}", batches=BATCHES,
                                       start=hd.START + dt.timedelta(days=g)))
    return groups


def plan(groups: list[list[Path]], i: int) -> list[str]:
    """Writer i's files: its group, one by one, interleaved with the first half of group i+1."""
    own, other = groups[i], groups[(i + 1) % WRITERS][:PER_WRITER // 2]
    out: list[str] = []
    for k, f in enumerate(own):
        out.append(str(f))
        if k < len(other):
            out.append(str(other[k]))
    return out


#: Runs not whole: without all their specializations and batches.
WHOLE = ("SELECT count(*) FROM runs r "
         "LEFT JOIN (SELECT run_id, count(*) AS n FROM specializations GROUP BY 1) s USING (run_id) "
         "LEFT JOIN (SELECT run_id, count(*) AS n FROM batches GROUP BY 1) b USING (run_id) "
         "WHERE coalesce(s.n, 0) <> {specs} OR coalesce(b.n, 0) <> {batches}")


def verify(location: str) -> dict[str, Any]:
    """What the store holds: rows per table, distinct runs, runs not whole."""
    with open_store(location).read() as r:
        one = lambda sql: r.con.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "runs": one("SELECT count(*) FROM runs"),
            "distinct_runs": one("SELECT count(DISTINCT run_id) FROM runs"),
            "specializations": one("SELECT count(*) FROM specializations"),
            "batches": one("SELECT count(*) FROM batches"),
            "not_whole": one(WHOLE.format(specs=SPECS, batches=SPECS * BATCHES)),
        }


def parquet_raw(directory: Path) -> dict[str, int]:
    """Rows in the parts themselves (before readers deduplicate by run id) and leftovers."""
    import duckdb

    con = duckdb.connect()
    files = [str(p) for p in directory.glob("runs/*/*.parquet")]
    rows = con.execute("SELECT count(*), count(DISTINCT run_id) FROM read_parquet(?)", [files]).fetchone() if files \
        else (0, 0)
    return {"runs_rows_in_parts": rows[0], "distinct_in_parts": rows[1],
            "temporaries": len(list(directory.rglob("*.tmp"))),
            "parts": sum(1 for _ in directory.glob("*/*/*.parquet"))}


def run_backend(kind: str, location: str, groups: list[list[Path]], rng: random.Random) -> tuple[list[str], bool]:
    lines = [f"== {kind}: {location if kind != 'postgresql' else pg_redacted(location)}"]
    name = hd.spec_name(7)
    t0 = time.time()
    writers = {}
    for i in range(WRITERS):
        writers[i] = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(ROOT), location, f"w{i}", json.dumps(plan(groups, i))],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = Path(tempfile.mkdtemp()) / "stop"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(ROOT), location, str(stop), name, str(SPECS),
                                 str(BATCHES), str(READ_PAUSE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
               for _ in range(2)]
    killed_at = {}
    for i, (call, delay) in KILLED.items():
        proc = writers[i]
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                break
            if line.strip() == f"call {call}":
                time.sleep(rng.uniform(0, delay))
                os.kill(proc.pid, signal.SIGKILL)
                killed_at[i] = call
                break
    outcomes = {}
    for i, proc in writers.items():
        out, err = proc.communicate(timeout=3600)
        if i in killed_at:
            outcomes[i] = f"killed (-9) in call {killed_at[i]} of {len(plan(groups, i))}"
        else:
            done = [ln for ln in out.splitlines() if ln.startswith("done")]
            assert proc.returncode == 0 and done, err[-2000:]
            _, stored, dups = done[0].split()
            outcomes[i] = f"{stored} stored, {dups} duplicates"
    write_secs = time.time() - t0
    time.sleep(1.0)  # the readers read the finished store once more, then stop
    stop.write_text("")
    reads = [json.loads(r.communicate(timeout=600)[0].strip().splitlines()[-1]) for r in readers]
    lines.append(f"8 writers: {write_secs:.1f} s wall for {sum(len(plan(groups, i)) for i in range(WRITERS))} "
                 "ingest calls (one file each)")
    for i in range(WRITERS):
        lines.append(f"  writer {i}: {outcomes[i]}")
    for k, r in enumerate(reads):
        lines.append(f"  reader {k}: {r['reads']} reads alongside (median {_ms(r['median_s'])}, max {_ms(r['max_s'])} "
                     f"each, open + check + series), {r['broken']} runs seen not whole, {len(r['errors'])} errors"
                     + (f" (first: {r['errors'][0]})" if r["errors"] else "") + f", at most {r['max_runs_seen']} runs")
    before = verify(location)
    lines.append(f"after the writers: {before}")
    if kind == "Parquet folder":
        lines.append(f"  parts: {parquet_raw(Path(location))}")
        from primbench.history.storage.parquet import ParquetStore

        q = ParquetStore(location).quarantine(max_age_secs=0)  # every writer is done or dead
        lines.append(f"  quarantine: {len(q.moved)} part(s) moved aside, {len(q.removed)} temporar(ies) deleted")
    t = time.time()
    report = open_store(location, wait_secs=300).ingest([f for g in groups for f in g])
    lines.append(f"re-ingest of all {WRITERS * PER_WRITER} files: {len(report.stored)} stored (what the killed writers "
                 f"missed), {len(report.duplicates)} duplicates, {len(report.errors)} errors, {time.time() - t:.1f} s")
    after = verify(location)
    lines.append(f"after the re-ingest: {after}")
    if kind == "Parquet folder":
        lines.append(f"  parts: {parquet_raw(Path(location))}")
    expect = {"runs": WRITERS * PER_WRITER, "distinct_runs": WRITERS * PER_WRITER,
              "specializations": WRITERS * PER_WRITER * SPECS, "batches": WRITERS * PER_WRITER * SPECS * BATCHES,
              "not_whole": 0}
    ok = after == expect
    lines.append(f"every run stored exactly once, whole: {'YES' if ok else 'NO'} (expected {expect})")
    return lines, ok


def _ms(secs: float | None) -> str:
    return "-" if secs is None else f"{secs * 1000:.0f} ms"


def pg_redacted(url: str) -> str:
    from primbench.history.storage.postgres import redact

    return redact(url)


def main() -> int:
    rng = random.Random(25)
    lines = [
        "primbench history: 8 concurrent writers, 2 readers, kill -9 mid-ingest, then a re-ingest "
        "(tests/benchmarks/storage_concurrency/concurrency.py)",
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other work), Python "
        f"{platform.python_version()}; {WRITERS} writers x {PER_WRITER} own files (+{PER_WRITER // 2} of the "
        f"next writer's), {SPECS} specializations x {BATCHES} batches per file",
        "",
    ]
    server = None
    all_ok = True
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        groups = make_files(tmp / "in")
        try:
            base = os.environ.get(pg.ENV)
            if not base:
                found = pg.binaries()
                if found is None:
                    raise SystemExit("no PostgreSQL: set PRIMBENCH_TEST_POSTGRES or install initdb/pg_ctl")
                server = pg.ThrowAwayServer(found, fsync=True)
                base = server.start()
                lines.append("PostgreSQL: a throw-away server (initdb/pg_ctl, fsync on), "
                             + subprocess.run([str(found / "postgres"), "--version"], capture_output=True,
                                              text=True).stdout.strip())
            for kind, location in (("postgresql", pg.fresh_database(base)),
                                   ("DuckDB file", str(tmp / "history.duckdb")),
                                   ("Parquet folder", str(tmp / "parts"))):
                if kind == "Parquet folder":
                    (tmp / "parts").mkdir()
                out, ok = run_backend(kind, location, groups, rng)
                all_ok &= ok
                lines += [*out, ""]
                print("\n".join(out), flush=True)
        finally:
            if server is not None:
                server.stop()
    text = "\n".join(lines) + "\n"
    Path(__file__).with_suffix(".txt").write_text(text)
    print(text, end="")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
