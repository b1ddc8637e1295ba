"""Turn what `h200_issue26.sh` returned into issue 26's recorded tables and README figures.

    python tests/benchmarks/analyze_issue26.py FILES_AT/issue26.tar.gz     # or the issue26/ directory
    python tests/benchmarks/analyze_issue26.py OUT/issue26 --dest /tmp/check   # write elsewhere

Writes, under `--dest` (default: the checkout):

* tests/benchmarks/energy/counter_resolution.txt: the counter's update interval and step, idle
  and busy, and what a round's window of 1 s can resolve;
* tests/benchmarks/energy/joules_per_call.txt: joules per call, watts, the spread between rounds
  and the time per call of the 4 kernels at 2 sizes, runs A and B (and hot where it ran);
* tests/benchmarks/energy/twice_the_work.txt: one launch against two per call at 128 MiB, with
  the tolerance measured by the A/A pair;
* tests/benchmarks/energy/aa_planted.txt: the A/A pair and the planted pair on --metric energy
  (and time): exit codes, the rows flagged, what was expected;
* tests/benchmarks/graph/graph_column.txt and capture_errors.txt: the CUDA-graph column;
* tests/benchmarks/energy/h200/ and tests/benchmarks/graph/h200/: the raw files;
* the figures between ``<!-- issue26-figures -->`` markers in both READMEs.

Files from the fake GPU (``--fake`` runs) are refused unless ``--allow-fake`` is given (the
tests use it with a ``--dest`` of their own). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[2]
ENERGY_DIR = Path("tests/benchmarks/energy")
GRAPH_DIR = Path("tests/benchmarks/graph")
BEGIN, END = "<!-- issue26-figures -->", "<!-- /issue26-figures -->"
KERNELS = ("copy", "scale", "reduce", "fma")
PLANTED = ("copy", "fma")
#: examples/cuda_graph.py's recorded figures (docs/guide.md, tests/gpu_results/gpu-cuda_graph.log)
EXAMPLE_RECORDED = ("1 MiB: 20.6 µs a replay, 28.1 µs for the 10 launches (docs/guide.md); 21.31 and 29.97 µs at "
                    "d78df4d (tests/gpu_results/gpu-cuda_graph.log)")


# --------------------------------------------------------------------------- reading


def unpack(source: Path) -> Path:
    """The issue26/ directory of `source` (a directory, or the tarball, unpacked to a temporary one)."""
    if source.is_dir():
        return source / "issue26" if (source / "issue26").is_dir() else source
    tmp = Path(tempfile.mkdtemp(prefix="issue26-"))
    with tarfile.open(source) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / "issue26"


def load(d: Path, name: str) -> dict[str, Any] | None:
    """NAME.json, else NAME.partial.json (a run stopped at the budget), else None."""
    for candidate in (d / f"{name}.json", d / f"{name}.partial.json"):
        if candidate.is_file():
            data: dict[str, Any] = json.loads(candidate.read_text())
            if candidate.name.endswith(".partial.json"):
                data["_partial"] = True
            return data
    return None


def rc(d: Path, name: str) -> str:
    path = d / f"{name}.rc"
    return path.read_text().strip() if path.is_file() else "not run"


def specs(doc: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    if not doc:
        return {}
    return {s["name"]: s for s in doc.get("specializations", []) if not s.get("error") and not s.get("skipped")}


def energy_name(kernel: str, size: str, launches: int) -> str:
    return f"kernel: {kernel}, launches: {launches}, size: {size}"


def fmt(value: float | None, scale: float = 1.0, digits: int = 2, unit: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value * scale:.{digits}f}{unit}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A plain text table, columns left-aligned, two spaces apart."""
    body = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in body) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def round_energies(spec: Mapping[str, Any]) -> list[float]:
    """The measured rounds' joules per call (the warm-up round left out from 4 rounds on)."""
    rounds = spec.get("rounds") or []
    values = [(r.get("energy") or {}).get("joules_per_call") for r in rounds]
    values = values[1:] if len(values) >= 4 else values
    return [v for v in values if v]


def log_sd(values: Sequence[float]) -> float | None:
    logs = [math.log(v) for v in values if v > 0]
    return statistics.stdev(logs) if len(logs) > 1 else None


def run_mean(spec: Mapping[str, Any]) -> float | None:
    """A run's energy value as compare takes it: the geometric mean of its measured rounds."""
    values = round_energies(spec)
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


# --------------------------------------------------------------------------- sections


