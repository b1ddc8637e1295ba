"""Replay issue 29's harness and output faults against a checkout (fake device, real
subprocesses, real FIFOs, pipes and /dev/full) and count what happened.

    python tests/benchmarks/faults/replay.py /tmp/old      # main at c16539c
    python tests/benchmarks/faults/replay.py .             # this branch

Each case runs with a 20 s limit (past it: a hang). A case is *as expected* when its exit code is
the one the table gives and nothing was lost; *clean* when it also printed no traceback and at
most one line on stderr. Recorded output: replay.txt beside this file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LIMIT = 20.0

BENCH = '''
import os, signal, sys, time, primbench as pb
from primbench.results import Results
from tests.fakes import FakeDevice

MODE = os.environ.get("FAULT", "")

class K(pb.Benchmark):
    def __init__(self, n): self.n = n
    def meta(self): return {"algo": "faults", "n": self.n}
    def run(self, state):
        if MODE == "int-round-2" and self.n == 0 and state.round_index == 1:
            os.kill(os.getpid(), signal.SIGINT)
        if MODE == "int-then-term-in-write" and self.n == 2:
            os.kill(os.getpid(), signal.SIGINT)
        if MODE == "pipe":
            time.sleep(0.05)
        state.set_items(1000)
        state.run(state.device.launch)

if MODE in ("int-in-write", "term-in-write", "int-then-term-in-write"):
    save = Results.save
    sig = signal.SIGINT if MODE == "int-in-write" else signal.SIGTERM
    def interrupted(self, path, spaces=2):
        os.kill(os.getpid(), sig)
        self.dumps(spaces)
        save(self, path, spaces)
    Results.save = interrupted

ex = pb.Executor(device=FakeDevice(0.25))
for n in range(int(os.environ.get("COUNT", "3"))):
    ex.queue(K(n))
ex.main()
'''


@dataclass
class Outcome:
    rc: int | None  # None: it hung
    stdout: str
    stderr: str


@dataclass
class Case:
    name: str
    command: str
    expected_rc: set[int]
    env: dict[str, str]
    setup: Callable[[Path], None] | None = None
    kept: Callable[[Path, Outcome], bool] | None = None  # nothing lost, the output as it should be


def _specs(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["specializations"])
    except (OSError, ValueError, KeyError):
        return -1


def cases(root: Path) -> list[Case]:
    py = sys.executable
    gpu = Path(__file__).resolve().parents[3] / "tests" / "gpu_results"
    base, head = gpu / "gpu-copy-run1.json", gpu / "gpu-copy-run2.json"
    compare = f"{py} -m primbench compare {base} {head}"
    bench = f"{py} bench.py --min-secs 0"
    closed_reader = "| (exec <&-; sleep 1); exit ${PIPESTATUS[0]}"

    def complete_first(d: Path) -> None:
        subprocess.run(["bash", "-c", f"{bench} --rounds 3 --json-out r.json >/dev/null 2>&1"], cwd=d,
                       env=_env(root, {}), timeout=LIMIT)
        (d / "complete.json").write_bytes((d / "r.json").read_bytes())

    def unchanged(d: Path, o: Outcome) -> bool:
        return (d / "r.json").read_bytes() == (d / "complete.json").read_bytes() and _specs(
            d / "r.partial.json") == 3

    def fifo(d: Path) -> None:
        os.mkfifo(d / "fifo")

    def db(d: Path) -> None:
        subprocess.run([py, "-m", "primbench", "history", "ingest", str(base), "--db", "h.duckdb"], cwd=d,
                       env=_env(root, {}), capture_output=True, timeout=120)

    def hostile_db(d: Path) -> None:
        doc = json.loads(base.read_text())
        doc["context"]["general"]["branch_name"] = "=evil\rmain"
        (d / "hostile.json").write_text(json.dumps(doc))
        subprocess.run([py, "-m", "primbench", "history", "ingest", "hostile.json", "--db", "h.duckdb"], cwd=d,
                       env=_env(root, {}), capture_output=True, timeout=120)

    def csv_rows(d: Path, o: Outcome) -> bool:
        import csv
        import io

        rows = list(csv.reader(io.StringIO(o.stdout, newline="")))
        return len(rows) == 2 and any(c.startswith("'=") for c in rows[1])

    return [
        Case("ctrl-c after round 1 beside a complete results.json", f"{bench} --rounds 3 --json-out r.json",
             {130}, {"FAULT": "int-round-2"}, complete_first, unchanged),
        Case("ctrl-c during the final write", f"{bench} --rounds 1 --json-out r.json", {130},
             {"FAULT": "int-in-write"}, None, lambda d, o: _specs(d / "r.json") == 3),
        Case("ctrl-c, then SIGTERM during the write", f"{bench} --rounds 1 --json-out r.json", {130},
             {"FAULT": "int-then-term-in-write"}, None, lambda d, o: _specs(d / "r.json") == 2),
        Case("SIGTERM during the final write", f"{bench} --rounds 1 --json-out r.json", {143},
             {"FAULT": "term-in-write"}, None, lambda d, o: _specs(d / "r.json") == 3),
        Case("--json-out DIR", f"mkdir -p d; {bench} --rounds 1 --json-out d", {2}, {}, None,
             lambda d, o: "nothing was measured" in o.stderr),
        Case("--json-out FIFO (no reader)", f"{bench} --rounds 1 --json-out fifo", {2}, {}, fifo),
        Case("history report -o FIFO (no reader)", f"{py} -m primbench history report --db h.duckdb -o fifo", {2},
             {}, lambda d: (fifo(d), db(d))[0]),
        Case("compare >&-", f"{compare} >&-", {2}, {}),
        Case("compare >/dev/full", f"{compare} >/dev/full", {2}, {}),
        Case("compare | closed pipe", f"{compare} {closed_reader}", {2}, {}),
        Case("history runs >&-", f"{py} -m primbench history runs --db h.duckdb >&-", {2}, {}, db),
        Case("history runs >/dev/full", f"{py} -m primbench history runs --db h.duckdb >/dev/full", {2}, {}, db),
        Case("benchmark | head -1", f"{bench} --rounds 1 --json-out r.json | head -1; exit ${{PIPESTATUS[0]}}",
             {2}, {"FAULT": "pipe", "COUNT": "12"}, None, lambda d, o: _specs(d / "r.json") == 12),
        Case("benchmark >&-", f"{bench} --rounds 1 --json-out r.json >&-", {2}, {"COUNT": "12"}, None,
             lambda d, o: _specs(d / "r.json") == 12),
        Case("compare, PYTHONIOENCODING=latin-1", f"{compare} >out.txt", {2}, {"PYTHONIOENCODING": "latin-1"}),
        Case("compare, PYTHONIOENCODING=cp1252", f"{compare} >out.txt", {2}, {"PYTHONIOENCODING": "cp1252"}),
        Case("compare, COLUMNS=0", compare, {0}, {"COLUMNS": "0"}, None, lambda d, o: "Summary:" in o.stdout),
        Case("history runs -f csv, branch '=evil\\rmain'",
             f"{py} -m primbench history runs --db h.duckdb --branch \"$(printf '=evil\\rmain')\" -f csv", {0}, {},
             hostile_db, csv_rows),
    ]


def _env(root: Path, extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1", **extra}


def run(case: Case, root: Path) -> tuple[Outcome, bool]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "bench.py").write_text(BENCH)
        (d / "tests").symlink_to(root / "tests")
        if case.setup is not None:
            case.setup(d)
        proc = subprocess.Popen(["bash", "-c", case.command], cwd=d, env=_env(root, case.env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=LIMIT)
            outcome = Outcome(proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            return Outcome(None, out, err), False
        kept = case.kept is None or case.kept(d, outcome)
        return outcome, kept


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    counts = {"cases": 0, "as expected": 0, "clean exits": 0, "tracebacks": 0, "hangs": 0, "wrong exit code": 0,
              "lost or wrong output": 0}
    for case in cases(root):
        o, kept = run(case, root)
        counts["cases"] += 1
        traceback = "Traceback" in o.stderr
        lines = [ln for ln in o.stderr.splitlines() if ln.strip() and not ln.startswith(("faults:", "ok ", "Summary",
                                                                                       "Wrote", "interrupted",
                                                                                       "terminated"))]
        hung = o.rc is None
        right_rc = o.rc in case.expected_rc
        clean = not hung and not traceback and len(lines) <= 1
        counts["hangs"] += hung
        counts["tracebacks"] += traceback
        counts["clean exits"] += clean and right_rc
        counts["wrong exit code"] += not hung and not right_rc
        counts["lost or wrong output"] += not hung and not kept
        ok = clean and right_rc and kept
        counts["as expected"] += ok
        rc = "hang" if hung else str(o.rc)
        print(f"{'ok  ' if ok else 'FAIL'} {case.name}: exit {rc} (expected {sorted(case.expected_rc)})"
              f"{'' if kept or hung else ', output lost or wrong'}{', traceback' if traceback else ''}")
    print(f"{root}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
