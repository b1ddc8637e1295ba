"""`compare_runs` of every pair the verdict evaluations (`tests/benchmarks/verdicts/evaluate.py`)
judge, in two checkouts, byte for byte: the JSON of each comparison (`render.render_json`), hashed.

    python tests/benchmarks/compare_scale/same_aa_pairs.py OLD_ROOT [--new-root ROOT] > same_aa_pairs.txt

For each size of `h200/data` and `h200/data2` (the first and second suites' H200 runs): every
ordered pair of the 8 A/A processes (56), each planted process (``planted-*.json``) against each A/A
one both ways, and pooled A/A repeats (2 and 3 runs a side, disjoint processes). Each checkout runs all of
them in one process of its own (PYTHONPATH); prints a line per folder and the total; exit 1 on any
difference.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATA = ROOT / "tests" / "benchmarks" / "verdicts" / "h200"

#: Run in each checkout: the pairs (lists of base files, head files) on stdin; one hash a line.
SCRIPT = r"""
import hashlib, json, sys
from primbench.compare import render
from primbench.compare.core import compare_runs, load_side
for base, head in json.loads(sys.stdin.read()):
    c = compare_runs([r for p in base for r in load_side(p)], [r for p in head for r in load_side(p)])
    print(hashlib.sha256(render.render_json(c).encode()).hexdigest()[:16], c.failed(), flush=True)
"""


def pairs(folder: Path) -> list[tuple[list[str], list[str]]]:
    aa = [str(folder / f"aa-{i}.json") for i in range(1, 9)]
    planted = sorted(str(p) for p in folder.glob("planted-*.json"))
    out = [([b], [h]) for b, h in itertools.permutations(aa, 2)]
    out += [([p], [a]) for p in planted for a in aa] + [([a], [p]) for p in planted for a in aa]
    out += [(aa[0:2], aa[2:4]), (aa[4:6], aa[6:8]), (aa[0:3], aa[3:6]), (aa[2:5], aa[5:8])]
    return out


def run(root: Path, cases: list[tuple[list[str], list[str]]]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps(cases), capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, cwd="/", check=True)
    return done.stdout.splitlines()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("old_root", type=Path)
    parser.add_argument("--new-root", type=Path, default=ROOT)
    args = parser.parse_args()
    total = same = 0
    for folder in sorted(p for d in ("data", "data2") for p in (DATA / d).iterdir() if p.is_dir()):
        cases = pairs(folder)
        old, new = run(args.old_root, cases), run(args.new_root, cases)
        agree = sum(1 for a, b in zip(old, new, strict=True) if a == b)
        exits = sum(1 for a in new if a.endswith("True"))
        print(f"{folder.relative_to(ROOT)}: {len(cases)} comparisons, {agree} byte-identical, "
              f"{exits} would exit 1 (both checkouts)" if agree == len(cases) else
              f"{folder.relative_to(ROOT)}: {len(cases)} comparisons, {len(cases) - agree} DIFFERENT", flush=True)
        total += len(cases)
        same += agree
    print(f"total: {same} of {total} byte-identical")
    sys.exit(0 if same == total else 1)


if __name__ == "__main__":
    main()
