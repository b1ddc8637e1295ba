"""Synthetic results documents (results.json schema 4.1.0) for the history tests and benchmarks."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

H200_A = {"name": "NVIDIA H200", "arch": "sm_90", "pci_bus_id": "00000000:00:06.0",
          "uuid": "GPU-5d6e1a0c-aaaa-4b7f-9c1e-000000000001", "serial": "1655123000001"}
H200_B = {"name": "NVIDIA H200", "arch": "sm_90", "pci_bus_id": "00000000:00:06.0",
          "uuid": "GPU-5d6e1a0c-bbbb-4b7f-9c1e-000000000002", "serial": "1655123000002"}
START = dt.datetime(2026, 1, 1, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))


def sha(label: str) -> str:
    """A 40-hex-digit commit hash derived from a label ("main-3" -> always the same hash)."""
    return hashlib.sha1(label.encode()).hexdigest()


def spec_name(i: int) -> str:
    return f"type: t{i}"


def specialization(index: int, name: str, bytes_per_second: float, *, algo: str = "copy", noise: float = 0.05,
                   batches: int = 0, temp: float = 41.0, clock_mhz: float | None = None,
                   error: str | None = None) -> dict[str, Any]:
    if error is not None:
        return {"index": index, "name": name, "bytes_per_second": None, "items_per_second": None,
                "bytes_per_item": None, "items": None, "noise_timeout": False, "noise_percent": None,
                "meta": {"algo": algo, "type": name}, "elapsed_secs": None, "calls": None, "error": error}
    out: dict[str, Any] = {
        "index": index,
        "name": name,
        "bytes_per_second": bytes_per_second,
        "items_per_second": bytes_per_second / 2,
        "bytes_per_item": 2,
        "items": 134217728,
        "noise_timeout": False,
        "noise_percent": noise,
        "meta": {"algo": algo, "type": name},
        # GPU time that agrees with the throughput: 2 bytes of 134217728 items per call
        "elapsed_secs": {"host": 1.01, "gpu": 2 * 134217728 * 32 * max(batches, 10) / bytes_per_second},
        "gpu_temp_celsius": {"start": temp, "end": temp + 1},
        "calls": {"kernel_calls_per_batch": 32, "ms_per_batch": 11.35, "batches": max(batches, 10),
                  "kernel_calls": 32 * max(batches, 10)},
    }
    if batches:
        out["batches"] = [
            {"batch_ms": 11.35 + 0.001 * j, "iterations_ms": [0.35] * 4, "kernel_calls": 32, "host_secs": 0.012}
            for j in range(batches)
        ]
    if clock_mhz is not None:
        out["sm_clock"] = {"average_mhz": clock_mhz, "default_mhz": 1980.0, "fraction_of_default": clock_mhz / 1980,
                           "below_expected": clock_mhz / 1980 < 0.9,
                           "clock_event_reasons": {"start": [], "end": []}, "throttle_reasons": []}
    return out


def document(values: Mapping[str, float] | Sequence[float], *, algorithm: str = "copy", branch: str | None = "main",
             commit: str | None = None, date: dt.datetime | str = START, gpu: Mapping[str, Any] = H200_A,
             host: str = "runner-1", noise: float = 0.05, batches: int = 0, clock_mhz: float | None = 1978.0,
             failed: Sequence[str] = (), version: str = "4.1.0", settings: Mapping[str, Any] | None = None,
             custom_settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A results document with one specialization per value (bytes per second); `settings`
    update the default ones (128 MiB, cold), `custom_settings` are the program's own."""
    if not isinstance(values, Mapping):
        values = {spec_name(i): v for i, v in enumerate(values)}
    specs = []
    for i, (name, value) in enumerate(values.items()):
        err = "RuntimeError: boom" if name in failed else None
        specs.append(specialization(i, name, value, algo=algorithm, noise=noise, batches=batches,
                                    clock_mhz=clock_mhz, error=err))
    general: dict[str, Any] = {
        "algorithm": algorithm,
        "specialization_count": len(specs),
        "library_build_type": "python",
        "gpu": dict(gpu),
        "backend": {"name": "cuda", "runtime_version": "13.0"},
        "host_name": host,
        "date": date if isinstance(date, str) else date.isoformat(),
        "primbench_version": "0.1.0",
        "python_version": "3.11.7",
    }
    if branch is not None:
        general["branch_name"] = branch
        general["branch_source"] = "option"
    if commit is not None:
        general["commit_hash"] = commit
        general["commit_source"] = "option"
    ok = [s for s in specs if s.get("error") is None]
    context: dict[str, Any] = {
        "results_version": version,
        "general": general,
        "settings": {"size": 134217728, "hot": False, "min_gpu_ms_per_batch": 10, "output_batches": batches > 0,
                     **(settings or {})},
        "flags": {"sync": False},
    }
    if custom_settings is not None:
        context["custom_settings"] = dict(custom_settings)
    return {
        "context": context,
        "specializations": specs,
        "summary": {"noise_timeouts": 0, "failures": len(specs) - len(ok),
                    "elapsed_secs": {"host": 2.0, "gpu": 1.0}},
    }