def counter_section(d: Path) -> tuple[str, dict[str, Any]]:
    data = load(d, "counter_resolution")
    if data is None:
        return f"counter_resolution: not run ({rc(d, 'counter_resolution')})\n", {}
    lines = [f"NVML nvmlDeviceGetTotalEnergyConsumption, polled as fast as Python reads it "
             f"({data.get('gpu', 'fake GPU' if data.get('fake') else '?')}; power limit "
             f"{data.get('power_limit_watts')} W)\n"]
    rows = []
    for label in ("idle", "busy"):
        s = data.get(label) or {}
        rows.append([label, str(s.get("secs")), str(s.get("reads")), str(s.get("changes")),
                     fmt(s.get("median_interval_ms"), digits=1), fmt(s.get("min_interval_ms"), digits=1),
                     fmt(s.get("max_interval_ms"), digits=1), str(s.get("median_step_mj")),
                     str(s.get("min_step_mj")), str(s.get("max_step_mj"))])
    lines.append(table(["load", "secs", "reads", "changes", "interval ms (median)", "min", "max",
                        "step mJ (median)", "min", "max"], rows))
    busy = data.get("busy") or {}
    figures: dict[str, Any] = {"interval_ms": busy.get("median_interval_ms"), "step_mj": busy.get("median_step_mj"),
                               "min_step_mj": busy.get("min_step_mj"),
                               "busy_watts": data.get("busy_power_usage_watts")}
    if busy.get("median_interval_ms") and busy.get("median_step_mj"):
        watts = busy["median_step_mj"] / busy["median_interval_ms"]  # mJ per ms = W
        figures["counter_watts"] = watts
        for window in (1.0, 2.0, 5.0):
            # each end of a window reads the counter as of its last update: up to one interval stale
            worst = 2 * busy["median_interval_ms"] / 1000 / window * 100
            lines.append(f"a {window:g} s window under this load: each end up to one interval stale, "
                         f"at most ±{worst:.1f} % (sd about {worst / 2 / math.sqrt(3) * math.sqrt(2):.1f} %)")
        lines.append(f"power from the counter's steps: {watts:.0f} W; nvmlDeviceGetPowerUsage: "
                     f"{fmt(data.get('busy_power_usage_watts'), digits=0)} W")
    lines.append("primbench.energy assumes COUNTER_UPDATE_SECS = 0.1 and flags windows under MIN_WINDOW_SECS = 1 s.")
    for label in ("idle", "busy"):
        steps = (data.get(label) or {}).get("steps") or []
        lines.append(f"\n{label}, the first changes (ms since the previous one, mJ added):")
        lines.extend(f"  +{t:8.1f} ms  +{mj} mJ" for t, mj in steps[:12])
    return "\n".join(lines) + "\n", figures


def energy_section(d: Path) -> tuple[str, dict[str, Any]]:
    a, b, hot = (load(d, n) for n in ("energy_a", "energy_b", "energy_hot"))
    sa, sb, sh = specs(a), specs(b), specs(hot)
    if not sa:
        return f"energy_a: not run or empty ({rc(d, 'energy_a')})\n", {}
    lines = ["Joules per call (the board's energy over each round's measured batches over its calls; "
             "cold cache unless 'hot'); A and B are identical runs, 10 rounds of ~1.2 s, the first a warm-up\n"]
    rows = []
    for kernel in KERNELS:
        for size in ("1MiB", "128MiB"):
            name = energy_name(kernel, size, 1)
            s = sa.get(name)
            if s is None:
                continue
            e = s.get("energy") or {}
            e_b = (sb.get(name) or {}).get("energy") or {}
            e_h = (sh.get(name) or {}).get("energy") or {}
            rows.append([kernel, size, fmt(s.get("gpu_seconds_per_call"), 1e6, 2),
                         fmt(e.get("joules_per_call"), 1e3, 3),
                         fmt(e_b.get("joules_per_call"), 1e3, 3), fmt(e_h.get("joules_per_call"), 1e3, 3),
                         fmt(e.get("watts"), digits=0), fmt(e.get("cv_between_rounds_percent"), digits=2),
                         str(e.get("rounds_too_short")), fmt(e.get("window_secs"), digits=1),
                         fmt(((s.get("rounds") or [{}])[0].get("energy") or {}).get("window_secs"), digits=2)])
    lines.append(table(["kernel", "size", "µs/call", "mJ/call A", "mJ/call B", "mJ/call hot", "W A",
                        "CV rounds %", "rounds too short", "window s", "round 1 window s"], rows))
    figures = {"rows": len(rows), "too_short": sum(int(r[8]) for r in rows if r[8].isdigit())}
    if a and a.get("_partial"):
        lines.append("energy_a was stopped at the budget: energy_a.partial.json")
    return "\n".join(lines), figures


