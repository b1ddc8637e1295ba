"""Is compare's standard error right for a `--processes 4` file a side? On the sixth evaluation's
A/A files (`h200/data6`, H100), per kernel: the standard error compare reports for ln(head/base)
relative to the suite (median over the 56 ordered A/A pairs), against the spread those pairs
really show (the SD of compare's own relative change over the pairs, which for identical code
should match the reported standard error), and the variance parts behind it measured directly
from the files: each process's mean over its measured rounds relative to the mean of all
kernels in that process (the suite's shift taken out, as compare's relative test does), its SD
between the processes of one run, and the SD of the run means against what the processes alone
predict (SD / 2).

    python tests/benchmarks/verdicts/calibration6.py > tests/benchmarks/verdicts/calibration6.txt

The same for the fifth evaluation's runs (`h200/data5`, H200: a run is 4 separate processes started
one after another by a shell loop, 4 files a side), to tell the protocol's own part from the card's.
A diagnosis written after the evaluation (`evaluate6.txt`); it changes no method.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.rounds import measured_rounds  # noqa: E402

DATA = HERE / "h200" / "data6"
DATA5 = HERE / "h200" / "data5"


def process_means(f: Path) -> dict[int, dict[str, float]]:
    """Each process's mean ln(time per call) over its measured rounds (`measured_rounds`: from 4 on,
    the first is a warm-up), per kernel."""
    per: dict[int, dict[str, list[float]]] = {}
    for s in json.loads(f.read_text())["specializations"]:
        if s.get("error"):
            continue
        for r in s["rounds"]:
            per.setdefault(r.get("process", 0), {}).setdefault(s["name"], []).append(math.log(r["gpu_ms_per_call"]))
    return {p: {n: st.fmean(v[measured_rounds(len(v))]) for n, v in ks.items()} for p, ks in per.items()}


def merged(files: list[Path]) -> dict[int, dict[str, float]]:
    """A run of several single-process files (data5's aa-K-pJ.json) as `process_means` gives a
    `--processes` file: process j-1 from file j."""
    return {j: process_means(f)[0] for j, f in enumerate(files)}


def sides(size: str) -> tuple[str, list[list[Path]]]:
    """The A/A runs of a size, each as its files: data6's one `--processes 4` file, data5's 4 files."""
    files = sorted((f for f in (DATA / size).glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name)),
                   key=lambda p: int(p.stem.split("-")[1]))
    if files:
        return f"one `--processes` file a run ({DATA.name}, {card(files[0])})", [[f] for f in files]
    runs = sorted({int(f.stem.split("-")[1]) for f in (DATA5 / size).glob("aa-*-p*.json")})
    return ("4 separate processes a run, one after another (data5, H200)",
            [[DATA5 / size / f"aa-{k}-p{j}.json" for j in range(1, 5)] for k in runs])


def card(f: Path) -> str:
    """The GPU a results file was measured on (H100, H200)."""
    name = json.loads(f.read_text())["context"]["general"]["gpu"]["name"]
    return m.group(0) if (m := re.search(r"[A-Z]\d{3}", name)) else name


def main(argv: list[str] | None = None) -> None:
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="a collection of --processes files (default data6)")
    ap.add_argument("--sizes", default="1MiB,4MiB,64KiB,256KiB,2MiB",
                    help="its sizes, then data5's (separate processes) where it has none")
    args = ap.parse_args(argv)
    DATA = args.data
    print("# compare's standard error against the spread of identical runs, every process of a run a side "
          "(tests/benchmarks/verdicts/calibration6.py)\n")
    for size in args.sizes.split(","):
        protocol, aa = sides(size)
        runs = [process_means(r[0]) if len(r) == 1 else merged(r) for r in aa]
        names = sorted(set.intersection(*(set(m) for run in runs for m in run.values())))
        rel: dict[str, list[list[float]]] = {n: [] for n in names}
        for run in runs:
            rows: dict[str, list[float]] = {n: [] for n in names}
            for means in run.values():
                shared = st.fmean(means[n] for n in names)
                for n in names:
                    rows[n].append(means[n] - shared)
            for n in names:
                rel[n].append(rows[n])
        se: dict[str, list[float]] = {n: [] for n in names}
        change: dict[str, list[float]] = {n: [] for n in names}
        df: dict[str, list[float]] = {n: [] for n in names}
        failed = 0
        for a, b in itertools.permutations(aa, 2):
            c = compare_runs([r for f in a for r in load_side(f)], [r for f in b for r in load_side(f)])
            failed += c.failed()
            for row in c.to_dict()["specializations"]:
                if row.get("standard_error") and row.get("relative_change") is not None:
                    se[row["name"]].append(row["standard_error"])
                    change[row["name"]].append(math.log1p(row["relative_change"]))
                    df[row["name"]].append(row["degrees_of_freedom"])
        print(f"## {size}: {protocol}: {len(aa)} A/A runs, {len(aa) * (len(aa) - 1)} ordered pairs, {failed} exit 1\n")
        print("| kernel | compare's SE (median) | SD of compare's relative change over the pairs | ratio | df (median) "
              "| process SD within a run (relative) | run-mean SD | processes alone predict |")
        print("|---|---|---|---|---|---|---|---|")
        for n in names:
            if not se[n]:
                continue
            within = math.sqrt(st.fmean(st.variance(r) for r in rel[n]))
            between = st.stdev(st.fmean(r) for r in rel[n])
            sd_change = st.pstdev(change[n])  # every ordered pair once each way: mean 0 by symmetry
            label = n.split(",")[0].removeprefix("op: ")
            k = len(rel[n][0])  # the processes of a run: 4, or 8 (data8)
            print(f"| {label} | {st.median(se[n]) * 100:.2f} % | {sd_change * 100:.2f} % | "
                  f"{sd_change / st.median(se[n]):.2f} | {st.median(df[n]):.0f} | {within * 100:.2f} % | "
                  f"{between * 100:.2f} % | {within / math.sqrt(k) * 100:.2f} % |")
        runs_var = sum(st.variance([st.fmean(r) for r in rel[n]]) for n in names)
        k = len(rel[names[0]][0])
        procs_var = sum(st.fmean(st.variance(r) for r in rel[n]) / len(rel[n][0]) for n in names)
        print(f"\nPooled over the {len(names)} kernels: the run means' variance is {runs_var / procs_var:.2f}x what "
              f"{k} independent processes predict, a part shared by the processes of one run of SD "
              f"{math.sqrt(max(runs_var - procs_var, 0.0) / len(names)) * 100:.2f} %.\n")


if __name__ == "__main__":
    main()
