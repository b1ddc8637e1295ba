"""One command as a new process, as a CI job runs it: its CPU time (user + system, all its
threads), wall time and peak RSS (GNU time's), killed past a time limit or an RSS limit
(polled every 0.1 s from /proc) so that a baseline that runs away cannot take the shared
machine down."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Timing:
    """What one process took; `killed`: why it was stopped (None: it finished)."""

    cpu_s: float
    wall_s: float
    rss_mb: float
    code: int | None
    killed: str | None = None
    out: str = ""
    err: str = ""

    def cell(self) -> str:
        if self.killed:
            return (f"killed ({self.killed}) after {self.wall_s:.0f} s wall, {self.cpu_s:.1f} s CPU, "
                    f"{self.rss_mb:.0f} MB")
        return f"{self.cpu_s:.2f} s CPU, {self.wall_s:.2f} s wall, {self.rss_mb:.0f} MB"


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    """User + system seconds of a live process, from /proc (0 where it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def timed(argv: list[str], *, code_root: Path, timeout_s: float = 120.0, rss_limit_mb: float = 4096.0,
          cwd: Path | None = None) -> Timing:
    """Run `argv` (a ``primbench`` command line without ``primbench``) with `code_root`'s
    primbench first on the path, under GNU time (``/usr/bin/time``: the command's own CPU time
    and peak RSS, which a child forked from this large process would overstate: Linux carries
    the peak RSS of the forking process across exec)."""
    env = {**os.environ, "PYTHONPATH": str(code_root), "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PRIMBENCH_HISTORY_DB", None)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        cmd = ["/usr/bin/time", "-f", "%U %S %M", "-o", report.name,
               sys.executable, "-c", "from primbench.cli import main; main()", *argv]
        start = time.perf_counter()
        with open(os.devnull, "rb") as null, tempfile.TemporaryFile("w+") as out, \
                tempfile.TemporaryFile("w+") as err:
            # in `code_root` unless told otherwise: ``python -c`` puts the working directory first on
            # sys.path, before PYTHONPATH, so a runner started in another checkout timed that one's code
            proc = subprocess.Popen(cmd, env=env, cwd=cwd or code_root, stdout=out, stderr=err, stdin=null,
                                    start_new_session=True)
            killed = None
            peak = cpu = 0.0
            while proc.poll() is None:
                for child in _children(proc.pid):
                    peak = max(peak, _rss_mb(child))
                    cpu = max(cpu, _cpu_s(child))
                elapsed = time.perf_counter() - start
                if elapsed > timeout_s or peak > rss_limit_mb:
                    killed = f"over {timeout_s:.0f} s" if elapsed > timeout_s else f"over {rss_limit_mb:.0f} MB RSS"
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    break
                time.sleep(0.1)
            wall = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        figures = report.read().split()
    if killed is None and len(figures) >= 3:
        with contextlib.suppress(ValueError):
            cpu, peak = float(figures[-3]) + float(figures[-2]), max(peak, float(figures[-1]) / 1024.0)
    return Timing(cpu_s=cpu, wall_s=wall, rss_mb=peak, code=None if killed else proc.returncode, killed=killed,
                  out=stdout, err=stderr)
