"""Google Benchmark's JSON (``--benchmark_out=FILE --benchmark_out_format=json``).

* The rows of one benchmark (``run_name``) are one specialization: its repetitions
  (``run_type: iteration``) are its rounds, and its aggregates (``mean``, ``median``,
  ``stddev``, ``cv``) summarise them. The time per call is ``real_time`` (the manual time of
  a ``UseManualTime`` benchmark: rocPRIM's GPU event times) in seconds: the ``mean``
  aggregate, else the repetitions' mean; the noise percent is rocPRIM's ``cv`` counter, else
  the ``cv`` aggregate, else the repetitions' spread, times 100 (gbench2primbench's rule).
  ``bytes_per_second`` and ``items_per_second`` as written (0 where absent). A benchmark
  timed without manual time is a wall-clock time on the host (``timer: host``).
* Names. rocPRIM's benchmarks name a run by the JSON of its parameters
  (``{"lvl":"device","algo":"radix_sort","key_type":"int","cfg":"default_config"}/manual_time``):
  such a name is normalised as the C++ ``gbench2primbench.py`` did, so it matches the name
  the C++ primbench gives the same benchmark: suffixes (``/manual_time``, ``/iterations:N``,
  ``/repeats:N``, ``/real_time``, ``/threads:N``) dropped, type names shortened
  (`TYPE_NAMES`: ``int`` is ``i32``, ``rocprim::half`` is ``half``, ...), keys sorted, ``lvl``
  and ``algo`` left out, ``cfg: default_config`` dropped, ``rocprim::`` and ``common::``
  prefixes stripped; the algorithm is ``algo``. gbench2primbench's corrections of single
  rocPRIM benchmarks that wrote wrong parameters (histogram scales, duplicated groups, ...)
  are not repeated. Any other name is ``family/arguments``: the family is the algorithm;
  named arguments (``copy/size:1024/type:i8``, Google Benchmark's ``ArgNames``) are the meta,
  so the name is primbench's (``size: 1024, type: i8``); other arguments (``BM_copy/1024``)
  are the name as written (the family alone when it has none).
* The context gives the date, host and build type; a benchmark with ``error_occurred`` is a
  failed specialization.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from primbench.formats._base import Converted, FormatError
from primbench.formats._document import (
    algorithm_of,
    between_rounds,
    document,
    mapping,
    name_of,
    non_negative,
    sequence,
    specialization,
    text,
)

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_SUFFIX = re.compile(r"/(manual_time|real_time|process_time|iterations:\d+|repeats:\d+|threads:\d+|"
                     r"min_time:[\d.]+s?|min_warmup_time:[\d.]+s?)$")

#: The type names rocPRIM's gbench benchmarks wrote, as primbench names them (gbench2primbench).
TYPE_NAMES = {
    "char": "i8", "signed char": "i8", "int8_t": "i8", "unsigned char": "u8", "uint8_t": "u8",
    "short": "i16", "int16_t": "i16", "unsigned short": "u16", "uint16_t": "u16",
    "int": "i32", "int32_t": "i32", "unsigned int": "u32", "uint32_t": "u32",
    "long long": "i64", "int64_t": "i64", "unsigned long long": "u64", "uint64_t": "u64",
    "float": "f32", "double": "f64", "rocprim::half": "half", "rocprim::bfloat16": "bf16",
    "rocprim::int128_t": "i128", "rocprim::uint128_t": "u128", "empty_type": "empty",
    "custom_128": "custom<i64,i64>", "custom_float2": "custom<f32,f32>", "custom_double2": "custom<f64,f64>",
    "custom_int2": "custom<i32,i32>", "custom_char_double": "custom<i8,f64>",
    "custom_int_double": "custom<i32,f64>", "custom_longlong_double": "custom<i64,f64>",
    "common::custom_type<float,float>": "custom<f32,f32>", "common::custom_type<double,double>": "custom<f64,f64>",
    "common::custom_type<int,int>": "custom<i32,i32>", "common::custom_type<char,double>": "custom<i8,f64>",
    "common::custom_type<int,double>": "custom<i32,f64>", "common::custom_type<int64_t,double>": "custom<i64,f64>",
}
#: The parameters whose values are type names (rocPRIM's keys, and primbench's ``type``).
TYPE_KEYS = frozenset({"type", "key_type", "value_type", "offset_type", "item_type", "size_type", "data_type",
                       "flag_type", "input_type", "output_type"})
_DROPPED = ("lvl", "algo")
_PREFIXES = ("rocprim::", "common::")


def detect(parsed: Mapping[str, Any]) -> bool:
    context = parsed.get("context")
    benchmarks = parsed.get("benchmarks")
    if not isinstance(context, Mapping) or "results_version" in context or not isinstance(benchmarks, list):
        return False
    return any(isinstance(b, Mapping) and ("run_type" in b or "real_time" in b) for b in benchmarks) or \
        "executable" in context or "num_cpus" in context


def strip_prefixes(value: str) -> str:
    for prefix in _PREFIXES:
        value = value.replace(prefix, "")
    return value


def _serialize(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k}: {_serialize(v)}" for k, v in sorted(value.items())) + " }"
    if isinstance(value, list):
        return "[ " + ", ".join(_serialize(v) for v in value) + " ]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:g}"
    return strip_prefixes(str(value))


def rocprim_params(name: str) -> dict[str, Any] | None:
    """The parameters of a rocPRIM benchmark name (its JSON object, suffixes dropped), with
    type names shortened; None for any other name."""
    base = name
    while (m := _SUFFIX.search(base)) is not None:
        base = base[:m.start()]
    if not base.startswith("{"):
        return None
    try:
        params = json.loads(base)
    except ValueError:
        return None
    if not isinstance(params, dict):
        return None
    for key in TYPE_KEYS & params.keys():
        value = params[key]
        if isinstance(value, str):
            params[key] = TYPE_NAMES.get(value, value)
    return params


def rocprim_name(params: Mapping[str, Any]) -> str:
    """gbench2primbench's name of rocPRIM parameters: sorted keys without ``lvl`` and ``algo``,
    no ``cfg: default_config``, prefixes stripped."""
    parts = []
    for key in sorted(params):
        value = params[key]
        if key in _DROPPED or (key == "cfg" and value in ("default_config", "default")):
            continue
        parts.append(f"{key}: {_serialize(value)}")
    return ", ".join(parts)


def _split(name: str) -> tuple[str, str, dict[str, Any]]:
    """(algorithm, specialization name, meta) of a benchmark's run name."""
    params = rocprim_params(name)
    if params is not None:
        algo = str(params.get("algo", params.get("lvl", "gbench")))
        rest = {k: v for k, v in params.items() if k != "algo"}
        return algo, rocprim_name(params) or algo, {"algo": algo, **rest}
    base = name
    while (m := _SUFFIX.search(base)) is not None:
        base = base[:m.start()]
    family, _, args = base.partition("/")
    parts = args.split("/") if args else []
    named = [p.partition(":") for p in parts]
    if parts and all(sep and key for key, sep, _ in named):
        meta: dict[str, Any] = {"algo": family}
        for key, _, value in named:
            meta[key] = int(value) if value.isdigit() else value
        return family, name_of(meta, args), meta
    return family, args or family, {"algo": family}