def aa_tolerance(sa: Mapping[str, Any], sb: Mapping[str, Any],
                 size: str | None = None) -> tuple[float | None, float | None]:
    """The A/A pair's RMS and largest |ln(J_A / J_B)| over the specializations both measured."""
    diffs = []
    for name, s in sa.items():
        if name in sb and (size is None or name.endswith(f"size: {size}")):
            ja, jb = run_mean(s), run_mean(sb[name])
            if ja and jb:
                diffs.append(abs(math.log(ja / jb)))
    if not diffs:
        return None, None
    return math.sqrt(statistics.fmean(x * x for x in diffs)), max(diffs)


def twice_section(d: Path) -> tuple[str, dict[str, Any]]:
    a, b, hot = (load(d, n) for n in ("energy_a", "energy_b", "energy_hot"))
    sa, sb, sh = specs(a), specs(b), specs(hot)
    rms, worst = aa_tolerance(sa, sb, "128MiB")
    tol = worst if worst is not None else None
    lines = ["Twice the work: each kernel launched twice per call against once, at 128 MiB.",
             "J2/J1 is the ratio of joules per call, T2/T1 of GPU time per call; 'scales' is (J2/J1)/(T2/T1);",
             "marginal = J2 - J1 (one launch's energy), fixed = 2*J1 - J2 (what every call adds besides the kernel:",
             "the cache clear, the spin kernel, events, the host's gaps, idle power).",
             f"Tolerance, measured: the A/A pair's |ln(J_A/J_B)| at 128 MiB, RMS {fmt(rms, 100, 2, ' %')}, "
             f"largest {fmt(worst, 100, 2, ' %')}; a ratio checks within tolerance when |ln(ratio / expected)| "
             "is at most the sum of both terms' largest A/A difference (2x the largest).\n"]
    figures: dict[str, Any] = {"tolerance_percent": None if tol is None else 2 * tol * 100}
    for label, source in (("cold", sa), ("hot", sh)):
        rows = []
        for kernel in KERNELS:
            one, two = source.get(energy_name(kernel, "128MiB", 1)), source.get(energy_name(kernel, "128MiB", 2))
            if not one or not two:
                continue
            j1, j2 = run_mean(one), run_mean(two)
            t1, t2 = one.get("gpu_seconds_per_call"), two.get("gpu_seconds_per_call")
            if not (j1 and j2 and t1 and t2):
                continue
            rj, rt = j2 / j1, t2 / t1
            ok2 = tol is not None and abs(math.log(rj / 2)) <= 2 * tol
            oks = tol is not None and abs(math.log(rj / rt)) <= 2 * tol
            rows.append([kernel, fmt(j1, 1e3, 3), fmt(j2, 1e3, 3), fmt(rj, digits=3), fmt(rt, digits=3),
                         fmt(rj / rt, digits=3), fmt(j2 - j1, 1e3, 3), fmt(2 * j1 - j2, 1e3, 3),
                         fmt((2 * j1 - j2) / j1, 100, 1, " %"), "yes" if ok2 else "no", "yes" if oks else "no"])
            figures[f"{label}:{kernel}"] = {"j_ratio": rj, "t_ratio": rt, "twice": ok2, "scales": oks}
        if rows:
            lines.append(f"{label}:")
            lines.append(table(["kernel", "J1 mJ", "J2 mJ", "J2/J1", "T2/T1", "scales", "marginal mJ", "fixed mJ",
                                "fixed share of J1", "J2/J1 = 2 within tol", "J ~ T within tol"], rows))
        else:
            lines.append(f"{label}: not measured ({rc(d, 'energy_a' if label == 'cold' else 'energy_hot')})\n")
    return "\n".join(lines), figures


