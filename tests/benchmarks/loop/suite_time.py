"""Where the 1 MiB suite's wall time goes: measurement, per-round setup, start-up.

    python tests/benchmarks/loop/suite_time.py OUTDIR [RUNS] [--no-profile] [SUITE OPTIONS...]

Runs the evaluation suite (`tests/benchmarks/rounds/suite.py`, 11 specializations, default
settings, or the SUITE OPTIONS given, such as ``--cache-size 60MiB``) at 1 MiB as RUNS separate
processes (default 3), then once more under cProfile (unless ``--no-profile``).
For each plain run: the process's wall time, the executor's own time (results.json
``summary.elapsed_secs.host``, from the executor's creation to the results), and the sum of
the rounds' measurement time (``specializations[].elapsed_secs.host``: batch sizing and
batches). The rest of the executor's time is per-round setup (renewing the device, the
benchmark's ``run(state)`` up to ``state.run``, warmup, checks) and opening the device; the
rest of the wall time is the interpreter and imports. The profile lists the functions with
the most cumulative time outside the measurement loop.
Writes OUTDIR/suite_time.md, OUTDIR/suite_time.json and the runs' results files.
"""

from __future__ import annotations

import cProfile  # noqa: F401 - run below as ``-m cProfile``
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "rounds" / "suite.py"


def run(out: Path, extra: list[str], profile: Path | None = None) -> dict[str, float]:
    env = {**os.environ, "PRIMBENCH_BRANCH": "eval", "PRIMBENCH_COMMIT": "suite-time", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, *(["-m", "cProfile", "-o", str(profile)] if profile else []), str(SUITE),
           "--size", "1MiB", "--json-out", str(out), *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    out.with_suffix(".log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{out.name}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    doc = json.loads(out.read_text())
    specs = doc["specializations"]
    measured = sum(s["elapsed_secs"]["host"] for s in specs)
    executor = doc["summary"]["elapsed_secs"]["host"]
    return {"specializations": len(specs), "wall_secs": wall, "executor_secs": executor,
            "measurement_secs": measured, "wall_per_specialization": wall / len(specs),
            "measurement_per_specialization": measured / len(specs),
            "setup_secs": executor - measured, "startup_secs": wall - executor}


def main() -> None:
    out_dir = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    extra = sys.argv[3:]
    profile = "--no-profile" not in extra
    extra = [a for a in extra if a != "--no-profile"]
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in range(1, runs + 1):
        row = run(out_dir / f"suite-{k}.json", extra)
        rows.append(row)
        print(f"run {k}: {json.dumps(row)}", flush=True)
    options = " ".join(extra) or "default settings"
    lines = [f"1 MiB suite, {options}, {runs} separate processes"
             + (", then one under cProfile." if profile else "."), "",
             "| run | wall s | per specialization | measurement s (per specialization) "
             "| per-round setup and device s | start-up s |", "|---|---|---|---|---|---|"]
    for k, r in enumerate(rows, 1):
        lines.append(f"| {k} | {r['wall_secs']:.2f} | {r['wall_per_specialization']:.3f} | {r['measurement_secs']:.2f} "
                     f"({r['measurement_per_specialization']:.3f}) | {r['setup_secs']:.2f} | {r['startup_secs']:.2f} |")
    med = statistics.median(r["wall_per_specialization"] for r in rows)
    verdict = "HIT" if med <= 1.2 else "MISS"
    lines += ["", f"Median wall time per specialization: {med:.3f} s (target ≤ 1.2 s: {verdict})."]
    doc: dict[str, object] = {"options": extra, "runs": rows}
    if profile:
        prof = out_dir / "suite-profile.prof"
        doc["profiled"] = profiled = run(out_dir / "suite-profile.json", extra, prof)
        lines += _profile_lines(prof, profiled)
        prof.unlink()
    (out_dir / "suite_time.md").write_text("\n".join(lines) + "\n")
    (out_dir / "suite_time.json").write_text(json.dumps(doc, indent=1))
    print("\n".join(lines))


def _profile_lines(prof: Path, profiled: dict[str, float]) -> list[str]:
    stats = pstats.Stats(str(prof))
    entries = []
    for (file, line, name), (_cc, calls, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        entries.append((ct, tt, calls, f"{Path(file).name}:{line}({name})"))
    entries.sort(reverse=True)
    lines = ["", f"Profiled run (cProfile slows Python-heavy loops): wall {profiled['wall_secs']:.2f} s, measurement "
             f"{profiled['measurement_secs']:.2f} s. Top 60 functions by cumulative time:", "",
             "| cumulative s | own s | calls | function |", "|---|---|---|---|"]
    for ct, tt, calls, name in entries[:60]:
        lines.append(f"| {ct:.3f} | {tt:.3f} | {calls} | {name} |")
    return lines


if __name__ == "__main__":
    main()
