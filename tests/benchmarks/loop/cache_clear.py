"""Does clearing only the L2's size before each cold call give the same cold time as
clearing 256 MiB? Measured across sizes and types, hot and cold, beside NVBench.

    python tests/benchmarks/loop/cache_clear.py OUTDIR [--sizes 65536,1048576] [--types char]
        [--repeats 2] [--clears L2,2xL2,256MiB,hot] [--shuffle] [--no-nvbench]

For the copy kernel of char and long long at 64 KiB, 1 MiB, 16 MiB and 128 MiB, measures the
time per call with the harness's own loop (`primbench.measure.measure`, min 0.5 s, window 10)
under four clears: the L2 size, twice the L2 size, 256 MiB (the old default) and none (hot),
the four interleaved and repeated `REPEATS` times; then NVBench's cold and batch (hot) times
of the same kernel (`nvbench_copy.py`, `--timeout 3`). Writes OUTDIR/cache_clear.json and
OUTDIR/cache_clear.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/benchmarks: _copy
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _copy import nvbench_values
from _kernels import copy_call

from primbench.backends import open_device
from primbench.measure import measure

HERE = Path(__file__).resolve().parent
SIZES = [64 << 10, 1 << 20, 16 << 20, 128 << 20]
TYPES = ["char", "long long"]
REPEATS = 2


def nvbench(tname: str, size: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nv.json"
        proc = subprocess.run(
            [sys.executable, str(HERE.parent / "nvbench_copy.py"), "-b", "copy_" + tname.replace(" ", ""),
             "--timeout", "3", "--json", str(path)],
            env={**os.environ, "PB_SIZE": str(size)}, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            return {"error": proc.returncode}
        data = json.loads(path.read_text())
    tags = nvbench_values(data)
    return {"cold_us": tags.get("nv/cold/time/gpu/mean", float("nan")) * 1e6,
            "cold_noise_percent": tags.get("nv/cold/time/gpu/stdev/relative", float("nan")) * 100,
            "cold_cpu_us": tags.get("nv/cold/time/cpu/mean", float("nan")) * 1e6,
            "batch_us": tags.get("nv/batch/time/gpu/mean", float("nan")) * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--types", default=",".join(TYPES))
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--clears", default="L2,2xL2,256MiB,hot")
    ap.add_argument("--shuffle", action="store_true", help="a new random order of the clears in every repeat")
    ap.add_argument("--no-nvbench", action="store_true")
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    probe = open_device(None, monitoring=False)
    l2 = int(probe.context()["gpu"]["l2_cache_bytes"])
    known = {"L2": l2, "1.5xL2": 3 * l2 // 2, "2xL2": 2 * l2, "3xL2": 3 * l2, "256MiB": 256 << 20, "hot": 0}
    clears = {k: known[k] for k in args.clears.split(",")}
    devices = {}
    for name, size in clears.items():
        d = open_device(None, monitoring=False)
        d.prepare(cache_size=size, blocking_timeout_secs=10, slots=64)
        devices[name] = d
    rng = random.Random(1)
    rows = []
    for tname in args.types.split(","):
        for size in (int(x) for x in args.sizes.split(",")):
            fn, moved = copy_call(tname, size)
            row: dict[str, object] = {"type": tname, "size": size, "bytes_moved": moved, "l2_bytes": l2}
            per: dict[str, list[dict[str, float]]] = {k: [] for k in clears}
            order: list[list[str]] = []
            for _ in range(args.repeats):
                names = list(devices)
                if args.shuffle:
                    rng.shuffle(names)
                order.append(names)
                for name in names:
                    dev = devices[name]
                    with dev.activate():
                        m = measure(dev, fn, min_gpu_ms_per_batch=10, min_secs=0.5, noise_timeout_secs=5,
                                    batch_window_size=10, noise_tolerance_percent=1, hot=name == "hot", sync=False)
                    per[name].append({"us_per_call": m.secs_per_call * 1e6, "noise_percent": m.noise_percent,
                                      "host_us_per_call": m.host_secs / m.kernel_calls * 1e6,
                                      "calls_per_batch": m.kernel_calls_per_batch})
            row["primbench"] = per
            row["order"] = order
            row["nvbench"] = {} if args.no_nvbench else nvbench(tname, size)
            rows.append(row)
            print(json.dumps(row), flush=True)
    for d in devices.values():
        d.close()
    (out / "cache_clear.json").write_text(json.dumps(rows, indent=1))
    text = render(rows)
    (out / "cache_clear.md").write_text(text)
    print(text)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def render(rows: list[dict]) -> str:
    names = list(rows[0]["primbench"])
    lines = ["GPU µs per call, mean of the repeats (half the spread between repeats), by bytes cleared before each "
             "call; host µs per timed call in brackets for the cold ones. Then NVBench cold and batch (hot), and each "
             "cold clear against 256 MiB and against NVBench cold.", "",
             "| type | size | " + " | ".join(names)
             + " | NVBench cold | NVBench batch | vs 256 MiB | vs NVBench cold |",
             "|---|---|" + "---|" * len(names) + "---|---|---|---|"]
    for r in rows:
        cells, mean = [], {}
        for n in names:
            v = [x["us_per_call"] for x in r["primbench"][n]]
            h = statistics.mean(x["host_us_per_call"] for x in r["primbench"][n])
            mean[n] = statistics.mean(v)
            spread = (max(v) - min(v)) / mean[n] * 100
            cells.append(f"{mean[n]:.3f} (±{spread / 2:.2f} %)" + ("" if n == "hot" else f" [{h:.0f}]"))
        nv = r["nvbench"]
        cold = [n for n in names if n != "hot"]
        vs256 = ", ".join(f"{n} {(mean[n] / mean['256MiB'] - 1) * 100:+.2f} %" for n in cold
                          if n != "256MiB" and "256MiB" in mean)
        vsnv = ", ".join(f"{n} {(mean[n] / nv['cold_us'] - 1) * 100:+.2f} %" for n in cold) if "cold_us" in nv else "–"
        lines.append(f"| {r['type']} | {_size(r['size'])} | " + " | ".join(cells)
                     + f" | {nv.get('cold_us', float('nan')):.3f} | {nv.get('batch_us', float('nan')):.3f}"
                     + f" | {vs256 or '–'} | {vsnv} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
