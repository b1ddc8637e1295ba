"""The fourteenth and fifteenth probes' reading (probe14-plan.md, probe15-plan.md, each written before its data):
two designs of `--processes` runs on eval_suite12.py: the wall of two runs, a round's own split (results 4.10.0
`rounds[].wall_secs`), and what precision a run's mean has by its workers.

    python tests/benchmarks/verdicts/probe14.py [FOLDER] > tests/benchmarks/verdicts/probe14.txt
    python tests/benchmarks/verdicts/probe14.py tests/benchmarks/verdicts/h200/probe15 --designs p8r2,p16r2 \
        --sizes 4MiB,1MiB > tests/benchmarks/verdicts/probe15.txt

FOLDER (default `h200/probe14`) holds `SIZE/DESIGN/run-K.json` and `timeline.txt` (h200_probe14.sh,
h200_probe15.sh). probe14: p8r4 against p8r2 (`--processes 8 --min-secs 0.25`, 4 and 2 rounds a worker) at 4 MiB
and 64 MiB; probe15: p8r2 against p16r2 (`--processes 16 --rounds 2 --min-secs 0.2`) at 4 MiB and 1 MiB.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.rounds import measured_rounds  # noqa: E402

#: Each probe's designs (the first is the reference) and its plan's rule: (sizes decided on, the wall's limit a
#: specialization of two runs, the largest median SD ratio of the second design over the first, what it chooses).
RULES = {("p8r4", "p8r2"): (("4MiB",), 1.2, 1.1, "p8r2 is the thirteenth evaluation's design", "p8r4 stays"),
         ("p8r2", "p16r2"): (("4MiB", "1MiB"), 1.2, 0.85, "p16r2 is the next evaluation's design", "p8r2 stays")}


def worker_means(doc: dict) -> dict[str, list[float]]:
    """Each kernel's workers' means of ln(time per call) over the rounds compare keeps (`measured_rounds`)."""
    out: dict[str, list[float]] = {}
    for s in doc["specializations"]:
        by: dict[int, list[dict]] = {}
        for r in s.get("rounds") or []:
            by.setdefault(r.get("process", 0), []).append(r)
        name = s["name"].split(",")[0].removeprefix("op: ")
        out[name] = [st.fmean(math.log(r["gpu_ms_per_call"]) for r in rs[measured_rounds(len(rs))])
                     for rs in (sorted(v, key=lambda r: r["round"]) for v in by.values())]
    return out


def split(doc: dict) -> tuple[float, float, float]:
    """A round's setup, warm-up and test, and the harness's part (total less those and the measured batches), ms."""
    parts = [(w["setup"], w["warmup"], w["total"] - w["setup"] - w["warmup"] - r["elapsed_secs"]["host"])
             for s in doc["specializations"] for r in s.get("rounds") or [] if (w := r.get("wall_secs"))]
    if not parts:
        return (math.nan,) * 3
    return tuple(st.fmean(p[i] for p in parts) * 1000 for i in range(3))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="?", default=HERE / "h200" / "probe14")
    ap.add_argument("--designs", default="p8r4,p8r2", help="the reference design, then the one tried")
    ap.add_argument("--sizes", default="4MiB,64MiB")
    args = ap.parse_args()
    designs = tuple(args.designs.split(","))
    first, second = designs
    walls: dict[tuple[str, str], list[float]] = {}
    for line in (args.folder / "timeline.txt").read_text().splitlines():
        if m := re.match(r"(\S+) (p\d+r\d) \d+ exit 0 wall ([\d.]+)", line):
            walls.setdefault((m[1], m[2]), []).append(float(m[3]))
    print(f"# {args.folder.name}: {args.folder}\n")
    spec_wall: dict[tuple[str, str], float] = {}  # (size, design): the wall a specialization of two runs
    sd_ratio: dict[str, float] = {}  # size: the median over kernels of the second design's workers' SD over the first's
    for size in args.sizes.split(","):
        docs = {d: [json.loads(f.read_text()) for f in sorted((args.folder / size / d).glob("run-*.json"))]
                for d in designs}
        if not all(docs.values()):
            print(f"## {size}: not collected\n")
            continue
        print(f"## {size}\n")
        print("| design | runs | wall a spec, two runs | setup / warm-up and test / harness, ms a round "
              "| median per kernel: workers' SD of a run mean | SD of the runs' means |")
        print("|---|---|---|---|---|---|")
        predicted: dict[str, dict[str, float]] = {}
        for d in designs:
            runs = [worker_means(doc) for doc in docs[d]]
            n_spec = len(docs[d][0]["specializations"])
            predicted[d] = {k: st.fmean(st.stdev(w[k]) / math.sqrt(len(w[k])) for w in runs) for k in runs[0]}
            between = {k: st.stdev(st.fmean(w[k]) for w in runs) if len(runs) > 1 else math.nan for k in runs[0]}
            spec_wall[size, d] = 2 * st.median(walls.get((size, d), [math.nan])) / n_spec
            s, w, h = (st.median(x) for x in zip(*(split(doc) for doc in docs[d]), strict=True))
            print(f"| {d} | {len(runs)} | {spec_wall[size, d]:.2f} s | {s:.1f} / {w:.1f} / {h:.1f} "
                  f"| {st.median(predicted[d].values()) * 100:.3f} % | {st.median(between.values()) * 100:.3f} % |")
        ratios = [predicted[second][k] / predicted[first][k] for k in predicted[first] if predicted[first][k] > 0]
        sd_ratio[size] = st.median(ratios)
        print(f"\nMedian over kernels of {second}'s workers' SD of a run mean over {first}'s: {sd_ratio[size]:.2f}\n")
    if designs not in RULES:
        return
    sizes, most_wall, most_ratio, chosen, stays = RULES[designs]
    if all(s in sd_ratio and not math.isnan(spec_wall[s, second]) for s in sizes):
        met = all(spec_wall[s, second] <= most_wall and sd_ratio[s] <= most_ratio for s in sizes)
        read = "; ".join(f"{s}: {spec_wall[s, second]:.2f} s, {sd_ratio[s]:.2f}" for s in sizes)
        print(f"The plan's rule at {' and '.join(sizes)} (two {second} runs <= {most_wall} s a spec; SD ratio <= "
              f"{most_ratio}): {read}: {chosen if met else stays}")
    else:
        print(f"The plan's rule cannot be read: {' or '.join(sizes)} not collected whole")


if __name__ == "__main__":
    main()
