"""What fewer workers or fewer rounds would have given on the ninth evaluation's files, and what they would cost
in wall time: a desk projection to choose the tenth protocol (in sample: `h200/data9/p16`, read after
`evaluate9.txt`; no new measurement).

Each `--processes 16` file is thinned to its first K workers and, of each, its first R measured rounds (with the
warm-up round where R + 1 >= `primbench.rounds.WARMUP_FROM`, as a run of R + 1 rounds would keep it). Thinning
rounds emulates a smaller share a worker with rounds of today's length, not longer rounds. Then this method on
every ordered A/A pair and every planted run against every A/A run (both ways), as `evaluate9.py` counts them:
A/A exit 1, rows unchanged, the median over kernels of the reported detectable change, planted 2 % and 5 %
found, and the planted rows found whose change relative to the suite (`calibration9_diag.py`) is 0.8-1.25x the
reported one. The wall a specialization would cost is `wall_budget.py`'s model, S' + K x rounds x o + C / N:
S' the measured part kept (the A/A runs' measured host seconds times the share of rounds kept), o the
round's overhead probe9 measured (5.2 / 6.1 / 9.5 ms at 64 KiB / 1 MiB / 64 MiB; 4 MiB taken as 1 MiB's), C
a run's start and end as the ninth evaluation's walls imply at N = 8 (its wall less S and 16 x rounds x o, times
8).

    python tests/benchmarks/verdicts/thin9.py > tests/benchmarks/verdicts/thin9.txt
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calibration9_diag import Planted, collection  # noqa: E402
from evaluate import pct, share  # noqa: E402
from evaluate6 import compare_runs, load_side, split  # noqa: E402

from primbench.rounds import WARMUP_FROM  # noqa: E402

DATA = HERE / "h200" / "data9" / "p16"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
OVERHEAD = {"64KiB": 0.0052, "1MiB": 0.0061, "4MiB": 0.0061, "64MiB": 0.0095}  # probe9 (wall_budget.txt)
CONFIGS = ((16, 7), (16, 3), (16, 1), (8, 7), (8, 3), (4, 7))  # (workers, measured rounds each; 7 = all)


def thin(src: Path, dst: Path, workers: int, rounds: int) -> float:
    """SRC written as DST with its first `workers` workers and `rounds` measured rounds each; returns the
    measured host seconds kept over those the file had."""
    doc = json.loads(src.read_text())
    kept_host = all_host = 0.0
    warm = rounds + 1 >= WARMUP_FROM
    for s in doc["specializations"]:
        own, seen = [], collections.Counter[int]()
        for r in s.get("rounds") or []:  # a merged file numbers its rounds across workers, each worker's in order
            i = seen[r["process"]]
            seen[r["process"]] += 1
            all_host += r["elapsed_secs"]["host"] if i > 0 else 0.0
            if r["process"] >= workers or i > rounds or (i == 0 and not warm):
                continue
            kept_host += r["elapsed_secs"]["host"] if i > 0 else 0.0
            own.append(dict(r, round=len(own)))
        s["rounds"] = own
    doc["context"]["settings"]["processes"] = workers
    dst.write_text(json.dumps(doc))
    return kept_host / all_host if all_host else 1.0


def evaluate(aa: list[Path], planted: list[Planted], workers: int, rounds: int, tmp: Path
             ) -> tuple[list[str], float]:
    """The cells of one configuration on one size's files (`calibration9_diag.collection`), and the measured
    share kept."""
    kept = [thin(p, tmp / p.name, workers, rounds) for p in (*aa, *(run.path for run in planted))]
    side = {p: load_side(tmp / p.name) for p in (*aa, *(run.path for run in planted))}
    failed = unchanged = rows = 0
    mdc: dict[str, list[float]] = {}
    for a in aa:
        for b in aa:
            if a == b:
                continue
            c = compare_runs(side[a], side[b])
            failed += c.failed()
            for r in c.rows:
                rows += 1
                unchanged += r.verdict.value == "unchanged"
                if r.min_detectable_change:
                    mdc.setdefault(r.name, []).append(r.min_detectable_change)
    found = {0.02: [0, 0], 0.05: [0, 0]}
    window = [0, 0]
    for run in planted:
        for a in aa:
            for base, head, want in ((a, run.path, "regression"), (run.path, a, "improvement")):
                for r in compare_runs(side[base], side[head]).rows:
                    frac = run.fractions.get(r.name)
                    if frac is None:
                        continue
                    hit = r.verdict.value == want
                    if frac in found:
                        found[frac][0] += hit
                        found[frac][1] += 1
                    if r.min_detectable_change and 0.8 <= abs(math.expm1(run.real[r.name] - run.centre)) / \
                            r.min_detectable_change <= 1.25:
                        window[0] += hit
                        window[1] += 1
    med = statistics.median(statistics.median(v) for v in mdc.values())
    cells = [share(failed, len(aa) * (len(aa) - 1)), share(unchanged, rows), pct(med), share(*found[0.02]),
             share(*found[0.05]), share(*window)]
    return cells, statistics.fmean(kept)


def walls(d: Path) -> tuple[float, float]:
    """The A/A runs' median wall a specialization and measured host seconds a specialization (`collect.log`)."""
    log = (d / "collect.log").read_text()
    w = statistics.median(float(m.group(1)) for m in re.finditer(r"aa-\d+\.json: exit 0, wall ([\d.]+) s", log))
    host = []
    for p in d.glob("aa-*.json"):
        if p.stem.split("-")[1].isdigit():
            specs = json.loads(p.read_text())["specializations"]
            host.append(sum(s["elapsed_secs"]["host"] for s in specs) / len(specs))
    return w / 8, statistics.median(host)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="a collection of --processes 16 files (default data9/p16)")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--configs", default=",".join(f"{w}x{r}" for w, r in CONFIGS),
                    help="workers x measured rounds each (7: all), comma-separated")
    args = ap.parse_args(argv)
    configs = [tuple(int(v) for v in c.split("x")) for c in args.configs.split(",")]
    if args.data != DATA:
        print(f"# Fewer workers or rounds on {args.data} (thin9.py; in sample, a projection)\n")
    else:
        print("# Fewer workers or rounds on the ninth evaluation's files (thin9.py; in sample, a projection)\n")
    print("Each cell as `evaluate9.py` counts it, this method, one thinned `--processes 16` file a side; the wall "
          "a specialization from `wall_budget.py`'s model (see the script's docstring) at a suite of 8 and of 100 "
          "specializations.\n")
    print("| size | workers x measured rounds | A/A exit 1 | A/A unchanged | median detectable | planted 2 % found "
          "| planted 5 % found | found at 0.8-1.25x (relative truth) | measured s a spec | wall N = 8 | N = 100 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        d = args.data / size
        wall8, host = walls(d)
        o = OVERHEAD[size]
        rounds_now = 8
        fixed = (wall8 - host - 16 * rounds_now * o) * 8  # a run's start and end, seconds
        with tempfile.TemporaryDirectory() as parts:
            split(d, Path(parts))  # the real changes from every worker of the whole files, as the diagnosis
            aa, planted = collection(d, Path(parts))
        for workers, rounds in configs:
            with tempfile.TemporaryDirectory() as tmp:
                cells, kept = evaluate(aa, planted, workers, rounds, Path(tmp))
            s = host * kept
            per_worker = rounds + (1 if rounds + 1 >= WARMUP_FROM else 0)
            w = [s + workers * per_worker * o + fixed / n for n in (8, 100)]
            print(f"| {size} | {workers} x {'all' if rounds == 7 else rounds} | " + " | ".join(cells)
                  + f" | {s:.2f} | {w[0]:.2f} | {w[1]:.2f} |")
        print(f"| {size} | (start and end of a run, implied) | | | | | | | | {fixed:.1f} s | |")


if __name__ == "__main__":
    main()
