"""Where a p8r2 run's rounds spend their time, kernel by kernel (written after evaluate14.txt, in sample,
descriptive): per size, each specialization's rounds on the A/A files of a collection, the mean round's wall
(setup, warm-up and window together) against its window and the GPU time of a batch, and the seconds its 16
rounds (8 workers x 2) add to a run. The kernels whose single call outlasts a round's share (15.6 ms) show here.

    python tests/benchmarks/verdicts/kernel_rounds14.py [--data DIR] [--top N] > kernel_rounds14.txt
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARE_MS = 250 / 8 / 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "h200" / "data14" / "p8r2x2")
    ap.add_argument("--top", type=int, default=6)
    args = ap.parse_args()
    print(f"# p8r2 rounds kernel by kernel, A/A files of {args.data.relative_to(HERE)} (share {SHARE_MS:.1f} ms)\n")
    for size in sorted(p.name for p in args.data.iterdir() if p.is_dir()):
        total: dict[str, list[float]] = collections.defaultdict(list)
        window: dict[str, list[float]] = collections.defaultdict(list)
        gpu: dict[str, list[float]] = collections.defaultdict(list)
        files = sorted((args.data / size).glob("aa-*-p*.json"))
        for f in files:
            for spec in json.loads(f.read_text())["specializations"]:
                for r in spec.get("rounds") or []:
                    if not r.get("wall_secs"):
                        continue
                    total[spec["name"]].append(r["wall_secs"]["total"] * 1e3)
                    window[spec["name"]].append(r["elapsed_secs"]["host"] * 1e3)
                    gpu[spec["name"]].append(r["elapsed_secs"]["gpu"] * 1e3 / r["batches"])
        rounds_a_run = {n: len(v) / len(files) for n, v in total.items()}
        run_s = sum(statistics.mean(v) * rounds_a_run[n] for n, v in total.items()) / 1e3
        print(f"## {size}: {len(files)} A/A files, the rounds of a run {run_s:.2f} s\n")
        print("| specialization | round ms (mean) | window ms | GPU ms a batch | rounds a run | s a run | over a "
              "round at the share, s a run |")
        print("|---|---|---|---|---|---|---|")
        for n in sorted(total, key=lambda k: -statistics.mean(total[k]))[:args.top]:
            mean = statistics.mean(total[n])
            over = max(0.0, mean - SHARE_MS) * rounds_a_run[n] / 1e3
            print(f"| {n} | {mean:.1f} | {statistics.median(window[n]):.1f} | {statistics.median(gpu[n]):.2f} | "
                  f"{rounds_a_run[n]:.0f} | {mean * rounds_a_run[n] / 1e3:.2f} | {over:.2f} |")
        print()


if __name__ == "__main__":
    main()
