"""Evaluate `primbench compare` on the evaluation suite's H200 runs (`collect.py`), beside the
method of main at c16539c on the same files. Written after the protocol and the method were
frozen; the data were collected at a9c1633 (protocol frozen), the method frozen at the commit
that adds this file.

    python tests/benchmarks/verdicts/evaluate.py > tests/benchmarks/verdicts/evaluate.txt
    python tests/benchmarks/verdicts/evaluate.py --data DIR --suite tests/benchmarks/verdicts/eval_suite2.py

`--data` (default h200/data) is `collect.py`'s output folder, `--suite` (default eval_suite.py) the
suite it ran: its `KERNELS` give each kernel's short label (its op), its `SUMMARY` the line "Kernels".

Per size:
* A/A: every ordered pair of the 8 identical-code processes (56): the share exiting 1, the share
  of rows called unchanged, the median smallest detectable change per kernel; and pooled, 2 and 3
  runs a side (disjoint processes).
* Planted: each of the 3 planted processes against each A/A one, both ways (48 pairs): per
  planted fraction, how often the row was flagged the right way; the change each kernel really
  showed (its planted process against the mean of the A/A processes); detection binned by that
  change over the reported smallest detectable change (0.8-1.25x: should be 70-90 %; 2x or more:
  95 %); unplanted rows flagged in planted pairs.
* Runs without rounds: the same files with their rounds dropped (each run one value, as the C++
  primbench writes): A/A exit 1, and the planted 5 % rows found.
* Wall time per specialization: a process's wall time over its 10 specializations (setup,
  imports and compilation included), and the measurement's own (the specializations' host time).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from collect import SUITE, load_suite  # noqa: E402

from primbench.compare.core import compare_runs  # noqa: E402
from primbench.results import CONTEXT_ONLY_UPGRADES, RESULTS_VERSION, load_results  # noqa: E402
from primbench.rounds import measured_rounds  # noqa: E402

OLD = "c16539c"
DATA = HERE / "h200" / "data"
SIZES = ("64KiB", "1MiB", "4MiB", "64MiB")
OLD_SCRIPT = r"""
import json, sys
from primbench.compare.core import compare_runs, load_side
pairs = json.loads(sys.stdin.read())
out = []
for b, h in pairs:
    c = compare_runs([r for p in b for r in load_side(p)], [r for p in h for r in load_side(p)])
    out.append({"failed": c.failed(), "rows": {r.name: [r.verdict.value, r.min_detectable_change] for r in c.rows}})
