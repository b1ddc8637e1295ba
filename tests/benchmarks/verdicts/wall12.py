"""Where a `--processes 8 --rounds 4 --min-secs 0.25` run's wall goes, on the twelfth evaluation's files
(`h200/data12` at 4 MiB and 1 MiB, `h200/data12b` at 64 MiB and 64 KiB; one H100 each, eval_suite12.py, 24
specializations), from what every run already records: its log's turn times (each worker's "measuring (k of 8)
at X s" and "finished at X s", seconds since the executor started), its rounds' own measured host time
(`rounds[].elapsed_secs.host`, from the first measured batch to the last, per worker) and the wall
`collect.py` timed around the whole program.

    python tests/benchmarks/verdicts/wall12.py > tests/benchmarks/verdicts/wall12.txt

Per size, medians over the A/A runs: the program's wall; the start (executor start to the first turn: the
workers' imports, device and setup before any measures, with the parent's own start before the executor, the
wall less the executor's last time, beside it); the turns; in the turns, the rounds' measured batches; the rest
of each turn per round (each round's fresh `run(state)`: renew, setup, warm-up and sizing, reads of the GPU's
state). Descriptive, after the evaluation; it changes nothing.
"""

from __future__ import annotations

import json
import re
import statistics as st
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = (("64KiB", "data12b"), ("1MiB", "data12"), ("4MiB", "data12"), ("64MiB", "data12b"))


def walls(d: Path) -> dict[str, float]:
    """Each results file's wall from collect.log (`SIZE NAME.json: exit 0, wall X s`)."""
    out = {}
    for line in (d / "collect.log").read_text().splitlines():
        if m := re.match(r"\S+ (\S+\.json): exit 0, wall ([\d.]+) s", line):
            out[m[1]] = float(m[2])
    return out


def run(json_path: Path, wall: float) -> dict[str, float]:
    log = json_path.with_suffix(".log").read_text()
    starts = [float(x) for x in re.findall(r"measuring \(\d+ of \d+\) at ([\d.]+) s", log)]
    ends = [float(x) for x in re.findall(r"finished at ([\d.]+) s", log)]
    doc = json.loads(json_path.read_text())
    measured = rounds = batches = 0.0
    split = {"setup": 0.0, "warmup": 0.0, "total": 0.0, "timed": 0.0, "timed_measured": 0.0}
    for s in doc["specializations"]:
        for r in s.get("rounds") or []:
            measured += r["elapsed_secs"]["host"]
            rounds += 1
            batches += r.get("batches") or 0
            if timed := r.get("wall_secs"):  # results 4.10.0
                for k in ("setup", "warmup", "total"):
                    split[k] += timed[k]
                split["timed"] += 1
                split["timed_measured"] += r["elapsed_secs"]["host"]
    n_spec = len(doc["specializations"])
    out = {"wall": wall, "measured": measured, "rounds": rounds, "batches": batches, "spec": wall / n_spec,
           "outside_per_round_ms": (wall - measured) / rounds * 1000}
    if split["timed"]:  # a round's own split (results 4.10.0), in ms a round
        t = split["timed"]
        out |= {"setup_ms": split["setup"] / t * 1000, "warmup_ms": split["warmup"] / t * 1000,
                "harness_ms": (split["total"] - split["setup"] - split["warmup"] - split["timed_measured"]) / t * 1000}
    if starts:  # logs since 107504a time the turns
        turns = sum(e - b for b, e in zip(starts, ends, strict=True))
        out |= {"start": starts[0], "turns": turns, "after": wall - ends[-1],
                "rest_per_round_ms": (turns - measured) / rounds * 1000}
    return out


def main() -> None:
    print("# Where a p8r4 run's wall goes (wall12.py; the twelfth evaluation's A/A files, one H100 a size)\n")
    print("| size | runs | wall a run | start (to the first turn) | 8 turns | of which measured batches | rest a round "
          "| after the last turn | wall a spec (one run) |")
    print("|---|---|---|---|---|---|---|---|---|")
    read: dict[str, list[dict[str, float]]] = {}  # each size's A/A runs, read once for both tables
    for size, root in SETS:
        d = HERE / "h200" / root / "p8r4x2" / size
        read[size] = [run(d / name, wall) for name, wall in sorted(walls(d).items()) if name.startswith("aa-")]
    for size, rs in read.items():
        med = {k: st.median(r[k] for r in rs) for k in rs[0]}
        if "start" not in med:  # logs without turn times (data12, code 3365a79): what lies outside the batches
            print(f"| {size} | {len(rs)} | {med['wall']:.1f} s | (not timed) | | {med['measured']:.1f} s "
                  f"({med['measured'] / med['wall']:.0%}) | everything else {med['outside_per_round_ms']:.1f} ms x "
                  f"{med['rounds']:.0f} = {med['wall'] - med['measured']:.1f} s "
                  f"({(med['wall'] - med['measured']) / med['wall']:.0%}) | | {med['spec']:.2f} s |")
            continue
        print(f"| {size} | {len(rs)} | {med['wall']:.1f} s | {med['start']:.1f} s ({med['start'] / med['wall']:.0%}) "
              f"| {med['turns']:.1f} s | {med['measured']:.1f} s ({med['measured'] / med['wall']:.0%}) "
              f"| {med['rest_per_round_ms']:.1f} ms x {med['rounds']:.0f} = "
              f"{med['rest_per_round_ms'] * med['rounds'] / 1000:.1f} s "
              f"({med['rest_per_round_ms'] * med['rounds'] / 1000 / med['wall']:.0%}) "
              f"| {med['after']:.1f} s | {med['spec']:.2f} s |")
    print("\nA round's own split (results 4.10.0 files: `rounds[].wall_secs`), medians over the runs, ms a round:")
    for size, rs in read.items():
        if not all("setup_ms" in r for r in rs):
            print(f"- {size}: not recorded (written before 4.10.0)")
            continue
        print(f"- {size}: the benchmark's setup {st.median(r['setup_ms'] for r in rs):.1f}, warm-up and test "
              f"{st.median(r['warmup_ms'] for r in rs):.1f}, the harness's own (renew, sizing, the GPU's state, "
              f"the round less its measured batches) {st.median(r['harness_ms'] for r in rs):.1f}")
    print("\n4 MiB and 1 MiB ran at 3365a79, whose logs do not time the turns: start, turns and rest are one "
          "figure there.")
    print("'after the last turn': the parent's own start before its executor, the merge and the write; a label's "
          "two runs cost twice the row's wall.")


if __name__ == "__main__":
    main()
