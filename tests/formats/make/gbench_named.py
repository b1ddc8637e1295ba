"""Writes tests/formats/gbench-copy.json with Google Benchmark's Python bindings (PyPI
``google-benchmark``): the host copy of `gbench_copy.py` named ``family/argname:value`` the
way Google Benchmark's ``ArgNames`` name runs (``copy/type:long long``), three repetitions.
Run: ``python tests/formats/make/gbench_named.py --benchmark_out=tests/formats/gbench-copy.json
--benchmark_out_format=json --benchmark_min_time=0.05s``."""

from __future__ import annotations

import time

import google_benchmark as benchmark

SIZE = 1 << 20

for type_name, itemsize in (("char", 1), ("long long", 8)):

    def run(state: benchmark.State, itemsize: int = itemsize) -> None:
        src = bytearray(SIZE)
        dst = bytearray(SIZE)
        while state:
            start = time.perf_counter()
            dst[:] = src
            state.set_iteration_time(time.perf_counter() - start)
        state.bytes_processed = state.iterations * 2 * SIZE
        state.items_processed = state.iterations * (SIZE // itemsize)

    benchmark.register(benchmark.option.repetitions(3)(benchmark.option.use_manual_time()(run)),
                       name=f"copy/type:{type_name}")

if __name__ == "__main__":
    benchmark.main()
