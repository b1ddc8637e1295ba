"""Do more rounds a worker, or more workers, narrow a `--processes` run? For each A/A file of a
collection: each kernel's measured rounds (the warm-up left out, the first R of every worker, R the
fewest any worker has), as ln time per call, absolute and relative to the suite (each (worker, round)
less its mean over the kernels). Printed per kernel: the spread of worker means the rounds alone
predict (their variance within a worker over R) against the spread the worker means show, and the
rounds' lag-1 autocorrelation within a worker (about -1/R for independent rounds).

    python3 tests/benchmarks/verdicts/rounds_vs_workers.py > tests/benchmarks/verdicts/rounds_vs_workers.txt
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "h200"
SETS = (("data7", ("64KiB", "1MiB", "4MiB", "64MiB")), ("data8", ("1MiB", "4MiB")))


def one_file(path: Path) -> np.ndarray:
    """kernels x workers x rounds, ln(time per call) in %."""
    doc = json.loads(path.read_text())
    per: list[dict[int, list[float]]] = []
    for s in doc["specializations"]:
        t: dict[int, list[float]] = defaultdict(list)
        for r in s["rounds"]:
            t[r["process"]].append(float(np.log(r["gpu_ms_per_call"]) * 100))
        per.append({p: v[1:] for p, v in t.items()})
    workers = sorted(per[0])
    rounds = min(len(k[p]) for k in per for p in workers)
    return np.array([[k[p][:rounds] for p in workers] for k in per])


def main() -> None:
    print("# Rounds against workers: what a worker's rounds predict for its mean, and what the workers show\n")
    for data, sizes in SETS:
        for size in sizes:
            files = sorted((HERE / data / size).glob("aa-[0-9].json"))
            if not files:
                continue
            arrays = [one_file(f) for f in files]
            print(f"## {data} {size}: {len(files)} A/A files, {arrays[0].shape[1]} workers, "
                  f"{min(a.shape[2] for a in arrays)}-{max(a.shape[2] for a in arrays)} measured rounds a worker\n")
            print("| | rounds predict the worker means' SD (median over kernels) | the worker means' SD | "
                  "variance ratio (pooled) | rounds' lag-1 autocorrelation (median) |")
            print("|---|---|---|---|---|")
            for name in ("absolute", "relative to the suite"):
                pred, act, ac = [], [], []
                for a in arrays:
                    y = a if name == "absolute" else a - a.mean(axis=0, keepdims=True)
                    r = y.shape[2]
                    pred.append(y.var(axis=2, ddof=1).mean(axis=1) / r)
                    act.append(y.mean(axis=2).var(axis=1, ddof=1))
                    z = y - y.mean(axis=2, keepdims=True)
                    ac.append((z[:, :, 1:] * z[:, :, :-1]).sum(axis=(1, 2)) / (z**2).sum(axis=(1, 2)))
                p, q = np.mean(pred, axis=0), np.mean(act, axis=0)
                print(f"| {name} | {np.median(np.sqrt(p)):.2f} % | {np.median(np.sqrt(q)):.2f} % | "
                      f"{q.sum() / p.sum():.2f} | {np.median(np.mean(ac, axis=0)):+.2f} |")
            print()


if __name__ == "__main__":
    main()
