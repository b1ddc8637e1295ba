"""`history compare` end to end on the seventh evaluation's H100 files (tests/benchmarks/verdicts/h200/data7,
64 MiB, `--processes 4`): a real DuckDB store of six A/A runs as main's history, in both of that card's SM
clock regimes (1,975 and 1,990 MHz), then a branch's run in the other regime than main's latest. The
history's clock answers and its run-to-run variances (moderated across the suite) decide: an identical
run passes at a detectable change history makes narrow, a planted run fails on its planted kernels."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "benchmarks" / "verdicts" / "h200" / "data7" / "64MiB"
MAIN = ("aa-1", "aa-2", "aa-3", "aa-4", "aa-6", "aa-7")  # 1,975 MHz x 4, then 1,990 MHz x 2

pytestmark = pytest.mark.slow


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "primbench", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("h100") / "history.duckdb"
    for i, label in enumerate(MAIN):
        done = cli("history", "ingest", str(DATA / f"{label}.json"), "--db", str(db), "--branch", "main",
                   "--commit", f"{i + 1:040x}")
        assert done.returncode == 0, done.stderr
    for branch, label in (("same", "aa-5"), ("slow", "planted-1")):  # both at 1,975 MHz; main's latest at 1,990
        done = cli("history", "ingest", str(DATA / f"{label}.json"), "--db", str(db), "--branch", branch,
                   "--commit", f"{label.encode().hex():0>40}")
        assert done.returncode == 0, done.stderr
    return db


def compare(db: Path, branch: str) -> tuple[int, dict[str, Any]]:
    done = cli("history", "compare", branch, "--db", str(db), "--no-git", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_an_identical_run_in_the_other_clock_regime_passes_narrowly(store: Path) -> None:
    code, doc = compare(store, "same")
    rows = doc["comparison"]["specializations"] if "comparison" in doc else doc["specializations"]
    assert code == 0
    assert all(r["verdict"] in ("unchanged", "inconclusive") for r in rows)
    assert all(r["run_to_run_source"].startswith("history") for r in rows)
    # six runs give each kernel's CV 1.85 df alone ("history (2 df)"); moderated across the suite, more
    assert all(int(re.match(r"history \((\d+) df\)", r["run_to_run_source"]).group(1)) > 2  # type: ignore[union-attr]
               for r in rows)
    detectable = sorted(abs(r["min_detectable_change"]) for r in rows)
    assert detectable[len(detectable) // 2] < 0.01  # plain compare of such a pair: about 1.3 % (history_loo.txt)


def test_a_planted_run_fails_on_its_planted_kernels(store: Path) -> None:
    code, doc = compare(store, "slow")
    rows = doc["comparison"]["specializations"] if "comparison" in doc else doc["specializations"]
    planted = json.loads((DATA / "plant-1.json").read_text())["fraction"]
    assert code == 1
    verdicts = {r["name"]: r["verdict"] for r in rows}
    five = [name for name, f in planted.items() if f == 0.05]
    assert five and all(verdicts[name] == "regression" for name in five)
    unplanted = [name for name in verdicts if not planted.get(name)]
    assert all(verdicts[name] != "regression" for name in unplanted)
