"""What two-side designs of `--processes` runs could reach within the wall, projected from the thirteenth
evaluation's A/A runs (in sample, descriptive: it chooses nothing; probe15 measures the design it points to).

    python tests/benchmarks/verdicts/design_bound13.py > tests/benchmarks/verdicts/design_bound13.txt
    python tests/benchmarks/verdicts/design_bound13.py --data tests/benchmarks/verdicts/h200/data14 \
        > tests/benchmarks/verdicts/design_bound14.txt   (the sizes that collection holds)

Per size and kernel, from the A/A files of data13 / data13b (two p8r2 files a label): the workers' own SD (a
worker's mean about its run's, `run_states12.kernel_spreads` times the root of 8) and the run state's SD (what the
runs' means spread beyond what their workers predict, 0 where they do not); compare's reported detectable change
of two files a side (the median over ordered A/A pairs of adjacent labels). A design of R runs of K workers a side
is projected to report that detectable change times sqrt(v(K, R) / v(8, 2)), v = run^2 / R + worker^2 / (R K): the
method's own calibration carried over, the workers' SD taken as unchanged whatever each one measures (optimistic
where a worker measures less). Its wall a specialization: R (S / N + K t), S the time to a run's first turn, t a
worker's turn a specialization (both from the runs' logs: medians), N the suite's specializations (24; 100 for a
larger suite), in two variants of t: each worker measuring as in p8r2 (0.25 s / 8 a specialization: `--min-secs`
grows with K), or `--min-secs 0.25` split K ways (t less 0.25 / 8 plus 0.25 / K).
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from run_states12 import kernel_spreads, worker_means  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402

SETS = {"64KiB": HERE / "h200" / "data13b", "1MiB": HERE / "h200" / "data13", "4MiB": HERE / "h200" / "data13",
        "64MiB": HERE / "h200" / "data13b"}
TARGET = {"64KiB": None, "1MiB": 0.01, "4MiB": 0.01, "64MiB": 0.005}
MEASURED = 0.25 / 8  # a p8r2 worker's measured seconds a specialization


def labels(folder: Path) -> list[str]:
    return [f"aa-{k}" for k in range(1, 9) if all((folder / f"aa-{k}-p{j}.json").is_file() for j in (1, 2))]


def timing(folder: Path, names: list[str]) -> tuple[float, float]:
    """Medians over the A/A runs' logs: seconds to the first turn, and a worker's turn over the suite."""
    starts, turns = [], []
    for name in names:
        for j in (1, 2):
            text = (folder / f"{name}-p{j}.log").read_text()
            begun = [float(t) for t in re.findall(r"measuring \(\d+ of \d+\) at ([\d.]+) s", text)]
            ended = [float(t) for t in re.findall(r"finished at ([\d.]+) s", text)]
            if begun and ended:
                starts.append(begun[0])
                turns.append((max(ended) - begun[0]) / len(begun))
    return st.median(starts), st.median(turns)


def detectable(folder: Path, names: list[str]) -> dict[str, float]:
    """Each kernel's median reported detectable change over the ordered pairs of adjacent A/A labels."""
    sides = {n: [r for j in (1, 2) for r in load_side(folder / f"{n}-p{j}.json")] for n in names}
    seen: dict[str, list[float]] = {}
    for a, b in itertools.pairwise(names):
        for base, head in ((a, b), (b, a)):
            for row in compare_runs(sides[base], sides[head]).rows:
                if row.min_detectable_change is not None:
                    seen.setdefault(row.name.split(",")[0].removeprefix("op: "), []).append(row.min_detectable_change)
    return {k: st.median(v) for k, v in seen.items()}


def chosen_sets(description: str, default_name: str) -> tuple[dict[str, Path], str]:
    """The command line's ``--data``: each size's collection (`SETS` unless another collection of p8r2x2/SIZE
    folders is given, then the sizes it holds) and the name to print for it (`default_name` for `SETS`)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", type=Path, help="another collection of p8r2x2/SIZE folders (default: data13 and data13b)")
    args = ap.parse_args()
    if args.data is None:
        return SETS, default_name
    return {s: args.data for s in SETS if (args.data / "p8r2x2" / s).is_dir()}, args.data.name


def main() -> None:
    sets, which = chosen_sets(__doc__.splitlines()[0], "data13 / data13b")
    print(f"# Designs of R runs of K workers a side, projected from {which} (in sample, descriptive)\n")
    for size, data in sets.items():
        folder = data / "p8r2x2" / size
        names = labels(folder)
        runs = [worker_means(folder / f"{n}-p{j}.json")[0] for n in names for j in (1, 2)]
        spreads = kernel_spreads(runs)
        parts = {k: (max(0.0, sd * sd - pred * pred), (pred * math.sqrt(8)) ** 2) for k, (sd, pred) in spreads.items()}
        reported = detectable(folder, names)
        start, turn = timing(folder, names)
        n_spec = len(parts)
        per_spec = turn / n_spec
        print(f"## {size} ({len(runs)} A/A runs; target {TARGET[size] * 100 if TARGET[size] else '-'} %)\n")
        print(f"A run: {start:.1f} s to its first turn, a worker's turn {turn:.2f} s ({per_spec * 1000:.1f} ms a "
              f"specialization, {MEASURED * 1000:.1f} ms of it measured). Median over kernels: workers' own SD "
              f"{st.median(math.sqrt(w) for _, w in parts.values()) * 100:.2f} %, run state's SD "
              f"{st.median(math.sqrt(r) for r, _ in parts.values()) * 100:.2f} %, reported detectable (two p8r2 "
              f"a side) {st.median(reported.values()) * 100:.2f} %.\n")
        print("| design a side | wall a spec, 24 specs (t as p8r2 / --min-secs 0.25 split) | wall, 100 specs | "
              "median detectable (projected) |")
        print("|---|---|---|---|")
        for r_runs, k in ((1, 8), (1, 16), (2, 8), (2, 12), (2, 16), (3, 8), (3, 12), (4, 8), (2, 32)):
            def wall(n: int, split: bool, r_runs: int = r_runs, k: int = k, start: float = start,
                     per_spec: float = per_spec) -> float:
                t = per_spec - MEASURED + (0.25 / k if split else MEASURED)
                return r_runs * (start / n + k * t)

            proj = [reported[name] * math.sqrt((run / r_runs + w / (r_runs * k)) / (run / 2 + w / 16))
                    for name, (run, w) in parts.items() if name in reported]
            print(f"| {r_runs} x p{k}r2 | {wall(n_spec, False):.2f} / {wall(n_spec, True):.2f} s | "
                  f"{wall(100, False):.2f} / {wall(100, True):.2f} s | {st.median(proj) * 100:.2f} % |")
        print()


if __name__ == "__main__":
    main()
