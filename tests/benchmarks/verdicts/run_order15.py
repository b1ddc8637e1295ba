"""Descriptive, after the fifteenth evaluation was read (in sample): how far a default-protocol file's second run sits
from its first, per kernel, over a size's A/A labels (workers 0-7 are run 1, 8-15 run 2): a systematic run-order
difference would widen the between-run variance compare sees; the spread is the state each run shares.

    python tests/benchmarks/verdicts/run_order15.py 64MiB 4MiB 1MiB > tests/benchmarks/verdicts/run_order15.txt
"""
import json
import math
import statistics as st
import sys
from pathlib import Path

base = Path("tests/benchmarks/verdicts/h200/data15/default")
for size in sys.argv[1:]:
    diffs = {}
    for f in sorted((base / size).glob("aa-*.json")):
        d = json.loads(f.read_text())
        for s in d["specializations"]:
            if s.get("error"):
                continue
            runs = {0: [], 1: []}
            for r in s["rounds"]:
                t = r.get("gpu_ms_per_call")
                if t is None:
                    continue
                runs[r["process"] // 8].append(math.log(t))
            if runs[0] and runs[1]:
                diffs.setdefault(s["name"], []).append(100 * (st.mean(runs[1]) - st.mean(runs[0])))
    rows = [(n, st.mean(v), st.stdev(v)) for n, v in diffs.items() if len(v) > 2]
    mean_abs = st.median(abs(m) for _, m, _ in rows)
    sd = st.median(s for *_, s in rows)
    print(f"{size}: kernels {len(rows)}; run 2 - run 1 of a file, % of time: median |mean| {mean_abs:.3f}, "
          f"median SD {sd:.3f}; mean > 0 in {sum(m > 0 for _, m, _ in rows)}")
    for n, m, s in sorted(rows, key=lambda x: -abs(x[1]))[:6]:
        print(f"   {n:40s} mean {m:+.3f}  sd {s:.3f}  t {m / (s / math.sqrt(8)):+.1f}")
