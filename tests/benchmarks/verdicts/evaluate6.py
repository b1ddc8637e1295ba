"""Evaluate `primbench run --processes 4` (`eval6-plan.md`) on the sixth collection (`h200/data6`):
each run is one results.json of 4 worker processes; a side of a comparison is one file. Written
after the protocol and the method were frozen (the plan's commit), as the plan says.

    python tests/benchmarks/verdicts/evaluate6.py > tests/benchmarks/verdicts/evaluate6.txt

Each file is split into its processes exactly as compare splits it (`Results.per_process`), written
as one file per process, and evaluated by `evaluate5.py`'s statistics: 4 processes a side, each
run's process 0 alone, and the method of c16539c with 4 processes a side. First it checks that
compare given the whole files (`load_side`) says what it says given the split files.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import evaluate5  # noqa: E402

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.results import load_results  # noqa: E402

DATA = HERE / "h200" / "data6"
SIZES = ("1MiB", "4MiB")


def split(src: Path, dst: Path) -> int:
    """SRC/SIZE/{aa,planted}-K.json written as DST/SIZE/LABEL-pJ.json, one per process (as
    `Results.per_process` splits them: each process's rounds numbered from 0, no ``process`` key),
    plant files copied, collect.log's lines renamed to the first part (a run's whole wall). Returns
    how many files were split."""
    count = 0
    for f in sorted(src.glob("*.json")):
        if not re.fullmatch(r"(aa|planted)-\d+\.json", f.name):
            if f.name.startswith("plant-"):
                shutil.copy(f, dst / f.name)
            continue
        doc = json.loads(f.read_text())
        processes = sorted({r["process"] for s in doc["specializations"] for r in s.get("rounds", [])})
        for j, k in enumerate(processes, start=1):
            part = json.loads(json.dumps(doc))
            part["context"]["settings"].pop("processes", None)
            for s in part["specializations"]:
                own = [r for r in s.get("rounds", []) if r["process"] == k]
                for i, r in enumerate(own):
                    r["round"] = i
                    del r["process"]
                s["rounds"] = own
                if s.get("elapsed_secs"):  # the process's own share of the merged measurement
                    s["elapsed_secs"]["host"] = sum(r["elapsed_secs"]["host"] for r in own)
            (dst / f"{f.stem}-p{j}.json").write_text(json.dumps(part))
        count += 1
    log = (src / "collect.log").read_text()
    (dst / "collect.log").write_text(re.sub(r"((?:aa|planted)-\d+)\.json:", r"\1-p1.json:", log))
    return count


def _parts(folder: Path, stem: str) -> list[Path]:
    """STEM-pJ.json of `split` in the processes' order (J as a number: p2 before p10, as `load_side`
    orders a whole file's processes; by name, 16 parts summed in another order differ in the last bits)."""
    return sorted(folder.glob(f"{stem}-p*.json"), key=lambda p: int(p.stem.rsplit("-p", 1)[1]))


def same_through_load_side(d: Path) -> tuple[int, int]:
    """Ordered A/A pairs where compare on the whole files (split by `load_side`) gives the JSON it
    gives on the split files of `split`."""
    whole = sorted(f for f in d.glob("aa-*.json") if re.fullmatch(r"aa-\d+\.json", f.name))
    same = total = 0
    for a, b in itertools.islice(itertools.permutations(whole, 2), 12):
        x = compare_runs(load_side(a), load_side(b)).to_dict()
        sa = [load_results(p) for p in _parts(SPLIT / d.name, a.stem)]
        sb = [load_results(p) for p in _parts(SPLIT / d.name, b.stem)]
        y = compare_runs(sa, sb).to_dict()
        for doc in (x, y):  # what names the files differs: the whole file against its parts
            doc.pop("base"), doc.pop("head"), doc.pop("context")
            # and whether a side is one file of workers, which compare warns of (f3864c0) for the whole file only
            doc["warnings"] = [w for w in doc["warnings"] if "one run of several worker processes" not in w]
            for row in doc["specializations"]:
                for side in ("base", "head"):
                    if isinstance(row.get(side), dict):
                        row[side].pop("source", None)
        same += x == y
        total += 1
    return same, total


SPLIT = Path()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args()
    sizes = args.sizes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        checks = split_sizes(args.data, sizes, Path(tmp))
        evaluate5.main(["--data", str(SPLIT), "--sizes", ",".join(sizes)],
                       title="`primbench run --processes 4`, one file a side",
                       protocol="each run one `--processes 4` file: 4 workers, each `--rounds 4` and a quarter "
                                "of the default 1 s", shown=args.data)
        print_split(checks)


def split_sizes(data: Path, sizes: list[str], folder: Path) -> list[tuple[str, int, int, int]]:
    """Every size's files split into FOLDER/split (`SPLIT` from then on), each with its check that
    compare says the same on the whole files (`same_through_load_side`): (size, files, same, pairs)."""
    global SPLIT
    SPLIT = folder / "split"
    checks = []
    for size in sizes:
        (SPLIT / size).mkdir(parents=True)
        n = split(data / size, SPLIT / size)
        checks.append((size, n, *same_through_load_side(data / size)))
    return checks


def print_split(checks: list[tuple[str, int, int, int]]) -> None:
    print("\n## The split\n")
    for size, n, same, total in checks:
        print(f"{size}: {n} files split into their processes; compare on the whole files (load_side) and on the "
              f"split files gives the same JSON in {same} of {total} ordered A/A pairs")


if __name__ == "__main__":
    main()
