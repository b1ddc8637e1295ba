"""Synthetic results.json documents (schema 4.1.0) for the compare tests and benchmarks."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

GPU = {"name": "NVIDIA H200", "uuid": "GPU-0a1b2c3d", "serial": "1650124000001", "pci_bus_id": "00000000:00:06.0"}

SETTINGS: dict[str, Any] = {
    "size": 134217728, "hot": False, "seed": 42, "json_out": "results.json", "csv_out": "", "filter": "",
    "dry": False, "min_gpu_ms_per_batch": 10, "min_secs": 1, "noise_timeout_secs": 10, "batch_window_size": 10,
    "noise_tolerance_percent": 1, "min_gpu_temp": 50, "max_gpu_temp": 60, "max_warming_secs": 60,
    "max_cooling_secs": 60, "output_batches": False, "spaces_per_indent": 4, "stream_blocking_timeout_secs": 10,
    "cache_size": 268435456, "device": None, "no_test": False, "no_monitoring": False, "branch": "", "commit": "",
}


def spec(name: str, bytes_per_second: float, *, algo: str = "copy", index: int = 0, noise_percent: float = 0.02,
         noise_timeout: bool = False, items_per_second: float | None = None, batches: Sequence[float] | None = None,
         kernel_calls_per_batch: int = 64, batch_count: int = 50, error: str | None = None,
         round_cv: float | None = 0.001, time_ms: float | None = None, **meta: Any) -> dict[str, Any]:
    """One specialization record. `batches` are batch GPU times in ms (all with the same calls).
    `round_cv`: three rounds at exp(-cv), 1 and exp(cv) times the throughput (their log SD is
    exactly `cv`); None writes no rounds (a file of before results 4.3.0). `time_ms`: the GPU
    time per call (default: what 134217728 items per call at the items/s take; 0.25 ms with no
    items/s); 0 writes no GPU time at all."""
    if error is not None:
        return {
            "index": index, "name": name, "bytes_per_second": None, "items_per_second": None,
            "bytes_per_item": None, "items": None, "noise_timeout": False, "noise_percent": None,
            "meta": {"algo": algo, **meta}, "elapsed_secs": None, "calls": None, "error": error,
        }
    ips = bytes_per_second / 2 if items_per_second is None else items_per_second
    n = len(batches) if batches is not None else batch_count
    # GPU time per call consistent with the throughput: 134217728 items per call
    per_call_ms = time_ms if time_ms is not None else 134217728 / ips * 1000.0 if ips > 0 else 0.25
    if not per_call_ms * kernel_calls_per_batch * max(n, 1) < 1e300:  # a hostile throughput: any finite time
        per_call_ms = 0.25
    record: dict[str, Any] = {
        "index": index, "name": name, "bytes_per_second": bytes_per_second, "items_per_second": ips,
        "bytes_per_item": 2, "items": 134217728, "noise_timeout": noise_timeout, "noise_percent": noise_percent,
        "meta": {"algo": algo, **meta},
        "elapsed_secs": {"host": 1.0, "gpu": per_call_ms / 1000.0 * kernel_calls_per_batch * n},
        "gpu_temp_celsius": {"start": 45, "end": 46},
        "calls": {"kernel_calls_per_batch": kernel_calls_per_batch, "ms_per_batch": 10.0, "batches": n,
                  "kernel_calls": kernel_calls_per_batch * n},
    }
    if round_cv is not None:
        record["rounds"] = [
            {"round": k, "gpu_ms_per_call": per_call_ms / f, "bytes_per_second": bytes_per_second * f,
             "items_per_second": ips * f, "noise_timeout": noise_timeout, "noise_percent": noise_percent,
             "batches": n // 3, "kernel_calls": kernel_calls_per_batch * (n // 3),
             "kernel_calls_per_batch": kernel_calls_per_batch, "elapsed_secs": {"host": 0.3, "gpu": 0.15}}
            for k, f in enumerate(np.exp(np.array([-1.0, 0.0, 1.0]) * round_cv))
        ]
    if batches is not None:
        record["batches"] = [
            {"batch_ms": float(ms), "kernel_calls": kernel_calls_per_batch, "host_secs": 0.02} for ms in batches
        ]
    return record


def document(specs: Iterable[Mapping[str, Any]], *, algorithm: str = "copy", version: str = "4.1.0",
             gpu: Mapping[str, Any] | None = None, settings: Mapping[str, Any] | None = None,
             branch: str = "main", commit: str = "abc1234", monitoring: Any = "default",
             custom_settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A whole results document around `specs` (indices renumbered)."""
    records = []
    for i, s in enumerate(specs):
        r = copy.deepcopy(dict(s))
        r["index"] = i
        records.append(r)
    general: dict[str, Any] = {
        "algorithm": algorithm, "specialization_count": len(records), "library_build_type": "python",
        "gpu": dict(gpu if gpu is not None else GPU),
        "backend": {"name": "cuda", "runtime_version": "13.0", "driver_version": "580.159.04"},
        "temperature_type": "gpu", "host_name": "host", "date": "2026-11-30T04:00:00+00:00",
        "branch_name": branch, "commit_hash": commit, "branch_source": "option", "commit_source": "option",
        "primbench_version": "0.1.0", "python_version": "3.11.9",
    }
    if monitoring == "default":
        general["monitoring"] = {"name": "nvml", "version": "12.580"}
    elif monitoring is not None:
        general["monitoring"] = monitoring
    context: dict[str, Any] = {
        "results_version": version, "general": general, "settings": {**SETTINGS, **(settings or {})},
        "flags": {"sync": False},
    }
    if custom_settings is not None:
        context["custom_settings"] = dict(custom_settings)
    ok = [r for r in records if r.get("error") is None]
    return {
        "context": context,
        "specializations": records,
        "summary": {"noise_timeouts": sum(1 for r in ok if r["noise_timeout"]),
                    "failures": len(records) - len(ok),
                    "elapsed_secs": {"host": 1.0 * len(records), "gpu": 0.5 * len(ok)}},
    }


def write(path: Path, doc: Mapping[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def batch_times(rng: np.random.Generator, ms_per_call: float, n: int = 30, cv: float = 0.0002,
                calls: int = 64) -> list[float]:
    """n batch times (ms) of `calls` calls each, around `ms_per_call`, with batch-to-batch CV `cv`."""
    return list(ms_per_call * calls * np.exp(rng.normal(0.0, cv, n)))


def run_from_batches(name: str, batches: Sequence[float], *, bytes_per_call: float = 2 * 2**27,
                     calls: int = 64, **kw: Any) -> dict[str, Any]:
    """A specialization whose throughput and noise agree with its batches, as the harness writes them."""
    b = np.asarray(batches, dtype=float)
    gpu_secs = b.sum() / 1000
    bps = bytes_per_call * calls * b.size / gpu_secs
    window = b[-10:] / calls
    noise = float(np.std(window, ddof=1) / np.mean(window) * 100)
    return spec(name, bps, batches=list(b), kernel_calls_per_batch=calls, noise_percent=noise, **kw)
