"""The part the workers of one `--processes` run share, and the SM clock (sixth evaluation, `h200/data6`).

    python tests/benchmarks/verdicts/clock_regimes.py > tests/benchmarks/verdicts/clock_regimes.txt

`calibration6.txt` found the run means of a kernel (relative to the suite) spreading 1.28-1.44x what
4 independent processes predict. Here: each run's SM clock (every worker's measured rounds), each
kernel's run means relative to the suite regressed on the run's ln(clock), and the part shared by a
run's workers before and after the clock is taken out (excess of the run means' variance over the
workers' spread over 4; pooled over the kernel-size cells, with its effective degrees of freedom).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import statistics as st
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.rounds import measured_rounds  # noqa: E402

DATA = HERE / "h200" / "data6"


def runs_of(size: str) -> list[tuple[dict[int, dict[str, float]], dict[int, float]]]:
    """Each A/A run: every worker's mean ln(time per call) per kernel, and its mean SM clock."""
    out = []
    files = [f for f in (DATA / size).glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name)]
    for f in sorted(files, key=lambda p: int(p.stem.split("-")[1])):
        per: dict[int, dict[str, float]] = collections.defaultdict(dict)
        clocks: dict[int, list[float]] = collections.defaultdict(list)
        for s in json.loads(f.read_text())["specializations"]:
            if s.get("error"):
                continue
            by: dict[int, list[dict]] = collections.defaultdict(list)
            for r in s["rounds"]:
                by[r["process"]].append(r)
            for p, rs in by.items():
                m = rs[measured_rounds(len(rs))]
                name = s["name"].split(",")[0].removeprefix("op: ")
                per[p][name] = st.fmean(math.log(r["gpu_ms_per_call"]) for r in m)
                clocks[p] += [r["sm_clock_mhz"] for r in m if r.get("sm_clock_mhz")]
        out.append((dict(per), {p: st.fmean(v) for p, v in clocks.items()}))
    return out


def main() -> None:
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="a collection of --processes files (default data6)")
    ap.add_argument("--sizes", default="1MiB,4MiB")
    args = ap.parse_args()
    DATA = args.data
    print(f"# The part one run's workers share, and the SM clock ({DATA.name}, `--processes 4`; clock_regimes.py)\n")
    excess_before, excess_after, variances, slopes = [], [], [], []
    for size in args.sizes.split(","):
        runs = runs_of(size)
        names = list(runs[0][0][0])
        print(f"## {size}\n\nEach run's workers' mean SM clock (MHz): "
              + "; ".join(", ".join(f"{c:.0f}" for c in pc.values()) for _, pc in runs) + "\n")
        x, y, w = [], collections.defaultdict(list), collections.defaultdict(list)
        for per, pc in runs:
            rel = {p: {n: per[p][n] - st.fmean(per[p].values()) for n in names} for p in per}
            x.append(math.log(st.fmean(pc.values())))
            for n in names:
                y[n].append(st.fmean(rel[p][n] for p in rel))
                w[n].append(st.variance([rel[p][n] for p in rel]) / len(rel))
        xc = np.array(x) - np.mean(x)
        print("| kernel | slope d ln(time rel. suite) / d ln(clock) | run means' variance | after the clock | "
              "the workers predict |\n|---|---|---|---|---|")
        for n in names:
            yc = np.array(y[n]) - np.mean(y[n])
            b = float(xc @ yc / (xc @ xc))
            res = yc - b * xc
            vt, vr, vp = float(np.var(yc, ddof=1)), float(res @ res / (len(yc) - 2)), float(np.mean(w[n]))
            slopes.append(b)
            excess_before.append(vt - vp)
            excess_after.append(vr - vp)
            variances.append(2 * vt**2 / (len(yc) - 1) + 2 * vp**2 / (len(yc) * 3))
            print(f"| {n} | {b:+.2f} | {vt * 1e6:.1f}e-6 | {vr * 1e6:.1f}e-6 | {vp * 1e6:.1f}e-6 |")
        print()
    m = len(excess_before)
    e0, e1 = st.fmean(excess_before), st.fmean(excess_after)
    df = 2 * e0 * e0 / (sum(variances) / m**2)
    print(f"Over the {m} kernel-size cells: the slopes' SD {st.stdev(slopes):.2f} (their own noise included); the part "
          f"the workers of a run share {e0 * 1e6:.2f}e-6 (SD {math.sqrt(max(e0, 0)) * 100:.3f} %, about {df:.1f} "
          f"effective df) before the clock is taken out, {e1 * 1e6:.2f}e-6 (SD {math.sqrt(max(e1, 0)) * 100:.3f} %) "
          f"after: the clock regime is {100 * (1 - e1 / e0):.0f} % of it.")


if __name__ == "__main__":
    main()
