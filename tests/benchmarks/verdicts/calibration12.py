"""Is compare's standard error right for two `--processes 8` files a side? On the twelfth evaluation's A/A labels
(`h200/data12` at 4 MiB and 1 MiB, `h200/data12b` at 64 MiB and 64 KiB; each label two p8r4 files, judged as
`primbench compare B1 B2 -- H1 H2`), per kernel and pooled: the standard error compare reports for the row,
against the spread the A/A pairs really show (the RMS of the row's ln change over every ordered pair; identical
code, so it should match the reported error), and what that spread would make of the smallest detectable change
at 80 % power beside the one reported.

    python tests/benchmarks/verdicts/calibration12.py > tests/benchmarks/verdicts/calibration12.txt

A diagnosis after the evaluation (`evaluate12.txt`, `evaluate12b.txt`: changes of the reported size were found in
93-100 % of rows, against the 70-90 % asked), in sample; it changes no method. The pairs share labels (5-7 labels
make 20-42 ordered pairs), so a kernel's ratio rests on 4-6 degrees of freedom; the pooled ratio on about 24 times
that.
"""

from __future__ import annotations

import itertools
import math
import statistics as st
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from primbench.compare.core import compare_runs, load_side  # noqa: E402

SETS = (("4MiB", HERE / "h200" / "data12"), ("1MiB", HERE / "h200" / "data12"),
        ("64MiB", HERE / "h200" / "data12b"), ("64KiB", HERE / "h200" / "data12b"))


def labels(d: Path) -> list[list[Path]]:
    """The A/A labels of a size folder, each as its two p8r4 files."""
    ks = sorted({int(f.stem.split("-")[1]) for f in d.glob("aa-*-p1.json")})
    return [[d / f"aa-{k}-p1.json", d / f"aa-{k}-p2.json"] for k in ks if (d / f"aa-{k}-p2.json").exists()]


def main() -> None:
    print("# compare's standard error against the spread of A/A pairs, two p8r4 files a side "
          "(tests/benchmarks/verdicts/calibration12.py)\n")
    for size, root in SETS:
        aa = labels(root / "p8r4x2" / size)
        loaded = {p: load_side(p) for lab in aa for p in lab}
        se: dict[str, list[float]] = {}
        change: dict[str, list[float]] = {}
        mdc: dict[str, list[float]] = {}
        failed = 0
        for a, b in itertools.permutations(aa, 2):
            c = compare_runs([r for p in a for r in loaded[p]], [r for p in b for r in loaded[p]])
            failed += c.failed()
            for row in c.to_dict()["specializations"]:
                if row.get("standard_error") and row.get("relative_change") is not None:
                    name = row["name"].split(",")[0].removeprefix("op: ")
                    se.setdefault(name, []).append(row["standard_error"])
                    change.setdefault(name, []).append(math.log1p(row["relative_change"]))
                    mdc.setdefault(name, []).append(row["min_detectable_change"])
        n_pairs = len(aa) * (len(aa) - 1)
        print(f"## {size} ({root.name}): {len(aa)} A/A labels, {n_pairs} ordered pairs, {failed} exit 1\n")
        print("| kernel | reported SE (median) | RMS of the A/A changes | ratio | reported detectable (median) "
              "| detectable at the measured spread |")
        print("|---|---|---|---|---|---|")
        ratios_sq: list[float] = []
        for name in sorted(se):
            rms = math.sqrt(st.fmean(x * x for x in change[name]))
            s = st.median(se[name])
            ratios_sq.extend((x / e) ** 2 for x, e in zip(change[name], se[name], strict=True))
            # the reported detectable change scaled by what the pairs show against what was reported
            print(f"| {name} | {s * 100:.2f} % | {rms * 100:.2f} % | {rms / s:.2f} | "
                  f"{st.median(mdc[name]) * 100:.2f} % | {st.median(mdc[name]) * rms / s * 100:.2f} % |")
        pooled = math.sqrt(st.fmean(ratios_sq))
        med = st.median(st.median(v) for v in mdc.values())
        print(f"\nPooled over {len(se)} kernels and {n_pairs} pairs: the A/A changes spread {pooled:.2f}x the reported "
              f"standard error (RMS of change / SE). Median reported detectable {med * 100:.2f} %; at the measured "
              f"spread about {med * pooled * 100:.2f} %.\n")


if __name__ == "__main__":
    main()
