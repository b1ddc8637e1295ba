"""`queries._newest`'s CPU seconds inside a warm `history report -b main` (the latest verdicts' read of each
series' newest rows), three calls in one process after a warm-up call, printed as one line.

    for i in 1 2; do for r in BASE HEAD; do python newest_timing.py $r --store STORE; done; done
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="the checkout to import primbench from")
    ap.add_argument("--store", default="/tmp/hs12/s100k.duckdb")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    warnings.simplefilter("ignore")
    import primbench.history.queries as queries
    from primbench.history import commands
    from primbench.history.selector import Selector

    real, spent = queries._newest, []

    def timed(*a: Any, **k: Any) -> Any:
        t = time.process_time()
        out = real(*a, **k)
        spent.append(time.process_time() - t)
        return out

    queries._newest = timed  # type: ignore[assignment]
    for _ in range(args.repeat + 1):
        commands.report(args.store, Selector(branch="main"), out="/tmp/newest-timing.html", use_git=False, last=1000)
    print(args.root, [round(x, 3) for x in spent[1:]])


if __name__ == "__main__":
    main()
