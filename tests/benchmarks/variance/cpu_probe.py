"""Does the CPU a process (or a stream) starts on set its state? (issue "Verdicts that speak", step 1; tuning data)

The fourth evaluation found identical processes in two states 2.5-3.5 % apart at 64 KiB-1 MiB, shared
by every kernel of a process, and `state_carriers.py` found that a stream keeps a state of its own
while it lives (about 40 % of streams slow). Both are set once, when a context or a stream is made.
One thing that is set then and that small kernels would feel is where the driver puts the
stream's command queue: in host memory, near the CPU the creating thread ran on. This script asks
whether the CPU group a process is pinned to, or a stream is made from, predicts its state.

One process: optionally pinned (``--pin 0-3``) before CUDA starts; then, for every group of the
allowed CPUs (``--groups`` of equal size, in CPU order), the thread is pinned to the group while
STREAMS streams are made, then pinned back. Each kernel (64 KiB and 1 MiB tuning kinds, as in
`state_carriers.py`) is measured on each stream and on the device's own stream in PASSES passes of
random order, BATCHES batches of cold calls each, under the harness's per-call protocol
(`primbench.measure.timed_calls`).

    python3 tests/benchmarks/variance/cpu_probe.py --out DIR [--pin 0-3] [--groups 4] [--quick]

writes DIR/cpu-<pid>.json: the process's pin, the CPU it started CUDA on, its groups and every
batch's mean ms per call with its kernel, size, stream, stream's group and pass.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

STREAMS = 3
PASSES = 2
BATCHES = 2


def cpu_list(text: str) -> list[int]:
    """'0-3,8' -> [0, 1, 2, 3, 8]."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def current_cpu() -> int:
    return int(ctypes.CDLL(None).sched_getcpu())


def carriers_module() -> Any:
    path = Path(__file__).with_name("state_carriers.py")
    spec = importlib.util.spec_from_file_location("state_carriers", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--pin", default="", help="CPUs to pin the whole process to before CUDA starts")
    ap.add_argument("--groups", type=int, default=4, help="groups of the allowed CPUs to make streams from")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.pin:
        os.sched_setaffinity(0, cpu_list(args.pin))
    allowed = sorted(os.sched_getaffinity(0))
    start_cpu = current_cpu()
    sc = carriers_module()
    import cupy

    from primbench.backends import open_device
    from primbench.measure import timed_calls
    from primbench.settings import effective_cache_size

    device = open_device(None, monitoring=False)
    l2 = int(device.props.get("l2CacheSize", 0)) or None
    device.prepare(cache_size=effective_cache_size(None, l2), blocking_timeout_secs=5.0, slots=64)
    cuda_cpu = current_cpu()
    # all CPUs of the machine's cpuset, in groups, even when the process is pinned to fewer
    every = sorted(int(c) for c in cpu_list(Path("/sys/fs/cgroup/cpuset.cpus.effective").read_text().strip())) \
        if Path("/sys/fs/cgroup/cpuset.cpus.effective").exists() else allowed
    k = max(1, len(every) // args.groups)
    groups = [every[i:i + k] for i in range(0, len(every), k)][: args.groups]
    streams: list[tuple[str, int, Any]] = [("own", -1, None)]
    for g, cpus in enumerate(groups):
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            continue
        for j in range(STREAMS):
            streams.append((f"g{g}s{j}", g, cupy.cuda.Stream(non_blocking=True)))
        os.sched_setaffinity(0, allowed)
    rng = np.random.default_rng(os.getpid())
    plan = [(64 << 10, ("copy_char", "cp.sum", "torch.sum", "cp.add")), (1 << 20, ("cp.add", "sgemv"))]
    passes = PASSES
    if args.quick:
        plan, passes = [(64 << 10, ("copy_char", "torch.sum"))], 1
    swap = sc.Carriers(device)
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for size, names in plan:
        fns = sc.kernels(size)
        for name in names:
            with device.activate():
                f0 = fns[name](device._stream)
                f0()
                device.synchronize_device()
                calls = sc.calls_for(device, f0)
            for p in range(passes):
                for i in rng.permutation(len(streams)).tolist():
                    label, g, s = streams[i]
                    old = swap.use({"_stream": s, "_stream_ptr": s.ptr}) if s is not None else None
                    try:
                        with device.activate():
                            fn = fns[name](device._stream)
                            fn()
                            device.synchronize_device()
                            for b in range(BATCHES):
                                ms = timed_calls(device, fn, calls, hot=False, block=True)
                                rows.append({"kernel": name, "size": size, "stream": label, "group": g, "pass": p,
                                             "batch": b, "calls": calls, "ms": float(np.mean(ms))})
                    finally:
                        if old is not None:
                            swap.use(old)
            print(f"{name} @ {size}: {time.time() - t0:.0f} s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"pin": args.pin, "allowed": allowed, "start_cpu": start_cpu, "cuda_cpu": cuda_cpu, "groups": groups,
           "gpu": device.context().get("gpu", {}), "rows": rows}
    (out / f"cpu-{os.getpid()}.json").write_text(json.dumps(doc))
    device.close()


if __name__ == "__main__":
    main()
