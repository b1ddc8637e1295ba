"""pytest-benchmark's JSON (``--benchmark-json FILE``, or a saved run under
``.benchmarks/``): CPU-side benchmarks kept in the same history as the GPU ones.

Each benchmark is a specialization: ``algo`` is its ``group`` where it has one, else the test
function's name (``test_copy`` of ``test_copy[i8]``), and its ``params`` join ``meta``, so
``test_copy[i8]`` with ``params {"type": "i8"}`` is named ``type: i8`` (primbench's rule;
without params its name is the test's name). ``stats.mean`` is the seconds per call (timed on
the host: ``timer: host``) with ``median``, ``min``, ``q1`` and ``q3``; the noise percent is
``stddev`` over ``mean`` times 100; the calls are ``rounds`` times ``iterations``.
``extra_info.bytes_per_second`` / ``items_per_second``, where a test sets them, are its rates
(else 0: the metric is the time per call). With ``--benchmark-save-data`` each round's time
in ``stats.data`` is one batch of ``iterations`` calls. ``datetime``, ``machine_info.node``
and ``commit_info`` (``id``, ``branch``) give the date, host and provenance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from primbench.formats._base import Converted, FormatError
from primbench.formats._document import (
    algorithm_of,
    document,
    mapping,
    name_of,
    non_negative,
    sequence,
    specialization,
    text,
)


def detect(parsed: Mapping[str, Any]) -> bool:
    benchmarks = parsed.get("benchmarks")
    return "machine_info" in parsed and isinstance(benchmarks, list) and "context" not in parsed


def read(parsed: Mapping[str, Any], source: str) -> Converted:
    specs: list[dict[str, Any]] = []
    algos: list[str] = []
    for i, bench in enumerate(sequence(parsed["benchmarks"], "benchmarks")):
        where = f"benchmarks[{i}]"
        bench = mapping(bench, where)
        test = text(bench.get("name"), f"{where}.name")
        group = bench.get("group")
        algo = group if isinstance(group, str) and group else test.split("[", 1)[0]
        algos.append(algo)
        params = bench.get("params")
        meta: dict[str, Any] = {"algo": algo}
        if isinstance(params, Mapping):
            meta.update({str(k): v if isinstance(v, str | int | float | bool) or v is None else str(v)
                         for k, v in params.items()})
        name = name_of(meta, test) if len(meta) > 1 else test
        stats = mapping(bench.get("stats"), f"{where}.stats")
        mean = non_negative(stats.get("mean"), f"{where}.stats.mean")
        stddev = stats.get("stddev")
        noise = non_negative(stddev, f"{where}.stats.stddev") / mean * 100.0 if stddev is not None and mean > 0 else 0.0
        rounds = int(non_negative(stats.get("rounds", 0), f"{where}.stats.rounds"))
        iterations = int(non_negative(stats.get("iterations", 1), f"{where}.stats.iterations"))
        calls = rounds * iterations
        extra = bench.get("extra_info") if isinstance(bench.get("extra_info"), Mapping) else {}
        assert isinstance(extra, Mapping)
        data = stats.get("data")
        batches = None
        if isinstance(data, list) and data:
            batches = [{"batch_ms": non_negative(t, f"{where}.stats.data[{j}]") * 1000.0 * iterations,
                        "kernel_calls": iterations} for j, t in enumerate(data)]
        stat = {k: non_negative(stats[k], f"{where}.stats.{k}") for k in ("median", "min", "q1", "q3")
                if stats.get(k) is not None}
        specs.append(specialization(
            len(specs), name, meta, seconds_per_call=mean,
            bytes_per_second=non_negative(extra.get("bytes_per_second", 0), f"{where}.extra_info.bytes_per_second"),
            items_per_second=non_negative(extra.get("items_per_second", 0), f"{where}.extra_info.items_per_second"),
            noise_percent=noise,
            calls={"kernel_calls_per_batch": iterations, "batches": rounds, "kernel_calls": calls},
            elapsed={"host": non_negative(stats.get("total", mean * calls), f"{where}.stats.total")},
            batches=batches, stats={"mean": mean, **stat}, timer="host",
        ))
    if not specs:
        raise FormatError("benchmarks", "pytest-benchmark JSON with no benchmarks")
    machine = parsed.get("machine_info") if isinstance(parsed.get("machine_info"), Mapping) else {}
    commit = parsed.get("commit_info") if isinstance(parsed.get("commit_info"), Mapping) else {}
    assert isinstance(machine, Mapping) and isinstance(commit, Mapping)
    unknown = ("", "unversioned", "(unknown)")  # what pytest-benchmark writes outside a repository
    branch = commit.get("branch") if isinstance(commit.get("branch"), str) else None
    sha = commit.get("id") if isinstance(commit.get("id"), str) else None
    general = {
        "date": parsed.get("datetime") if isinstance(parsed.get("datetime"), str) else None,
        "host_name": machine.get("node") if isinstance(machine.get("node"), str) else None,
        "branch_name": None if branch in unknown else branch,
        "commit_hash": None if sha in unknown else sha,
        "python_version": machine.get("python_version") if isinstance(machine.get("python_version"), str) else None,
        "backend": {"name": "pytest-benchmark"},
    }
    version = parsed.get("version")
    label = f"pytest-benchmark-json {version}" if isinstance(version, str) else "pytest-benchmark-json"
    return Converted("pytest-benchmark", label, document(algorithm_of(algos), specs, general=general),
                     lacks=("gpu",))
