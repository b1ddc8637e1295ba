"""How long ``primbench history regressions`` takes over 1,000 commits x 100 series, through the CLI.

Run: ``python tests/benchmarks/changepoints/cli_regressions.py [STORE]`` (writes
``cli_regressions.txt`` beside it, or the name in ``CP_CLI_RECORD``). The store is generated
once (1,000 results files, one per commit, each with 100 specializations, ingested with
``primbench history ingest``) and kept at STORE (default: a temporary folder) so the command can
be timed again. The series come from
`generate.py` (0.5 % noise, Student-t(5)): 60 flat, 10 with one step, 10 with a burst of 2 bad
runs, 10 with a regression fixed 5-10 commits later, 10 with a drift. The command runs as a new
process, imports included, as a CI job runs it; timed 3 times, median and max of wall and of
CPU time (user + system) recorded: on a shared machine the wall time is mostly waiting.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from generate import Noise, Series, series  # noqa: E402

from tests import history_data as hd  # noqa: E402

COMMITS = 1_000
KINDS = ["flat"] * 60 + ["step"] * 10 + ["burst2"] * 10 + ["fixed"] * 10 + ["drift"] * 10


def made_series() -> list[Series]:
    rng = np.random.default_rng(24)
    noise = Noise(0.005, tails="t5")
    return [series(k, COMMITS, noise, rng, size=0.01 if k == "drift" else 0.03) for k in KINDS]


def make_store(folder: Path) -> tuple[Path, dict[str, int]]:
    made = made_series()
    files = folder / "files"
    files.mkdir(parents=True, exist_ok=True)
    for i in range(COMMITS):
        doc = hd.document([float(s.values[i]) for s in made], commit=hd.sha(f"main-{i}"),
                          date=hd.START + dt.timedelta(hours=i))
        (files / f"run-{i:04d}.json").write_text(json.dumps(doc))
    db = folder / "history.duckdb"
    secs, _ = cli("ingest", str(files), "--db", str(db))
    truth = {"steps": sum(len(s.truth) for s in made), "drifts": sum(len(s.drifts) for s in made),
             "bursts": sum(len(s.bursts) for s in made), "ingest_s": round(secs)}
    return db, truth


CPU: list[float] = []  # CPU seconds (user + system) of each `cli` call's process


def cli(*args: str) -> tuple[float, str]:
    """Wall seconds and stdout of ``primbench history ARGS`` as a new process (its CPU seconds
    appended to `CPU`: on a shared machine wall time is mostly waiting for a core)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "from primbench.cli import main; main()", "history", *args],
                         capture_output=True, text=True, env=env, check=False)
    secs = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"history {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return secs, out.stdout


def against_truth(rows: list[dict[str, object]]) -> list[str]:
    """The rows against what was planted: steps at their exact commit, bursts, drifts, the rest."""
    made = made_series()
    got: dict[int, list[tuple[str, int, int]]] = {}
    for r in rows:
        spec = int(str(r["name"]).rsplit("t", 1)[-1])  # "type: t17"
        got.setdefault(spec, []).append((str(r["shape"]), int(str(r["position"])), int(str(r["end_position"]))))
    steps = bursts = drifts = extra = 0
    for i, s in enumerate(made):
        left = list(got.get(i, []))
        for t in s.truth:
            hit = next((g for g in left if g[0] == "step" and g[1] == t), None)
            if hit:
                steps += 1
                left.remove(hit)
        for a, b in s.bursts:
            hit = next((g for g in left if g[0] == "burst" and (g[1], g[2]) == (a, b - 1)), None)
            if hit:
                bursts += 1
                left.remove(hit)
        for a, b in s.drifts:
            hit = next((g for g in left if g[0] == "drift" and g[1] <= b and g[2] >= a), None)
            if hit:
                drifts += 1
                left.remove(hit)
        extra += len(left)
    planted = sum(len(s.truth) for s in made), sum(len(s.bursts) for s in made), sum(len(s.drifts) for s in made)
    return [f"against what was planted: steps at their exact commit {steps} of {planted[0]}, bursts reported as "
            f"bursts {bursts} of {planted[1]}, drifts as drifts {drifts} of {planted[2]}; other rows {extra}"]


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    db = folder / "history.duckdb"
    truth_file = folder / "truth.json"
    if not db.exists():
        db, truth = make_store(folder)
        truth_file.write_text(json.dumps(truth))
    truth = json.loads(truth_file.read_text())
    load = os.getloadavg()[0]
    times = []
    rows: list[dict[str, object]] = []
    CPU.clear()
    for _ in range(3):
        secs, out = cli("regressions", "--db", str(db), "--format", "json")
        times.append(secs)
        rows = json.loads(out)
    shapes: dict[str, int] = {}
    for r in rows:
        shapes[str(r["shape"])] = shapes.get(str(r["shape"]), 0) + 1
    lines = [
        "primbench history regressions over 1,000 commits x 100 series, through the CLI "
        "(tests/benchmarks/changepoints/cli_regressions.py)",
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}",
        f"store: {COMMITS:,} results files ingested ({truth.get('ingest_s', '?')} s), 100 specializations each; "
        f"planted: {truth['steps']} step changes, {truth['drifts']} drifts, {truth['bursts']} bursts of 2 bad runs",
        f"regressions --format json, a new process each time: median {statistics.median(times):.2f} s, "
        f"max {max(times):.2f} s (target: under 10 s); CPU time (user + system) median "
        f"{statistics.median(CPU):.2f} s, max {max(CPU):.2f} s",
        f"rows: {len(rows)} ({', '.join(f'{n} {k}' for k, n in sorted(shapes.items()))})",
        *against_truth(rows),
    ]
    (HERE / os.environ.get("CP_CLI_RECORD", "cli_regressions.txt")).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