print(json.dumps(out))
"""


def new_method(pairs: list[tuple[list[Path], list[Path]]], cache: dict[Path, object]) -> list[dict]:
    out = []
    for b, h in pairs:
        side = [[cache.setdefault(p, load_results(p)) for p in s] for s in (b, h)]
        c = compare_runs(side[0], side[1])  # type: ignore[arg-type]
        out.append({"failed": c.failed(),
                    "rows": {r.name: [r.verdict.value, r.min_detectable_change] for r in c.rows}})
    return out


#: The newest results version the method of `OLD` reads.
OLD_NEWEST_VERSION = "4.4.0"


@functools.cache
def readable_by_old(p: Path, tree: Path) -> Path:
    """`p` as the method of `OLD` can read it: a file newer than it knows, relabelled
    `OLD_NEWEST_VERSION` (every upgrade since changes the context alone, `CONTEXT_ONLY_UPGRADES`, and
    that loader ignores the context fields it does not know); an older file as it is. Each file
    is read (and written) once per evaluation, however many pairs it is in."""
    doc = json.loads(p.read_text())
    version = doc["context"].get("results_version", "")
    if tuple(map(int, version.split("."))) > tuple(map(int, OLD_NEWEST_VERSION.split("."))):
        if version not in CONTEXT_ONLY_UPGRADES | {RESULTS_VERSION}:
            raise SystemExit(f"error: {p}: results {version}: not known to be readable by {OLD}")
        target = tree.parent / "for-old" / f"{p.parent.name}-{p.name}"
        target.parent.mkdir(exist_ok=True)
        doc["context"]["results_version"] = OLD_NEWEST_VERSION
        target.write_text(json.dumps(doc))
        return target
    return p


def old_tree(folder: Path, commit: str = OLD) -> Path:
    """The method of `commit` (`OLD` by default) unpacked into FOLDER/old (FOLDER/COMMIT for another
    commit): its primbench, compare and history, for `old_method`."""
    tree = folder / ("old" if commit == OLD else commit)
    tree.mkdir()
    archive = subprocess.run(["git", "archive", commit, "primbench", "compare", "history"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def old_method(pairs: list[tuple[list[Path], list[Path]]], tree: Path, relabel: bool = True) -> list[dict]:
    """The verdicts of the method in `tree` (`old_tree`) on the pairs, in a process of its own;
    `relabel`: the files made readable by `OLD`'s loader first (`readable_by_old`), not for a tree
    that reads today's files as they are."""
    if relabel:
        pairs = [([readable_by_old(p, tree) for p in b], [readable_by_old(p, tree) for p in h]) for b, h in pairs]
    payload = json.dumps([([str(p) for p in b], [str(p) for p in h]) for b, h in pairs])
    proc = subprocess.run([sys.executable, "-c", OLD_SCRIPT], input=payload, capture_output=True, text=True,
                          cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
    if proc.returncode:
        raise SystemExit(f"error: the method in {tree.name} failed: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout)


def strip_rounds(p: Path, workdir: Path) -> Path:
    """The file as a run without rounds writes it: one value per specialization."""
    target = workdir / f"{p.parent.name}-{p.stem}-norounds.json"
    if not target.exists():
        doc = json.loads(p.read_text())
        for s in doc["specializations"]:
            s.pop("rounds", None)
            s.pop("between_rounds", None)
        target.write_text(json.dumps(doc))
    return target


def log_value(p: Path) -> dict[str, float]:
    """Each kernel's mean ln(GPU time per call) over its measured rounds."""
    out = {}
    for s in json.loads(p.read_text())["specializations"]:
        r = [x["gpu_ms_per_call"] for x in s.get("rounds") or []]
        r = r[measured_rounds(len(r))]
        if r:
            out[s["name"]] = statistics.fmean(math.log(v) for v in r)
    return out


def pct(x: float | None) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x * 100:.2f} %"


def share(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n * 100:.0f} %)" if n else "0/0"


def aa_stats(res: list[dict]) -> tuple[int, int, int, int, dict[str, list[float]]]:
    failed = sum(r["failed"] for r in res)
    rows = [v for r in res for v in r["rows"].values()]
    unchanged = sum(v[0] == "unchanged" for v in rows)
    mdc: dict[str, list[float]] = {}
    for r in res:
        for name, (_, m) in r["rows"].items():
            if m is not None:
                mdc.setdefault(name, []).append(m)
    return failed, len(res), unchanged, len(rows), mdc


def wall(data: Path, size: str, count: int) -> tuple[float, float]:
    """A process's wall time and its specializations' host time, both per specialization (`count`
    specializations a process)."""
    log = (data / size / "collect.log").read_text()
    walls = [float(m.group(1)) for m in re.finditer(r"aa-\d+\.json: exit 0, wall ([\d.]+) s", log)]
    host = [sum(s["elapsed_secs"]["host"] for s in json.loads(f.read_text())["specializations"]) / count
            for f in sorted((data / size).glob("aa-*.json"))]
    return statistics.median(walls) / count, statistics.median(host)


def header(data: Path, suite: Path, summary: str) -> str:
    """The title and the line saying where the data are, the commit they were collected at, and the kernels."""
    runs = [*data.glob("*/aa-*.json"), *data.glob("*/planted-*.json")]
    commits = sorted({json.loads(f.read_text())["context"]["general"]["commit_hash"] for f in runs})
    where = data.relative_to(ROOT) if data.is_relative_to(ROOT) else data
    title = "the evaluation suite" if suite == SUITE else suite.name
    return (f"# Verdicts on {title} (H200; new method vs {OLD})\n\n"
            f"Data: {where} (collected at {', '.join(commits)}, default settings). Kernels: {summary}.\n")


