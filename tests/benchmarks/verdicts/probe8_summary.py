"""The eighth pilot's record (h200_probe8.sh, h200_profile8.sh; files in h200/probe8/): each
clock_probe.py burst's SM clock (SM 0's cycles over the global timer), NVML's reading, and the
compute-bound and memory-bound kernels' times; then the wall time of each run and a worker's turn.

    python3 tests/benchmarks/verdicts/probe8_summary.py > tests/benchmarks/verdicts/probe8.txt
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent / "h200" / "probe8"
PARTS = {"A": "12 fresh processes, one after another",
         "B": "10 fresh processes, 3 s idle before each",
         "C": "10 fresh processes while a keeper process holds a CUDA context",
         "D": "one process, bursts after 0 / 0.3 / 1 / 3 s idle, 4 times",
         "F": "12 fresh processes, one after another, after the runs of E"}


def main() -> None:
    print("# What sets a run's SM clock regime, and where a --processes run's time goes (h200/probe8)\n")
    print((HERE / "gpu.txt").read_text().strip().splitlines()[-1], "\n")
    regimes: list[float] = []
    for part, what in PARTS.items():
        print(f"## {part}: {what}\n")
        print("| burst | idle before (s) | SM clock (cycles / timer, MHz) | NVML SM clock | FMA loop (us) "
              "| 64 MiB copy (us) |")
        print("|---|---|---|---|---|---|")
        for line in (HERE / f"{part}.jsonl").read_text().splitlines():
            r = json.loads(line)
            regimes.append(r["sm_mhz"])
            gap = r.get("gap", 3.0 if part == "B" else 0.0)
            print(f"| {r['label']} | {gap:g} | {r['sm_mhz']:.1f} | {r['before']['nvml_sm_mhz']} | "
                  f"{r['fma_us']:.2f} | {r['copy_us']:.2f} |")
        print()
    high = [m for m in regimes if m > 1985]
    low = [m for m in regimes if m <= 1985]
    print(f"Bursts at about {statistics.median(high):.1f} MHz: {len(high)}; at about {statistics.median(low):.1f} MHz:"
          f" {len(low)}; ratio {statistics.median(high) / statistics.median(low):.4f}.\n")
    print("## E: wall time of the seventh evaluation's suite at 1 MiB\n")
    print("| run | specializations | wall (s) | start until the first worker measures (s) | each worker's turn (s) |")
    print("|---|---|---|---|---|")
    for line in (HERE / "steps.txt").read_text().splitlines():
        m = re.match(r"\d+ s: (p\d-\w+-?\d?): ([\d.]+) s wall", line)
        if not m:
            continue
        label, wall = m.group(1), float(m.group(2))
        text = (HERE / f"wall-{label}.txt").read_text().splitlines()
        stamps = [(float(t.split()[0]), t) for t in text if t.strip()]
        measuring = [t for t, s in stamps if "measuring (" in s]
        finished = [t for t, s in stamps if re.search(r"process \d: finished", s)]
        turns = ", ".join(f"{b - a:.2f}" for a, b in zip(measuring, finished, strict=True))
        count = 8 if "all" in label else 2
        first = measuring[0] if measuring else float("nan")
        print(f"| {label} | {count} | {wall:.2f} | {first:.2f} | {turns or '-'} |")
    print("\n## A worker's turn under cProfile (h200_profile8.sh: one process with a worker's settings, 1 MiB)\n")
    for name in ("worker-1-profile.txt", "worker-2-profile.txt"):
        text = (HERE / name).read_text()
        for key in ("nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetDefaultApplicationsClock",
                    "builtins.compile", "streamSynchronize", "primbench/state.py:200(run)"):
            hit = next((ln for ln in text.splitlines() if key in ln), None)
            if hit:
                calls, tottime, _, cumtime = hit.split()[:4]
                print(f"- {name}: `{key}`: {calls} calls, {tottime} s own, {cumtime} s with callees")
    for name in ("plain-1.log", "plain-2.log"):
        print(f"- {name} (no profiler): {(HERE / name).read_text().strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
