"""Where the wall time of a `--processes K` run goes, and what share of the budget a specialization can have
for the issue's 1.2 s: a desk projection from probe9's records (in sample: the eighth suite, one H100,
`h200/probe9/`), no new measurement.

From each profiled worker of probe9 (`summary-*.txt`, every size): its turn (`interleave`), its rounds
(`_round`: calls and seconds), their measured part (`measure`) and the renewal of the stream and cache buffer
between rounds (`renew`). A round's overhead `o` is (turn - measured) / rounds: everything of a turn that is
not the measurement (each round's setup, renewal, warm-up call, clock and temperature reads; the turn's own
start and finish spread over its rounds). Then, for K workers of R rounds each over N specializations of
S seconds' share (the default: S = 1, R = 8):

    run wall = start + K x (N x S / K + N x R x o) + end,   per specialization = S + K R o + (start + end) / N

with `start` the seconds before the first turn (imports, opening the device, priming: 8.5-9.9 s on the lent
machine, whose Python wrote no bytecode; 4 s is assumed for one that keeps bytecode: opening the device took
1.5-1.65 s a worker, importing PyTorch about 2 s) and `end` the last worker's exit (about 0.8 s). Since 3ea2add
no exit lies inside a turn. Where a worker measures more than its share (batches overshoot at 64 MiB), S is
scaled by the measured-over-share ratio of that size.

    python wall_budget.py > wall_budget.txt
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE = HERE / "h200" / "probe9"
LINE = re.compile(r"^\s+(\w+)\s+(\d+) calls\s+([\d.]+) s cumulative")


def workers(path: Path) -> list[dict[str, tuple[int, float]]]:
    """Each worker's functions of `summary-*.txt`: name -> (calls, cumulative seconds)."""
    out: list[dict[str, tuple[int, float]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## ") and " worker " in line:
            out.append({})
        elif out and (m := LINE.match(line)):
            out[-1][m[1]] = (int(m[2]), float(m[3]))
    return [w for w in out if "interleave" in w and "_round" in w]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=float, nargs="+", default=[4.0, 9.0],
                    help="seconds before the first turn: the first projected, the others as a difference "
                         "(probe9: 8.5-9.9 s on the lent machine, without bytecode)")
    ap.add_argument("--end", type=float, default=0.8, help="the last worker's exit, seconds")
    args = ap.parse_args()
    found: dict[str, tuple[float, float]] = {}
    print("probe9's profiled workers (in sample; one H100, the eighth suite, --processes 8, 8 specializations):")
    for path in sorted(PROBE.glob("summary-*.txt")):
        size = path.stem.removeprefix("summary-")
        ws = workers(path)
        o = [(w["interleave"][1] - w["measure"][1]) / w["_round"][0] for w in ws]
        r = [w["renew"][1] / w["renew"][0] for w in ws if "renew" in w]
        turns = [w["interleave"][1] for w in ws]
        measured = [w["measure"][1] for w in ws]
        m = statistics.median(measured) / 1.0  # each worker's share of its turn: 8 specializations x 1/8 s
        found[size] = (m, statistics.median(o))
        print(f"  {size}: {len(ws)} workers; turn {min(turns):.2f}-{max(turns):.2f} s, measured "
              f"{min(measured):.2f}-{max(measured):.2f} s of a 1 s share (median {m:.2f}x), rounds "
              f"{min(w['_round'][0] for w in ws)}-{max(w['_round'][0] for w in ws)}; a round's overhead "
              f"{min(o) * 1e3:.1f}-{max(o) * 1e3:.1f} ms (median {statistics.median(o) * 1e3:.1f}), of which the "
              f"renewal of the stream and cache buffer {statistics.median(r) * 1e3:.1f} ms")
    print()
    print("projected wall per specialization at the default share (S = 1 s, R = 8 rounds a worker), seconds, with")
    print(f"start {args.start[0]:.0f} s (a Python that keeps bytecode) and end {args.end} s; each size with its own "
          "measured-over-share ratio and round overhead; and the share S that leaves 1.2 s:")
    print("| size | workers K | N = 8 | N = 20 | N = 50 | N = 100 | S for 1.2 s at N = 8 / 20 / 50 / 100 |")
    print("|---|---|---|---|---|---|---|")
    ns = (8, 20, 50, 100)
    for size, (m, o) in found.items():
        for k in (4, 8, 16):
            walls = [m * 1.0 + k * 8 * o + (args.start[0] + args.end) / n for n in ns]
            shares = [(1.2 - k * 8 * o - (args.start[0] + args.end) / n) / m for n in ns]
            print(f"| {size} | {k} | " + " | ".join(f"{w:.2f}" for w in walls) + " | "
                  + " / ".join(f"{x:.2f}" if x > 0 else "none" for x in shares) + " |")
    for start in args.start[1:]:
        print(f"with start {start:.0f} s (the lent machine, no bytecode): {start - args.start[0]:.0f} s more a run, "
              f"+{(start - args.start[0]) / 8:.2f} / +{(start - args.start[0]) / 100:.2f} s a specialization at "
              "N = 8 / 100")
    print()
    m, o = found["1MiB"]
    print("the check against what was measured: the eighth evaluation's 3.3-3.5 s a specialization at 1 MiB (K = 8, "
          "N = 8) included a worker's exit inside each turn (about 0.8 s, 8 of them) and a 10-12 s start:")
    print(f"  the model with those: {m + 8 * 8 * o + (11 + 0.8 + 8 * 0.8) / 8:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
