"""How far a whole process moves (the shift every kernel of an A/A process shares) in every A/A
set collected so far, against the prior compare uses for it (`compare.priors`, the `common`
component of runs in rounds, measured on tuning data).

For each set and size: each A/A process's estimate of each kernel (`primbench.rounds.estimate`,
the mean of ln(time per call) over the measured rounds), less that kernel's mean over the set's
processes; a process's shift is the median of those deviations over its kernels. Printed: the SD
of the shifts across processes (one side's common part, with its df = processes - 1), the largest
shift, the SD a pair's difference of shifts would have, and the prior's SD and df.

    python tests/benchmarks/verdicts/common_shift.py > tests/benchmarks/verdicts/common_shift.txt

(`common_shift.txt` was made at fd6fb8c: its prior column is that of tuning data alone.)
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.priors import size_class  # noqa: E402
from primbench.rounds import estimate  # noqa: E402

SETS = (("data", "first suite, a9c1633 (before the throttle guard)"),
        ("data2", "second suite, c961acb / 649f534 (the guard's fault: short kernels on the noise timeout)"),
        ("data3", "third suite, 2289ab4 (the fault fixed)"))
BYTES = {"64KiB": 64 << 10, "1MiB": 1 << 20, "4MiB": 4 << 20, "64MiB": 64 << 20}


def aa_folders() -> Iterator[tuple[str, str, int, Path]]:
    """Every collected size of every set: (the set's title, the size, its bytes, its folder)."""
    for name, title in SETS:
        for size, nbytes in BYTES.items():
            folder = HERE / "h200" / name / size
            if any(folder.glob("aa-*.json")):
                yield title, size, nbytes, folder


def shifts(folder: Path) -> list[float]:
    """Each A/A process's shift (median over kernels of its deviation from the kernels' means)."""
    logs: list[dict[str, float]] = []
    for f in sorted(folder.glob("aa-*.json")):
        doc = json.loads(f.read_text())
        one = {}
        for s in doc["specializations"]:
            est = estimate([r["gpu_ms_per_call"] for r in s.get("rounds") or []])
            if est is not None:
                one[s["name"]] = est.log_mean
        logs.append(one)
    names = sorted(set.intersection(*(set(x) for x in logs)))
    means = {n: statistics.fmean(x[n] for x in logs) for n in names}
    return [statistics.median(x[n] - means[n] for n in names) for x in logs]


def pct(x: float) -> str:
    return f"{x * 100:.2f} %"


def main() -> None:
    print("| set | size | A/A processes | SD of a process's shift (df) | largest shift | SD of a pair's "
          "difference | the prior's SD of one side (df) | SD ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for title, size, nbytes, folder in aa_folders():
        sh = shifts(folder)
        sd = statistics.stdev(sh)
        prior = size_class(nbytes).rounds
        psd = math.sqrt(prior.common)
        print(f"| {title} | {size} | {len(sh)} | {pct(sd)} ({len(sh) - 1}) | {pct(max(sh, key=abs))} | "
              f"{pct(sd * math.sqrt(2))} | {pct(psd)} ({prior.common_df:g}) | {sd / psd:.1f}x |")


if __name__ == "__main__":
    main()
