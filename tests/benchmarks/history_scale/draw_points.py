"""`history report`'s chart drawing (`report._Drawing.draw`) in one process, two ways alternating: the
per-commit points of a batch of charts from one `trends.per_commit` call (`report._points_of`, this
checkout's way) against one call per chart (`_points_of` made to give None, so that `chart_data`
reduces its own rows, the way before). CPU seconds of `draw` per report (`time.process_time`), the
median of the repetitions; the two reports' HTML compared (the line with the moment it was made left out).

    python draw_points.py ROOT STORE --repeat 4 --out /tmp/draw_points
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="the checkout to import primbench from")
    ap.add_argument("store", help="a store build.py made (e.g. /tmp/hs12/s100k.duckdb)")
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--branch", default="main")
    ap.add_argument("--last", type=int, default=1000, help="the report's window (its CLI default)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/draw_points"))
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    warnings.simplefilter("ignore")
    from primbench.history import commands, report
    from primbench.history.selector import Selector

    real_points, real_draw = report._points_of, report._Drawing.draw
    took: dict[str, list[float]] = {"one call per chart (before)": [], "one call per batch (now)": []}
    mode = [""]

    def draw(self: Any, *a: Any, **k: Any) -> Any:
        started = time.process_time()
        try:
            return real_draw(self, *a, **k)
        finally:
            took[mode[0]].append(time.process_time() - started)

    report._Drawing.draw = draw  # type: ignore[method-assign]
    args.out.mkdir(parents=True, exist_ok=True)
    pages: dict[str, Path] = {}
    for _ in range(args.repeat):
        for m in took:
            mode[0] = m
            report._points_of = real_points if "now" in m else (lambda parts: [None] * len(parts))  # type: ignore
            pages[m] = args.out / f"{'now' if 'now' in m else 'before'}.html"
            commands.report(args.store, Selector(branch=args.branch), out=pages[m], use_git=False, last=args.last)
    print(f"{args.store}, -b {args.branch}, --last {args.last}, {args.repeat} repetitions alternating")
    for m, v in took.items():
        print(f"{m}: draw CPU s median {statistics.median(v):.3f} (each: {', '.join(f'{x:.3f}' for x in v)})")
    texts = [[line for line in p.read_text(encoding="utf-8").splitlines() if "Generated " not in line]
             for p in pages.values()]
    print("same HTML (the line with the moment it was made left out):", texts[0] == texts[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
