"""How wide compare's standard errors are against what A/A pairs show, and what pooling the run state's ratio over
a row's two sides changes (the commit after 1a6f3af, `compare.core._files_variance`).

Every A/A collection whose sides are two or more runs (files of `--processes` runs, or the default protocol's one
file of two runs), every ordered pair as the collection's own evaluation took them: two p8r2 / p8r4 files a side
(data12-14), one default-protocol file a side (data15, data16), two p16 / p16r4 files a side (data9-11, every
split of 7 files into two disjoint pairs, at most 70, as `repeats11.py`). Per cell and method: SD(z), the spread
of every row's change relative to the suite over its reported standard error (1 where the errors are right;
under 1 where they are too wide), A/A exit 1, and the median reported detectable change.

- **before**: compare at 1a6f3af, its `_files_variance` restored here: each side's files' spread moderated
  across the suite on its own one df (two files) and taken where wider than the workers' (`_take_wider`).
- **after**: compare as it is: that ratio pooled over the row's two sides (two df), then moderated.
- **no files term**: the workers' spread alone (what `_between_files` was added for on data10 / data11 at 4 MiB,
  `repeats11.txt`), for reference.

In sample, every collection: the variant was defined before any row was printed, but data16's 64 MiB row came in
the same run the choice was read from, so it is not claimed as out of sample (it agrees with the others).
Descriptive where it says SD(z).

    python tests/benchmarks/verdicts/calibration16.py > tests/benchmarks/verdicts/calibration16.txt
    (--data DIR: the collections' folder, `h200/` by default)
"""

from __future__ import annotations

import itertools
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

import primbench.compare.core as core  # noqa: E402
from primbench.compare import stats  # noqa: E402
from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.results import Results  # noqa: E402

DATA = HERE / "h200"
Pairs = list[tuple[list[Results], list[Results]]]


def two_files(folder: Path) -> Pairs:
    """Each A/A label's two files (LABEL-p1, -p2) a side, every ordered pair of labels."""
    labels = sorted({m.group(1) for f in folder.glob("aa-*-p1.json") if (m := re.match(r"(aa-\d+)-p1", f.stem))},
                    key=lambda s: int(s.split("-")[1]))
    sides = [load_side(folder / f"{label}-p1.json") + load_side(folder / f"{label}-p2.json") for label in labels]
    return list(itertools.permutations(sides, 2))


def one_file(folder: Path) -> Pairs:
    """Each A/A label's one file (two runs of the default protocol) a side, every ordered pair."""
    files = sorted((f for f in folder.glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name)),
                   key=lambda f: int(f.stem.split("-")[1]))
    sides = [load_side(f) for f in files]
    return list(itertools.permutations(sides, 2))


def split_pairs(folder: Path) -> Pairs:
    """Two files a side, every ordered split of the A/A files into two disjoint pairs (at most 70, as
    `repeats11.py`)."""
    files = sorted((f for f in folder.glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name)),
                   key=lambda f: int(f.stem.split("-")[1]))
    loaded = {f: load_side(f) for f in files}
    splits = [(b, h) for b in itertools.combinations(files, 2) for h in itertools.combinations(files, 2)
              if not set(b) & set(h)][:70]
    return [([r for f in b for r in loaded[f]], [r for f in h for r in loaded[f]]) for b, h in splits]