def compare_rows(doc: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return list((doc or {}).get("specializations") or [])


def aa_planted_section(d: Path) -> tuple[str, dict[str, Any]]:
    lines = ["primbench compare on the energy suite (10 rounds, one warm-up; B and C hold the 8 one-launch "
             "specializations, so A's 4 others read 'removed', which does not fail).",
             "Expected: A/A exit 0; planted (copy and fma do 10 % more work, declaring the same) exit 1, "
             "flagging planted kernels only.\n"]
    figures: dict[str, Any] = {}
    cases = (("compare_aa_energy", "A/A, --metric energy", 0), ("compare_aa_time", "A/A, --metric time", 0),
             ("compare_planted_energy", "A vs C planted, --metric energy", 1),
             ("compare_planted_energy_b", "B vs C planted, --metric energy", 1),
             ("compare_planted_time", "A vs C planted, --metric time", 1))
    rows = []
    sides = {"compare_aa_energy": ("energy_a", "energy_b", "energy"),
             "compare_aa_time": ("energy_a", "energy_b", "time"),
             "compare_planted_energy": ("energy_a", "energy_c_planted", "energy"),
             "compare_planted_energy_b": ("energy_b", "energy_c_planted", "energy"),
             "compare_planted_time": ("energy_a", "energy_c_planted", "time")}
    for name, label, expected in cases:
        doc = load(d, name)
        code = rc(d, name)
        if code not in ("0", "1") or doc is None:
            doc, code = recompute(d, name, *sides[name])
            label += " (recomputed here)"
        flagged = [r for r in compare_rows(doc) if r.get("verdict") in ("regression", "improvement")]
        planted = [r["name"] for r in flagged if any(f"kernel: {k}," in r["name"] for k in PLANTED)]
        others = [r["name"] for r in flagged if r["name"] not in planted]
        counts = ((doc or {}).get("summary") or {}).get("counts") or {}
        ok = code == str(expected) and (expected == 0 or (planted and not others))
        rows.append([label, code, str(expected), str(counts.get("regression", "–")),
                     str(counts.get("improvement", "–")),
                     str(counts.get("unchanged", "–")), str(counts.get("inconclusive", "–")),
                     str(len(planted)), str(len(others)), "yes" if ok else "NO"])
        figures[name] = {"exit": code, "as_expected": ok, "planted_flagged": planted, "others_flagged": others}
    lines.append(table(["pair", "exit", "expected", "regressions", "improvements", "unchanged", "inconclusive",
                        "planted flagged", "unplanted flagged", "as expected"], rows))
    for name, label, _ in cases:
        doc = load(d, name)
        if doc is None:
            continue
        lines.append(f"\n{label} ({name}): per specialization")
        rows = []
        for r in compare_rows(doc):
            if r.get("verdict") == "removed":
                continue
            rows.append([r["name"], r.get("verdict", ""), fmt(r.get("change"), 100, 2, " %"),
                         fmt(r.get("min_detectable_change"), 100, 2, " %"),
                         str((r.get("observations") or {}).get("base"))])
        lines.append(table(["specialization", "verdict", "change", "detectable", "rounds a side"], rows))
        log = d / f"{name}.log"
        if log.is_file():
            warnings = [ln for ln in log.read_text().splitlines() if ln.startswith("warning")]
            lines.extend(warnings)
    return "\n".join(lines) + "\n", figures


def recompute(d: Path, name: str, base: str, head: str, metric: str) -> tuple[dict[str, Any] | None, str]:
    """A compare that did not run on the GPU machine (or failed there), run here on its files."""
    import subprocess

    files = [next((p for p in (d / f"{n}.json", d / f"{n}.partial.json") if p.is_file()), None) for n in (base, head)]
    if any(f is None for f in files):
        return None, rc(d, name)
    out = d / f"{name}.json"
    proc = subprocess.run([sys.executable, "-m", "primbench", "compare", *map(str, files), "--metric", metric,
                           "--max-rows", "0", "--json", str(out)], capture_output=True, text=True, cwd=CHECKOUT)
    (d / f"{name}.log").write_text(proc.stdout + proc.stderr)
    (d / f"{name}.rc").write_text(f"{proc.returncode}\n")
    return (json.loads(out.read_text()) if out.is_file() else None), str(proc.returncode)


def graph_rows(doc: Mapping[str, Any] | None, program: str) -> list[list[str]]:
    rows = []
    for s in (doc or {}).get("specializations", []):
        g = s.get("graph") or {}
        if s.get("error"):
            rows.append([program, s["name"], "–", "–", "–", "–", "–", "–", f"failed: {s['error']}"])
            continue
        rows.append([program, s["name"], fmt(s.get("gpu_seconds_per_call"), 1e6, 2),
                     fmt(g.get("seconds_per_call"), 1e6, 2), fmt(g.get("saved_seconds_per_call"), 1e6, 2),
                     fmt(g.get("saved_percent"), digits=1), fmt(g.get("stream_host_seconds_per_call"), 1e6, 1),
                     fmt(g.get("host_seconds_per_call"), 1e6, 1),
                     "" if g.get("captured") else str(g.get("reason", "no graph key (--graph not given?)"))])
    return rows


def graph_section(d: Path) -> tuple[str, dict[str, Any]]:
    lines = ["The CUDA-graph column (results 4.6.0 graph): the stream launches' GPU time per call beside the",
             "replay of one captured call, same per-call protocol (cache clear, spin-held stream, events), default",
             "settings (10 rounds), 1 MiB. 'saved' = stream - graph per call. host µs: wall time per call of the",
             "measured batches (the harness's protocol included).\n"]
    rows: list[list[str]] = []
    figures: dict[str, Any] = {}
    for name, program in (("graph_suite", "graph_suite.py"), ("cuda_graph_10", "cuda_graph.py --kernels 10"),
                          ("cuda_graph_1", "cuda_graph.py --kernels 1"), ("sync_graph", "sync_benchmark.py")):
        doc = load(d, name)
        if doc is None:
            rows.append([program, f"not run ({rc(d, name)})", "", "", "", "", "", "", ""])
            continue
        rows.extend(graph_rows(doc, program))
        for s in doc.get("specializations", []):
            figures[f"{name}:{s['name']}"] = {"stream": s.get("gpu_seconds_per_call"),
                                              "graph": (s.get("graph") or {}).get("seconds_per_call"),
                                              "reason": (s.get("graph") or {}).get("reason")}
    lines.append(table(["program", "specialization", "stream µs", "graph µs", "saved µs", "saved %",
                        "host µs stream", "host µs graph", "why no graph"], rows))
    lines.append(f"examples/cuda_graph.py's recorded figures: {EXAMPLE_RECORDED}.")
    lines.append("In cuda_graph.py, 'launch: graph' replays a graph its setup captured: its stream time is the")
    lines.append("example's own replay; the harness's graph column of 'launch: stream' should read about the same.")
    log = d / "gpu_tests_graph.log"
    tail = log.read_text().strip().splitlines()[-3:] if log.is_file() else []
    lines.append(f"\npytest -m gpu tests/test_gpu_frameworks.py -k graph: exit {rc(d, 'gpu_tests_graph')}"
                 + "".join(f"\n  {ln}" for ln in tail))
    figures["gpu_tests_graph"] = {"stream": None, "graph": None, "reason": f"pytest exit {rc(d, 'gpu_tests_graph')}"}
    return "\n".join(lines) + "\n", figures


def capture_section(d: Path) -> str:
    data = load(d, "capture_errors")
    if data is None:
        return f"capture_errors: not run ({rc(d, 'capture_errors')})\n"
    rows = [[c["case"], str(c.get("captured")), str(c.get("replayed", "")), str(c.get("stream_works_after")),
             c.get("reason", "")] for c in data.get("cases", [])]
    return ("primbench.backends.cupy_graph.capture on a fresh non-blocking stream (nothing holds it), then one "
            "kernel on the same stream:\n\n" + table(["case", "captured", "replayed", "stream works after",
                                                     "reason recorded"], rows))


# --------------------------------------------------------------------------- writing


def replace_figures(readme: Path, text: str) -> None:
    old = readme.read_text() if readme.is_file() else ""
    block = f"{BEGIN}\n{text.rstrip()}\n{END}"
    if BEGIN in old and END in old:
        new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _m: block, old, flags=re.S)
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text(new)


