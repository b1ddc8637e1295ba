"""One history command's core function (`primbench.history.commands`) timed inside one process, after a
first call that warms it (imports, DuckDB's caches): CPU seconds (`time.process_time`) of each later call,
and their median, printed as one line. The process's start-up and imports, which vary most on a shared
machine, are left out, so that two checkouts run alternately compare on the work itself.

    for i in 1 2 3; do for r in BASE HEAD; do python inprocess.py $r STORE regressions --repeat 3; done; done
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="the checkout to import primbench from")
    ap.add_argument("store")
    ap.add_argument("command", choices=["regressions", "report"])
    ap.add_argument("--branch", default="main")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="/tmp/inprocess-out",
                    help="where the first call's output goes: the report's HTML, the regressions' CSV")
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    warnings.simplefilter("ignore")
    from primbench.history import commands
    from primbench.history.selector import Selector

    def call() -> object:  # the CLI's defaults: a window of 1,000 commits, no git here
        if args.command == "regressions":
            return commands.regressions(args.store, Selector(branch=args.branch), use_git=False, window=1000)
        return commands.report(args.store, Selector(branch=args.branch), out=args.out, use_git=False, last=1000)

    first = call()
    if args.command == "regressions":
        first.to_csv(args.out, index=False)  # type: ignore[attr-defined]
    took = []
    for _ in range(args.repeat):
        started = time.process_time()
        got = call()
        took.append(time.process_time() - started)
    same = all(str(x) == str(first) for x in [got]) if args.command == "regressions" else True
    print(f"{args.root} {args.command} -b {args.branch}: CPU s median {statistics.median(took):.3f} "
          f"(each: {', '.join(f'{t:.3f}' for t in took)}); rows {len(first) if hasattr(first, '__len__') else '-'}"
          f"{'' if same else '; OUTPUT CHANGED between calls'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
