"""Real data for compare's evaluation: repeated A/A runs of the unchanged copy example and
planted slowdowns (copies 0.5 %, 1 %, 2 % more bytes than it reports), interleaved round by
round so that drift hits every variant alike.

    python tests/benchmarks/collect_compare_data.py OUTDIR ROUNDS

Writes OUTDIR/aa-<k>.json and OUTDIR/slow-<x>-<k>.json (with --output-batches).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = [("aa", 0.0), ("slow-0.5", 0.5), ("slow-1", 1.0), ("slow-2", 2.0)]


def main() -> None:
    out = Path(sys.argv[1])
    rounds = int(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for k in range(1, rounds + 1):
        for name, extra in VARIANTS:
            t0 = time.perf_counter()
            branch = "main" if name == "aa" else f"planted/{name}"
            cmd = [sys.executable, str(ROOT / "examples" / "copy_benchmark.py"), "--extra-percent", str(extra),
                   "--output-batches", "--json-out", str(out / f"{name}-{k}.json"), "--branch", branch,
                   "--min-gpu-temp", "0", "--max-gpu-temp", "85"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            print(f"{name}-{k}: rc={proc.returncode} {time.perf_counter() - t0:.1f}s", flush=True)
            if proc.returncode != 0:
                print(proc.stdout[-3000:], proc.stderr[-3000:], flush=True)


if __name__ == "__main__":
    main()
