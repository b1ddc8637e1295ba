"""Why a planted change equal to compare's reported detectable change was found in only 45-54 % of the ninth
evaluation's pairs (`evaluate9.txt`): read after that evaluation, so in sample. For every planted kernel in every
planted-against-A/A pair of `h200/data9/p16` (both ways), the row's reported detectable change, its verdict and
reason, and two truths to bin it by: the kernel's real change (the planted run's mean ln time against the mean
of every A/A run, as `evaluate5.py` judges it) and its real change *relative to the suite* (less the median of
the real changes of all eight kernels in that planted run, unplanted ones included), which is what compare's
relative test, the one that decided these rows, is built to find. Printed: detection per bin of each truth over
the reported change, and the rows of the 0.8-1.25x bin by their reason.

    python tests/benchmarks/verdicts/calibration9_diag.py > tests/benchmarks/verdicts/calibration9_diag.txt
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from evaluate import log_value, share  # noqa: E402
from evaluate6 import compare_runs, load_side, split  # noqa: E402

DATA = HERE / "h200" / "data9" / "p16"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
BINS = (("<0.8x", 0.0, 0.8), ("0.8-1.25x", 0.8, 1.2500001), ("1.25-2x", 1.2500001, 2.0), (">=2x", 2.0, math.inf))


def process_logs(whole: Path, parts: Path) -> list[dict[str, float]]:
    """Each worker's `log_value` of a whole `--processes` file, from its parts in `parts` (`evaluate6.split`),
    as `evaluate5.py` takes a run's real change: the mean over workers of each worker's mean ln time."""
    return [log_value(p) for p in sorted(parts.glob(f"{whole.stem}-p*.json"))]


def mean_of(logs: list[dict[str, float]], name: str) -> float:
    return statistics.fmean(v[name] for v in logs)


@dataclass(frozen=True)
class Planted:
    """A planted run: its file, its kernels' planted fractions, each kernel's real change (ln: the run's
    mean over workers against the A/A runs') and the median of those over the suite's kernels."""

    path: Path
    fractions: dict[str, float]
    real: dict[str, float]
    centre: float


def collection(d: Path, parts: Path) -> tuple[list[Path], list[Planted]]:
    """Size folder `d`'s A/A files in their order and its planted runs with their real changes, from the
    files split into `parts` (`evaluate6.split`)."""
    aa = sorted((p for p in d.glob("aa-*.json") if p.stem.split("-")[1].isdigit()),
                key=lambda p: int(p.stem.split("-")[1]))
    aa_logs = [v for p in aa for v in process_logs(p, parts)]
    planted = []
    for k in (1, 2, 3):
        path = d / f"planted-{k}.json"
        if not path.exists():
            continue
        pv = process_logs(path, parts)
        real = {n: mean_of(pv, n) - mean_of(aa_logs, n) for n in pv[0]}
        fractions = json.loads((d / f"plant-{k}.json").read_text())["fraction"]
        planted.append(Planted(path, fractions, real, statistics.median(real.values())))
    return aa, planted


def rows_of(d: Path, parts: Path) -> list[dict[str, object]]:
    """Every planted row of size folder `d` (its files split into `parts`) with its two truths."""
    aa, planted = collection(d, parts)
    side = {p: load_side(p) for p in (*aa, *(run.path for run in planted))}
    out: list[dict[str, object]] = []
    for run in planted:
        for a in aa:
            for base, head, want in ((a, run.path, "regression"), (run.path, a, "improvement")):
                c = compare_runs(side[base], side[head]).to_dict()
                for r in c["specializations"]:
                    name = r["name"]
                    if name not in run.fractions or not r.get("min_detectable_change"):
                        continue
                    mdc = float(r["min_detectable_change"])
                    out.append({"absolute": abs(math.expm1(run.real[name])) / mdc,
                                "relative": abs(math.expm1(run.real[name] - run.centre)) / mdc,
                                "hit": r["verdict"] == want, "reason": r["reason_kind"],
                                "test_relative": "relative to the suite" in r["test"]})
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="a folder of SIZE folders of whole `--processes` files")
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if (args.data / s).is_dir()]
    shown = args.data.relative_to(HERE) if args.data.is_relative_to(HERE) else args.data
    print("# Detection at the reported detectable change, by the truth it is judged against (calibration9_diag.py)\n")
    print(f"{'In sample (read after `evaluate9.txt`). ' if args.data == DATA else ''}`{shown}`, one `--processes` "
          "file a side; every planted kernel in every planted-against-A/A pair, both ways. Each cell: found the "
          "right way / rows.\n")
    print("| size | truth | " + " | ".join(b[0] for b in BINS) + " | rows the relative test decided |")
    print("|---|---|" + "---|" * len(BINS) + "---|")
    reasons: dict[str, collections.Counter[str]] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            split(args.data / size, Path(tmp))
            rows = rows_of(args.data / size, Path(tmp))
        for truth in ("absolute", "relative"):
            cells = []
            for _, lo, hi in BINS:
                inside = [r for r in rows if lo <= float(r[truth]) < hi]  # type: ignore[arg-type]
                cells.append(share(sum(bool(r["hit"]) for r in inside), len(inside)))
            rel = sum(bool(r["test_relative"]) for r in rows)
            print(f"| {size} | real change{' less the suite centre' if truth == 'relative' else ''} | "
                  + " | ".join(cells) + f" | {share(rel, len(rows))} |")
        reasons[size] = collections.Counter(
            f"{'found' if r['hit'] else 'missed'}: {r['reason']}" for r in rows
            if 0.8 <= float(r["absolute"]) < 1.25)  # type: ignore[arg-type]
    print("\nThe rows whose real change is 0.8-1.25x the reported one, by verdict and reason:\n")
    for size, counts in reasons.items():
        print(f"- {size}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
