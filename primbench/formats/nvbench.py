"""NVBench's JSON (``--json FILE``; ``--jsonbin FILE`` adds per-sample files).

* Each benchmark's states become specializations: ``meta`` is ``algo`` (the benchmark's
  name) and the state's axis values (``T=I32 Elements=2^20`` is ``{"T": "I32", "Elements":
  1048576}``, so its name is ``Elements: 1048576, T: I32``, primbench's sorted rule), with
  ``device`` added where the file's states ran on more than one GPU. A skipped state is a
  failed specialization whose error is NVBench's skip reason.
* The summaries of the cold (isolated) measurement map to the model: ``nv/cold/time/gpu/mean``
  is the GPU seconds per call, with its ``min``, ``median``, ``q1``, ``q3`` as the time per
  call; ``nv/cold/time/gpu/stdev/relative`` (a fraction) times 100 the noise percent;
  ``nv/cold/bw/global/bytes_per_second`` the bandwidth and ``nv/cold/bw/item_rate`` the item
  rate (0 where the benchmark declared none); ``nv/cold/sample_size`` the calls (one call per
  sample, so one "batch" per sample); ``nv/cold/walltime`` the host seconds;
  ``nv/cold/sm_clock_rate/mean`` (Hz) the average SM clock against the device's
  ``sm_default_clock_rate``. A state is marked noisy (``noise_timeout``) when its relative
  standard deviation is above its ``max_noise`` (NVBench then stopped at its timeout).
* ``--jsonbin``: a summary with hint ``file/sample_times`` names a file of float32 sample
  times in seconds; where that file is found (beside the JSON file, or as written, relative
  to the working directory) each sample is one batch of one call, so the time per call's
  statistics and compare's per-call data come from it. A file that is absent is not read
  (the summaries still are); one whose size disagrees with the summary is an error.
* The file has no date: the JSON file's modification time is the run's date. The GPU is the
  device of the first state (``name``, ``sm_<version>``, SMs, L2 and memory sizes).
"""

from __future__ import annotations

import array
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from primbench.formats._base import Converted, FormatError
from primbench.formats._document import (
    algorithm_of,
    document,
    file_date,
    mapping,
    name_of,
    non_negative,
    number,
    sequence,
    specialization,
    text,
)

MAX_SAMPLES = 1 << 24  # a sample file of more than 16 Mi float32 values is not read


def detect(parsed: Mapping[str, Any]) -> bool:
    benchmarks = parsed.get("benchmarks")
    if not isinstance(benchmarks, list) or "context" in parsed:
        return False
    if isinstance(parsed.get("meta"), Mapping) and "devices" in parsed:
        return True
    return any(isinstance(b, Mapping) and "states" in b for b in benchmarks)


def _value(entry: Mapping[str, Any], where: str) -> Any:
    kind = entry.get("type")
    raw = entry.get("value")
    if kind in ("int64", "float64"):
        return number(raw, where)
    return raw


