"""The round-order pattern: where does the shift shared by every kernel of a round come from?
(issue "Verdicts that speak", step 1)

In the evaluation's A/A processes (`../verdicts/h200/data`) the kernels of one process move
together from round to round, with a shape over the rounds that repeats from process to process,
sometimes with its sign flipped, sometimes absent (`analyze` below prints it). This script runs a
suite in separate processes under variants of what a round renews, and prints, per variant, the
pattern's size and the number compare needs to be small: the spread between processes of each
kernel's mean relative to its process's suite shift.

Variants (`PRIMBENCH_ROUND_VARIANT`, applied by running the suite through this file):
* ``default``: every round renews the stream, events, flag and cache buffer (Device.renew);
* ``keep``: the same, but the replaced streams are kept alive, so no stream handle is recycled;
* ``none``: nothing is renewed (one stream for the whole process).

    python3 tests/benchmarks/variance/round_order.py collect --suite SUITE.py --sizes 64KiB --per 4 --out DIR
    python3 tests/benchmarks/variance/round_order.py analyze DIR...
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

VARIANTS = ("default", "keep", "none")


def patch(variant: str) -> None:
    from primbench.backends import cupy_backend

    original = cupy_backend.CupyDevice.renew
    kept: list[object] = []
    if variant == "keep":
        def renew(self: cupy_backend.CupyDevice) -> None:
            kept.append(self._stream)
            original(self)
        cupy_backend.CupyDevice.renew = renew  # type: ignore[method-assign]
    elif variant == "none":
        cupy_backend.CupyDevice.renew = lambda self: None  # type: ignore[method-assign]


def collect(args: argparse.Namespace) -> None:
    out = Path(args.out)
    for size in args.sizes.split(","):
        d = out / size
        d.mkdir(parents=True, exist_ok=True)
        for k in range(1, args.per + 1):
            for variant in args.variants.split(","):
                env = {**os.environ, "PRIMBENCH_ROUND_VARIANT": variant, "PYTHONUNBUFFERED": "1"}
                f = d / f"{variant}-{k}.json"
                start = time.perf_counter()
                p = subprocess.run([sys.executable, __file__, "suite", args.suite, "--size", size,
                                    "--json-out", str(f)], env=env, capture_output=True, text=True)
                print(f"{size} {f.name}: exit {p.returncode}, {time.perf_counter() - start:.1f} s", flush=True)
                if p.returncode:
                    print(p.stderr[-2000:], flush=True)


def matrix(path: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Kernel names, each kernel's measured rounds (ln time, rows) and their means."""
    doc = json.loads(Path(path).read_text())
    names, rows = [], []
    for s in doc["specializations"]:
        if s.get("rounds") and len(s["rounds"]) >= 4:
            names.append(s["name"])
            rows.append(np.log([r["gpu_ms_per_call"] for r in s["rounds"]])[1:])
    n = min(len(r) for r in rows)
    m = np.array([r[:n] for r in rows])
    return names, m, m.mean(axis=1)


def analyze(dirs: list[str]) -> None:
    for d in dirs:
        groups: dict[str, list[str]] = {}
        for f in sorted(glob.glob(f"{d}/*.json")):
            stem = Path(f).stem
            if stem.startswith(("plant", "planted")) or "." in stem:
                continue
            groups.setdefault(stem.rsplit("-", 1)[0], []).append(f)
        for variant, files in sorted(groups.items()):
            pattern, round_sd, means = [], [], []
            names: list[str] | None = None
            for f in files:
                nm, m, mu = matrix(f)
                names = names or nm
                dev = m - mu[:, None]
                rc = np.median(dev, axis=0)
                pattern.append(rc)
                round_sd.append(float(np.sqrt(np.mean(np.var(dev, axis=1, ddof=1)))))
                means.append(dict(zip(nm, mu, strict=True)))
            common = sorted(set.intersection(*(set(x) for x in means)))
            mu = np.array([[x[n] for n in common] for x in means])  # processes x kernels
            rel = mu - np.median(mu - mu.mean(axis=0), axis=1, keepdims=True)
            between = np.std(rel, axis=0, ddof=1) if len(files) > 1 else np.full(len(common), np.nan)
            raw = np.std(mu, axis=0, ddof=1) if len(files) > 1 else np.full(len(common), np.nan)
            amp = [float(np.std(p, ddof=1)) for p in pattern]
            print(f"{d} {variant}: {len(files)} processes; round sd {np.mean(round_sd) * 100:.2f} %; "
                  f"round-shared pattern sd per process {' '.join(f'{a * 100:.2f}' for a in amp)} %; "
                  f"between processes, kernel means: raw median {np.median(raw) * 100:.2f} %, "
                  f"relative to the suite shift median {np.median(between) * 100:.2f} % "
                  f"(max {np.max(between) * 100:.2f} %); predicted from rounds "
                  f"{np.mean(round_sd) / np.sqrt(len(pattern[0])) * 100:.2f} %")
            for p in pattern:
                print("    pattern " + " ".join(f"{x * 100:+.2f}" for x in p))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "suite":
        patch(os.environ.get("PRIMBENCH_ROUND_VARIANT", "default"))
        suite = sys.argv[2]
        sys.argv = [suite, *sys.argv[3:]]
        sys.path.insert(0, str(Path(suite).resolve().parent))
        runpy.run_path(suite, run_name="__main__")
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--suite", required=True)
    c.add_argument("--sizes", required=True)
    c.add_argument("--per", type=int, default=4)
    c.add_argument("--variants", default=",".join(VARIANTS))
    c.add_argument("--out", required=True)
    a = sub.add_parser("analyze")
    a.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    if args.cmd == "collect":
        collect(args)
    else:
        analyze(args.dirs)


if __name__ == "__main__":
    main()
