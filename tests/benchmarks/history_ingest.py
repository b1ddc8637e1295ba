"""How long `primbench history ingest` takes: 1,000 results files of 100 specializations each.

Run: ``python tests/benchmarks/history_ingest.py`` (writes history_ingest.txt beside it).
Target (issue 6): under 10 s on the 2-core development machine, into a new DuckDB file.
Timed: `history.storage.ingest.ingest_files` of the directory (loading and validating every file with
`primbench.results.load_results`, hashing, staging, one write transaction), 3 times into a
fresh file; then the same call again (all duplicates); the CLI once as a new process; and
the multi-runner path (`ingest --shared`, Parquet parts).
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from primbench.history.storage.ingest import stage_files  # noqa: E402
from tests import history_data as hd  # noqa: E402
from tests.history_data import ingest, ingest_shared, open_for_query  # noqa: E402

FILES = 1_000
SPECS = 100
REPS = 3


def make_files(directory: Path) -> float:
    levels = hd.noisy_levels(FILES, specs=SPECS, cv=0.002)
    size = 0
    for i, row in enumerate(levels):
        doc = hd.document(row, commit=hd.sha(f"main-{i}"), date=hd.START + dt.timedelta(hours=i))
        path = directory / f"run-{i:04d}.json"
        path.write_text(json.dumps(doc, indent=4))
        size += path.stat().st_size
    return size / 2**20


def main() -> None:
    lines = [
        f"primbench history ingest: {FILES:,} files x {SPECS} specializations (tests/benchmarks/history_ingest.py)",
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        files = tmp / "results"
        files.mkdir()
        mib = make_files(files)
        lines.append(f"input: {FILES:,} results.json files (indent 4), {mib:.1f} MiB")
        t = time.perf_counter()
        staged, _, _ = stage_files([files])
        staging = time.perf_counter() - t
        del staged
        times = []
        for r in range(REPS):
            db = tmp / f"h{r}.duckdb"
            t = time.perf_counter()
            report = ingest([files], db)
            times.append(time.perf_counter() - t)
            assert len(report.stored) == FILES and not report.errors
        with open_for_query(tmp / "h0.duckdb") as con:
            counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "specializations")]
        db_mib = (tmp / "h0.duckdb").stat().st_size / 2**20
        verdict = "under" if max(times) < 10 else "OVER"
        lines.append(f"ingest into a new DuckDB file: median {statistics.median(times):.2f} s, "
                     f"max {max(times):.2f} s over {REPS} runs ({verdict} the 10 s target)")
        lines.append(f"  stored {counts[0]:,} runs, {counts[1]:,} specializations; file {db_mib:.1f} MiB")
        lines.append(f"  of which loading, validating and staging the files (no store): {staging:.2f} s")
        t = time.perf_counter()
        again = ingest([files], tmp / "h0.duckdb")
        lines.append(f"same files again (all duplicates, nothing written): {time.perf_counter() - t:.2f} s "
                     f"({len(again.duplicates):,} duplicates)")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t = time.perf_counter()
        code = subprocess.run([sys.executable, "-c", "from primbench.cli import main; main()", "history", "ingest",
                               str(files), "--db", str(tmp / "cli.duckdb")], capture_output=True, text=True, env=env)
        assert code.returncode == 0, code.stderr
        lines.append(f"whole CLI as a new process (primbench history ingest DIR): {time.perf_counter() - t:.2f} s")
        t = time.perf_counter()
        shared = ingest_shared([files], tmp / "shared", runner="bench")
        assert len(shared.stored) == FILES
        lines.append(f"multi-runner path (ingest --shared, Parquet parts): {time.perf_counter() - t:.2f} s")
    text = "\n".join(lines) + "\n"
    (Path(__file__).with_suffix(".txt")).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
