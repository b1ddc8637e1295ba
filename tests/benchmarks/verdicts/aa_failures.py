"""Why A/A pairs exit 1: every ordered A/A pair of a collected size that fails, its GPUs, the
suite's shift and the rows flagged, and the failures split by same GPU / two GPUs.

    python tests/benchmarks/verdicts/aa_failures.py --data tests/benchmarks/verdicts/h200/data2 --sizes 4MiB,1MiB
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402


def gpu_of(path: Path) -> str:
    """The GPU a results file names (the first UUID in it, shortened)."""
    found = re.search(r"GPU-[0-9a-f]{8}", path.read_text())
    return found.group(0) if found else "?"


def kernel(name: str) -> str:
    return name.split(",")[0].removeprefix("op: ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "h200" / "data2")
    ap.add_argument("--sizes", default="4MiB,1MiB")
    args = ap.parse_args()
    for size in args.sizes.split(","):
        files = sorted((args.data / size).glob("aa-*.json"))
        sides = {f.stem: load_side(f) for f in files}
        gpus = {f.stem: gpu_of(f) for f in files}
        print(f"## {size}: {len(files)} A/A processes; GPUs: "
              + ", ".join(f"{k} {v}" for k, v in gpus.items()))
        tally = {True: [0, 0], False: [0, 0]}  # same GPU: [pairs, failed]
        flagged: Counter[str] = Counter()
        for a, base in sides.items():
            for b, head in sides.items():
                if a == b:
                    continue
                c = compare_runs(base, head)
                same = gpus[a] == gpus[b]
                tally[same][0] += 1
                rows = [(kernel(r.name), r.change or 0.0) for r in c.rows
                        if r.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)]
                flagged.update(k for k, _ in rows)
                if c.failed():
                    tally[same][1] += 1
                    s = c.suite_shift
                    shift = f"{100 * s.change:+.2f} %{' (a finding)' if s.detected else ''}" if s else "-"
                    print(f"- {a} -> {b} ({'same GPU' if same else 'two GPUs'}): suite shift {shift}; flagged "
                          + ", ".join(f"{k} {100 * v:+.2f} %" for k, v in rows))
        for same in (True, False):
            pairs, failed = tally[same]
            if pairs:
                print(f"{'same GPU' if same else 'two GPUs'}: {failed}/{pairs} ordered pairs exit 1")
        print("rows flagged, by kernel: " + ", ".join(f"{k} {n}" for k, n in flagged.most_common()) + "\n")


if __name__ == "__main__":
    main()
