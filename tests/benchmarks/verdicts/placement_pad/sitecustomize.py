"""Put on PYTHONPATH by `h200_probe17.sh` for both of its designs, so that every worker of a run (never the parent)
makes one device allocation of its own before the program is imported and holds it for its life: 2 MiB in the
plain design, a random 2-512 MiB (a whole number of 2 MiB pages, drawn from the worker's process id and the clock)
with ``PRIMBENCH_PAD=1``. probe17 asks whether the state a run shares is where its workers' buffers land: workers
that start side by side and allocate alike may get alike placements, and a pad of its own size shifts where each
worker's later allocations go. The allocation is said on standard error (the worker's log) and, with
``PRIMBENCH_PAD_LOG``, appended to that file (process id, pages)."""

import os
import random
import sys
import time

if os.environ.get("PRIMBENCH_WORKER"):
    import cupy

    pages = random.Random(os.getpid() * 1_000_003 + time.time_ns()).randint(1, 256) \
        if os.environ.get("PRIMBENCH_PAD") == "1" else 1
    _PAD = cupy.cuda.runtime.malloc(pages * 2 * 1024 * 1024)
    print(f"placement pad: {pages} x 2 MiB", file=sys.stderr, flush=True)
    if log := os.environ.get("PRIMBENCH_PAD_LOG"):
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {pages}\n")