def _summaries(state: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """tag -> value (a summary's ``value`` datum), and hint/tag -> every datum of a file summary."""
    values: dict[str, Any] = {}
    files: dict[str, dict[str, Any]] = {}
    for i, summary in enumerate(sequence(state.get("summaries") or [], f"{where}.summaries")):
        at = f"{where}.summaries[{i}]"
        summary = mapping(summary, at)
        data = {str(d.get("name")): _value(d, f"{at}.data.{d.get('name')}")
                for d in sequence(summary.get("data") or [], f"{at}.data") if isinstance(d, Mapping)}
        tag = str(summary.get("tag", ""))
        hint = str(summary.get("hint", ""))
        if hint.startswith("file/"):
            files[hint] = data
            files[tag] = data
        elif "value" in data:
            values[tag] = data["value"]
    return values, files


def _samples(info: Mapping[str, Any], source: str, where: str) -> list[float] | None:
    """The float32 sample times of a ``--jsonbin`` file, where it is found."""
    filename = info.get("filename")
    if not isinstance(filename, str) or not filename:
        return None
    here = Path(source).parent if source and not source.startswith("<") else Path(".")
    candidates = [Path(filename)] if os.path.isabs(filename) else [here / filename, Path(filename)]
    for path in candidates:
        if path.is_file():
            break
    else:
        return None
    size = info.get("size")
    expected = int(number(size, f"{where}.size") or 0) if size is not None else None
    if path.stat().st_size > MAX_SAMPLES * 4:
        raise FormatError(where, f"{filename!r}: more than {MAX_SAMPLES} samples")
    raw = path.read_bytes()
    if len(raw) % 4:
        raise FormatError(where, f"{filename!r}: {len(raw)} bytes is not a whole number of float32 samples")
    values = array.array("f")
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    if expected is not None and expected != len(values):
        raise FormatError(where, f"{filename!r}: holds {len(values)} samples, the summary says {expected}")
    out = [float(v) for v in values]
    if any(not (v >= 0.0) or v == float("inf") for v in out):
        raise FormatError(where, f"{filename!r}: a sample time that is negative or not finite")
    return out


def _axis_value(entry: Mapping[str, Any], where: str) -> Any:
    kind = entry.get("type")
    raw = entry.get("value")
    if kind == "int64":
        value = number(raw, where)
        return int(value) if value is not None else None
    if kind == "float64":
        return number(raw, where)
    return str(raw)


def read(parsed: Mapping[str, Any], source: str) -> Converted:
    devices: dict[int | None, Mapping[str, Any]] = {}
    for i, d in enumerate(sequence(parsed.get("devices") or [], "devices")):
        d = mapping(d, f"devices[{i}]")
        devices[_device(d.get("id", i))] = d
    benchmarks = sequence(parsed["benchmarks"], "benchmarks")
    used = {_device(s.get("device")) for b in benchmarks if isinstance(b, Mapping)
            for s in (b.get("states") or []) if isinstance(s, Mapping)}
    several = len(used) > 1
    specs: list[dict[str, Any]] = []
    algos: list[str] = []
    first_device: Any = None
    for bi, bench in enumerate(benchmarks):
        bwhere = f"benchmarks[{bi}]"
        bench = mapping(bench, bwhere)
        algo = text(bench.get("name"), f"{bwhere}.name")
        algos.append(algo)
        for si, state in enumerate(sequence(bench.get("states") or [], f"{bwhere}.states")):
            where = f"{bwhere}.states[{si}]"
            state = mapping(state, where)
            meta: dict[str, Any] = {"algo": algo}
            for ai, axis in enumerate(sequence(state.get("axis_values") or [], f"{where}.axis_values")):
                axis = mapping(axis, f"{where}.axis_values[{ai}]")
                meta[text(axis.get("name"), f"{where}.axis_values[{ai}].name")] = _axis_value(
                    axis, f"{where}.axis_values[{ai}].value")
            device = _device(state.get("device"))
            if several:
                meta["device"] = device
            if first_device is None:
                first_device = device
            name = name_of(meta, str(state.get("name", f"state {si}")))
            if state.get("is_skipped"):
                reason = state.get("skip_reason") or "skipped"
                specs.append(specialization(len(specs), name, meta, seconds_per_call=None,
                                            error=f"skipped by NVBench: {reason}"))
                continue
            values, files = _summaries(state, where)
            mean = values.get("nv/cold/time/gpu/mean")
            if mean is None:
                specs.append(specialization(len(specs), name, meta, seconds_per_call=None,
                                            error="NVBench wrote no cold GPU time (nv/cold/time/gpu/mean)"))
                continue
            mean = non_negative(mean, f"{where}.nv/cold/time/gpu/mean")
            relative = values.get("nv/cold/time/gpu/stdev/relative")
            noise = non_negative(relative, f"{where}.stdev") * 100.0 if relative is not None else 0.0
            max_noise = state.get("max_noise", bench.get("max_noise"))
            limit = number(max_noise, f"{where}.max_noise", allow_none=True)
            samples_n = values.get("nv/cold/sample_size")
            calls = int(non_negative(samples_n, f"{where}.sample_size")) if samples_n is not None else None
            sample_file = files.get("file/sample_times") or files.get("nv/cold/sample_times")
            samples = _samples(sample_file, source, f"{where}.nv/cold/sample_times") if sample_file else None
            batches = [{"batch_ms": s * 1000.0, "kernel_calls": 1} for s in samples] if samples else None
            clock: dict[str, Any] | None = None
            hz = values.get("nv/cold/sm_clock_rate/mean")
            if hz is not None:
                avg = non_negative(hz, f"{where}.sm_clock_rate") / 1e6
                default_hz = mapping(devices.get(device, {}), "devices").get("sm_default_clock_rate")
                default = number(default_hz, "devices.sm_default_clock_rate", allow_none=True)
                default_mhz = default / 1e6 if default else None
                clock = {"average_mhz": avg, "default_mhz": default_mhz,
                         "fraction_of_default": avg / default_mhz if default_mhz else None,
                         "below_expected": False, "clock_event_reasons": None, "throttle_reasons": []}
            stat = {k: non_negative(values[f"nv/cold/time/gpu/{k}"], f"{where}.{k}")
                    for k in ("median", "min", "q1", "q3") if values.get(f"nv/cold/time/gpu/{k}") is not None}
            wall = values.get("nv/cold/walltime")
            specs.append(specialization(
                len(specs), name, meta, seconds_per_call=mean,
                bytes_per_second=non_negative(values.get("nv/cold/bw/global/bytes_per_second", 0), f"{where}.bw"),
                items_per_second=non_negative(values.get("nv/cold/bw/item_rate", 0), f"{where}.item_rate"),
                noise_percent=noise, noise_timeout=limit is not None and relative is not None and
                float(relative) > limit,
                calls={"kernel_calls_per_batch": 1, "batches": calls, "kernel_calls": calls} if calls else {},
                elapsed={k: v for k, v in (("host", non_negative(wall, f"{where}.walltime") if wall is not None
                                            else None), ("gpu", mean * calls if calls else None)) if v is not None},
                batches=batches, sm_clock=clock, stats={"mean": mean, **stat},
            ))
    gpu: dict[str, Any] = {}
    dev = devices.get(first_device)
    if isinstance(dev, Mapping):
        sm = dev.get("sm_version")
        gpu = {"name": dev.get("name"), "arch": f"sm_{int(sm) // 10}" if isinstance(sm, int) else None,
               "multiprocessors": dev.get("number_of_sms"), "l2_cache_bytes": dev.get("l2_cache_size"),
               "memory_bytes": dev.get("global_memory_size")}
        gpu = {k: v for k, v in gpu.items() if v is not None}
    version = _json_version(parsed)
    general = {"gpu": gpu or None, "backend": {"name": "cuda"}, "date": file_date(source)}
    if not specs:
        raise FormatError("benchmarks", "NVBench JSON with no states")
    return Converted("nvbench", f"nvbench-json {version}" if version else "nvbench-json",
                     document(algorithm_of(algos), specs, general=general), lacks=("date",))


def _device(value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise FormatError("device", f"must be a device id (a whole number), got {type(value).__name__}")


def _json_version(parsed: Mapping[str, Any]) -> str | None:
    meta = parsed.get("meta")
    if isinstance(meta, Mapping):
        version = meta.get("version")
        if isinstance(version, Mapping):
            j = version.get("json")
            if isinstance(j, Mapping) and isinstance(j.get("string"), str):
                return str(j["string"])
    return None


__all__: Sequence[str] = ("detect", "read")