def planted_stats(pairs: list, res: list[dict], plants: list[dict], actual: dict[tuple[int, str], float]
                  ) -> tuple[dict[float, list[int]], dict[str, list[int]], list[int]]:
    """Planted pairs: per planted fraction [found the right way, rows]; the same binned by the real
    change over the reported detectable change; unplanted rows [flagged, rows]."""
    det = {0.01: [0, 0], 0.02: [0, 0], 0.05: [0, 0]}
    bins = {"0.8-1.25x": [0, 0], ">=2x": [0, 0]}
    unplanted = [0, 0]
    for (b, h), one in zip(pairs, res, strict=True):
        head_planted = h[0].name.startswith("planted")
        k = int((h[0] if head_planted else b[0]).stem.split("-")[1]) - 1
        want = "regression" if head_planted else "improvement"
        for name, (verdict, m) in one["rows"].items():
            frac = plants[k]["fraction"].get(name)
            if frac is None:
                unplanted[1] += 1
                unplanted[0] += verdict in ("regression", "improvement")
                continue
            if (k, name) not in actual:
                continue  # the kernel failed in these runs: nothing was planted that could be found
            hit = verdict == want
            det[frac][0] += hit
            det[frac][1] += 1
            if m:
                ratio = abs(actual[(k, name)]) / m
                key = "0.8-1.25x" if 0.8 <= ratio <= 1.25 else ">=2x" if ratio >= 2 else None
                if key:
                    bins[key][0] += hit
                    bins[key][1] += 1
    return det, bins, unplanted


