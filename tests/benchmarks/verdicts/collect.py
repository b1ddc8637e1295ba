"""Collect the verdict evaluation on a GPU: `eval_suite.py` (or `--suite`, e.g. `eval_suite2.py`) as
separate processes with default settings, A/A (identical code) and planted, interleaved in time, one GPU.

    python tests/benchmarks/verdicts/collect.py --sizes 64KiB,1MiB --out DIR [--aa 8] [--planted 3]
    python tests/benchmarks/verdicts/collect.py --suite tests/benchmarks/verdicts/eval_suite2.py ...

Per size: two A/A processes; the planted delays are calibrated from their time per call; then
planted and A/A processes alternate (P1 A3 P2 A4 P3 A5 ... A8). Planted process k (0, 1, 2)
slows six kernels, starting at the (2k)-th of the suite's `KERNELS`: two by 1 %, two by 2 %, two
by 5 % of their time per call (`--plant-fractions`, `--plant-step`: other changes, e.g. three kernels a
run from the 3k-th, so that most of the suite stays put). Files: DIR/SIZE/aa-K.json, planted-K.json,
plant-K.json (what was planted, in cycles and as a fraction; copied into the second protocol's folder with
`--alt-out`), collect.log (exit and wall time of every process).

`--alt-out DIR --alt-suite-args ARGS` collects a second protocol interleaved with the first: after each run,
the same run (the same planted cycles) with ARGS instead of `--suite-args`, into DIR/SIZE/ (its own
collect.log), so that two protocols meet the same GPU, clocks and hours.

`--processes N` makes each run N processes back to back (the several-process protocol of
`eval5-plan.md`): DIR/SIZE/aa-K-pJ.json, planted-K-pJ.json (J = 1 .. N); `--suite-args` are passed
to every process, comma-separated (e.g. "--rounds=4,--min-secs=0.25").
`--first-processes K` (with `--processes N` and `--alt-out`): the first protocol runs only the first K
of each run's N files (aa-K-p1.json ...), the second protocol all N (the twelfth evaluation's amendment:
one `--processes 16` file a label beside two `--processes 8` files).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
SUITE = HERE / "eval_suite.py"

FRACTIONS = (0.01, 0.01, 0.02, 0.02, 0.05, 0.05)


def load_suite(suite: Path) -> ModuleType:
    """The suite file as a module, imported without running its `main` (its `KERNELS`: (op, type) pairs)."""
    spec = importlib.util.spec_from_file_location(suite.stem, suite)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: {suite} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def names(kernels: tuple[tuple[str, str], ...]) -> list[str]:
    return [f"op: {op}, type: {t}" for op, t in kernels]


def finished(out: Path) -> bool:
    """A results file a process wrote whole (for --resume)."""
    try:
        return bool(json.loads(out.read_text()).get("specializations"))
    except (OSError, ValueError):
        return False


def run_files(d: Path, label: str, processes: int) -> list[Path]:
    """A run's results files: DIR/SIZE/LABEL.json, or one per process with --processes."""
    if processes <= 1:
        return [d / f"{label}.json"]
    return [d / f"{label}-p{j}.json" for j in range(1, processes + 1)]


def run_all(suite: Path, files: list[Path], size: str, env_extra: dict[str, str], log, resume: bool,
            extra: list[str]) -> None:
    for out in files:
        run_suite(suite, out, size, env_extra, log, resume, extra)


def run_suite(suite: Path, out: Path, size: str, env_extra: dict[str, str], log, resume: bool = False,
              extra: list[str] | None = None) -> None:
    if resume and finished(out):
        print(f"{size} {out.name}: kept (--resume)", flush=True)
        return
    env = {**os.environ, "PRIMBENCH_BRANCH": "eval", "PRIMBENCH_COMMIT": os.environ.get("EVAL_COMMIT", "unknown"),
           "PYTHONUNBUFFERED": "1", **env_extra}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(suite), "--size", size, "--json-out", str(out), *(extra or [])],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    out.with_suffix(".log").write_text(proc.stdout[-20000:] + proc.stderr[-20000:])
    line = f"{size} {out.name}: exit {proc.returncode}, wall {wall:.1f} s"
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


