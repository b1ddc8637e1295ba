"""Writes tests/formats/gbench-rocprim-copy.json with Google Benchmark's Python bindings
(PyPI ``google-benchmark``): a host copy named the way rocPRIM's gbench benchmarks name runs
(the JSON of their parameters), timed with manual time, three repetitions and their
aggregates. Run: ``python tests/formats/make/gbench_copy.py
--benchmark_out=tests/formats/gbench-rocprim-copy.json --benchmark_out_format=json``."""

from __future__ import annotations

import json
import time

import google_benchmark as benchmark

SIZE = 1 << 20


def _copy(state: benchmark.State, itemsize: int) -> None:
    src = bytearray(SIZE)
    dst = bytearray(SIZE)
    while state:
        start = time.perf_counter()
        dst[:] = src
        state.set_iteration_time(time.perf_counter() - start)
    state.bytes_processed = state.iterations * 2 * SIZE
    state.items_processed = state.iterations * (SIZE // itemsize)


for type_name, itemsize in (("char", 1), ("long long", 8)):
    name = json.dumps({"lvl": "device", "algo": "copy", "type": type_name, "cfg": "default_config"},
                      separators=(",", ":"))

    def run(state: benchmark.State, itemsize: int = itemsize) -> None:
        _copy(state, itemsize)

    benchmark.register(benchmark.option.repetitions(3)(benchmark.option.use_manual_time()(run)), name=name)

if __name__ == "__main__":
    benchmark.main()
