"""Collect the variance-structure study on a GPU (issue "Verdicts that speak", step 1).

For each size, separate processes of `tuning_suite.py`, each measuring every specialization in
12 interleaved rounds (fresh ``run(state)`` each) with --output-batches and 2 ms batches, so that
one file holds four levels: call, batch, round and (across files) process. One more process per
size keeps the stream, flag and clear buffer across rounds (PRIMBENCH_STUDY_NO_RENEW=1), and two
kernels also run with ``alloc: shift`` (each round's buffers placed elsewhere on purpose).

    python tests/benchmarks/variance/study.py --out DIR [--sizes 64KiB,1MiB,4MiB,64MiB] [--procs 5]

Per-call times are reduced before the files are kept (`slim`): every batch keeps its time and
calls; the first 64 calls of each round's first batch go beside the file (NAME.first-calls.json).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "tuning_suite.py"
OPTIONS = ["--rounds", "12", "--min-gpu-ms-per-batch", "2", "--output-batches"]


def slim(path: Path) -> None:
    """Drop the per-call times from the results file (it stays a valid results file) and keep the
    first 64 calls of each round's first batch beside it, in NAME.first-calls.json: specialization
    name -> batch index -> call times in ms."""
    doc = json.loads(path.read_text())
    first: dict[str, dict[str, list[float]]] = {}
    for spec in doc.get("specializations", []):
        seen: set[int] = set()
        for i, b in enumerate(spec.get("batches") or []):
            r = b.get("round", 0)
            calls = b.pop("iterations_ms", None)
            if calls and r not in seen:
                first.setdefault(spec["name"], {})[str(i)] = calls[:64]
            seen.add(r)
    path.write_text(json.dumps(doc))
    path.with_name(path.stem + ".first-calls.json").write_text(json.dumps(first))


def run(out: Path, size: str, env_extra: dict[str, str], log) -> None:
    env = {**os.environ, "PRIMBENCH_BRANCH": "study", "PRIMBENCH_COMMIT": os.environ.get("STUDY_COMMIT", "unknown"),
           "PYTHONUNBUFFERED": "1", **env_extra}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(SUITE), "--size", size, "--json-out", str(out), *OPTIONS],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    out.with_suffix(".log").write_text(proc.stdout[-20000:] + proc.stderr[-20000:])
    if out.exists():
        slim(out)
    line = f"{size} {out.name}: exit {proc.returncode}, wall {wall:.1f} s"
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--sizes", default="64KiB,1MiB,4MiB,64MiB")
    ap.add_argument("--procs", type=int, default=5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "study.log", "a") as log:
        for size in args.sizes.split(","):
            d = args.out / size
            d.mkdir(exist_ok=True)
            for k in range(1, args.procs + 1):
                run(d / f"p-{k}.json", size, {}, log)
                if k == 2:  # the no-renew process sits between default ones
                    run(d / "norenew-1.json", size, {"PRIMBENCH_STUDY_NO_RENEW": "1"}, log)


if __name__ == "__main__":
    main()
