"""Summarise `h200/diag3` (h200_diag3.sh): per kernel and harness, the batches' spread, how many
rounds timed out, and whether consecutive batches alternate (lag-1 correlation of each round's
batch times, and the ratio of the slower half's mean to the faster half's). Prints a table.

    python tests/benchmarks/verdicts/diag_batches.py > tests/benchmarks/verdicts/h200/diag3/diag3.txt
"""

from __future__ import annotations

import itertools
import json
import lzma
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent / "h200" / "diag3"
RUNS = (("head-s2", "this commit's harness (abbe481), monitoring on"),
        ("head-s2-nomon", "the same, --no-monitoring"),
        ("old-s2", "a9c1633's harness, monitoring on"),
        ("head-s1", "abbe481, the first suite's short kernels"))


def lag1(xs: list[float]) -> float:
    m = statistics.fmean(xs)
    den = sum((x - m) ** 2 for x in xs)
    return sum((a - m) * (b - m) for a, b in itertools.pairwise(xs)) / den if den else 0.0


def main() -> None:
    print("| run | kernel | µs/call | batch CV % (median over rounds) | rounds timed out | lag-1 corr. of batches "
          "(median) | slow half / fast half |")
    print("|---|---|---|---|---|---|---|")
    for name, title in RUNS:
        doc = json.loads(lzma.decompress((HERE / f"{name}.json.xz").read_bytes()))
        for s in doc["specializations"]:
            by_round: dict[int, list[float]] = {}
            for b in s.get("batches") or []:
                by_round.setdefault(b["round"], []).append(b["batch_ms"] / b["kernel_calls"])
            cvs, corrs, ratios = [], [], []
            for xs in by_round.values():
                if len(xs) >= 3:
                    cvs.append(statistics.stdev(xs) / statistics.fmean(xs) * 100)
                    corrs.append(lag1(xs))
                    srt = sorted(xs)
                    h = len(srt) // 2
                    ratios.append(statistics.fmean(srt[h:]) / statistics.fmean(srt[:h]))
            timed_out = sum(r["noise_timeout"] for r in s["rounds"])
            print(f"| {title} | {s['name'][4:].split(',')[0]} | {s['gpu_seconds_per_call'] * 1e6:.2f} | "
                  f"{statistics.median(cvs):.2f} | {timed_out}/{len(s['rounds'])} | {statistics.median(corrs):+.2f} | "
                  f"{statistics.median(ratios):.3f} |")


if __name__ == "__main__":
    main()
