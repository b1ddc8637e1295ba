"""The stores the benchmark measures, built once into a work folder (default /tmp/history_scale):

* ``s1k.duckdb``: 1,000 runs x 100 specializations, *ingested* (``primbench history ingest``,
  100 files a call, each call timed: batch ingest into a growing store) from `generate`'s
  files: main and 5 feature branches; every 100th run written with ``--output-batches``.
* ``s10k.duckdb``: 10,000 runs, **built in SQL** from s1k: nine more copies of its runs, each
  with new run ids and commits, dated after the last (main continues; a copy's feature
  branches are ``feat-K-cN``). Ingesting 10,000 files of 500 KB would take the shared 2-core
  machine most of an hour.
* ``s100k.duckdb``: 100,000 runs, built in SQL from s10k the same way.
* ``s1kx1k.duckdb``: 1,000 runs x 1,000 specializations: 10 files ingested, then copied in SQL.

The copies keep every table's layout as ingest writes it (the document column included), so
what a command reads is what it would read from an ingested store of that size.

Run: ``python build.py [WORK] [--only s1k,s10k,...]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from measure import timed  # noqa: E402

CHUNK = 100


def _ingest(store: Path, runs: list[generate.Run], specs: int, log: list[str], *, batch_every: int = 100) -> None:
    for first in range(0, len(runs), CHUNK):
        chunk = runs[first:first + CHUNK]
        with tempfile.TemporaryDirectory(dir=store.parent) as tmp:
            for run in chunk:
                doc = generate.document(run, specs, batches=batch_every > 0 and run.index % batch_every == 0)
                (Path(tmp) / f"{run.branch}-{run.index:06d}.json").write_text(generate.text(doc))
            t = timed(["history", "ingest", "--db", str(store), tmp], code_root=ROOT, timeout_s=1800,
                      rss_limit_mb=8192)
        line = f"ingest {len(chunk)} files into a store of {first} runs: {t.cell()}"
        print(line, flush=True)
        log.append(line)
        if t.code != 0:
            raise SystemExit(f"ingest failed: {t.err}")


def _document_parts(con: Any) -> list[str]:
    """A schema-6 store's document parts (none before: the documents are in runs.document)."""
    return [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
        "AND table_name LIKE 'documents\\_%' ESCAPE '\\' ORDER BY 1").fetchall()]


def _copy_documents(con: Any, rid: str, parts: list[str], originals: list[str]) -> None:
    """Each of the `originals` parts copied, with the copy's run ids, into a new part (schema 6)."""
    for part in originals:
        name = f"documents_{len(parts):05d}"
        con.execute(f"CREATE TABLE {name} (run_id VARCHAR PRIMARY KEY, codec VARCHAR NOT NULL, body BLOB NOT NULL)")
        con.execute(f"INSERT INTO {name} SELECT * REPLACE ({rid} AS run_id) FROM {part}")
        parts.append(name)
    if originals:
        con.execute("CREATE OR REPLACE VIEW documents AS " + " UNION ALL ".join(
            f"SELECT run_id, codec, body FROM {p}" for p in parts))


def _copy_runs(tag: str, rid: str, hours: int, extra: str = "") -> str:
    """The INSERT of a copy of the original runs (``originals``): run ids `rid`, branches other
    than main and commits suffixed with `tag`, dates moved by `hours` (earlier where negative),
    `extra` more replaced columns."""
    shift = f"date {'+' if hours >= 0 else '-'} INTERVAL {abs(hours)} HOUR"
    return (f"INSERT INTO runs SELECT * REPLACE ({rid} AS run_id, "
            f"CASE WHEN branch = 'main' THEN 'main' ELSE branch || '{tag}' END AS branch, "
            f"md5(\"commit\" || '{tag}') || substr(md5(\"commit\"), 1, 8) AS \"commit\", "
            f"{shift} AS date, strftime({shift}, '%Y-%m-%dT%H:%M:%S+00:00') AS date_text{extra}) "
            "FROM runs WHERE run_id IN (SELECT run_id FROM originals)")


