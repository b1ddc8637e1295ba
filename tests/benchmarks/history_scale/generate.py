"""Results files in the current schema, shaped like what ``primbench run`` writes on an H200:
every specialization with its rounds (3 here: `ROUNDS`), ``between_rounds``, the time per call
and the SM clock (and with results 4.5.0 the energy counter); with ``batches=True`` also each batch with its
per-call times and its round, as ``--output-batches`` writes them. The context is a real run's
(tests/benchmarks/verdicts/h200/data/1MiB/aa-1.json, from an H200), with the branch, commit and
date of the generated run. Files are written as primbench writes them: indented by 4.

A history: `plan` lays out the runs of ``main`` (one per commit, an hour apart) and of
feature branches forked from it (a few commits each); every run's values follow a per
specialization level with 0.2 % run-to-run noise and 1 % between rounds, and a few
specializations have planted steps (so `regressions` and `report` have something to find).

Every document is checked against the results model (`primbench.results.results_from_dict`)
by `check`; `python generate.py OUT N` writes N files of the plan into OUT.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TEMPLATE = ROOT / "tests" / "benchmarks" / "verdicts" / "h200" / "data" / "1MiB" / "aa-1.json"
#: The stores' files are results 4.4.0 (rounds, time per call): the newest schema both this branch
#: and main at c16539c (which knows no 4.5.0) read, so that both run on the same stores. 4.5.0
#: (`version="4.5.0"`) adds each round's energy counter and the throttled batches.
RESULTS_VERSION = "4.4.0"
START = dt.datetime(2026, 1, 1, 8, 0, tzinfo=dt.UTC)
ROUNDS = 3  # the stores' files: 3 rounds (about 500 KB a file, as the issue measured); primbench run's default is 10
BATCHES_PER_ROUND = 3
CALLS_PER_BATCH = 64
#: (specialization, run index from which it applies, relative change of its time per call)
STEPS = ((3, 700, 0.05), (17, 400, -0.04), (42, 900, 0.03))


def sha(label: str) -> str:
    """A 40-hex-digit commit hash derived from a label."""
    return hashlib.sha1(label.encode()).hexdigest()


def _template_context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads(TEMPLATE.read_text())["context"]
    return context


_CONTEXT = _template_context()


@dataclass(frozen=True)
class Run:
    """One run of the plan: its position in the history, branch, commit and date."""

    index: int
    branch: str
    commit: str
    date: dt.datetime


def plan(runs: int, *, features: int = 5, per_feature: int = 10) -> list[Run]:
    """`runs` runs: ``main`` one commit an hour, and `features` branches ``feat-K`` of
    `per_feature` commits each, forked from main at evenly spaced commits (their runs dated just
    after the fork). Fewer runs than the features need: main only."""
    feature_runs = features * per_feature if runs > 2 * features * per_feature else 0
    main_runs = runs - feature_runs
    out = [Run(i, "main", sha(f"main-{i}"), START + dt.timedelta(hours=i)) for i in range(main_runs)]
    for k in range(features if feature_runs else 0):
        fork = main_runs * (k + 1) // (features + 1)
        for j in range(per_feature):
            out.append(Run(len(out), f"feat-{k}", sha(f"feat-{k}-{j}"),
                           START + dt.timedelta(hours=fork, minutes=5 * (j + 1))))
    return out


def _name(i: int) -> tuple[str, dict[str, Any]]:
    op = ("copy", "scale", "add", "triad")[i % 4]
    size = 1 << (10 + (i // 4) % 25)
    kind = ("float", "double", "int", "char")[(i // 100) % 4]
    return f"op: {op}, size: {size}, type: {kind}, variant: {i}", {"algo": "stream", "op": op, "size": size,
                                                                    "type": kind, "variant": i}


def specialization(i: int, ms: float, rng: np.random.Generator, *, rounds: int = ROUNDS,
                   batches: bool = False, energy: bool = False) -> dict[str, Any]:
    """Specialization `i` at `ms` GPU milliseconds per call: `rounds` rounds of
    `BATCHES_PER_ROUND` batches of `CALLS_PER_BATCH` calls."""
    name, meta = _name(i)
    bytes_per_call = 2 * 4 * int(meta["size"])
    items = int(meta["size"])
    round_ms = ms * np.exp(rng.normal(0.0, 0.01, rounds))
    per_batch = BATCHES_PER_ROUND
    calls_round = per_batch * CALLS_PER_BATCH
    rounds_out = []
    batch_out: list[dict[str, Any]] = []
    per_call_secs: list[float] = []
    temp = 36.0
    for r, rms in enumerate(round_ms):
        batch_ms = rms * CALLS_PER_BATCH * np.exp(rng.normal(0.0, 0.0005, per_batch))
        gpu = float(batch_ms.sum()) / 1000.0
        per_call_secs.extend(float(b) / 1000.0 / CALLS_PER_BATCH for b in batch_ms)
        rounds_out.append({  # energy and throttled_batches: results 4.5.0
            "round": r, "gpu_ms_per_call": gpu * 1000.0 / calls_round,
            "bytes_per_second": bytes_per_call * calls_round / gpu, "items_per_second": items * calls_round / gpu,
            "noise_timeout": False, "noise_percent": float(abs(rng.normal(0.05, 0.01))),
            "batches": per_batch, "kernel_calls": calls_round, "kernel_calls_per_batch": CALLS_PER_BATCH,
            "elapsed_secs": {"host": gpu * 1.2 + 0.01, "gpu": gpu},
            "gpu_temp_celsius": {"start": temp, "end": temp + 0.5},
            "sm_clock_mhz": float(1979.0 + rng.normal(0.0, 0.3)),
            **({"throttled_batches": 0} if energy else {}),
            **({"energy": {"joules": gpu * 350.0, "window_secs": gpu, "joules_per_call": gpu * 350.0 / calls_round,
                       "watts": 350.0 + float(rng.normal(0.0, 2.0)), "too_short": False,
                       "power_samples_watts": {"count": per_batch, "mean": 350.0, "min": 340.0, "max": 360.0}}}
               if energy else {}),
        })
        temp += 0.5
        if batches:
            for b in batch_ms:
                calls = rng.normal(float(b) / CALLS_PER_BATCH, 0.0005 * float(b) / CALLS_PER_BATCH, CALLS_PER_BATCH)
                batch_out.append({"batch_ms": float(b), "iterations_ms": [float(x) for x in calls],
                                  "kernel_calls": CALLS_PER_BATCH, "host_secs": float(b) / 1000.0 * 1.05,
                                  "round": r})
    gpu_total = math.fsum(rd["elapsed_secs"]["gpu"] for rd in rounds_out)
    calls_total = calls_round * rounds
    log_ms = np.log(round_ms)
    ordered = sorted(per_call_secs)
    record: dict[str, Any] = {
        "index": i, "name": name,
        "bytes_per_second": bytes_per_call * calls_total / gpu_total,
        "items_per_second": items * calls_total / gpu_total,
        "bytes_per_item": 8, "items": items, "noise_timeout": False,
        "noise_percent": math.sqrt(math.fsum(rd["noise_percent"] ** 2 for rd in rounds_out) / rounds),
        "meta": meta,
        "elapsed_secs": {"host": math.fsum(rd["elapsed_secs"]["host"] for rd in rounds_out), "gpu": gpu_total},
        "gpu_temp_celsius": {"start": 36.0, "end": temp},
        "calls": {"kernel_calls_per_batch": CALLS_PER_BATCH, "ms_per_batch": gpu_total * 1000.0 / (per_batch * rounds),
                  "batches": per_batch * rounds, "kernel_calls": calls_total},
        "sm_clock": {"average_mhz": 1979.2, "default_mhz": 1980.0, "fraction_of_default": 1979.2 / 1980.0,
                     "below_expected": False, "clock_event_reasons": {"start": [], "end": []},
                     "throttle_reasons": []},
        "rounds": rounds_out,
        "between_rounds": {"count": rounds, "cv_percent": float(np.std(log_ms, ddof=1)) * 100.0},
        "gpu_seconds_per_call": gpu_total / calls_total,
        "time_per_call": {"mean": gpu_total / calls_total, "median": float(np.median(ordered)),
                          "min": ordered[0], "q1": float(np.quantile(ordered, 0.25)),
                          "q3": float(np.quantile(ordered, 0.75))},
    }
    if energy:
        record["throttled_batches"] = 0
        record["energy"] = {"joules_per_call": 350.0 * gpu_total / calls_total, "watts": 350.0,
                            "cv_between_rounds_percent": 0.6, "rounds_too_short": 0, "window_secs": gpu_total,
                            "power_limit_watts": 700.0}
    if batches:
        record["batches"] = batch_out
    return record


def levels(specs: int, seed: int = 0) -> np.ndarray:
    """Each specialization's GPU milliseconds per call (0.01 to 2 ms)."""
    return np.exp(np.random.default_rng(seed).uniform(math.log(0.01), math.log(2.0), specs))


