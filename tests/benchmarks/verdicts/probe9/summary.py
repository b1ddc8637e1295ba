"""Summarise the ninth probe's worker profiles (h200_probe9.sh): for each profiled `--processes` run, per
worker: seconds from interpreter start to its turn (imports, device, priming), waiting, its turn, and
inside its rounds where the time goes that a round's own share does not count (`Executor._round` less
`primbench.measure.measure`); then the callees of one worker's `_round` and `State.run`.

    python3 probe9/summary.py DIR > DIR/summary.txt
"""

from __future__ import annotations

import io
import json
import pstats
import sys
from pathlib import Path


def cum(stats: pstats.Stats, file_part: str, func: str) -> tuple[int, float, float]:
    """(calls, own seconds, cumulative seconds) of the functions named `func` in files ending with `file_part`."""
    calls, own, total = 0, 0.0, 0.0
    for (file, _line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if name == func and file.endswith(file_part):
            calls += nc
            own += tt
            total += ct
    return calls, own, total


ROWS = (("primbench/executor.py", "_open_device"), ("primbench/executor.py", "_prime"),
        ("primbench/workers.py", "wait_turn"), ("primbench/roundloop.py", "interleave"),
        ("primbench/executor.py", "_round"), ("primbench/state.py", "run"), ("primbench/measure.py", "measure"),
        ("primbench/backends/cupy_backend.py", "renew"), ("primbench/backends/cupy_backend.py", "clock_sample"),
        ("primbench/backends/cupy_backend.py", "synchronize_device"), ("primbench/thermal.py", "temperature"),
        ("primbench/executor.py", "_finish"), ("primbench/roundloop.py", "one_round"),
        ("primbench/records.py", "specialization_record"), ("primbench/executor.py", "_checkpoint"))


def main() -> None:
    folder = Path(sys.argv[1])
    for meta_path in sorted(folder.glob("**/worker-*.json")):
        meta = json.loads(meta_path.read_text())
        stats = pstats.Stats(str(meta_path.with_suffix(".prof")), stream=io.StringIO())
        print(f"## {meta_path.parent.name} worker {meta['process']}: {meta['ended'] - meta['started']:.2f} s alive")
        for file_part, func in ROWS:
            n, own, total = cum(stats, file_part, func)
            if n:
                print(f"  {func:24s} {n:6d} calls  {total:8.3f} s cumulative  {own:7.3f} s own")
        print()
    first = next(iter(sorted(folder.glob("**/worker-*.prof"))), None)
    if first is not None:
        out = io.StringIO()
        stats = pstats.Stats(str(first), stream=out)
        stats.sort_stats("cumulative")
        stats.print_callees(r"executor.py:\d+\(_round\)")
        stats.print_callees(r"state.py:\d+\(run\)")
        stats.print_callees(r"measure.py:\d+\(measure\)")
        stats.print_callees(r"\(_prime\)")
        stats.print_stats(50)
        print(out.getvalue())


if __name__ == "__main__":
    main()
