"""How long `primbench compare` takes on two files of 10,000 specializations each.

Run: ``python tests/benchmarks/compare_speed.py`` (writes compare_speed.txt beside it).
Target (issue 5): load + compare under 2 s on the 2-core development machine.
Timed: `load_side` of both files plus `compare_runs` (median and max of 5 repetitions in one
process; the first repetition pays SciPy's import), and the whole CLI once per output format
as a fresh process (interpreter start, imports and rendering included), and load + compare on
``--metric time`` (`compare_runs(metric="time")`, which reads each specialization's and each
round's time per call). The files are results 4.4.0, what the harness writes (each
specialization with ``gpu_seconds_per_call`` and ``time_per_call``); the same documents as
4.2.0 wrote them (without those keys) are timed once more, read through the upgrade steps
(`primbench.results.UPGRADES`).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from primbench.compare.core import compare_runs, load_side  # noqa: E402
from primbench.results import RESULTS_VERSION, time_per_call_fields  # noqa: E402
from tests.compare_data import batch_times, document, run_from_batches, spec, write  # noqa: E402

N = 10_000
REPS = 5


def make_side(rng: np.random.Generator, n: int, batches: int, shift: float, version: str = RESULTS_VERSION) -> dict:
    """`n` specializations with 0.1 % run-to-run noise; every 500th slowed down by `shift`."""
    specs = []
    for i in range(n):
        if batches:
            ms = 0.25 * (1 + i / n) * float(np.exp(rng.normal(0, 0.001) + (shift if i % 500 == 0 else 0.0)))
            specs.append(run_from_batches(f"size: {i}, type: char", batch_times(rng, ms, n=batches)))
        else:
            bps = 1e12 * float(np.exp(rng.normal(0, 0.001) - (shift if i % 500 == 0 else 0.0)))
            specs.append(spec(f"size: {i}, type: char", bps))
        record = specs[-1]
        calls = record["calls"]["kernel_calls"]
        per_batch = record["calls"]["kernel_calls_per_batch"]
        per_call = ([ms / 1000 / per_batch for ms in (b["batch_ms"] for b in record.get("batches", ()))]
                    or [record["elapsed_secs"]["gpu"] / calls] * record["calls"]["batches"])
        record.update(time_per_call_fields(per_call, record["elapsed_secs"]["gpu"], calls))  # results 4.4.0
    return document(specs, version=version)


def as_4_2_0(doc: dict) -> dict:
    """`doc` as results 4.2.0 wrote it: no time per call."""
    for record in doc["specializations"]:
        record.pop("gpu_seconds_per_call", None)
        record.pop("time_per_call", None)
    doc["context"]["results_version"] = "4.2.0"
    return doc


def time_load_compare(base: Path, head: Path, metric: str | None = None,
                      ) -> tuple[list[float], list[float], list[float], Any]:
    load_t, cmp_t, total_t = [], [], []
    for _ in range(REPS):
        t0 = time.perf_counter()
        b, h = load_side(base), load_side(head)
        t1 = time.perf_counter()
        c = compare_runs(b, h, metric=metric)
        t2 = time.perf_counter()
        load_t.append(t1 - t0)
        cmp_t.append(t2 - t1)
        total_t.append(t2 - t0)
    return load_t, cmp_t, total_t, c


def time_case(tmp: Path, batches: int) -> list[str]:
    rng = np.random.default_rng(batches)
    base_doc, head_doc = make_side(rng, N, batches, 0.0), make_side(rng, N, batches, 0.03)
    base = write(tmp / f"base-{batches}.json", base_doc)
    head = write(tmp / f"head-{batches}.json", head_doc)
    size = (base.stat().st_size + head.stat().st_size) / 2 / 2**20
    load_t, cmp_t, total_t, c = time_load_compare(base, head)
    time_t = time_load_compare(base, head, "time")
    for doc in (base_doc, head_doc):
        as_4_2_0(doc)
    old_t = time_load_compare(write(tmp / f"base-{batches}-4.2.0.json", base_doc),
                              write(tmp / f"head-{batches}-4.2.0.json", head_doc))
    cli = {}
    for fmt in ("terminal", "markdown", "json"):
        cmd = [sys.executable, "-c", "from primbench.cli import main; main()", "compare", str(base), str(head),
               "--format", fmt]
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            runs.append(time.perf_counter() - t0)
            assert proc.returncode == 1, proc.stderr  # the planted slowdowns are regressions
        cli[fmt] = statistics.median(runs)
    counts = c.summary.counts
    label = f"{batches} batches per specialization" if batches else "summary only (no batches)"
    return [
        f"{label}: two files of {N:,} specializations, {size:.1f} MiB each",
        f"  load both   median {statistics.median(load_t):.3f} s  max {max(load_t):.3f} s",
        f"  compare     median {statistics.median(cmp_t):.3f} s  max {max(cmp_t):.3f} s",
        f"  load+compare median {statistics.median(total_t):.3f} s  max {max(total_t):.3f} s  "
        f"({'under' if max(total_t) < 2 else 'OVER'} the 2 s target)",
        "  whole CLI as a new process, median of 3 (interpreter, imports, SciPy, load, compare, output): "
        + ", ".join(f"--format {k} {v:.2f} s" for k, v in cli.items()),
        f"  --metric time: load+compare median {statistics.median(time_t[2]):.3f} s max {max(time_t[2]):.3f} s",
        f"  the same files as results 4.2.0 (read through the upgrade steps): load both median "
        f"{statistics.median(old_t[0]):.3f} s, load+compare median {statistics.median(old_t[2]):.3f} s "
        f"max {max(old_t[2]):.3f} s",
        "  verdicts: " + ", ".join(f"{v.value} {n}" for v, n in counts.items()),
    ]


def main() -> None:
    lines = [
        "primbench compare: speed on 10,000 specializations (tests/benchmarks/compare_speed.py)",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average at start {os.getloadavg()[0]:.2f} "
        "(the machine is shared: other work running inflates these times)",
        "",
    ]
    with tempfile.TemporaryDirectory() as d:
        for batches in (0, 30):
            lines += time_case(Path(d), batches)
            lines.append("")
    text = "\n".join(lines)
    print(text)
    (Path(__file__).with_suffix(".txt")).write_text(text)


if __name__ == "__main__":
    main()