def replicate(src: Path, dst: Path, copies: int) -> None:
    """`dst`: `src` and `copies` - 1 more copies of its runs, each dated after the last."""
    import duckdb

    tmp = dst.with_suffix(".building")
    shutil.copyfile(src, tmp)
    con = duckdb.connect(str(tmp))
    con.execute("SET threads = 1")
    con.execute("SET memory_limit = '2GB'")
    con.execute("SET preserve_insertion_order = false")
    con.execute("CREATE TEMP TABLE originals AS SELECT run_id FROM runs")
    originals = _document_parts(con)
    parts = list(originals)
    first, last = con.execute("SELECT min(date), max(date) FROM runs").fetchone()
    span_h = int((last - first).total_seconds() // 3600) + 1
    for k in range(1, copies):
        # each copy its own suffix (s10k: -c1 .. -c9; later stores add theirs): no key of an earlier copy repeats
        tag = f"-c{k}" if dst.stem == "s10k" else f"-{dst.stem}-{k}"
        rid = f"substr(md5(run_id || '{tag}'), 1, 32)"
        con.execute("BEGIN")
        con.execute(_copy_runs(tag, rid, k * span_h))
        con.execute(f"INSERT INTO specializations SELECT * REPLACE ({rid} AS run_id) FROM specializations "
                    "WHERE run_id IN (SELECT run_id FROM originals)")
        con.execute(f"INSERT INTO batches SELECT * REPLACE ({rid} AS run_id) FROM batches "
                    "WHERE run_id IN (SELECT run_id FROM originals)")
        _copy_documents(con, rid, parts, originals)
        con.execute("COMMIT")
        print(f"  {dst.name}: copy {k} of {copies - 1}", flush=True)
    con.execute("CHECKPOINT")
    con.close()
    tmp.rename(dst)


def replicate_lean(src: Path, dst: Path, copies: int) -> None:
    """`dst`: `src` and `copies` - 1 more copies of its runs dated *before* them, whose
    ``runs.document`` is a placeholder (``{}``) and whose ``specializations.extra`` is NULL:
    the tables the queries read (runs, specializations) at full size, without the 40 GB of
    JSON text the documents of 90,000 more runs would take to write. `src`'s own runs, the
    newest, keep their documents: `history compare` and the report's verdicts read those. Not
    for ingest, export or store-size figures."""
    import duckdb

    tmp = dst.with_suffix(".building")
    shutil.copyfile(src, tmp)
    con = duckdb.connect(str(tmp))
    con.execute("SET preserve_insertion_order = false")
    con.execute("CREATE TEMP TABLE originals AS SELECT run_id FROM runs")
    first, last = con.execute("SELECT min(date), max(date) FROM runs").fetchone()
    span_h = int((last - first).total_seconds() // 3600) + 1
    for k in range(1, copies):
        tag = f"-{dst.stem}-{k}"
        rid = f"substr(md5(run_id || '{tag}'), 1, 32)"
        con.execute("BEGIN")
        # schema 6 keeps the documents apart: the copies get none; before, a placeholder
        con.execute(_copy_runs(tag, rid, -k * span_h, "" if _document_parts(con) else ", '{}' AS document"))
        con.execute(f"INSERT INTO specializations SELECT * REPLACE ({rid} AS run_id, NULL AS extra) "
                    "FROM specializations WHERE run_id IN (SELECT run_id FROM originals)")
        con.execute("COMMIT")
        print(f"  {dst.name}: copy {k} of {copies - 1}", flush=True)
    con.execute("CHECKPOINT")
    con.close()
    tmp.rename(dst)


def build(work: Path, only: set[str]) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
    s1k = work / "s1k.duckdb"
    if "s1k" in only and not s1k.exists():
        part = s1k.with_suffix(".building")
        part.unlink(missing_ok=True)
        _ingest(part, generate.plan(1000), 100, log)
        part.rename(s1k)
    s10k = work / "s10k.duckdb"
    if "s10k" in only and not s10k.exists():
        replicate(s1k, s10k, 10)
    s100k = work / "s100k.duckdb"
    if "s100k" in only and not s100k.exists():
        replicate(s10k, s100k, 10)
    lean = work / "s100k_lean.duckdb"
    if "s100k_lean" in only and not lean.exists():
        replicate_lean(s10k, lean, 10)
    wide = work / "s1kx1k.duckdb"
    if "s1kx1k" in only and not wide.exists():
        base = work / "s10x1k.duckdb"
        base.unlink(missing_ok=True)
        _ingest(base, generate.plan(10, features=1, per_feature=2), 1000, log, batch_every=0)
        replicate(base, wide, 100)
        base.unlink()
    (work / "build.log").write_text("\n".join(log) + "\n")
    return log


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("work", nargs="?", default="/tmp/history_scale")
    parser.add_argument("--only", default="s1k,s10k,s100k,s1kx1k")
    args = parser.parse_args()
    print(json.dumps(build(Path(args.work), set(args.only.split(","))), indent=1))
