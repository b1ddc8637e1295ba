"""Runs of one benchmark program from one parent process (the thirteenth probe's condition C): the program is run
as ``__main__`` once per results file named, in this process one after another, so that every run's parent is
the same interpreter (its imports, its environment, its memory) while each run starts its own ``--processes``
workers. A worker (started by the runs with this command line, `primbench.workers.worker_command`) runs the
program once, as a worker of the run that started it.

    python same_parent.py PROGRAM OUT1.json,OUT2.json [PROGRAM'S OPTIONS...]

Exit status: the last non-zero exit of a run, else 0.
"""

from __future__ import annotations

import os
import runpy
import sys

from primbench.workers import WORKER_ENV


def run(program: str, args: list[str], out: str) -> int:
    """`program` as ``__main__`` with `args` and ``--json-out out``; its exit status."""
    sys.argv = [program, *args, "--json-out", out]
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


def main() -> int:
    program, outs, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
    if os.environ.get(WORKER_ENV):  # a worker: its role (and where it writes) comes from the environment
        return run(program, args, outs[0])
    status = 0
    for out in outs:
        print(f"same_parent: pid {os.getpid()} runs {program} into {out}", flush=True)
        status = run(program, args, out) or status
    return status


if __name__ == "__main__":
    sys.exit(main())
