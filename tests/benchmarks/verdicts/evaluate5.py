"""Evaluate the several-process protocol (`eval5-plan.md`) on the fifth suite's H200 runs (`h200/data5`):
a run is 4 processes (`collect.py --processes 4`), a side of a comparison is one run's 4 files.
Written after the protocol and compare's method were frozen (e89ff37) and after the files were
committed, as the plan says.

    python tests/benchmarks/verdicts/evaluate5.py > tests/benchmarks/verdicts/evaluate5.txt

Per size, beside each other on the same files: compare at this commit with 4 processes a side, the
same with one process a side (each run's first process), and the method of c16539c with 4 processes
a side. A/A: every ordered pair of the 8 A/A runs (56; 6 runs, 30 pairs, at 64 KiB). Planted: each
of the 3 planted runs against each A/A run, both ways (48 pairs; 36 at 64 KiB), judged against the
change each kernel really showed (its planted run's mean over 4 processes against the mean of every A/A process).
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import json  # noqa: E402

from collect import load_suite  # noqa: E402
from evaluate import OLD, aa_stats, log_value, new_method, old_method, old_tree, pct, planted_stats, share  # noqa: E402

DATA = HERE / "h200" / "data5"
SUITE5 = HERE / "eval_suite5.py"
SIZES = ("64KiB", "256KiB", "2MiB")
PROCESSES = 4


def run_files(d: Path, label: str) -> list[Path]:
    return [d / f"{label}-p{j}.json" for j in range(1, PROCESSES + 1)]


def aa_runs(d: Path) -> int:
    """How many A/A runs the size has (8; 6 at 64 KiB, the plan's addendum)."""
    return sum(1 for k in range(1, 9) if all(f.exists() for f in run_files(d, f"aa-{k}")))


def planted_runs(d: Path) -> int:
    """How many planted runs the size has whole (every file of the run there; 3 at most)."""
    return sum(1 for k in range(1, 4) if all(f.exists() for f in run_files(d, f"planted-{k}")))


def first_processes(pairs: list[tuple[list[Path], list[Path]]]) -> list[tuple[list[Path], list[Path]]]:
    """The same pairs with one process a side: each run's first."""
    return [([b[0]], [h[0]]) for b, h in pairs]


def wall(d: Path, count: int) -> tuple[float, float]:
    """A run's wall time (its 4 processes, imports included) and its measurement's own host time,
    both per specialization (medians over the A/A runs)."""
    log = (d / "collect.log").read_text()
    walls: dict[str, float] = {}
    for m in re.finditer(r"(aa-\d+)-p\d\.json: exit \d+, wall ([\d.]+) s", log):  # exit 1: a kernel failed
        walls[m.group(1)] = walls.get(m.group(1), 0.0) + float(m.group(2))
    host = []
    for k in range(1, aa_runs(d) + 1):
        files = run_files(d, f"aa-{k}")
        host.append(sum(s["elapsed_secs"]["host"] for f in files for s in json.loads(f.read_text())["specializations"]
                        if s.get("elapsed_secs"))
                    / count)
    return statistics.median(walls.values()) / count, statistics.median(host)


def card(data: Path) -> str:
    """The GPU model the files were measured on, as the title names it (H200, H100)."""
    names = {json.loads(f.read_text())["context"]["general"]["gpu"]["name"] for f in data.glob("*/*-p*.json")}
    return ", ".join(sorted(m.group(0) if (m := re.search(r"[A-Z]\d{3}", n)) else n for n in names))


def main(argv: list[str] | None = None, title: str = "a run of 4 processes a side",
         protocol: str = "each process `--rounds 4 --min-secs 0.25`", shown: Path | None = None,
         suite_path: Path = SUITE5,
         extra: dict[str, Callable[[list[tuple[list[Path], list[Path]]]], list[dict]]] | None = None,
         new: Callable[[list[tuple[list[Path], list[Path]]], dict[Path, Any]], list[Any]] = new_method) -> None:
    """Print the evaluation; `suite_path` names the suite the files ran, `extra` more methods (a
    label and a function of the pairs, as `old_method`) beside the three, `new` how today's method
    reads and judges the pairs (`new_method`: each file whole, as one run)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sizes", default=",".join(SIZES))
    args = ap.parse_args(argv)
    where = shown or args.data
    suite = load_suite(suite_path)
    labels = {f"op: {op}, type: {t}": op for op, t in suite.KERNELS}
    commits = sorted({json.loads(f.read_text())["context"]["general"]["commit_hash"]
                      for f in args.data.glob("*/*-p*.json")})
    print(f"# Verdicts on {suite_path.name}: {title} ({card(args.data)})\n")
    print(f"Data: {where.relative_to(ROOT) if where.is_relative_to(ROOT) else where} (collected at "
          f"{', '.join(commits)}; {protocol}). Kernels: {suite.SUMMARY}.")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = old_tree(Path(tmp))
        for size in args.sizes.split(","):
            d = args.data / size
            aa = [run_files(d, f"aa-{k}") for k in range(1, aa_runs(d) + 1)]
            planted = [run_files(d, f"planted-{k}") for k in range(1, planted_runs(d) + 1)]
            plants = [json.loads((d / f"plant-{k}.json").read_text()) for k in range(1, len(planted) + 1)]
            aa_pairs = [(a, b) for a, b in itertools.permutations(aa, 2)]
            pl_pairs = [(a, p) for p in planted for a in aa] + [(p, a) for p in planted for a in aa]
            cache: dict[Path, object] = {}
            methods = {
                f"new, {PROCESSES} processes a side": lambda ps, c=cache: new(ps, c),
                "new, 1 process a side": lambda ps, c=cache: new(first_processes(ps), c),
                f"{OLD}, {PROCESSES} processes a side": lambda ps: old_method(ps, tree),
                **(extra or {}),
            }
            aa_logs = [log_value(f) for run in aa for f in run]
            actual: dict[tuple[int, str], float] = {}
            for k, run in enumerate(planted):
                pv = [log_value(f) for f in run]
                for name in plants[k]["fraction"]:
                    if any(name not in v for v in (*aa_logs, *pv)):
                        continue  # the kernel failed (an error row): no change to judge against
                    base = statistics.fmean(v[name] for v in aa_logs)
                    actual[(k, name)] = math.expm1(statistics.fmean(v[name] for v in pv) - base)
            count = len(suite.KERNELS)
            per_spec, host = wall(d, count)
            print(f"\n## {size}\n")
            print(f"Wall time per specialization: {per_spec:.2f} s a run of {PROCESSES} processes / {count} "
                  "(imports, setup "
                  f"and compilation included); the measurement's own {host:.2f} s (medians of the {len(aa)} A/A "
                  "runs).\n")
            print("| | " + " | ".join(methods) + " |")
            print("|---|" + "---|" * len(methods))
            lines: dict[str, list[str]] = {}
            for label, method in methods.items():
                ra, rp = method(aa_pairs), method(pl_pairs)
                f, n, u, nrows, mdc = aa_stats(ra)
                med = statistics.median(statistics.median(v) for v in mdc.values()) if mdc else float("nan")
                det, bins, unplanted = planted_stats(pl_pairs, rp, plants, actual)
                lines.setdefault("A/A ordered pairs exiting 1", []).append(share(f, n))
                lines.setdefault("A/A rows unchanged", []).append(share(u, nrows))
                lines.setdefault("median smallest detectable change (median per kernel)", []).append(pct(med))
                lines.setdefault("per kernel", []).append(", ".join(
                    f"{labels.get(k, k)} {pct(statistics.median(v))}" for k, v in sorted(mdc.items())))
                for frac, (hit, tot) in det.items():
                    lines.setdefault(f"planted {frac * 100:g} % flagged the right way", []).append(share(hit, tot))
                for key, (hit, tot) in bins.items():
                    lines.setdefault(f"planted, real change {key} the reported detectable change, found",
                                     []).append(share(hit, tot))
                lines.setdefault("unplanted rows flagged in planted pairs", []).append(share(*unplanted))
                summary.append((size, label, f, n, u, nrows, med))
            for key, vals in lines.items():
                print(f"| {key} | " + " | ".join(vals) + " |")
            print("\nReal change of each planted kernel (planted run against the A/A mean): " + "; ".join(
                f"{labels.get(name, name)} {plants[k]['fraction'][name] * 100:g} % -> {pct(v)}"
                for (k, name), v in sorted(actual.items())))
    print("\n## Summary\n")
    print("| size | method | A/A exit 1 | A/A unchanged | median detectable |")
    print("|---|---|---|---|---|")
    for size, label, f, n, u, nrows, med in summary:
        print(f"| {size} | {label} | {share(f, n)} | {share(u, nrows)} | {pct(med)} |")


if __name__ == "__main__":
    main()
