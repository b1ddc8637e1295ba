"""The table of `cpu_probe.txt` from `h200/cpu/cpu-*.json` (`cpu_probe.py`'s files).

    python tests/benchmarks/variance/cpu_probe_summary.py [DIR] > tests/benchmarks/variance/cpu_probe.txt

Per process (in the order run): the CPUs it was pinned to, the CPU it started CUDA on, its shift (the
median over kernels of its mean ln time against the median process, %), and per stream group the
mean of its streams' shifts; then, per kernel, the spread of streams within a process against the
spread of the per-group means (a group of creation that set the state would show the second large).
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path

import numpy as np


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("h200") / "cpu"
    files = sorted(folder.glob("cpu-*.json"), key=lambda f: int(f.stem.split("-")[1]))  # by process id: run order
    docs = [json.loads(f.read_text()) for f in files]
    keys = sorted({(r["kernel"], r["size"]) for r in docs[0]["rows"]})
    for d in docs:
        by = collections.defaultdict(list)
        for r in d["rows"]:
            by[(r["kernel"], r["size"], r["stream"])].append(np.log(r["ms"]))
        d["by"] = {k: float(np.mean(v)) for k, v in by.items()}
    med = {k: float(np.median([v for d in docs for kk, v in d["by"].items() if kk[:2] == k])) for k in keys}
    groups = len(docs[0]["groups"])
    print(f"GPU {docs[0]['gpu'].get('uuid')}; {len(docs)} processes; stream groups (CPUs): {docs[0]['groups']}\n")
    made = " | ".join(f"streams made on g{g} %" for g in range(groups))
    print(f"| pin | CUDA started on CPU | process shift % | {made} |")
    print("|---|---|---|" + "---|" * groups)
    for d in docs:
        dev = {k: {s: (v - med[k[:2]]) * 100 for k2, v in d["by"].items() if k2[:2] == k[:2] for s in [k2[2]]}
               for k in keys}
        shift = statistics.median(float(np.mean(list(dev[k].values()))) for k in keys)
        per_group = [statistics.median(float(np.mean([x for s, x in dev[k].items() if s.startswith(f"g{g}")]))
                                       for k in keys) for g in range(groups)]
        print(f"| {d['pin'] or 'none'} | {d['cuda_cpu']} | {shift:+.2f} | " + " | ".join(f"{x:+.2f}" for x in per_group)
              + " |")
    print("\n| kernel | SD of streams within a process % | SD of group means within a process % | "
          "SD of process means % |")
    print("|---|---|---|---|")
    for k in keys:
        within, between, proc = [], [], []
        for d in docs:
            xs = {s: v * 100 for (n, z, s), v in d["by"].items() if (n, z) == k and s != "own"}
            within.append(float(np.std(list(xs.values()), ddof=1)))
            between.append(float(np.std([np.mean([x for s, x in xs.items() if s.startswith(f"g{g}")])
                                         for g in range(groups)], ddof=1)))
            proc.append(float(np.mean(list(xs.values()))))
        print(f"| {k[0]} @ {k[1] // 1024} KiB | {statistics.median(within):.2f} | {statistics.median(between):.2f} | "
              f"{float(np.std(proc, ddof=1)):.2f} |")


if __name__ == "__main__":
    main()
