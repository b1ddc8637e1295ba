"""The fuzz campaign at a large budget (issue 16): structural and field-aware mutations of
results files through compare (terminal, markdown, JSON, both directions), history ingest
(DuckDB and shared Parquet, several files per call) and the query commands.

    PYTHONPATH=. python tests/benchmarks/fuzz_campaign.py --inputs 10000 --seed 16 --workers 2 \
        > tests/benchmarks/fuzz_campaign.txt

With ``--workers N`` the inputs are split among N processes, worker k with seed SEED + k.

Prints the totals and every uncaught exception (by input and place). Uncaught exceptions
inside compare/core.py or compare/stats.py are counted apart: that module is being
rewritten to compute changes in log space (tests/test_compare_hostile.py, xfail until then).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz import Tally, run_campaign


def _worker(job: tuple[int, int, int]) -> Tally:
    index, inputs, seed = job
    started = time.time()

    def progress(t: Tally) -> None:
        print(f"  ... worker {index}: {t.inputs} inputs, {t.runs} command runs, {len(t.uncaught)} uncaught, "
              f"{time.time() - started:.0f} s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as work:
        return run_campaign(Path(work), inputs, seed, progress=progress)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    started = time.time()
    share = -(-args.inputs // args.workers)
    jobs = [(k, min(share, args.inputs - k * share), args.seed + k) for k in range(args.workers)]
    with multiprocessing.Pool(args.workers) as pool:
        tallies = pool.map(_worker, jobs)
    tally = Tally()
    for t in tallies:
        tally.inputs += t.inputs
        tally.runs += t.runs
        tally.exits.update(t.exits)
        tally.uncaught += t.uncaught
        tally.injections += t.injections
        tally.internal += t.internal
    print(f"fuzz campaign: {args.inputs} inputs, seed {args.seed}, {args.workers} worker(s), "
          f"Python {platform.python_version()}, {time.time() - started:.0f} s")
    print(json.dumps(tally.summary(), indent=2))
    for line in tally.uncaught:
        print("UNCAUGHT", line)
    for line in tally.injections:
        print("INJECTION", line)
    for line in tally.internal:
        print("INTERNAL", line)
    return 1 if tally.uncaught or tally.injections or tally.internal else 0


if __name__ == "__main__":
    raise SystemExit(main())