def write(path: Path, doc: Mapping[str, Any], indent: int | None = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent), encoding="utf-8")
    return path


def branch_series(directory: Path, levels: Sequence[Mapping[str, float] | Sequence[float]], *, branch: str = "main",
                  start: dt.datetime = START, step: dt.timedelta = dt.timedelta(hours=1), runs_per_commit: int = 1,
                  gpu: Mapping[str, Any] = H200_A, prefix: str | None = None, **kw: Any) -> list[Path]:
    """One results file per (commit, repeat): commit i of `branch` measures levels[i]."""
    paths = []
    prefix = prefix or branch
    for i, values in enumerate(levels):
        for r in range(runs_per_commit):
            when = start + step * i + dt.timedelta(minutes=r)
            doc = document(values, branch=branch, commit=sha(f"{prefix}-{i}"), date=when, gpu=gpu, **kw)
            paths.append(write(directory / f"{prefix}-{i:04d}-{r}.json", doc))
    return paths


def noisy_levels(n: int, *, base: float = 1.0e12, cv: float = 0.005, shifts: Mapping[int, float] | None = None,
                 seed: int = 0, specs: int = 1) -> list[list[float]]:
    """n commits of `specs` specializations: level `base`, multiplied by (1+shift) from each
    commit in `shifts` on, with Gaussian run-to-run noise of relative size `cv`."""
    rng = np.random.default_rng(seed)
    level = np.full(specs, base)
    out = []
    for i in range(n):
        if shifts and i in shifts:
            level = level * (1 + shifts[i])
        out.append([float(v) for v in level * (1 + cv * rng.standard_normal(specs))])
    return out


def standard_history(directory: Path, db: Path | None = None) -> Path:
    """A store with a known story, for the query, compare, plot and CLI tests:

    * ``main`` on GPU A: 30 commits (``main-0`` .. ``main-29``), specializations t0..t2 at
      1, 2 and 3 TB/s with 0.2 % run-to-run noise; t0 drops 5 % from ``main-20`` on;
    * ``main`` on GPU B (same model, other physical GPU, 3 % slower): 8 commits ``mainB-*``;
    * ``feat`` on GPU A, forked at ``main-24``: 2 commits, t1 4 % slower than main, t2 added;
    * ``copy2``, a second algorithm on main GPU A, 6 commits.
    """
    db = db or directory / "history.duckdb"
    main = noisy_levels(30, specs=3, cv=0.002, seed=11)
    for i, row in enumerate(main):
        row[1] *= 2
        row[2] *= 3
        if i >= 20:
            row[0] *= 0.95
    files = branch_series(directory / "main", main)
    gpu_b = [[v * 0.97 for v in row] for row in noisy_levels(8, specs=3, cv=0.002, seed=12)]
    files += branch_series(directory / "mainB", gpu_b, gpu=H200_B, prefix="mainB",
                           start=START + dt.timedelta(minutes=20), step=dt.timedelta(hours=3))
    feat_levels = noisy_levels(2, specs=4, cv=0.002, seed=13)
    feat = []
    for row in feat_levels:
        feat.append({spec_name(0): row[0] * 0.95, spec_name(1): row[1] * 2 * 0.96, spec_name(2): row[2] * 3,
                     "type: new": row[3]})
    files += branch_series(directory / "feat", feat, branch="feat", start=START + dt.timedelta(days=2))
    files += branch_series(directory / "copy2", noisy_levels(6, specs=2, seed=14), algorithm="copy2",
                           prefix="main", start=START + dt.timedelta(minutes=5))
    report = ingest(files, db)
    assert not report.errors, report.errors
    return db


