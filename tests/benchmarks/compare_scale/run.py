"""`primbench compare` of two results files of 3, 10,000 and 100,000 specializations: CPU time,
wall time and peak RSS of the whole process (interpreter start and imports included), before
and after issue 28's compare work, in one run (issue 28's targets: 10,000 in < 1 s, 100,000 in
< 5 s and < 1 GB, two tiny files < 0.5 s CPU).

    git worktree add /tmp/base cd87fcb
    python tests/benchmarks/compare_scale/run.py /tmp/base > tests/benchmarks/compare_scale/run.txt

The files are history_scale's compare files (`tests/benchmarks/compare_speed.py`'s sides, results
4.4.0, 3 rounds a specialization, 0.1 % noise, every 500th specialization slowed by 2 % in head),
written to --work. Each command is a new process under GNU time (`history_scale/measure.py`);
the two checkouts alternate, repetition by repetition, so that both see the same load of the
shared machine. Figures: the median of the repetitions (each repetition listed). Each command's
exit code, and the JSON's SHA-256 where --format json is timed, are compared between the checkouts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "history_scale"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(ROOT))

from compare_speed import make_side  # noqa: E402
from measure import Timing, timed  # noqa: E402

#: (specializations, results version, repetitions, formats timed): history_scale's files (4.4.0),
#: and the same as the harness writes them today (4.6.0: no context-only upgrade on reading).
CASES = ((3, "4.4.0", 5, ("terminal",)), (10_000, "4.4.0", 5, ("terminal", "json")),
         (100_000, "4.4.0", 3, ("terminal", "json")), (10_000, "4.6.0", 5, ("terminal",)),
         (100_000, "4.6.0", 3, ("terminal",)))


def files(work: Path, n: int, version: str) -> list[Path]:
    """history_scale's compare files of `n` specializations (run.py's `run_compare`), written
    in `version`."""
    suffix = "" if version == "4.4.0" else f"-{version}"
    out = [work / f"compare-{n}-{side}{suffix}.json" for side in ("base", "head")]
    for k, f in enumerate(out):
        if not f.exists():
            part = f.with_suffix(".part")
            part.write_text(json.dumps(make_side(np.random.default_rng(k + 1), n, 0, 0.02 * k, version=version)))
            part.rename(f)
    return out


def cell(ts: list[Timing]) -> str:
    cpu, wall, rss = (statistics.median(getattr(t, k) for t in ts) for k in ("cpu_s", "wall_s", "rss_mb"))
    each = ", ".join(f"{t.cpu_s:.2f}" for t in ts)
    return f"{cpu:5.2f} s CPU  {wall:5.2f} s wall  {rss:5.0f} MB  (CPU each: {each})"


def _commit(root: Path) -> str:
    out = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    return out.stdout.strip()[:70] or "?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_root", type=Path, help="the checkout before (cd87fcb)")
    parser.add_argument("--head-root", type=Path, default=ROOT)
    parser.add_argument("--work", type=Path, default=Path("/tmp/compare_scale"))
    parser.add_argument("--base-label", default="before (cd87fcb)", help="what the base checkout is, as printed")
    parser.add_argument("--head-label", default="after (this branch)")
    parser.add_argument("--min-reps", type=int, default=0, help="at least this many repetitions of every case")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    roots = {args.base_label: args.base_root, args.head_label: args.head_root}
    for root in roots.values():  # as an installed package is (this machine sets PYTHONDONTWRITEBYTECODE)
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(root / d) for d in ("primbench", "compare",
                                                                                          "history"))],
                       check=True, capture_output=True)
    print("primbench compare as a new process: median of the repetitions (GNU time: user + system CPU, "
          "wall, peak RSS)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs shared with other work, Python "
          f"{platform.python_version()}; load average at the start {os.getloadavg()[0]:.1f}")
    print(f"command: python tests/benchmarks/compare_scale/run.py {' '.join(sys.argv[1:])}")
    print(f"code: before {args.base_root} at {_commit(args.base_root)}, after {args.head_root} at "
          f"{_commit(args.head_root)}; both byte-compiled first (python -m compileall), as an installed "
          "package is\n")
    for n, version, reps, formats in CASES:
        reps = max(reps, args.min_reps)
        pair = files(args.work, n, version)
        for fmt in formats:
            argv = ["compare", *map(str, pair), "--format", fmt]
            got: dict[str, list[Timing]] = {label: [] for label in roots}
            for _ in range(reps):
                for label, root in roots.items():
                    # cwd: not a checkout, whose primbench `python -c` would import before PYTHONPATH's
                    got[label].append(timed(argv, code_root=root, timeout_s=300, rss_limit_mb=4096, cwd=args.work))
            print(f"{n:,} specializations (results {version}), --format {fmt}, {reps} repetitions:")
            for label, ts in got.items():
                killed = [t.killed for t in ts if t.killed]
                print(f"  {label:20s} {cell(ts)}" + (f"  KILLED: {killed}" if killed else ""))
            codes = {label: sorted({t.code for t in ts}, key=str) for label, ts in got.items()}
            digests = {label: sorted({hashlib.sha256(t.out.encode()).hexdigest()[:16] for t in ts})
                       for label, ts in got.items()}
            same = len({str(c) for c in codes.values()}) == 1 and (fmt != "json" or len(
                {str(d) for d in digests.values()}) == 1)
            print(f"  exit codes {codes}" + (f", JSON sha256 {digests}" if fmt == "json" else "")
                  + ("" if same else "  DIFFERENT"))
            print(flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
