"""User and system CPU and minor page faults of one `primbench compare` of two files, phase by
phase, in one process (getrusage): the imports, loading each side, `compare_runs`, the terminal
table (into a string). The process ends with `os._exit`, as the command does.

    python tests/benchmarks/compare_scale/phase_rusage.py CODE_ROOT BASE.json HEAD.json
"""

from __future__ import annotations

import contextlib
import gc
import io
import itertools
import os
import resource
import sys

sys.path.insert(0, sys.argv[1])


def _usage() -> tuple[float, float, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt


def main() -> None:
    marks = [("start", _usage())]
    from primbench.cli import app  # noqa: F401
    from primbench.compare import core, render, stats
    from primbench.console import make_console

    stats.scipy_special()
    marks.append(("imports", _usage()))
    gc.disable()  # as the command runs
    base = core.load_side(sys.argv[2])
    marks.append(("load base", _usage()))
    head = core.load_side(sys.argv[3])
    marks.append(("load head", _usage()))
    comparison = core.compare_runs(base, head)
    marks.append(("compare_runs", _usage()))
    with contextlib.redirect_stdout(io.StringIO()):
        render.render_terminal(comparison, make_console())
    marks.append(("terminal", _usage()))
    for (_, a), (name, b) in itertools.pairwise(marks):
        print(f"{name:14s} user {b[0] - a[0]:.2f} sys {b[1] - a[1]:.2f} faults {b[2] - a[2]}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
