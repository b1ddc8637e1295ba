"""How long a ``--processes 16`` run's turns take on the fake GPU (`tests/fake_gpus.py`: no GPU work, virtual
time), this checkout beside a base commit (a git worktree), alternating, so that what is left of a turn is the
host's: each worker's own measuring loop in Python, its results written, and the handover (the parent's look for
the turn that ended, the next worker's look for its turn). Per run: the turns' span as the parent prints it (first
"measuring" to the last "finished") and the whole run's wall.

    python tests/benchmarks/turn_handover.py BASE_COMMIT [RUNS] [SPECIALIZATIONS] > tests/benchmarks/turn_handover.txt

Both sides run this checkout's `tests/fake_gpus.py` (its ``PRIMBENCH_FAKE_SPECS`` sets the suite's size) with
their own `primbench`.

On a GPU the turn also holds the measurement itself; what this shows is what the host adds to each of 16 turns.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARGS = ("--min-secs", "0.5", "--processes", "16", "--rounds", "4")


def one_run(root: Path, folder: Path, specs: int) -> tuple[float, float]:
    """(turns' span, wall) of one fake --processes 16 run of the checkout at `root`, seconds."""
    env = {**os.environ, "PYTHONPATH": str(root), "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_ROUND_SD": "0.01",
           "PRIMBENCH_FAKE_SPECS": str(specs)}
    env.pop("PRIMBENCH_WORKER", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_gpus.py"), *ARGS, "--json-out",
                             str(folder / "r.json")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=folder)
    first = last = None
    assert proc.stdout is not None
    for line in proc.stdout:
        t = time.perf_counter() - t0
        if ": measuring (" in line and first is None:
            first = t
        if ": finished" in line:
            last = t
    if proc.wait() != 0 or first is None or last is None:
        raise SystemExit(f"error: the run of {root} failed (exit {proc.returncode})")
    return last - first, time.perf_counter() - t0


def main() -> None:
    base = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    specs = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "primbench"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="turn-handover-") as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), base], cwd=ROOT, check=True)
        try:
            sides = {f"base {base}": tree, f"this checkout ({head}{'+changes' if dirty else ''})": ROOT}
            got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
            for _ in range(runs):
                for name, root in sides.items():
                    out = Path(tmp) / "out"
                    out.mkdir(exist_ok=True)
                    got[name].append(one_run(root, out, specs))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    print(f"# fake --processes 16 --rounds 4 --min-secs 0.5, {specs} specializations; {runs} runs a side, alternating; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")
    print("| side | turns' span, median (min-max) | span / 15 | run wall, median |")
    print("|---|---|---|---|")
    for name, values in got.items():
        spans = [s for s, _ in values]
        walls = [w for _, w in values]
        med = statistics.median(spans)
        print(f"| {name} | {med:.2f} s ({min(spans):.2f}-{max(spans):.2f}) | {med / 15 * 1000:.0f} ms "
              f"| {statistics.median(walls):.2f} s |")


if __name__ == "__main__":
    main()
