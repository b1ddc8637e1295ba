"""Evaluate `primbench compare` on the H200 suite runs (separate processes; see collect.py).

    python tests/benchmarks/rounds/evaluate.py > tests/benchmarks/rounds/evaluate.txt

Per data set and size: the share of ordered A/A pairs on which compare exits 1; the detection
rate of each planted change (all pairs, and pairs where the change is at least twice the row's
smallest detectable change); the median smallest detectable change per specialization; wall
time per run; the same pairs pooled two runs a side; and beside it all, the method of main at
92ce889 (run from a git worktree of that commit on the same files, written as 4.2.0).
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.compare.model import Verdict  # noqa: E402

OLD = "92ce889"
# 92ce889's layout: compare/ was a top-level package then
OLD_SCRIPT = r"""
import json, sys
from compare.core import compare_runs, load_side
pairs = json.loads(sys.stdin.read())
out = []
for b, h in pairs:
    c = compare_runs(load_side(b), load_side(h))
    out.append({"failed": c.failed(), "verdicts": {r.name: r.verdict.value for r in c.rows}})
print(json.dumps(out))
"""


def old_method(pairs: list[tuple[Path, Path]], workdir: Path, old_tree: Path) -> list[dict]:
    """compare of 92ce889 on 4.2.0 copies of the files (rounds dropped: that version has none)."""
    def downgrade(p: Path) -> str:
        target = workdir / f"{p.parent.parent.name}-{p.parent.name}-{p.name}"
        if not target.exists():
            doc = json.loads(p.read_text())
            doc["context"]["results_version"] = "4.2.0"
            doc["context"]["settings"].pop("rounds", None)
            for s in doc["specializations"]:
                s.pop("rounds", None)
                s.pop("between_rounds", None)
            target.write_text(json.dumps(doc))
        return str(target)

    payload = json.dumps([(downgrade(b), downgrade(h)) for b, h in pairs])
    proc = subprocess.run([sys.executable, "-c", OLD_SCRIPT], input=payload, capture_output=True, text=True,
                          cwd=old_tree, env={"PYTHONPATH": str(old_tree), "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(proc.stdout)


def wall_times(folder: Path) -> list[float]:
    return [float(m.group(1)) for m in re.finditer(r"wall ([0-9.]+) s", (folder / "collect.log").read_text())]


def pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def evaluate(folder: Path, old_tree: Path, workdir: Path) -> list[str]:
    aa = sorted(folder.glob("aa-*.json"))
    planted = sorted(folder.glob("planted-*.json"))
    plant = json.loads((folder / "plant.json").read_text())
    sides = {p: load_side(p) for p in [*aa, *planted]}
    lines = [f"## {folder.parent.name}/{folder.name}: {len(aa)} A/A runs, {len(planted)} planted runs, "
             f"{len(sides[aa[0]][0].specializations)} specializations"]
    walls = wall_times(folder)
    settings = sides[aa[0]][0].settings
    lines.append(f"wall time per run: median {statistics.median(walls):.1f} s "
                 f"(min {min(walls):.1f}, max {max(walls):.1f}); "
                 f"settings: rounds {settings.rounds or 1}, cache_size {settings.cache_size or None}")
    aa_pairs = [(b, h) for b, h in itertools.permutations(aa, 2)]
    new_aa = [compare_runs(sides[b], sides[h]) for b, h in aa_pairs]
    old_aa = old_method(aa_pairs, workdir, old_tree)
    fail_new = sum(c.failed() for c in new_aa)
    fail_old = sum(o["failed"] for o in old_aa)
    flags_new = sum(r.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in new_aa for r in c.rows)
    flags_old = sum(v in ("regression", "improvement") for o in old_aa for v in o["verdicts"].values())
    shifts = sum(bool(c.suite_shift and c.suite_shift.detected) for c in new_aa)
    lines.append(f"A/A ordered pairs exiting 1: new {fail_new}/{len(aa_pairs)} ({pct(fail_new / len(aa_pairs))}); "
                 f"92ce889 {fail_old}/{len(aa_pairs)} ({pct(fail_old / len(aa_pairs))})  [target <= 5 %]")
    lines.append(f"A/A specializations flagged (any direction): new {flags_new}, 92ce889 {flags_old}; "
                 f"suite-wide shifts reported (new): {shifts}/{len(aa_pairs)}")
    pooled = [(list(a), list(b)) for a, b in [((aa[0], aa[1]), (aa[2], aa[3])), ((aa[2], aa[3]), (aa[0], aa[1])),
                                                ((aa[0], aa[2]), (aa[1], aa[3])), ((aa[1], aa[3]), (aa[0], aa[2]))]]
    pooled_fail = sum(compare_runs([r for p in b for r in sides[p]], [r for p in h for r in sides[p]]).failed()
                      for b, h in pooled)
    lines.append(f"A/A pooled two runs a side: {pooled_fail}/{len(pooled)} exit 1")
    if planted:
        pl_pairs = [(b, h) for b in aa for h in planted]
        new_pl = [compare_runs(sides[b], sides[h]) for b, h in pl_pairs]
        old_pl = old_method(pl_pairs, workdir, old_tree)
        lines.append("planted change | specialization | measured change | median detectable | found (new) | "
                     "found when >= 2x detectable | found (92ce889)")
        for name, frac in plant["fraction"].items():
            rows = [c.row("suite", name) for c in new_pl]
            measured = statistics.median(-(r.change or 0) for r in rows)
            mdc = statistics.median(r.min_detectable_change or 0 for r in rows)
            found = sum(r.verdict is Verdict.REGRESSION for r in rows)
            big = [r for r in rows if abs(r.change or 0) >= 2 * (r.min_detectable_change or 1)]
            found_big = sum(r.verdict is Verdict.REGRESSION for r in big)
            old_found = sum(o["verdicts"].get(name) == "regression" for o in old_pl)
            lines.append(f"{frac * 100:.0f} % | {name} | {measured * 100:+.2f} % slower | ±{mdc * 100:.2f} % | "
                         f"{found}/{len(rows)} | {found_big}/{len(big)} | {old_found}/{len(rows)}")
        others = sum(r.verdict is Verdict.REGRESSION for c in new_pl for r in c.rows if r.name not in plant["fraction"])
        lines.append(f"unplanted specializations flagged as regressions in planted pairs: {others}")
    lines.append("median smallest detectable change per specialization (A/A pairs, new):")
    for row in new_aa[0].rows:
        vals = [c.row(row.algorithm, row.name).min_detectable_change or 0 for c in new_aa]
        lines.append(f"  {row.name}: ±{statistics.median(vals) * 100:.2f} %")
    return lines


def cross_gpu(size: str) -> list[str]:
    """A run of the same code on another physical H200 against each same-GPU A/A run."""
    other = sorted((HERE / "cross-gpu" / size).glob("aa-*.json"))
    same = sorted((HERE / "data" / size).glob("aa-*.json"))
    if not other or not same:
        return []
    comps = [compare_runs(load_side(b), load_side(h)) for o in other for s in same for b, h in ((o, s), (s, o))]
    warned = sum(any("different physical GPU" in w for w in c.warnings) for c in comps)
    shifts = [c.suite_shift.change for c in comps if c.suite_shift is not None]
    return [f"## cross-gpu/{size}: the suite on another physical H200 against the {len(same)} A/A runs of "
            f"data/{size}",
            f"ordered pairs exiting 1: {sum(c.failed() for c in comps)}/{len(comps)}; 'different physical GPU' "
            f"warned on {warned}/{len(comps)}; median |suite-wide shift| "
            f"{statistics.median(abs(x) for x in shifts) * 100 if shifts else float('nan'):.2f} %", ""]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old_tree), OLD], check=True)
        try:
            work = Path(tmp) / "files"
            work.mkdir()
            for data in ("data-v5", "data-v4", "data-v3", "data", "data-v2", "data-v1"):
                for size in ("64KiB", "1MiB", "128MiB"):
                    folder = HERE / data / size
                    if folder.is_dir():
                        print("\n".join(evaluate(folder, old_tree, work)) + "\n", flush=True)
            for size in ("64KiB", "1MiB", "128MiB"):
                print("\n".join(cross_gpu(size)), flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_tree)], check=False)


if __name__ == "__main__":
    main()
