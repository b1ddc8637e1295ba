"""What data11's p16r4 64 MiB A/A files show between files that the clock within them does not (descriptive,
in sample; written after `clock_within_splits.txt` found 8 of 70 two-file splits failing there with 17f1c2c's
step, all on the Triton LayerNorm backward at 256). Per kernel, its file means (ln GPU time per call) about the
suite (each file's mean over the kernels taken out) against the file's mean SM clock and the file's place in the
collection; then, over the 70 splits `calibration16.split_pairs` judges, how the LayerNorm kernel's change
follows the sides' clocks apart and their places apart; and which splits fail.

    python tests/benchmarks/verdicts/clock_between_files11.py > tests/benchmarks/verdicts/clock_between_files11.txt
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402

FOLDER = HERE / "h200" / "data11" / "p16r4" / "64MiB"
KERNEL = "triton.ln_bwd.256"


def _residual(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    design = np.column_stack([x, np.ones_like(x)])
    return y - design @ np.linalg.lstsq(design, y, rcond=None)[0]


def main() -> None:
    files = sorted(FOLDER.glob("aa-*.json"), key=lambda f: int(f.stem.split("-")[1]))
    values: dict[str, list[float]] = {}
    clocks = []
    for f in files:
        doc = json.loads(f.read_text())
        samples = []
        for s in doc["specializations"]:
            values.setdefault(s["name"], []).append(math.log(s["gpu_seconds_per_call"]))
            samples += [r["sm_clock_mhz"] for r in s["rounds"] if r.get("sm_clock_mhz")]
        clocks.append(float(np.mean(samples)))
    names = list(values)
    x = np.array([values[n] for n in names])
    x = x - x.mean(axis=0)  # about the suite
    x = x - x.mean(axis=1, keepdims=True)
    place = np.arange(len(files), dtype=float)
    clock = np.log(clocks)
    print("# data11 p16r4 64 MiB, A/A files: what moves between files (clock_between_files11.py)\n")
    print("files' mean SM clock (MHz):", ", ".join(f"{f.stem} {c:.0f}" for f, c in zip(files, clocks, strict=True)),
          f"(r with the file's place {np.corrcoef(clock, place)[0, 1]:+.2f})\n")
    print("| kernel (its file means about the suite) | r with the file's clock | r with its place | range |")
    print("|---|---|---|---|")
    order = np.argsort([-abs(np.corrcoef(row, clock)[0, 1]) for row in x])
    shown = [int(i) for i in order[:8]] + [i for i, n in enumerate(names) if "ln_bwd" in n and i not in order[:8]]
    for i in shown:
        print(f"| {names[i]} | {np.corrcoef(x[i], clock)[0, 1]:+.2f} | {np.corrcoef(x[i], place)[0, 1]:+.2f} "
              f"| {100 * (x[i].max() - x[i].min()):.2f} % |")
    k = next(i for i, n in enumerate(names) if KERNEL in n)
    splits = [(b, h) for b in itertools.combinations(range(len(files)), 2)
              for h in itertools.combinations(range(len(files)), 2) if not set(b) & set(h)][:70]
    rows = np.array([(clock[list(h)].mean() - clock[list(b)].mean(), place[list(h)].mean() - place[list(b)].mean(),
                      x[k][list(h)].mean() - x[k][list(b)].mean()) for b, h in splits])
    print(f"\nOver the {len(splits)} splits, {KERNEL}'s change about the suite: r with the sides' clocks apart "
          f"{np.corrcoef(rows[:, 0], rows[:, 2])[0, 1]:+.2f}, with their places apart "
          f"{np.corrcoef(rows[:, 1], rows[:, 2])[0, 1]:+.2f}; partial r of the clock given the place "
          f"{np.corrcoef(_residual(rows[:, 0], rows[:, 1]), _residual(rows[:, 2], rows[:, 1]))[0, 1]:+.2f}, "
          f"of the place given the clock "
          f"{np.corrcoef(_residual(rows[:, 1], rows[:, 0]), _residual(rows[:, 2], rows[:, 0]))[0, 1]:+.2f}\n")
    loaded = [load_side(f) for f in files]
    print("Splits that exit 1 (base files / head files: their mean clocks, the rows flagged):")
    for b, h in splits:
        c = compare_runs([r for i in b for r in loaded[i]], [r for i in h for r in loaded[i]])
        if c.failed():
            flagged = ", ".join(f"{r.name} {100 * r.relative_change:+.2f} %" for r in c.rows
                                if r.verdict.value in ("regression", "improvement"))
            print(f"- {'+'.join(files[i].stem for i in b)} ({np.mean([clocks[i] for i in b]):.0f} MHz) / "
                  f"{'+'.join(files[i].stem for i in h)} ({np.mean([clocks[i] for i in h]):.0f} MHz): {flagged}")


if __name__ == "__main__":
    main()