# --------------------------------------------------------------------------- store helpers


def mixed_history(root: Path) -> Path:
    """`standard_history` in `root`, and beside it branch ``twice``: commits measured 2 and 3 times
    (medians of an even and an odd count), runs without a commit, a failed specialization, another
    config. Returns the store's path; every file ingested without error."""
    path = standard_history(root)
    start = START + dt.timedelta(days=5)
    files = branch_series(root / "twice", noisy_levels(12, specs=3, seed=21, shifts={6: -0.04}),
                          branch="twice", runs_per_commit=2, start=start)
    files += branch_series(root / "thrice", noisy_levels(9, specs=2, seed=22, shifts={5: 0.05}),
                           branch="twice", prefix="thrice", runs_per_commit=3, start=start + dt.timedelta(days=1),
                           settings={"size": 1024}, failed=["type: t1"])
    for i, row in enumerate(noisy_levels(8, specs=2, seed=23)):
        doc = document(row, branch="twice", commit=None, date=start + dt.timedelta(days=2, hours=i))
        files.append(write(root / "nocommit" / f"{i}.json", doc))
    report = ingest(files, path)
    assert not report.errors, report.errors
    return path


def ingest(paths: Any, db: Any = None, *, wait_secs: float | None = None, progress: Any = None,
           overrides: Any = None) -> Any:
    """Ingest into the store at `db` (a DuckDB file, a folder of parts, a URL) through `open_store`."""
    from primbench.history.storage.contract import open_store

    return open_store(db, wait_secs=wait_secs).ingest(paths, progress=progress, overrides=overrides)


def ingest_shared(paths: Any, directory: Any, *, runner: str | None = None, progress: Any = None,
                  overrides: Any = None) -> Any:
    """Ingest as `runner`'s Parquet parts under `directory` (made if need be)."""
    from primbench.history.storage.parquet import ParquetStore

    return ParquetStore(directory, runner=runner).ingest(paths, progress=progress, overrides=overrides)


def merge(source: Any, db: Any = None, *, wait_secs: float | None = None) -> Any:
    """Merge the store `source` into the store at `db`."""
    from primbench.history.storage.contract import open_store

    return open_store(db, wait_secs=wait_secs).merge(source)


@contextlib.contextmanager
def open_for_query(db: Any = None, *, wait_secs: float | None = None) -> Iterator[Any]:
    """The raw read-only DuckDB connection of the store at `db` (for direct SQL in tests)."""
    from primbench.history.storage.contract import open_store

    with open_store(db, wait_secs=wait_secs).read() as reader:
        yield reader.con


def three_spec_runs(directory: Path, n: int, *, branch: str = "main", seed: int = 1) -> list[Path]:
    """`n` results files of 3 specializations with 0.2 % noise and 2 batches each, one per commit
    of `branch` (the storage tests' runs, on every backend)."""
    return branch_series(directory, noisy_levels(n, specs=3, cv=0.002, seed=seed), branch=branch,
                         prefix=f"{branch}{seed}", batches=2)
