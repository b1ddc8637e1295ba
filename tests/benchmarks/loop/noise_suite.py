"""The batch noise of every specialization of the evaluation suite, out of sample: separate
processes, CuPy library calls as well as copies, before (`rounds/data/`) and after
(`rounds/data-v2/`) the loop's new defaults.

    python tests/benchmarks/loop/noise_suite.py > tests/benchmarks/loop/noise_suite.txt

Caveats printed with the table: the two data sets ran on different physical H200s, and a
specialization's `noise_percent` was the maximum over its rounds before and is their root mean
square after (each round's window CV), which by itself lowers it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

ROUNDS = Path(__file__).resolve().parents[1] / "rounds"


def noise(folder: Path) -> dict[str, list[float]]:
    per: dict[str, list[float]] = {}
    for f in sorted(folder.glob("aa-*.json")):
        for s in json.loads(f.read_text())["specializations"]:
            per.setdefault(s["name"], []).append(float(s["noise_percent"]))
    return per


def main() -> None:
    print(__doc__.split("\n\n")[0].replace("\n", " "))
    print("Before: max over rounds, 60 MiB clear, warming, 10 ms batches (rounds/data, 5 processes). "
          "After: RMS over rounds, 120 MiB clear, no warming, window-filling batches (rounds/data-v2, "
          "6 processes). Another physical GPU for each data set.\n")
    for size in ("64KiB", "1MiB", "128MiB"):
        before, after = noise(ROUNDS / "data" / size), noise(ROUNDS / "data-v2" / size)
        print(f"{size}: median (max) noise per batch over the A/A processes; target 0.03 %")
        for name in sorted(after):
            b, a = before.get(name, []), after[name]
            b_text = f"{statistics.median(b):.4f} % ({max(b):.4f})" if b else "-"
            hit = "hit" if max(a) <= 0.03 else "miss"
            print(f"  {name:34s} before {b_text:20s} after {statistics.median(a):.4f} % ({max(a):.4f})  {hit}")
        print()


if __name__ == "__main__":
    main()
