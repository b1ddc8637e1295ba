"""Issue 29's fault campaign (tests/benchmarks/faults/campaign.py) at its CI size: fuzzed inputs
for every reader, kills at random moments and injected points in the harness and in ingest on
every history backend, injected I/O errors, concurrent writers, hostile names; about half a
minute here. The full size is recorded in tests/benchmarks/faults/campaign.txt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_ci_sized_fault_campaign_finds_nothing() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "benchmarks" / "faults" / "campaign.py"), "--size",
                           "ci"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    total = [ln for ln in proc.stdout.splitlines() if ln.startswith("total:")]
    assert total and "0 internal errors, 0 hangs, 0 runs lost, 0 duplicated, 0 other findings" in total[0], total