def document(run: Run, specs: int = 100, *, batches: bool = False, seed: int = 0,
             rounds: int = ROUNDS, version: str = RESULTS_VERSION) -> dict[str, Any]:
    """The results document of `run`: `specs` specializations at their level (`levels`), with
    0.2 % run-to-run noise and the planted `STEPS`."""
    rng = np.random.default_rng([seed, run.index])
    base = levels(specs, seed)
    noise = np.exp(rng.normal(0.0, 0.002, specs))
    records = []
    for i in range(specs):
        ms = float(base[i] * noise[i])
        for spec, at, change in STEPS:
            if spec == i and run.index >= at and run.branch == "main":
                ms *= 1 + change
        energy = tuple(map(int, version.split("."))) >= (4, 5, 0)
        records.append(specialization(i, ms, rng, rounds=rounds, batches=batches, energy=energy))
    context = copy.deepcopy(_CONTEXT)
    context["results_version"] = version
    general = context["general"]
    general.update({"algorithm": "stream", "specialization_count": specs, "date": run.date.isoformat(),
                    "branch_name": run.branch, "commit_hash": run.commit,
                    "branch_source": "env:PRIMBENCH_BRANCH", "commit_source": "env:PRIMBENCH_COMMIT"})
    context["settings"].update({"output_batches": batches, "json_out": f"/ci/out/{run.commit[:12]}.json",
                                "rounds": rounds})
    gpu = math.fsum(r["elapsed_secs"]["gpu"] for r in records)
    return {"context": context, "specializations": records,
            "summary": {"noise_timeouts": 0, "failures": 0,
                        "elapsed_secs": {"host": math.fsum(r["elapsed_secs"]["host"] for r in records) + 5.0,
                                         "gpu": gpu}}}


def text(doc: dict[str, Any]) -> str:
    """As primbench writes it: indented by 4."""
    return json.dumps(doc, indent=4)


def check(doc: dict[str, Any]) -> None:
    """Raise unless `doc` is a valid current-schema results document."""
    sys.path.insert(0, str(ROOT))
    from primbench.results import results_from_dict

    results_from_dict(doc, "generated")


def write_files(directory: Path, runs: list[Run], specs: int = 100, *, batches: bool = False) -> Iterator[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    for run in runs:
        path = directory / f"{run.branch}-{run.index:06d}.json"
        path.write_text(text(document(run, specs, batches=batches)))
        yield path


if __name__ == "__main__":
    out, n = Path(sys.argv[1]), int(sys.argv[2])
    check(document(plan(1)[0]))
    check(document(plan(1)[0], 3, batches=True))
    check(document(plan(1)[0], 3, batches=True, version="4.5.0"))
    for _ in write_files(out, plan(n)):
        pass
    print(f"{n} files in {out}")
