"""The store layout's figures at 1,000, 10,000 and 100,000 runs (issue 28, schema 7): for the
stores `build.py` made in WORK (``s1k``, ``s10k``, ``s100k``) with the code at CODE_ROOT, each
store's size (the file, and its used blocks: the rest are free blocks later writes reuse),
``history export --parquet`` (CPU, wall, peak RSS, the bytes written), and a one-file ingest into
a copy of the store (three files not in it, one after another into the same copy: the median);
with FILES, a batch ingest of FILES' first 1,000 files into an empty store. Every command is a
process of its own (`measure.timed`: GNU time's figures, killed past the limits).

    python store_figures.py LABEL CODE_ROOT WORK [FILES]

writes ``WORK/store-LABEL.json`` and prints each figure as it comes. The one-file ingests take
FILES' files 1000 to 1002 (`generate.py FILES 1003`), else three made here.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from layout import used_bytes  # noqa: E402
from measure import Timing, timed  # noqa: E402

STORES = (("s1k", 1_000), ("s10k", 10_000), ("s100k", 100_000))
LIMITS = {"timeout_s": 900.0, "rss_limit_mb": 4096.0}


def _figures(t: Timing) -> dict[str, Any]:
    return {"cpu_s": round(t.cpu_s, 2), "wall_s": round(t.wall_s, 2), "rss_mb": round(t.rss_mb, 1),
            "code": t.code, "killed": t.killed}


def _singles(files: Path | None, work: Path) -> list[Path]:
    if files is not None:
        return sorted(files.glob("*.json"))[1000:1003]
    folder = work / "singles"
    folder.mkdir(exist_ok=True)
    out = []
    for run in generate.plan(1003)[1000:]:
        path = folder / f"{run.branch}-{run.index:06d}.json"
        path.write_text(generate.text(generate.document(run, 100)))
        out.append(path)
    return out


def _size(db: Path, runs: int) -> dict[str, Any]:
    size, used = used_bytes(db)
    return {"file": size, "used": used, "file_kb_per_run": round(size / runs / 1024, 1),
            "used_kb_per_run": round(used / runs / 1024, 1)}


def _export(db: Path, code_root: Path, work: Path) -> dict[str, Any]:
    out = work / "export"
    shutil.rmtree(out, ignore_errors=True)
    t = timed(["history", "export", "--parquet", str(out), "--db", str(db)], code_root=code_root, **LIMITS)
    written = sum(f.stat().st_size for f in out.glob("*.parquet")) if out.exists() else 0
    shutil.rmtree(out, ignore_errors=True)
    return {**_figures(t), "written_mb": round(written / 2**20, 1)}


def _one_file(db: Path, singles: list[Path], code_root: Path, work: Path) -> dict[str, Any]:
    copy = work / "one.duckdb"
    copy.unlink(missing_ok=True)
    shutil.copyfile(db, copy)
    try:
        rows = []
        for f in singles:
            t = timed(["history", "ingest", str(f), "--db", str(copy)], code_root=code_root, **LIMITS)
            if t.code != 0 or "1 run(s) stored" not in t.out + t.err:
                raise SystemExit(f"one-file ingest of {f} into {db.name}: not stored ({t.cell()}): {t.out} {t.err}")
            rows.append(_figures(t))
    finally:
        copy.unlink(missing_ok=True)
    return {"median": {k: statistics.median(r[k] for r in rows) for k in ("cpu_s", "wall_s", "rss_mb")},
            "each": rows}


def _batch(files: Path, code_root: Path, work: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        batch = Path(tmp) / "batch"
        batch.mkdir()
        for f in sorted(files.glob("*.json"))[:1000]:
            (batch / f.name).symlink_to(f)
        db = Path(tmp) / "b.duckdb"
        t = timed(["history", "ingest", str(batch), "--db", str(db)], code_root=code_root, **LIMITS)
        return {**_figures(t), "size": _size(db, 1000)}


def main(label: str, code_root: Path, work: Path, files: Path | None) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label, "code_root": str(code_root)}
    singles = _singles(files, work)
    if files is not None:
        out["batch_ingest_1000"] = _batch(files, code_root, work)
        print(label, "batch ingest of 1,000 files", out["batch_ingest_1000"], flush=True)
    for name, runs in STORES:
        db = work / f"{name}.duckdb"
        if not db.exists():
            continue
        got: dict[str, Any] = {"size": _size(db, runs)}
        print(label, name, "size", got["size"], flush=True)
        got["export"] = _export(db, code_root, work)
        print(label, name, "export", got["export"], flush=True)
        got["one_file_ingest"] = _one_file(db, singles, code_root, work)
        print(label, name, "one-file ingest", got["one_file_ingest"]["median"], flush=True)
        out[name] = got
        (work / f"store-{label}.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve(),
         Path(sys.argv[4]).resolve() if len(sys.argv) > 4 else None)
