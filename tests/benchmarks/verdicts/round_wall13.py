"""Where a p8r2 round's wall goes against its share, on the thirteenth evaluation's files (`h200/data13`,
`h200/data13b`, one H100): each round's host seconds (`rounds[r].wall_secs`: setup, warm-up, total), its
measured batches and calls, against its share of the worker's budget (`--min-secs 0.25` over 8 workers and 2
rounds: 15.6 ms). In sample: it motivated the worker batch floor's window (`primbench.processes.process_batch_floor`).

    python tests/benchmarks/verdicts/round_wall13.py > tests/benchmarks/verdicts/round_wall13.txt
    python tests/benchmarks/verdicts/round_wall13.py --data tests/benchmarks/verdicts/h200/data14 --design p16r2

`--data` reads another collection's `DESIGNx2/SIZE/aa-*.json` (the fourteenth evaluation's), each round against
its design's share.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDERS = {"4MiB": "data13", "1MiB": "data13", "64MiB": "data13b", "64KiB": "data13b"}
#: A design's share of a round, ms: --min-secs over the workers and the 2 rounds.
SHARES = {"p8r2": 250 / 8 / 2, "p16r2": 200 / 16 / 2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="a collection's folder (default: data13 and data13b)")
    ap.add_argument("--design", choices=sorted(SHARES), default="p8r2")
    args = ap.parse_args()
    share = SHARES[args.design]
    folders = ({s: args.data for s in ("4MiB", "1MiB", "64KiB", "64MiB")} if args.data
               else {s: HERE / "h200" / f for s, f in FOLDERS.items()})
    where = args.data or "data13 / data13b"
    print(f"# {args.design} rounds against their share ({share:.1f} ms), A/A files of {where}\n")
    print("size   rounds  round total ms (median, p90)  over share  in window ms  batches  calls/batch  GPU ms/batch"
          "  host/GPU a call  run's rounds s")
    for size, folder in folders.items():
        files = sorted((folder / f"{args.design}x2" / size).glob("aa-*-p*.json"))
        total, window, batches, calls, gpu_batch, ratio, per_run = [], [], [], [], [], [], []
        for f in files:
            doc = json.loads(f.read_text())
            run = 0.0
            for spec in doc["specializations"]:
                for r in spec.get("rounds") or []:
                    w = r.get("wall_secs")
                    if not w:
                        continue
                    run += w["total"]
                    total.append(w["total"] * 1e3)
                    window.append(r["elapsed_secs"]["host"] * 1e3)
                    batches.append(r["batches"])
                    calls.append(r["kernel_calls_per_batch"])
                    gpu_batch.append(r["elapsed_secs"]["gpu"] * 1e3 / r["batches"])
                    ratio.append(r["elapsed_secs"]["host"] / r["elapsed_secs"]["gpu"])
            per_run.append(run)
        if not total:
            continue
        q = statistics.quantiles(total, n=10)
        print(f"{size:6s} {len(total):6d}  {statistics.median(total):8.1f} {q[-1]:8.1f}"
              f"           {statistics.median(total) / share:5.2f}x  {statistics.median(window):10.1f}"
              f"  {statistics.median(batches):7.0f}  {statistics.median(calls):11.0f}"
              f"  {statistics.median(gpu_batch):12.2f}"
              f"  {statistics.median(ratio):15.1f}  {statistics.median(per_run):13.2f}")
    if args.data:
        return
    print("\nA round's window is 5 batches (10 over 2 rounds); the worker's floor of GPU time a batch was 0.5 ms, "
          "sized for 3.\nAt the host's 10x the GPU time that window takes 5 x 0.5 x 10 = 25 ms, 1.6x the share; "
          "with the floor at\nthe round's own window (15.6 / (5 x 10) = 0.31 ms) it fits.")


if __name__ == "__main__":
    main()
