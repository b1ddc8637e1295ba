"""Two CI jobs ingesting into one DuckDB file at the same moment lose nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests import history_data as hd
from tests.history_data import open_for_query

ROOT = Path(__file__).resolve().parents[1]


def _start(db: Path, files: list[Path], at: float) -> subprocess.Popen[str]:
    code = textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from tests.history_data import ingest
        files = {[str(f) for f in files]!r}
        while time.time() < {at!r}:
            time.sleep(0.001)
        stored = 0
        for i in range(0, len(files), 3):  # several short write transactions each, interleaving with the other
            stored += len(ingest(files[i:i + 3], {str(db)!r}, wait_secs=60).stored)
        print(json.dumps({{"stored": stored}}))
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str]) -> int:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return int(json.loads(out.strip().splitlines()[-1])["stored"])


@pytest.mark.slow
def test_two_processes_ingesting_at_once_lose_nothing(tmp_path: Path) -> None:
    a = hd.branch_series(tmp_path / "a", hd.noisy_levels(24, specs=20, seed=1), prefix="a", batches=2)
    b = hd.branch_series(tmp_path / "b", hd.noisy_levels(24, specs=20, seed=2), prefix="b", branch="feat", batches=2)
    db = tmp_path / "shared.duckdb"
    at = time.time() + 1.5
    procs = [_start(db, a, at), _start(db, b, at)]
    stored = [_finish(p) for p in procs]
    assert stored == [24, 24]
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 48
        assert con.execute("SELECT count(*) FROM specializations").fetchone()[0] == 48 * 20
        assert con.execute("SELECT count(*) FROM batches").fetchone()[0] == 48 * 20 * 2
        assert dict(con.execute("SELECT branch, count(*) FROM runs GROUP BY branch").fetchall()) == {
            "main": 24, "feat": 24}


@pytest.mark.slow
def test_two_processes_ingesting_the_same_files_store_them_once(tmp_path: Path) -> None:
    files = hd.branch_series(tmp_path / "a", hd.noisy_levels(15, specs=10, seed=3))
    db = tmp_path / "shared.duckdb"
    at = time.time() + 1.5
    procs = [_start(db, files, at), _start(db, list(reversed(files)), at)]
    stored = [_finish(p) for p in procs]
    assert sum(stored) == 15  # each run stored by exactly one of them; the other saw it as a duplicate
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 15
        assert con.execute("SELECT count(*) FROM specializations").fetchone()[0] == 150
