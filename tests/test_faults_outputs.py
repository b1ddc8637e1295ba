"""Issue 29, at the edges: the commands and a benchmark program in real subprocesses, against real
FIFOs, closed and broken pipes and a full device: one line on stderr and exit 2, never a traceback,
a hang, exit 0 or exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "NO_COLOR": "1"}
PRIMBENCH = [sys.executable, "-m", "primbench"]


def _sh(command: str, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env or ENV, capture_output=True, text=True,
                          timeout=timeout)


def _one_clean_line(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "error" in lines[0], done.stderr


def test_history_report_into_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    done = _sh(f"{sys.executable} -m primbench history report --db {tmp_path / 'h.duckdb'} -o fifo", tmp_path,
               timeout=30)
    _one_clean_line(done)
    assert "FIFO" in done.stderr