def _seconds(row: Mapping[str, Any], where: str) -> float:
    unit = row.get("time_unit", "ns")
    if unit not in _UNITS:
        raise FormatError(f"{where}.time_unit", f"unknown unit {unit!r}")
    return non_negative(row.get("real_time"), f"{where}.real_time") * _UNITS[str(unit)]


def read(parsed: Mapping[str, Any], source: str) -> Converted:
    context = mapping(parsed["context"], "context")
    groups: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(sequence(parsed["benchmarks"], "benchmarks")):
        where = f"benchmarks[{i}]"
        row = mapping(row, where)
        name = text(row.get("name"), f"{where}.name")
        run_name = row.get("run_name")
        key = run_name if isinstance(run_name, str) else name
        group = groups.setdefault(key, {"reps": [], "aggregates": {}, "where": where, "error": None})
        if row.get("error_occurred"):
            group["error"] = str(row.get("error_message") or "error_occurred")
        elif row.get("run_type") == "aggregate":
            group["aggregates"][str(row.get("aggregate_name"))] = (row, where)
        else:
            group["reps"].append((row, where))
    specs: list[dict[str, Any]] = []
    algos: list[str] = []
    for key, group in groups.items():
        algo, name, meta = _split(key)
        algos.append(algo)
        if group["error"] is not None:
            specs.append(specialization(len(specs), name, meta, seconds_per_call=None,
                                        error=f"Google Benchmark: {group['error']}"))
            continue
        reps: list[tuple[Mapping[str, Any], str]] = group["reps"]
        aggregates: dict[str, tuple[Mapping[str, Any], str]] = group["aggregates"]
        mean_row = aggregates.get("mean") or (reps[0] if len(reps) == 1 else None)
        per_call = [_seconds(r, w) for r, w in reps]
        if mean_row is not None:
            seconds = _seconds(*mean_row)
        elif per_call:
            seconds = math.fsum(per_call) / len(per_call)
        else:
            raise FormatError(group["where"], "a benchmark with neither repetitions nor a mean aggregate")
        source_row = mean_row[0] if mean_row is not None else reps[0][0]


        cv = source_row.get("cv")
        if cv is None and "cv" in aggregates:
            cv_row = aggregates["cv"][0]
            cv = cv_row.get("real_time") if cv_row.get("aggregate_unit") == "percentage" else None
        if cv is None and len(per_call) > 1:
            cv = (between_rounds(per_call)["cv_percent"] or 0.0) / 100.0
        noise = non_negative(cv, f"{group['where']}.cv") * 100.0 if cv is not None else 0.0
        iterations = [int(non_negative(r.get("iterations", 0), f"{w}.iterations")) for r, w in reps]
        calls = sum(iterations)
        rounds = None
        if len(reps) > 1:
            rounds = [{"round": j + 1, "gpu_ms_per_call": t * 1000.0,
                       "bytes_per_second": non_negative(r.get("bytes_per_second", 0), f"{w}.bytes_per_second"),
                       "items_per_second": non_negative(r.get("items_per_second", 0), f"{w}.items_per_second"),
                       "noise_timeout": False, "noise_percent": 0.0, "kernel_calls": n}
                      for j, ((r, w), t, n) in enumerate(zip(reps, per_call, iterations, strict=True))]
        manual = key.endswith("/manual_time") or "/manual_time/" in key
        spec = specialization(
            len(specs), name, meta, seconds_per_call=seconds,
            bytes_per_second=_rate("bytes_per_second", source_row, reps, group["where"]),
            items_per_second=_rate("items_per_second", source_row, reps, group["where"]),
            noise_percent=noise,
            calls={"kernel_calls_per_batch": iterations[0] if len(set(iterations)) == 1 else None,
                   "batches": len(reps), "kernel_calls": calls} if reps else {},
            elapsed={"gpu": seconds * calls} if calls else {},
            rounds=rounds, timer="events" if manual else "host",
            stats={"mean": seconds, **({"median": _seconds(*aggregates["median"])} if "median" in aggregates else {}),
                   **({"min": min(per_call)} if per_call else {})},
        )
        if rounds:
            spec["between_rounds"] = between_rounds(per_call)
        specs.append(_clean_calls(spec))
    if not specs:
        raise FormatError("benchmarks", "Google Benchmark JSON with no benchmarks")
    date = context.get("date")
    general = {
        "date": _iso(date) if isinstance(date, str) else None,
        "host_name": context.get("host_name") if isinstance(context.get("host_name"), str) else None,
        "library_build_type": context.get("library_build_type")
        if isinstance(context.get("library_build_type"), str) else None,
        "backend": {"name": "google-benchmark"},
    }
    return Converted("gbench", "gbench-json", document(algorithm_of(algos), specs, general=general),
                     lacks=("gpu",))


def _rate(field: str, first: Mapping[str, Any], rows: list[tuple[Mapping[str, Any], str]], where: str) -> float:
    """A rate (``bytes_per_second``, ``items_per_second``) of the mean row, else the repetitions' mean."""
    if field in first:
        return non_negative(first[field], f"{where}.{field}")
    values = [non_negative(r[field], f"{w}.{field}") for r, w in rows if field in r]
    return math.fsum(values) / len(values) if values else 0.0


def _clean_calls(spec: dict[str, Any]) -> dict[str, Any]:
    calls = spec.get("calls")
    if isinstance(calls, dict):
        spec["calls"] = {k: v for k, v in calls.items() if v is not None}
    return spec


def _iso(date: str) -> str:
    """Google Benchmark's date (``2026-12-01T13:40:03+00:00``; older versions
    ``2019-11-21 10:32:09``) as ISO 8601."""
    return date.replace(" ", "T", 1) if re.match(r"^\d{4}-\d\d-\d\d \d", date) else date