def energy_figures(counter: Mapping[str, Any], energy: Mapping[str, Any], twice: Mapping[str, Any],
                   pairs: Mapping[str, Any], env: str) -> str:
    def pair(name: str) -> str:
        p = pairs.get(name) or {}
        flagged = ", ".join(p.get("planted_flagged") or []) or "none"
        return (f"exit {p.get('exit', '–')} ({'as expected' if p.get('as_expected') else 'NOT as expected'}); "
                f"planted rows flagged: {flagged}; unplanted flagged: {len(p.get('others_flagged') or [])}")

    lines = [f"## Measured on the GPU ({env})", "",
             f"- **Counter resolution** (`counter_resolution.txt`): busy, it moves every "
             f"{fmt(counter.get('interval_ms'), digits=1)} ms (median) in steps of {counter.get('step_mj')} mJ "
             f"(smallest {counter.get('min_step_mj')} mJ).",
             f"- **Joules per call, 4 kernels at 2 sizes** (`joules_per_call.txt`): {energy.get('rows', 0)} rows, "
             f"{energy.get('too_short', '–')} rounds too short for the counter.",
             "- **Twice the work** (`twice_the_work.txt`): tolerance (2x the A/A pair's largest difference "
             "at 128 MiB) "
             f"{fmt(twice.get('tolerance_percent'), digits=2, unit=' %')}; "
             + "; ".join(f"{k.split(':')[1]} {k.split(':')[0]} J2/J1 {v['j_ratio']:.3f} (T2/T1 {v['t_ratio']:.3f})"
                         for k, v in twice.items() if isinstance(v, dict)) + ".",
             f"- **A/A on --metric energy** (`aa_planted.txt`): {pair('compare_aa_energy')}.",
             f"- **Planted 10 % more work, --metric energy**: A vs C {pair('compare_planted_energy')}; "
             f"B vs C {pair('compare_planted_energy_b')}."]
    return "\n".join(lines)


