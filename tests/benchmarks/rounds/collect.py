"""Collect compare's out-of-sample evaluation data on a GPU: the suite run as separate
processes of identical code, plus processes with planted changes, interleaved in time.

    python tests/benchmarks/rounds/collect.py --size 1MiB --out DIR [--aa 6] [--planted 3]

Order: three A/A processes; the planted delays are then calibrated from their time per
call (`PLANTS`: 1 %, 2 % and 5 % of it, in SM cycles at their average SM clock); then
planted and A/A processes alternate. Files: DIR/aa-K.json, DIR/planted-K.json,
DIR/plant.json (the cycles and the calibration), DIR/collect.log (wall time per process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "suite.py"

#: Planted changes: specialization -> slowdown (fraction of its time per call).
PLANTS = {
    "ipt: 1, op: copy, type: char": 0.01,
    "ipt: 4, op: copy, type: short": 0.01,
    "ipt: 4, op: copy, type: int": 0.02,
    "ipt: 1, op: copy, type: long long": 0.05,
}


def run_suite(out: Path, size: str, env_extra: dict[str, str], log, extra: list[str]) -> None:
    env = {**os.environ, "PRIMBENCH_BRANCH": "eval", "PRIMBENCH_COMMIT": os.environ.get("EVAL_COMMIT", "unknown"),
           "PYTHONUNBUFFERED": "1", **env_extra}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(SUITE), "--size", size, "--json-out", str(out), *extra],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    out.with_suffix(".log").write_text(proc.stdout + proc.stderr)
    line = f"{out.name}: exit {proc.returncode}, wall {wall:.1f} s"
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


def calibrate(files: list[Path]) -> dict[str, object]:
    per_call: dict[str, list[float]] = {}
    clocks: list[float] = []
    for f in files:
        doc = json.loads(f.read_text())
        for spec in doc["specializations"]:
            if spec["name"] in PLANTS and not spec.get("error"):
                per_call.setdefault(spec["name"], []).extend(r["gpu_ms_per_call"] for r in spec["rounds"])
                clock = (spec.get("sm_clock") or {}).get("average_mhz")
                if clock:
                    clocks.append(clock)
    mhz = statistics.median(clocks) if clocks else 1980.0
    cycles = {name: round(PLANTS[name] * statistics.median(ms) * 1e-3 * mhz * 1e6) for name, ms in per_call.items()}
    return {"sm_clock_mhz": mhz, "ms_per_call": {k: statistics.median(v) for k, v in per_call.items()},
            "fraction": PLANTS, "cycles": cycles}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--aa", type=int, default=6)
    ap.add_argument("--planted", type=int, default=3)
    args, extra = ap.parse_known_args()  # the rest goes to every suite process
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "collect.log", "a") as log:
        first = min(3, args.aa)
        for k in range(1, first + 1):
            run_suite(args.out / f"aa-{k}.json", args.size, {}, log, extra)
        plant = calibrate([args.out / f"aa-{k}.json" for k in range(1, first + 1)])
        (args.out / "plant.json").write_text(json.dumps(plant, indent=2) + "\n")
        env = {"PRIMBENCH_EVAL_PLANT": json.dumps(plant["cycles"])}
        aa, pl = first, 0
        while aa < args.aa or pl < args.planted:
            if pl < args.planted:
                pl += 1
                run_suite(args.out / f"planted-{pl}.json", args.size, env, log, extra)
            if aa < args.aa:
                aa += 1
                run_suite(args.out / f"aa-{aa}.json", args.size, {}, log, extra)


if __name__ == "__main__":
    main()