CELLS: tuple[tuple[str, str, Callable[[Path], Pairs]], ...] = (
    ("data12/p8r4x2", "4MiB", two_files), ("data12/p8r4x2", "1MiB", two_files),
    ("data12b/p8r4x2", "64MiB", two_files), ("data12b/p8r4x2", "64KiB", two_files),
    ("data13/p8r2x2", "4MiB", two_files), ("data13/p8r2x2", "1MiB", two_files),
    ("data13b/p8r2x2", "64MiB", two_files), ("data13b/p8r2x2", "64KiB", two_files),
    ("data14/p8r2x2", "4MiB", two_files), ("data14/p8r2x2", "1MiB", two_files), ("data14/p8r2x2", "64KiB", two_files),
    ("data15/default", "64MiB", one_file), ("data15/default", "4MiB", one_file), ("data15/default", "1MiB", one_file),
    ("data15/default", "64KiB", one_file),
    ("data9/p16", "4MiB", split_pairs), ("data10/p16", "4MiB", split_pairs),
    ("data10/p16r4", "64MiB", split_pairs), ("data10/p16r4", "4MiB", split_pairs),
    ("data10/p16r4", "1MiB", split_pairs), ("data11/p16r4", "64MiB", split_pairs),
    ("data11/p16r4", "4MiB", split_pairs), ("data11/p16r4", "1MiB", split_pairs),
    ("data11/p16r4", "64KiB", split_pairs),
    ("data16/default", "64MiB", one_file),
)


def files_variance_before(spread: np.ndarray, df: np.ndarray, use: np.ndarray, own: np.ndarray,
                          per_slot: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`core._files_variance` at 1a6f3af: each slot's files' spread moderated on its own df."""
    if int(use.sum()) < stats.PRIOR_MIN:
        return None
    moderated = stats.moderated_over(spread[use], df[use], own[use] * per_slot[use])
    if moderated is None:
        return None
    return moderated[0] / per_slot[use], moderated[1]


AFTER = core._files_variance
BETWEEN = core._between_files
METHODS: dict[str, Callable[[], None]] = {
    "before": lambda: setattr(core, "_files_variance", files_variance_before),
    "after": lambda: setattr(core, "_files_variance", AFTER),
    "no files term": lambda: setattr(core, "_between_files", lambda *a, **k: None),
}


def judged(pairs: Pairs) -> tuple[float, int, float]:
    """SD(z), exit 1 count, median detectable change (%) over the pairs, compare as it is now set."""
    z: list[float] = []
    detectable: list[float] = []
    failed = 0
    for base, head in pairs:
        c = compare_runs(base, head)
        failed += c.failed()
        for r in c.rows:
            if r.standard_error and r.relative_change is not None and r.min_detectable_change:
                z.append(float(np.log1p(r.relative_change)) / r.standard_error)
                detectable.append(r.min_detectable_change)
    return float(np.std(z)), failed, 100 * statistics.median(detectable)


def main() -> None:
    global DATA
    if sys.argv[1:2] == ["--data"]:
        DATA = Path(sys.argv[2])
    print("# compare's standard errors against A/A pairs, before and after pooling the run state's ratio over a "
          "row's two sides (calibration16.py)\n")
    print("Cells: SD(z) / A/A exit 1 / median detectable change. In sample (data16's row too: read with the rest).\n")
    print("| collection | size | pairs | " + " | ".join(METHODS) + " |")
    print("|---|---|---|" + "---|" * len(METHODS))
    sums = {m: [0, 0, 0] for m in METHODS}  # cells narrower, exits, pairs
    for data, size, make in CELLS:
        pairs = make(DATA / data / size)
        cells = []
        for name, set_method in METHODS.items():
            core._files_variance, core._between_files = AFTER, BETWEEN
            set_method()
            sd, failed, detectable = judged(pairs)
            cells.append((sd, failed, detectable))
            sums[name][1] += failed
            sums[name][2] += len(pairs)
        core._files_variance, core._between_files = AFTER, BETWEEN
        for name, cell in zip(METHODS, cells, strict=True):
            sums[name][0] += cell[2] < cells[0][2]
        text = " | ".join(f"{sd:.2f} / {failed} / {det:.2f} %" for sd, failed, det in cells)
        print(f"| {data} | {size} | {len(pairs)} | {text} |",
              flush=True)
    print()
    for name, (narrower, failed, count) in sums.items():
        print(f"- {name}: A/A exit 1 {failed}/{count} over every cell; median detectable below before's in "
              f"{narrower} of {len(CELLS)} cells")


if __name__ == "__main__":
    main()