def graph_figures(figures: Mapping[str, Any], env: str) -> str:
    lines = [f"## Measured on the GPU ({env})", "", "| program: specialization | stream µs | graph µs | why no graph |",
             "|---|---|---|---|"]
    for key, f in figures.items():
        lines.append(f"| {key} | {fmt(f.get('stream'), 1e6, 2)} | {fmt(f.get('graph'), 1e6, 2)} | "
                     f"{f.get('reason') or ''} |")
    lines.append("")
    lines.append(f"Beside examples/cuda_graph.py's recorded figures: {EXAMPLE_RECORDED}. Tables: `graph_column.txt`, "
                 "`capture_errors.txt`.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="issue26.tar.gz or the issue26/ directory")
    ap.add_argument("--dest", type=Path, default=CHECKOUT, help="the checkout to write into (default: this one)")
    ap.add_argument("--allow-fake", action="store_true", help="accept files from a --fake run (tests)")
    args = ap.parse_args(argv)
    d = unpack(args.source)
    env = (d / "environment.txt").read_text() if (d / "environment.txt").is_file() else ""
    if "fake=1" in env and not args.allow_fake:
        print(f"{args.source}: these files come from a --fake run: nothing written (--allow-fake to write them)",
              file=sys.stderr)
        return 2
    first = env.splitlines()[0] if env else "environment unknown"
    gpu = next((ln for ln in env.splitlines()[1:] if "H200" in ln or "NVIDIA" in ln), "")
    header = f"# {first}\n# {gpu}\n# written by tests/benchmarks/analyze_issue26.py from h200_issue26.sh's files\n\n"
    energy_dir, graph_dir = args.dest / ENERGY_DIR, args.dest / GRAPH_DIR
    energy_dir.mkdir(parents=True, exist_ok=True)
    graph_dir.mkdir(parents=True, exist_ok=True)
    counter_text, counter = counter_section(d)
    energy_text, energy = energy_section(d)
    twice_text, twice = twice_section(d)
    pairs_text, pairs = aa_planted_section(d)
    graph_text, graph = graph_section(d)
    outputs = {energy_dir / "counter_resolution.txt": counter_text, energy_dir / "joules_per_call.txt": energy_text,
               energy_dir / "twice_the_work.txt": twice_text, energy_dir / "aa_planted.txt": pairs_text,
               graph_dir / "graph_column.txt": graph_text, graph_dir / "capture_errors.txt": capture_section(d)}
    for path, text in outputs.items():
        path.write_text(header + text)
        print(f"wrote {path}")
    steps = (d / "steps.log").read_text() if (d / "steps.log").is_file() else ""
    for raw, patterns in ((energy_dir / "h200", ("counter_resolution*", "energy_*", "compare_*")),
                          (graph_dir / "h200", ("graph_suite*", "cuda_graph_*", "sync_graph*", "capture_errors*"))):
        raw.mkdir(parents=True, exist_ok=True)
        for pattern in patterns:
            for f in sorted(d.glob(pattern)):
                shutil.copy2(f, raw / f.name)
        (raw / "environment.txt").write_text(env)
        (raw / "steps.log").write_text(steps)
        print(f"copied the raw files to {raw}")
    label = f"{gpu.split(',')[0] if gpu else 'GPU'}, {first}"
    replace_figures(energy_dir / "README.md", energy_figures(counter, energy, twice, pairs, label))
    replace_figures(graph_dir / "README.md", graph_figures(graph, label))
    print(f"updated {energy_dir / 'README.md'} and {graph_dir / 'README.md'}")
    print(steps, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
