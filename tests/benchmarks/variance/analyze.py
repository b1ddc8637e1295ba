"""Decompose the study's time per call into its levels (call, batch, round, process) and look at
the structure the issue names: the first round, transients inside a round, renewal, placement,
and what kernels of one process share.

    python tests/benchmarks/variance/analyze.py [DIR]   (default: h200/data beside this file)

All spreads are standard deviations of ln(time per call), in percent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def load(d: Path, pattern: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in sorted(d.glob(pattern)):
        if f.name.endswith(".first-calls.json"):
            continue
        first = f.with_name(f.stem + ".first-calls.json")
        calls = json.loads(first.read_text()) if first.exists() else {}
        for s in json.loads(f.read_text())["specializations"]:
            for i, b in enumerate(s.get("batches") or []):
                if str(i) in calls.get(s["name"], {}):
                    b["first_calls_ms"] = calls[s["name"]][str(i)]
            if s.get("rounds"):
                out.setdefault(s["name"], []).append(s)
    return out


def rounds_matrix(specs: list[dict]) -> np.ndarray:
    return np.array([[np.log(r["gpu_ms_per_call"]) for r in s["rounds"]] for s in specs])


def batch_cv(spec: dict) -> float:
    """Pooled within-round CV of batch times per call (the batch level)."""
    by: dict[int, list[float]] = {}
    for b in spec.get("batches") or []:
        by.setdefault(b.get("round", 0), []).append(np.log(b["batch_ms"] / b["kernel_calls"]))
    v = [np.var(x, ddof=1) for x in by.values() if len(x) > 1]
    return float(np.sqrt(np.mean(v))) if v else float("nan")


def short(name: str) -> str:
    parts = dict(p.split(": ", 1) for p in name.split(", "))
    op = parts["op"] + ("" if parts["op"] != "copy" else f" {parts['type']} x{parts['ipt']}")
    return op + (" (shift)" if parts.get("alloc") == "shift" else "")


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "h200" / "data"
    pct = 100.0
    for size_dir in sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: _bytes(p.name)):
        runs = load(size_dir, "p-*.json")
        norenew = load(size_dir, "norenew-*.json")
        print(f"\n## {size_dir.name}: {len(next(iter(runs.values())))} processes x 12 rounds\n")
        print("| kernel | batch | round (2-12) | round 1 - rest | round 2 - rest | lag-1 r | process means | "
              "rounds predict | process part | no-renew round |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        round_dev: dict[str, np.ndarray] = {}
        proc_dev: dict[str, np.ndarray] = {}
        for name in sorted(runs, key=short):
            m = rounds_matrix(runs[name])  # processes x rounds
            rest = m[:, 1:]
            within = float(np.sqrt(np.mean(np.var(rest, axis=1, ddof=1))))
            r1 = float(np.mean(m[:, 0] - rest.mean(axis=1)))
            r2 = float(np.mean(m[:, 1] - m[:, 2:].mean(axis=1)))
            dev = rest - rest.mean(axis=1, keepdims=True)
            lag = float(np.mean([np.corrcoef(d[:-1], d[1:])[0, 1] for d in dev]))
            means = rest.mean(axis=1)
            between = float(np.std(means, ddof=1))
            predict = within / np.sqrt(rest.shape[1])
            part = float(np.sqrt(max(0.0, between**2 - predict**2)))
            nr = rounds_matrix(norenew[name])[:, 1:] if name in norenew else None
            nr_within = float(np.sqrt(np.mean(np.var(nr, axis=1, ddof=1)))) if nr is not None else float("nan")
            bcv = float(np.median([batch_cv(s) for s in runs[name]]))
            print(f"| {short(name)} | {bcv * pct:.3f} | {within * pct:.3f} | {r1 * pct:+.2f} | {r2 * pct:+.2f} | "
                  f"{lag:+.2f} | {between * pct:.3f} | {predict * pct:.3f} | {part * pct:.3f} | "
                  f"{nr_within * pct:.3f} |")
            round_dev[name], proc_dev[name] = dev, means - means.mean()
        names = [n for n in round_dev if "shift" not in n]
        rd = np.array([round_dev[n] for n in names])  # kernels x processes x rounds
        common_round = rd.mean(axis=0)  # what the kernels of one round share
        pd = np.array([proc_dev[n] for n in names])  # kernels x processes
        print(f"\nshared by the kernels of a round (sd of the mean deviation over {len(names)} kernels): "
              f"{np.std(common_round, ddof=1) * pct:.3f} %; expected if independent: "
              f"{np.sqrt(np.mean(np.var(rd, axis=2, ddof=1)) / len(names)) * pct:.3f} %")
        shared = np.std(pd.mean(axis=0), ddof=1) * pct
        alone = np.sqrt(np.mean(np.var(pd, axis=1, ddof=1)) / len(names)) * pct
        print(f"shared by the kernels of a process (suite shift, sd over processes): {shared:.3f} %;"
              f" expected if independent: {alone:.3f} %")
        first = _first_calls(runs)
        if first:
            print("first calls of a round's first batch, time relative to the batch's median call: "
                  + ", ".join(f"call {i + 1}: {v * pct:+.1f} %" for i, v in enumerate(first[:5])))


def _first_calls(runs: dict[str, list[dict]]) -> list[float]:
    rel: list[np.ndarray] = []
    for specs in runs.values():
        for s in specs:
            for b in s.get("batches") or []:
                c = b.get("first_calls_ms")
                if c and len(c) >= 8:
                    rel.append(np.log(np.array(c[:8]) / np.median(c)))
    return list(np.median(np.array(rel), axis=0)) if rel else []


def _bytes(name: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for u, f in units.items():
        if name.endswith(u):
            return int(name[: -len(u)]) * f
    return 0


if __name__ == "__main__":
    main()
