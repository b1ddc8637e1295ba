"""Does the cache clear change how well A/A verdicts hold? The evaluation suite as separate
processes, alternating between clears, then compare on every ordered A/A pair of each clear.

    python tests/benchmarks/loop/clear_aa.py run OUTDIR [--size 64KiB] [--runs 8] [NAME=OPTIONS ...]
    python tests/benchmarks/loop/clear_aa.py report OUTDIR

``run`` (on the GPU): RUNS processes per clear, in the order clear 1, clear 2, clear 1, ... so
that a drift of the machine hits every clear alike. The default clears are ``L2`` (the default,
``--cache-size auto``) and ``2xL2`` (``--cache-size 120MiB``); NAME=OPTIONS adds or replaces
one (``256MiB=--cache-size 256MiB``). Files: OUTDIR/NAME/aa-K.json and .log, OUTDIR/run.log.

``report`` (anywhere): per clear, the ordered A/A pairs on which ``compare`` exits 1, the
specializations flagged, and per specialization the spread of its time per call between
processes against the spread between the rounds of one process (what compare's noise is
built from). Writes OUTDIR/clear_aa.md.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "tests" / "benchmarks" / "rounds" / "suite.py"
sys.path.insert(0, str(ROOT))

CLEARS = {"L2": [], "2xL2": ["--cache-size", "120MiB"]}


def run(out: Path, size: str, runs: int, clears: dict[str, list[str]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PRIMBENCH_BRANCH": "eval", "PRIMBENCH_COMMIT": os.environ.get("EVAL_COMMIT", "unknown"),
           "PYTHONUNBUFFERED": "1"}
    with open(out / "run.log", "a") as log:
        for k in range(1, runs + 1):
            for name, options in clears.items():
                target = out / name / f"aa-{k}.json"
                target.parent.mkdir(exist_ok=True)
                start = time.perf_counter()
                proc = subprocess.run([sys.executable, str(SUITE), "--size", size, "--json-out", str(target), *options],
                                      env=env, capture_output=True, text=True)
                target.with_suffix(".log").write_text(proc.stdout + proc.stderr)
                line = (f"{name}/aa-{k}.json: exit {proc.returncode}, wall {time.perf_counter() - start:.1f} s, "
                        f"{time.strftime('%H:%M:%S')}")
                print(line, flush=True)
                log.write(line + "\n")
                log.flush()


def _log_sd(values: list[float]) -> float:
    logs = [math.log(v) for v in values]
    return statistics.stdev(logs) if len(logs) > 1 else float("nan")


def report(out: Path) -> str:
    from primbench.compare.core import compare_runs, load_side

    lines = [f"# A/A verdicts by cache clear ({out.name})", ""]
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        files = sorted(folder.glob("aa-*.json"), key=lambda p: int(p.stem.split("-")[1]))
        if len(files) < 2:
            continue
        docs = [json.loads(f.read_text()) for f in files]
        failed, flagged = 0, 0
        names: dict[str, int] = {}
        for a in files:
            for b in files:
                if a == b:
                    continue
                c = compare_runs(load_side(a), load_side(b))
                failed += c.failed()
                for r in c.rows:
                    if r.verdict.value == "regression":
                        flagged += 1
                        names[r.name] = names.get(r.name, 0) + 1
        pairs = len(files) * (len(files) - 1)
        cache = {d["context"]["settings"].get("cache_size") for d in docs}
        walls = [d["summary"]["elapsed_secs"]["host"] for d in docs]
        lines += [f"## {folder.name}: {len(files)} processes, cache_size {sorted(cache)}",
                  f"A/A ordered pairs exiting 1: **{failed}/{pairs}** ({failed / pairs * 100:.1f} %); regressions "
                  f"flagged: {flagged} ({', '.join(f'{n}: {k}' for n, k in sorted(names.items())) or 'none'}); "
                  f"executor time per run: median {statistics.median(walls):.1f} s", "",
                  "| specialization | µs per call | between processes | between rounds (median of processes) |",
                  "|---|---|---|---|"]
        for i, spec in enumerate(docs[0]["specializations"]):
            per_run = [d["specializations"][i]["gpu_seconds_per_call"] * 1e6 for d in docs]
            rounds = [_log_sd([r["gpu_ms_per_call"] for r in d["specializations"][i]["rounds"]]) for d in docs]
            lines.append(f"| {spec['name']} | {statistics.median(per_run):.3f} | {_log_sd(per_run) * 100:.2f} % "
                         f"| {statistics.median(rounds) * 100:.2f} % |")
        lines.append("")
    text = "\n".join(lines)
    (out / "clear_aa.md").write_text(text)
    return text


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    rest = sys.argv[3:]
    if mode == "report":
        print(report(out))
        return
    size, runs, clears = "64KiB", 8, dict(CLEARS)
    while rest:
        arg = rest.pop(0)
        if arg == "--size":
            size = rest.pop(0)
        elif arg == "--runs":
            runs = int(rest.pop(0))
        elif "=" in arg:
            name, options = arg.split("=", 1)
            clears[name] = options.split()
        else:
            raise SystemExit(f"unknown argument {arg!r}")
    run(out, size, runs, clears)


if __name__ == "__main__":
    main()
