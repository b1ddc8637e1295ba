"""Check that two checkouts of primbench give the same `primbench compare` output, byte for
byte: the JSON (every row's verdict, reason, p-values, detectable change, the summary, the
method) and the exit code, on the committed results files and on generated large ones.

    python tests/benchmarks/compare_scale/same_verdicts.py OLD_ROOT [--work DIR] [--terminal] > same_verdicts.txt

OLD_ROOT: a checkout of the code before the change (``git worktree add /tmp/base cd87fcb``);
this checkout is the new one (or ``--new-root``). Each case runs ``primbench compare ... --format json`` as a process
in each tree (PYTHONPATH), and, for history's run-to-run variability (`compare_runs`'
``run_to_run_cv``), the API on the generated files. Prints one line per case and a total; exit
1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(ROOT))

#: The committed results files compared, pair by pair (consecutive files of a directory, in
#: name order), each directory against its next, and as repeats (two files a side).
FIXTURES = ("tests/benchmarks/verdicts/h200/data/64KiB", "tests/benchmarks/verdicts/h200/data/1MiB",
            "tests/benchmarks/verdicts/h200/data/4MiB", "tests/benchmarks/verdicts/h200/data/64MiB",
            "tests/benchmarks/data/h200", "tests/gpu_results", "examples/results/h200/history",
            "tests/benchmarks/rounds/data/1MiB", "tests/benchmarks/rounds/data-v1/64KiB",
            "tests/benchmarks/energy/h200", "tests/benchmarks/graph/h200", "tests/benchmarks/loop/h200/clear_aa/L2",
            "tests/formats", "examples/results/h200")

API = r"""
import json, sys
from primbench.compare.core import compare_runs, load_side
from primbench.compare import render
base, head, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
b, h = load_side(base), load_side(head)
keys = [(s.algorithm or r.algorithm, s.name) for r in b for s in r.specializations]
cv = {k: ((0.001 + 0.002 * ((i * 7919 + seed) % 13) / 13, 3.0 + (i % 5)) if i % 3 else 0.002)
      for i, k in enumerate(keys) if i % 4}
c = compare_runs(b, h, run_to_run_cv=cv)
sys.stdout.write(render.render_json(c))
sys.stdout.write(json.dumps({"failed": c.failed()}) + "\n")
"""


def run(tree: Path, argv: list[str]) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1", "COLUMNS": "120"}
    # -P: no working directory on sys.path, which would put this checkout before PYTHONPATH's
    proc = subprocess.run([sys.executable, "-P", *argv], capture_output=True, text=True, cwd=ROOT, env=env)
    return proc.returncode, proc.stdout, proc.stderr


#: What each case writes: the JSON (every field of every row), or with --terminal the terminal table of
#: every row (``--max-rows 0``: each row's reason, which the rows write when it is first read since s9).
OUTPUT = ["--format", "json"]


def cli(*args: str) -> list[str]:
    return ["-c", "from primbench.cli import main; main()", "compare", *args, *OUTPUT]


def fixture_cases() -> list[list[str]]:
    cases: list[list[str]] = []
    dirs = [ROOT / d for d in FIXTURES]
    for d in dirs:
        files = sorted(str(p.relative_to(ROOT)) for p in d.glob("*.json"))
        cases += [cli(a, b) for a, b in itertools.pairwise(files)]
        if len(files) >= 4:
            cases.append(cli(files[0], files[1], "--", files[2], files[3]))
            cases.append(cli(files[0], files[-1], "--metric", "time"))
            cases.append(cli(files[0], files[-1], "--allow-mismatch"))  # rows not comparable, unjudged
    cases += [cli(str(a.relative_to(ROOT)), str(b.relative_to(ROOT))) for a, b in itertools.pairwise(dirs[:4])]
    return cases


def generated_cases(work: Path) -> list[list[str]]:
    from compare_speed import make_side  # 3 rounds a specialization, 0.1 % noise, every 500th moved

    work.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for name, n, batches, seed, shift in (("base", 10_000, 0, 1, 0.0), ("head", 10_000, 0, 2, 0.02),
                                          ("head2", 10_000, 0, 3, 0.0), ("bbase", 2_000, 30, 4, 0.0),
                                          ("bhead", 2_000, 30, 5, 0.03)):
        f = work / f"same-{name}-{n}.json"
        if not f.exists():
            f.write_text(json.dumps(make_side(np.random.default_rng(seed), n, batches, shift, version="4.4.0")))
        files[name] = f
    part = work / "same-head-part.json"  # a head with rows removed and others added
    if not part.exists():
        doc = json.loads(files["head"].read_text())
        doc["specializations"] = doc["specializations"][100:] + [
            dict(s, name=s["name"] + ", new") for s in doc["specializations"][:50]]
        for i, s in enumerate(doc["specializations"]):
            s["index"] = i
        part.write_text(json.dumps(doc))
    b, h, h2, bb, bh = (str(files[k]) for k in ("base", "head", "head2", "bbase", "bhead"))
    return [cli(b, h), cli(b, h2), cli(b, h, "--metric", "time"), cli(b, str(part)),
            cli(b, h2, "--", h), cli(bb, bh), cli(bb, bh, "--metric", "time"),
            ["-c", API, b, h, "1"], ["-c", API, bb, bh, "2"]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("old_root", type=Path)
    parser.add_argument("--new-root", type=Path, default=ROOT, help="the new checkout (default: this one)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/compare_scale"))
    parser.add_argument("--terminal", action="store_true", help="the terminal table of every row, not the JSON")
    args = parser.parse_args()
    if args.terminal:
        OUTPUT[:] = ["--max-rows", "0"]
    cases = fixture_cases() + generated_cases(args.work)
    differ = 0
    for argv in cases:
        old, new = run(args.old_root, argv), run(args.new_root, argv)
        same = old == new
        differ += not same
        what = " ".join(a if len(a) < 200 else "<api>" for a in argv[2:] if a != "--format" and a != "json")
        digest = hashlib.sha256(new[1].encode()).hexdigest()[:12]
        print(f"{'same' if same else 'DIFFERENT'}  exit {new[0]}  {len(new[1]):>10,} bytes  sha256 {digest}  {what}",
              flush=True)
        if not same:
            print(f"    old exit {old[0]}, new exit {new[0]}; stderr old {old[2][-300:]!r} new {new[2][-300:]!r}")
    print(f"\n{len(cases)} cases, {len(cases) - differ} identical, {differ} different")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
