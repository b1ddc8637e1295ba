"""How far whole runs of the twelfth collection sit apart beyond what their workers predict, per kernel
(in sample: read after `evaluate12.txt`, to describe its 4 MiB failures, not to choose anything).

    python tests/benchmarks/verdicts/run_states12.py > tests/benchmarks/verdicts/run_states12.txt
    python tests/benchmarks/verdicts/run_states12.py --data tests/benchmarks/verdicts/h200/data13 --designs p8r2x2 \
        4MiB 1MiB > tests/benchmarks/verdicts/run_states13.txt  (the thirteenth collection, read after evaluate13.txt)

For each size and design, over the A/A files: each kernel's run mean (the mean over a file's workers of their
measured rounds' mean ln time), the SD of those run means, and the SD a run mean would have if runs differed
only as their workers do (the workers' SD about their run's mean over the root of their count). Their ratio is
about 1 where a run shares no state beyond its workers; the run state's SD is what exceeds it. Also each run's
mean SM clock, and (two files a label) how far a label's two files sit apart against two labels' files.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics as st
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from primbench.rounds import measured_rounds

DATA = Path(__file__).resolve().parent / "h200" / "data12"


def worker_means(path: Path) -> tuple[dict[str, list[float]], float]:
    """Each kernel's workers' means of ln(time) over their measured rounds (the first of 4 is a warm-up), and
    the run's mean SM clock."""
    doc = json.loads(path.read_text())
    out: dict[str, list[float]] = {}
    clocks = []
    for s in doc["specializations"]:
        by: dict[int, list[float]] = {}
        for r in s.get("rounds", []):
            by.setdefault(r["process"], []).append(r)
            if r.get("sm_clock_mhz"):
                clocks.append(r["sm_clock_mhz"])
        name = s["name"].split(",")[0].removeprefix("op: ")
        out[name] = [st.fmean(math.log(r["gpu_ms_per_call"]) for r in ordered[measured_rounds(len(ordered))])
                     for rs in by.values() if len(ordered := sorted(rs, key=lambda r: r["round"])) > 1]
    return out, st.fmean(clocks)


def kernel_spreads(runs: list[dict[str, list[float]]]) -> dict[str, tuple[float, float]]:
    """Each kernel's SD of the runs' means (a run's: the mean of its workers') and the SD a run's mean would have
    if runs differed only as their workers do (the workers' SD about their run's mean over the root of their
    count, averaged over the runs), in ln units."""
    out = {}
    for k in sorted(runs[0]):
        means = [st.fmean(w[k]) for w in runs]
        out[k] = (st.stdev(means), st.fmean(st.stdev(w[k]) / math.sqrt(len(w[k])) for w in runs))
    return out


#: Each design's folder and the files a label has.
DESIGNS = {"p16r4": ["p1"], "p8r4x2": ["p1", "p2"], "p8r2x2": ["p1", "p2"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", default=["4MiB", "1MiB"])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--designs", default="p16r4,p8r4x2", help="comma-separated: " + ", ".join(DESIGNS))
    args = ap.parse_args()
    for size in args.sizes:
        for design in args.designs.split(","):
            files = DESIGNS[design]
            d = args.data / design / size
            labels = sorted({f.name.split("-p")[0] for f in d.glob("aa-*-p1.json")})
            runs = {(lab, p): worker_means(d / f"{lab}-{p}.json") for lab in labels for p in files
                    if (d / f"{lab}-{p}.json").exists()}
            kernels = sorted(next(iter(runs.values()))[0])
            print(f"## {size}, {design}: {len(runs)} A/A runs ({', '.join(f'{a}-{b}' for a, b in runs)})")
            print("run mean SM clock (MHz): " + ", ".join(f"{c:.1f}" for _, c in runs.values()))
            print(f"{'kernel':34} {'SD of run means':>16} {'workers predict':>16} {'ratio':>6} {'run state SD':>13}"
                  + ("  within label / across labels" if len(files) == 2 else ""))
            spreads = kernel_spreads([w for w, _ in runs.values()])
            for k in kernels:
                sd, predicted = spreads[k]
                state = math.sqrt(max(sd * sd - predicted * predicted, 0.0))
                extra = ""
                if len(files) == 2:
                    by_label = {lab: [st.fmean(runs[(lab, p)][0][k]) for p in files] for lab in labels}
                    within = st.fmean(abs(a - b) for a, b in by_label.values())
                    across = st.fmean(abs(by_label[a][0] - by_label[b][1]) for a in labels for b in labels if a != b)
                    extra = f"  {within * 100:.2f} % / {across * 100:.2f} %"
                print(f"{k:34} {sd * 100:15.2f}% {predicted * 100:15.2f}% {sd / predicted:6.1f} {state * 100:12.2f}%"
                      + extra)
            print()


if __name__ == "__main__":
    main()
