"""The priors behind compare's variance model: the study here (`h200/data`, 8 kernel kinds, 5
processes of 12 rounds per size), the A/A processes of `../rounds/data-v3`, `data-v4` and `data-v5`
(copies and CuPy calls, 8 processes of 3 rounds per size, three other H200s) and, since fd6fb8c,
the A/A processes of the first and third evaluation suites (`../verdicts/h200/data`, `data3`: 20
more kernel kinds, library calls among them, two more H200s; not `data2`, collected with the
throttle guard's fault) and, since the fourth evaluation (`evaluate4.txt`), its A/A processes
(`data4`, one more H200). Those suites are in-sample from then on.

For each size class, on ln(time per call), with the measured rounds of each process (all but a
warm-up from 4 rounds on: `primbench.rounds.measured_rounds`):

* **common**: the variance of a process's suite shift (the median over kernels of its deviation
  from each kernel's mean over processes), less what independent kernel noise puts into a median:
  what every kernel of one process shares.
* **process**: the variance of a kernel's process mean around its kernel mean and its process's
  suite shift, less what its rounds predict (their variance over their count): what a process adds
  to one kernel beyond its rounds and the shared shift. Moderated across kernels (Smyth's prior).
* **single**: the same two for one round alone, for runs without rounds (C++ files, --rounds 1).
* **shifts**: how far whole identical processes moved apart: |suite shift| (the median over kernels
  of one process's means less another's) of every ordered A/A pair, pooled over the sets, as
  quantiles. compare tests a suite's shift against them as well as against the variance above.

    python tests/benchmarks/variance/priors.py           # the table, and compare/priors.py's values
    python tests/benchmarks/variance/priors.py --check   # exit 1 if compare/priors.py differs
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from primbench.compare import priors, stats  # noqa: E402
from primbench.rounds import measured_rounds  # noqa: E402

#: No prior variance is below this, (0.02 %)^2: 5-8 processes cannot tell a smaller one from 0,
#: and a prior of exactly 0 would make any shift look certain.
FLOOR = 4e-8

SOURCES = [HERE / "h200" / "data"] + [HERE.parent / "rounds" / f"data-v{k}" for k in (3, 4, 5)] + [
    HERE.parent / "verdicts" / "h200" / d for d in ("data", "data3", "data4")]


def processes(d: Path) -> list[dict[str, list[float]]]:
    """Each A/A process of a size folder: kernel name -> ln(time per call) of every round."""
    out = []
    for f in sorted([*d.glob("p-*.json"), *d.glob("aa-*.json")]):
        if f.name.endswith(".first-calls.json"):
            continue
        doc = json.loads(f.read_text())
        rows = {s["name"]: [math.log(r["gpu_ms_per_call"]) for r in s["rounds"]]
                for s in doc["specializations"] if s.get("rounds") and "shift" not in s["name"]}
        out.append(rows)
    return out


def components(procs: list[dict[str, list[float]]], single: bool) -> dict[str, float] | None:
    names = sorted(set.intersection(*(set(p) for p in procs)))
    P, K = len(procs), len(names)
    if P < 3 or K < 5:
        return None
    m = np.empty((K, P))
    w = np.empty((K, P))
    for j, p in enumerate(procs):
        for i, n in enumerate(names):
            r = p[n][measured_rounds(len(p[n]))]
            if single:
                m[i, j], w[i, j] = r[0], 0.0
            else:
                m[i, j] = np.mean(r)
                w[i, j] = np.var(r, ddof=1) / len(r)
    c = m - m.mean(axis=1, keepdims=True)
    shift = np.median(c, axis=0)
    resid = c - shift
    var_resid = np.var(resid, axis=1, ddof=1)  # per kernel, P - 1 df
    common = max(0.0, float(np.var(shift, ddof=1)) - math.pi / 2 * float(np.mean(var_resid)) / K)
    # the kernels' mean (not a fitted prior's scale, which sits below the mean of skewed variances:
    # the larger is the safer); its df from how much the kernels differ (Smyth's fit), at most K(P-1)
    fit = stats.fit_prior(var_resid, np.full(K, P - 1.0))
    process = max(0.0, float(np.mean(var_resid)) - float(np.mean(w)))
    # every ordered pair's suite shift (the median over kernels of head - base), as compare sees one
    shifts = [abs(float(np.median(m[:, b] - m[:, a]))) for a in range(P) for b in range(P) if a != b]
    return {"common": common, "common_df": P - 1.0, "process": process,
            "process_df": min(fit.df0 if fit else math.inf, K * (P - 1.0)), "kernels": K, "processes": P,
            "shifts": shifts}


def pooled(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("common", "process"):
        df = sum(p[f"{key}_df"] for p in parts)
        out[key] = max(FLOOR, sum(p[key] * p[f"{key}_df"] for p in parts) / df)
        out[f"{key}_df"] = df
    shifts = np.concatenate([p["shifts"] for p in parts])
    out["shifts"] = tuple(float(q) for q in np.quantile(shifts, priors.SHIFT_LEVELS))
    out["shift_pairs"] = len(shifts)
    return out


def measure() -> dict[str, dict[str, dict[str, float]]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for src in SOURCES:
        for d in sorted(p for p in src.iterdir() if p.is_dir()):
            procs = processes(d)
            if not procs:
                continue
            files = sorted(f for f in [*d.glob("p-*.json"), *d.glob("aa-*.json")]
                           if not f.name.endswith(".first-calls.json"))
            size = json.loads(files[0].read_text())
            klass = priors.size_class(size["context"]["settings"]["size"]).name
            for mode in ("rounds", "single"):
                got = components(procs, mode == "single")
                if got is not None:
                    table.setdefault(klass, {}).setdefault(mode, []).append(got)  # type: ignore[arg-type]
                    print(f"{src.name}/{d.name} {mode}: common {math.sqrt(got['common']) * 100:.3f} % "
                          f"({got['common_df']:.0f} df), process {math.sqrt(got['process']) * 100:.3f} % "
                          f"({got['process_df']:.1f} df), {got['kernels']} kernels x {got['processes']} processes")
    return {k: {mode: pooled(v) for mode, v in modes.items()} for k, modes in table.items()}  # type: ignore[arg-type]


def component(c: dict[str, Any]) -> str:
    """`c` as compare/priors.py writes it."""
    shifts = ", ".join(f"{x:.4g}" for x in c["shifts"])
    return (f"Component({c['common']:.4g}, {c['common_df']:.4g}, {c['process']:.4g}, {c['process_df']:.4g},\n"
            f"                        ({shifts}), {c['shift_pairs']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    got = measure()
    print("\n| size class | rounds: common | process | single round: common | process |")
    print("|---|---|---|---|---|")
    bad = []
    for klass in priors.SIZE_CLASSES:
        g = got.get(klass.name)
        if not g:
            continue
        r, s = g["rounds"], g["single"]
        print(f"| {klass.name} | {math.sqrt(r['common']) * 100:.3f} % ({r['common_df']:.0f} df) | "
              f"{math.sqrt(r['process']) * 100:.3f} % ({r['process_df']:.0f} df) | "
              f"{math.sqrt(s['common']) * 100:.3f} % ({s['common_df']:.0f} df) | "
              f"{math.sqrt(s['process']) * 100:.3f} % ({s['process_df']:.0f} df) |")
        want = (klass.rounds.common, klass.rounds.process, klass.single.common, klass.single.process,
                *klass.rounds.shifts, *klass.single.shifts, klass.rounds.shift_pairs, klass.single.shift_pairs)
        have = (r["common"], r["process"], s["common"], s["process"], *r["shifts"], *s["shifts"],
                r["shift_pairs"], s["shift_pairs"])
        if len(want) != len(have) or not np.allclose(want, have, rtol=1e-3, atol=1e-12):
            bad.append(klass.name)
        print("    " + "   ".join(f"{mode} |shift| quantiles at {', '.join(f'{q:g}' for q in priors.SHIFT_LEVELS)}: "
                                  + ", ".join(f"{math.expm1(x) * 100:.2f} %" for x in c["shifts"])
                                  + f" ({c['shift_pairs']} pairs)" for mode, c in (("rounds", r), ("single", s))))
        print(f"    {klass.name}: {component(r)}, {component(s)}")
    if args.check and bad:
        print(f"compare/priors.py differs from the data for {', '.join(bad)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
