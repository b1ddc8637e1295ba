"""Issue 29, at the edges: the commands and a benchmark program in real subprocesses, against real
FIFOs, closed and broken pipes and a full device: one line on stderr and exit 2, never a traceback,
a hang, exit 0 or exit 1."""

from __future__ import annotations

import json
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


BASE = ROOT / "tests" / "gpu_results" / "gpu-copy-run1.json"
HEAD = ROOT / "tests" / "gpu_results" / "gpu-copy-run2.json"
COMPARE = f"{sys.executable} -m primbench compare {BASE} {HEAD}"
CLOSED_READER = "| (exec <&-; sleep 1)"  # a reader that is gone before the first write: EPIPE


def test_compare_into_a_closed_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    _one_clean_line(_sh(f"{COMPARE} >&-", tmp_path))


def test_compare_into_a_full_device_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _sh(f"{COMPARE} >/dev/full", tmp_path)
    _one_clean_line(done)
    assert "No space left" in done.stderr


def test_compare_into_a_closed_pipe_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _sh(f"{COMPARE} {CLOSED_READER}; exit ${{PIPESTATUS[0]}}", tmp_path)
    _one_clean_line(done)


def test_compare_with_stdout_and_stderr_closed_exits_2(tmp_path: Path) -> None:
    assert _sh(f"{COMPARE} >&- 2>&-", tmp_path).returncode == 2  # not Python's 120


def test_history_runs_into_a_closed_or_full_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    ingest = _sh(f"{sys.executable} -m primbench history ingest {BASE} --db {db}", tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    runs = f"{sys.executable} -m primbench history runs --db {db}"
    _one_clean_line(_sh(f"{runs} >&-", tmp_path))
    _one_clean_line(_sh(f"{runs} >/dev/full", tmp_path))
    _one_clean_line(_sh(f"{runs} {CLOSED_READER}; exit ${{PIPESTATUS[0]}}", tmp_path))


BENCH = '''
import time, primbench as pb
from tests.fakes import FakeDevice

class K(pb.Benchmark):
    def __init__(self, n): self.n = n
    def meta(self): return {"algo": "pipe", "n": self.n}
    def run(self, state):
        time.sleep(0.05)  # real time: the reader is gone while the run still prints
        state.set_items(1000)
        state.run(state.device.launch)

ex = pb.Executor(device=FakeDevice(0.25))
for n in range(12):
    ex.queue(K(n))
ex.main()
'''


def test_a_benchmark_piped_into_head_keeps_its_results_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text(BENCH)
    bench = f"{sys.executable} bench.py --rounds 1 --min-secs 0 --json-out r.json"
    for tail in ("| head -1", ">&-", ">/dev/full"):
        (tmp_path / "r.json").unlink(missing_ok=True)
        done = _sh(f"{bench} {tail}; exit ${{PIPESTATUS[0]}}", tmp_path)
        _one_clean_line(done)
        assert "the results are in r.json" in done.stderr
        assert len(json.loads((tmp_path / "r.json").read_text())["specializations"]) == 12


def test_legacy_encodings_exit_2_with_one_line_not_3(tmp_path: Path) -> None:
    for encoding in ("latin-1", "cp1252"):
        done = _sh(f"{COMPARE} >out.txt", tmp_path, env={**ENV, "PYTHONIOENCODING": encoding})
        _one_clean_line(done)
        assert "PYTHONIOENCODING=utf-8" in done.stderr and "its encoding" in done.stderr


def test_columns_0_does_not_make_compare_print_nothing(tmp_path: Path) -> None:
    wide = _sh(f"{COMPARE}", tmp_path, env={**ENV, "COLUMNS": "200"})
    zero = _sh(f"{COMPARE}", tmp_path, env={**ENV, "COLUMNS": "0"})
    assert zero.returncode == wide.returncode == 0
    assert "Summary:" in zero.stdout and "geometric mean" in zero.stdout
    assert len(zero.stdout) >= len(wide.stdout) * 0.9


def test_a_benchmark_in_a_legacy_encoding_keeps_its_results_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text(BENCH)
    done = _sh(f"{sys.executable} bench.py --rounds 1 --min-secs 0 --json-out r.json >out.txt", tmp_path,
               env={**ENV, "PYTHONIOENCODING": "ascii"})
    _one_clean_line(done)
    assert len(json.loads((tmp_path / "r.json").read_text())["specializations"]) == 12