def no_rounds_found(pairs: list, res: list[dict], plants: list[dict]) -> list[int]:
    """Runs without rounds, planted pairs: the 5 % rows [found the right way, rows]."""
    nr5 = [0, 0]
    for (b, h), one in zip(pairs, res, strict=True):
        head_planted = "planted" in h[0].name
        k = int(re.search(r"planted-(\d)", (h[0] if head_planted else b[0]).name).group(1)) - 1
        want = "regression" if head_planted else "improvement"
        for name, (verdict, _) in one["rows"].items():
            if plants[k]["fraction"].get(name) == 0.05:
                nr5[1] += 1
                nr5[0] += verdict == want
    return nr5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="collect.py's output folder (default: h200/data)")
    ap.add_argument("--suite", type=Path, default=SUITE, help="the suite collected (default: eval_suite.py)")
    ap.add_argument("--sizes", default=",".join(SIZES), help="sizes to evaluate, comma-separated (default: all four)")
    args = ap.parse_args()
    data, suite_path = args.data.resolve(), args.suite.resolve()
    for path, what in ((data, "--data"), (suite_path, "--suite")):
        if not path.exists():
            print(f"error: {what} {path}: no such file or folder", file=sys.stderr)
            raise SystemExit(2)
    suite = load_suite(suite_path)
    labels = {f"op: {op}, type: {t}": op for op, t in suite.KERNELS}
    with tempfile.TemporaryDirectory() as tmp:
        tree = old_tree(Path(tmp))
        work = Path(tmp) / "work"
        work.mkdir()
        print(header(data, suite_path, suite.SUMMARY))
        summary = []
        for size in args.sizes.split(","):
            d = data / size
            aa = [d / f"aa-{k}.json" for k in range(1, 9) if (d / f"aa-{k}.json").exists()]  # 8 (7: data3 64 KiB)
            planted = [d / f"planted-{k}.json" for k in range(1, 4)]
            plants = [json.loads((d / f"plant-{k}.json").read_text()) for k in range(1, 4)]
            cache: dict[Path, object] = {}
            aa_pairs = [([a], [b]) for a, b in itertools.permutations(aa, 2)]
            pooled2 = [([aa[0], aa[1]], [aa[2], aa[3]]), ([aa[4], aa[5]], [aa[6], aa[7]]),
                       ([aa[2], aa[3]], [aa[0], aa[1]]), ([aa[6], aa[7]], [aa[4], aa[5]])] if len(aa) == 8 else [
                       ([aa[0], aa[1]], [aa[2], aa[3]]), ([aa[2], aa[3]], [aa[0], aa[1]])]
            pooled3 = [(aa[0:3], aa[3:6]), (aa[3:6], aa[0:3]), (aa[5:8], aa[0:3]), (aa[0:3], aa[5:8])] if len(
                aa) == 8 else [(aa[0:3], aa[3:6]), (aa[3:6], aa[0:3])]
            pl_pairs = [([a], [p]) for p in planted for a in aa] + [([p], [a]) for p in planted for a in aa]
            nr_aa = [([strip_rounds(a, work)], [strip_rounds(b, work)]) for (a,), (b,) in aa_pairs]
            nr_pl = [([strip_rounds(a, work)], [strip_rounds(b, work)]) for (a,), (b,) in pl_pairs]
            results = {}
            for label, method in (("new", lambda ps, c=cache: new_method(ps, c)),
                                  ("old", lambda ps: old_method(ps, tree))):
                results[label] = {k: method(v) for k, v in (("aa", aa_pairs), ("p2", pooled2), ("p3", pooled3),
                                                             ("pl", pl_pairs), ("nr_aa", nr_aa), ("nr_pl", nr_pl))}
            # the change each planted kernel really showed
            aa_logs = [log_value(a) for a in aa]
            actual: dict[tuple[int, str], float] = {}
            for k, p in enumerate(planted):
                pv = log_value(p)
                for name in plants[k]["fraction"]:
                    base = statistics.fmean(v[name] for v in aa_logs)
                    actual[(k, name)] = math.expm1(pv[name] - base)
            print(f"\n## {size}\n")
            count = len(suite.KERNELS)
            per_call, host = wall(data, size, count)
            print(f"Wall time per specialization: {per_call:.2f} s per process / {count} (imports, setup and "
                  f"compilation included); the measurement's own {host:.2f} s (median of the {len(aa)} A/A "
                  "processes).\n")
            print("| | new | " + OLD + " |")
            print("|---|---|---|")
            lines: dict[str, list[str]] = {}
            for label in ("new", "old"):
                r = results[label]
                f, n, u, nrows, mdc = aa_stats(r["aa"])
                f2, n2, u2, r2, _ = aa_stats(r["p2"])
                f3, n3, u3, r3, _ = aa_stats(r["p3"])
                nf, nn, nu, nrr, _ = aa_stats(r["nr_aa"])
                med = statistics.median(statistics.median(v) for v in mdc.values()) if mdc else float("nan")
                kernels = ", ".join(f"{labels.get(name, name)} {pct(statistics.median(v))}"
                                    for name, v in sorted(mdc.items()))
                det, bins, unplanted = planted_stats(pl_pairs, r["pl"], plants, actual)
                nr5 = no_rounds_found(nr_pl, r["nr_pl"], plants)
                lines.setdefault("A/A ordered pairs exiting 1", []).append(share(f, n))
                lines.setdefault("A/A rows unchanged", []).append(share(u, nrows))
                lines.setdefault("median smallest detectable change (median per kernel)", []).append(pct(med))
                lines.setdefault("per kernel", []).append(kernels)
                for frac, (hit, tot) in det.items():
                    lines.setdefault(f"planted {frac * 100:g} % flagged the right way", []).append(share(hit, tot))
                for key, (hit, tot) in bins.items():
                    lines.setdefault(f"planted, real change {key} the reported detectable change, found", []).append(
                        share(hit, tot))
                lines.setdefault("unplanted rows flagged in planted pairs", []).append(share(*unplanted))
                lines.setdefault("A/A pooled 2 runs a side: exit 1; rows unchanged", []).append(
                    f"{share(f2, n2)}; {share(u2, r2)}")
                lines.setdefault("A/A pooled 3 runs a side: exit 1; rows unchanged", []).append(
                    f"{share(f3, n3)}; {share(u3, r3)}")
                lines.setdefault("no rounds: A/A exit 1; rows unchanged", []).append(
                    f"{share(nf, nn)}; {share(nu, nrr)}")
                lines.setdefault("no rounds: planted 5 % found", []).append(share(*nr5))
                summary.append((size, label, f / n, u / nrows, med))
            for key, (new, old) in lines.items():
                print(f"| {key} | {new} | {old} |")
            print("\nReal change of each planted kernel (planted process against the A/A mean): " + "; ".join(
                f"{labels.get(name, name)} {plants[k]['fraction'][name] * 100:g} % -> {pct(v)}"
                for (k, name), v in sorted(actual.items())))
        print("\n## Summary\n")
        print("| size | method | A/A exit 1 | A/A unchanged | median detectable |")
        print("|---|---|---|---|---|")
        for size, label, f, u, med in summary:
            print(f"| {size} | {label if label == 'new' else OLD} | {f * 100:.1f} % | {u * 100:.0f} % | {pct(med)} |")


if __name__ == "__main__":
    main()
