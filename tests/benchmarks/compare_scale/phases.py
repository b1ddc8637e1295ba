"""Where one `primbench compare` of two files spends its CPU, in one process: the imports, loading
both files, `compare_runs` (and the time inside its parts, each timed around its calls), the
terminal table and freeing it all. CPU seconds (`time.process_time`) of this process.

    python tests/benchmarks/compare_scale/phases.py BASE.json HEAD.json > phases-s6.txt
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import io
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

PARTS = {"core": ("_index", "assess", "_pair", "_suite", "_runs_of", "_noise", "_tests", "_write_rows", "_warnings"),
         "stats": ("centred_standard_errors", "fit_prior", "t_sf", "t_isf", "suite_centre")}


def main() -> None:
    spent: dict[str, float] = collections.defaultdict(float)
    t0 = time.process_time()
    import typer  # noqa: F401

    from primbench.cli import app  # noqa: F401
    from primbench.compare import core, render, stats
    from primbench.console import make_console

    stats.scipy_special()
    t1 = time.process_time()

    def timed(module: Any, name: str) -> None:
        f = getattr(module, name)

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - start

        setattr(module, name, wrapper)

    for module, names in ((core, PARTS["core"]), (stats, PARTS["stats"])):
        for name in names:
            timed(module, name)
    gc.disable()  # as the command runs
    base, head = core.load_side(sys.argv[1]), core.load_side(sys.argv[2])
    t2 = time.process_time()
    comparison = core.compare_runs(base, head)
    t3 = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        render.render_terminal(comparison, make_console(), max_rows=render.TERMINAL_ROWS)
    t4 = time.process_time()
    del base, head, comparison
    t5 = time.process_time()
    print(f"files: {sys.argv[1]} {sys.argv[2]}; load average {os.getloadavg()[0]:.1f}")
    print(f"imports {t1 - t0:.2f} s, loading {t2 - t1:.2f} s, compare_runs {t3 - t2:.2f} s, terminal table "
          f"{t4 - t3:.2f} s, freeing {t5 - t4:.2f} s (CPU of this process)")
    print("inside compare_runs (nested parts overlap: _suite holds _runs_of, _tests the stats functions):")
    for name, s in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {name:26s} {s:.2f} s")


if __name__ == "__main__":
    main()
