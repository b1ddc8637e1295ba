"""Is a kernel's mean over its workers the best use of them? (in sample, descriptive: it chooses nothing.)

A side's value of a kernel is the mean of its workers' means (each over its measured rounds). Were the workers'
spread heavy-tailed (a few workers far off), a robust location (Huber's M-estimate, psi at 1.5 MADs; a 12.5 %
trimmed mean; the median) would vary less from label to label. Per collection of A/A labels (each label a side,
its two runs' 16 workers together): the SD over labels of each estimate (the labels' suite shift, the median over
kernels, taken out), the median over kernels, and the workers' kurtosis about their kernel's label mean (3 for a
normal spread, under 3 for a light-tailed or two-state one).

    python tests/benchmarks/verdicts/worker_location16.py > tests/benchmarks/verdicts/worker_location16.txt
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.rounds import measured_rounds  # noqa: E402

DATA = HERE / "h200"
SETS = (("data13/p8r2x2", ("4MiB", "1MiB")), ("data13b/p8r2x2", ("64MiB", "64KiB")),
        ("data14/p8r2x2", ("4MiB", "1MiB", "64KiB")), ("data15/default", ("64MiB", "4MiB", "1MiB", "64KiB")))


def workers(files: list[Path]) -> dict[str, list[float]]:
    """Kernel name -> ln of each worker's mean time per call over its measured rounds, every file's workers."""
    out: dict[str, list[float]] = {}
    for f in files:
        for s in json.loads(f.read_text())["specializations"]:
            by: dict[int, list[float]] = {}
            for r in s.get("rounds") or ():
                by.setdefault(r.get("process", 0), []).append(r["gpu_ms_per_call"])
            for times in by.values():
                kept = times[measured_rounds(len(times))]
                out.setdefault(s["name"], []).append(math.log(float(np.mean(kept))))
    return out


def huber(x: np.ndarray, c: float = 1.5) -> float:
    mu = float(np.median(x))
    scale = 1.4826 * float(np.median(np.abs(x - mu))) or 1e-12
    for _ in range(30):
        r = np.abs(x - mu) / scale
        w = np.minimum(1.0, c / np.maximum(r, 1e-12))
        mu = float(np.sum(w * x) / np.sum(w))
    return mu


def trimmed(x: np.ndarray, share: float = 0.125) -> float:
    x = np.sort(x)
    k = int(len(x) * share)
    return float(x[k:len(x) - k].mean())


ESTIMATES: dict[str, Callable[[np.ndarray], float]] = {
    "mean": lambda x: float(np.mean(x)), "Huber": huber, "trimmed 12.5 %": trimmed,
    "median": lambda x: float(np.median(x))}


def labels(folder: Path) -> list[list[Path]]:
    """Each A/A label's files: LABEL-p1 and -p2 (two files a label), or the one default-protocol file."""
    two = sorted({m.group(1) for f in folder.glob("aa-*-p1.json") if (m := re.match(r"(aa-\d+)-p1", f.stem))},
                 key=lambda s: int(s.split("-")[1]))
    if two:
        return [[folder / f"{label}-p1.json", folder / f"{label}-p2.json"] for label in two]
    one = sorted((f for f in folder.glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name)),
                 key=lambda f: int(f.stem.split("-")[1]))
    return [[f] for f in one]


def main() -> None:
    print("# A side's location over its workers: the SD over A/A labels (median over kernels, %) of each estimate "
          "(worker_location16.py)\n")
    print("| collection | size | labels | workers a label | " + " | ".join(ESTIMATES) + " | workers' kurtosis |")
    print("|---|---|---|---|" + "---|" * (len(ESTIMATES) + 1))
    for data, sizes in SETS:
        for size in sizes:
            per_label = [workers(files) for files in labels(DATA / data / size)]
            names = sorted(set.intersection(*(set(w) for w in per_label)))
            cells = []
            for estimate in ESTIMATES.values():
                m = np.array([[estimate(np.array(w[n])) for n in names] for w in per_label])
                m = m - np.median(m - m.mean(axis=0), axis=1, keepdims=True)
                cells.append(f"{100 * math.sqrt(float(np.median(m.var(axis=0, ddof=1)))):.3f}")
            kurtosis = []
            for w in per_label:
                for n in names:
                    x = np.array(w[n]) - np.mean(w[n])
                    if np.mean(x * x) > 0:
                        kurtosis.append(float(np.mean(x**4) / np.mean(x * x) ** 2))
            print(f"| {data} | {size} | {len(per_label)} | {len(per_label[0][names[0]])} | {' | '.join(cells)} | "
                  f"{np.median(kurtosis):.2f} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--data"]:
        DATA = Path(sys.argv[2])
    main()
