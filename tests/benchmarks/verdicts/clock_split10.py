"""The tenth evaluation's A/A pairs split by the SM clock regimes their sides ran in (read after
`evaluate10.txt`, so a diagnosis of its data, not an evaluation): each run's regime is its rounds' mean
SM clock (runs within 5 MHz of each other share one), and the ordered A/A pairs of one run a side are
counted apart where both sides ran in one regime and where they did not: exit 1, rows unchanged, and the
median over kernels of the median smallest detectable change. Compare's clock term
(`compare.priors.CLOCK_RESPONSE_SD`) widens only the second kind.

    python tests/benchmarks/verdicts/clock_split10.py > tests/benchmarks/verdicts/clock_split10.txt
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from evaluate import aa_stats  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.results import Results  # noqa: E402

DATA = HERE / "h200" / "data10"
TITLE = "The tenth evaluation's A/A pairs by SM clock regime (clock_split10.py; after the evaluation)"


def mean_clock(path: Path) -> float:
    doc = json.loads(path.read_text())
    clocks = [r["sm_clock_mhz"] for s in doc["specializations"] for r in s["rounds"] if r.get("sm_clock_mhz")]
    return statistics.fmean(clocks)


def verdicts(pairs: list[tuple[Path, Path]], cache: dict[Path, list[Results]]) -> list[dict[str, object]]:
    """`evaluate.new_method`'s records for whole `--processes` files, each split into its processes as
    the command line splits it (`load_side`)."""
    out = []
    for b, h in pairs:
        c = compare_runs(*(cache.setdefault(p, load_side(p)) for p in (b, h)))
        out.append({"failed": c.failed(),
                    "rows": {r.name: [r.verdict.value, r.min_detectable_change] for r in c.rows}})
    return out


def regimes(clocks: list[float]) -> list[int]:
    """Each run's regime: runs sorted by clock, a new regime wherever the next is more than 5 MHz higher."""
    order = sorted(range(len(clocks)), key=clocks.__getitem__)
    out, label = [0] * len(clocks), 0
    for prev, k in itertools.pairwise(order):
        if clocks[k] - clocks[prev] > 5.0:
            label += 1
        out[k] = label
    return out


def main() -> None:
    print(f"# {TITLE}\n")
    print("| protocol | size | runs' mean SM clock (MHz) | pairs | exit 1 | rows unchanged | median detectable |")
    print("|---|---|---|---|---|---|---|")
    cache: dict[Path, list[Results]] = {}
    for proto in ("p16r4", "p16"):
        for size in ("64KiB", "1MiB", "4MiB", "64MiB"):
            d = DATA / proto / size
            if not d.is_dir():
                continue
            runs = sorted(d.glob("aa-*.json"), key=lambda p: int(p.stem.split("-")[1]))
            clocks = [mean_clock(p) for p in runs]
            regime = regimes(clocks)
            shown = " ".join(f"{c:.0f}" for c in clocks)
            for kind, same in (("same regime", True), ("regimes apart", False)):
                pairs = [(a, b) for (i, a), (j, b) in itertools.permutations(enumerate(runs), 2)
                         if (regime[i] == regime[j]) == same]
                if not pairs:
                    print(f"| {proto} | {size} | {shown} | {kind}: 0 | | | |")
                    continue
                failed, n, unchanged, rows, mdc = aa_stats(verdicts(pairs, cache))
                med = statistics.median(statistics.median(v) for v in mdc.values())
                print(f"| {proto} | {size} | {shown} | {kind}: {n} | {failed} | {unchanged}/{rows} "
                      f"({100 * unchanged / rows:.0f} %) | {100 * med:.2f} % |")


if __name__ == "__main__":
    main()