def calibrate(files: list[Path], k: int, kernels: tuple[tuple[str, str], ...],
              fractions: tuple[float, ...] = FRACTIONS, step: int = 2) -> dict[str, object]:
    """Planted run k's kernels and tail cycles: `fractions` on consecutive kernels of the suite from the
    (step x k)-th on, calibrated from the A/A runs' time per call (`files`)."""
    per_call: dict[str, list[float]] = {}
    clocks: list[float] = []
    for f in files:
        if not f.exists():
            continue
        for spec in json.loads(f.read_text())["specializations"]:
            if spec.get("error") or not spec.get("rounds"):
                continue
            per_call.setdefault(spec["name"], []).extend(r["gpu_ms_per_call"] for r in spec["rounds"][1:])
            clock = (spec.get("sm_clock") or {}).get("average_mhz")
            if clock:
                clocks.append(clock)
    mhz = statistics.median(clocks) if clocks else 1980.0
    all_names = names(kernels)
    chosen = {all_names[(step * k + j) % len(all_names)]: frac for j, frac in enumerate(fractions)}
    ms = {n: statistics.median(per_call[n]) for n in chosen if n in per_call}
    cycles = {n: round(chosen[n] * ms[n] * 1e-3 * mhz * 1e6) for n in ms}
    return {"sm_clock_mhz": mhz, "ms_per_call": ms, "fraction": chosen, "cycles": cycles}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--aa", type=int, default=8)
    ap.add_argument("--planted", type=int, default=3)
    ap.add_argument("--suite", type=Path, default=SUITE, help="the suite script (default: eval_suite.py)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the whole results files already in --out; run the rest in the same order")
    ap.add_argument("--processes", type=int, default=1, help="processes a run (default 1: one file a run)")
    ap.add_argument("--suite-args", default="",
                    help="options passed to every suite process, comma-separated (--rounds=4,--min-secs=0.25)")
    ap.add_argument("--alt-out", type=Path, default=None,
                    help="a second protocol's folder: each run repeated with --alt-suite-args right after it")
    ap.add_argument("--alt-suite-args", default="", help="the second protocol's options, as --suite-args")
    ap.add_argument("--first-processes", type=int, default=None,
                    help="the first protocol runs only the first K of each run's --processes files")
    ap.add_argument("--plant-fractions", default=",".join(map(str, FRACTIONS)),
                    help="the changes a planted run makes, one kernel each, comma-separated (default: six kernels, "
                         "two each of 1, 2 and 5 %%)")
    ap.add_argument("--plant-step", type=int, default=2,
                    help="planted run k starts at the (STEP x k)-th kernel (default 2)")
    args = ap.parse_args()
    fractions = tuple(float(f) for f in args.plant_fractions.split(","))
    extra = [a for a in args.suite_args.split(",") if a]
    alt = [a for a in args.alt_suite_args.split(",") if a]
    n = args.processes
    first = min(args.first_processes or n, n)
    suite = args.suite.resolve()
    if not suite.is_file():
        print(f"error: --suite {args.suite}: no such file", file=sys.stderr)
        raise SystemExit(2)
    kernels = tuple(load_suite(suite).KERNELS)
    for size in args.sizes.split(","):
        d = args.out / size
        d.mkdir(parents=True, exist_ok=True)
        d_alt = args.alt_out / size if args.alt_out is not None else None
        if d_alt is not None:
            d_alt.mkdir(parents=True, exist_ok=True)
        with open(d / "collect.log", "a") as log, open(d_alt / "collect.log" if d_alt else os.devnull, "a") as log_alt:

            def run_all(suite: Path, files: list[Path], size: str, env: dict[str, str], log: object, resume: bool,
                        extra: list[str], d_alt: Path | None = d_alt, log_alt: object = log_alt) -> None:
                """A run of the first protocol, then (with --alt-out) the same run of the second."""
                for out in files[:first]:
                    run_suite(suite, out, size, env, log, resume, extra)
                if d_alt is not None:
                    for out in files:
                        run_suite(suite, d_alt / out.name, size, env, log_alt, resume, alt)

            for k in (1, 2):
                run_all(suite, run_files(d, f"aa-{k}", n), size, {}, log, args.resume, extra)
            aa, pl = 2, 0
            while aa < args.aa or pl < args.planted:
                if pl < args.planted:
                    plant = calibrate([*run_files(d, "aa-1", n)[:first], *run_files(d, "aa-2", n)[:first]], pl, kernels,
                                      fractions, args.plant_step)
                    pl += 1
                    kept = d / f"plant-{pl}.json"
                    if args.resume and kept.exists() and all(map(finished, run_files(d, f"planted-{pl}", n)[:first])):
                        plant = json.loads(kept.read_text())
                    else:
                        kept.write_text(json.dumps(plant, indent=2) + "\n")
                        if d_alt is not None:  # the second protocol's runs read the same cycles
                            (d_alt / kept.name).write_text(kept.read_text())
                    env = {"PRIMBENCH_EVAL_PLANT": json.dumps(plant["cycles"])}
                    run_all(suite, run_files(d, f"planted-{pl}", n), size, env, log, args.resume, extra)
                if aa < args.aa:
                    aa += 1
                    run_all(suite, run_files(d, f"aa-{aa}", n), size, {}, log, args.resume, extra)


if __name__ == "__main__":
    main()
