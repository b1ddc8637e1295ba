"""kill -9 in the middle of writing (issue 16, item 8): a DuckDB store and a shared Parquet
history stay whole and readable; what a killed Parquet writer leaves is cleaned up by
`history quarantine`. Bounded: a few trials of about a second each."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from primbench.history.errors import HistoryWarning
from primbench.history.storage.contract import open_store
from primbench.history.storage.parquet import quarantine
from tests import history_data as hd
from tests.history_data import ingest, open_for_query

ROOT = Path(__file__).resolve().parents[1]

# Ingest the files in small calls, over and over, until killed.
_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    files = sorted(Path(sys.argv[1]).glob("*.json"))
    target = sys.argv[2]
    shared = sys.argv[3] == "shared"
    if shared:
        from tests.history_data import ingest_shared
    else:
        from tests.history_data import ingest
    print("ready", flush=True)
    while True:
        for i in range(0, len(files), 4):
            if shared:
                ingest_shared(files[i:i + 4], target, runner=sys.argv[4])
            else:
                ingest(files[i:i + 4], target)
""")


def _files(directory: Path, n: int, prefix: str) -> Path:
    hd.branch_series(directory, hd.noisy_levels(n, specs=20, seed=hash(prefix) % 1000), batches=5, prefix=prefix)
    return directory


def _start(source: Path, target: Path, mode: str, runner: str = "r") -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(source), str(target), mode, runner], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _kill(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        p.send_signal(signal.SIGKILL)
    for p in procs:
        p.wait(timeout=30)


def _whole(con) -> None:
    """Every stored run has all its specializations and batches."""
    bad = con.execute(
        "SELECT count(*) FROM runs r WHERE r.specialization_count <> "
        "(SELECT count(*) FROM specializations s WHERE s.run_id = r.run_id) OR 5 * r.specialization_count <> "
        "(SELECT count(*) FROM batches b WHERE b.run_id = r.run_id)").fetchone()[0]
    assert bad == 0


@pytest.mark.slow
def test_kill_9_during_duckdb_ingest_leaves_a_whole_store(tmp_path):
    rng = random.Random(9)
    source = _files(tmp_path / "in", 24, "k")
    for trial in range(3):
        db = tmp_path / f"h{trial}.duckdb"
        proc = _start(source, db, "duckdb")
        time.sleep(rng.uniform(0.2, 1.2))
        _kill([proc])
        if db.exists():
            with open_for_query(db, wait_secs=5) as con:  # opens, replays its WAL, at the latest schema
                _whole(con)
        report = ingest([source], db, wait_secs=5)  # and a later ingest completes it
        assert not report.errors
        assert len(open_store(db).runs()) == 24


@pytest.mark.slow
def test_kill_9_during_parquet_writes_never_stops_readers(tmp_path):
    rng = random.Random(10)
    shared = tmp_path / "shared"
    sources = [_files(tmp_path / f"in{i}", 12, f"w{i}") for i in range(4)]
    for _ in range(2):
        procs = [_start(src, shared, "shared", f"w{i}") for i, src in enumerate(sources)]
        deadline = time.monotonic() + 60  # a loaded machine: the first part may take seconds
        while not list(shared.glob("runs/*/*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.5, 1.5))
        _kill(procs)
        with open_for_query(shared) as con:  # may warn, never fails
            _whole(con)
    report = quarantine(shared, max_age_secs=0)  # every writer is dead: anything half-done is stale
    assert not list(shared.rglob("*.tmp"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", HistoryWarning)
        with open_for_query(shared) as con:
            _whole(con)
            assert con.execute("SELECT count(*) FROM runs").fetchone()[0] <= 48
    assert all(Path(to).exists() for _, to, _ in report.moved)
