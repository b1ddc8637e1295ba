"""Writes the Google Benchmark samples with Google Benchmark's Python bindings (PyPI
``google-benchmark``): a host copy of 1 MiB per element type, timed with manual time, three
repetitions and their aggregates, named

* ``--style rocprim``: as rocPRIM's gbench benchmarks name runs, by the JSON of their
  parameters (``{"lvl":"device","algo":"copy","type":"char","cfg":"default_config"}``):
  tests/formats/gbench-rocprim-copy.json;
* ``--style args``: ``family/argname:value`` as Google Benchmark's ``ArgNames`` name runs
  (``copy/type:long long``): tests/formats/gbench-copy.json.

Run: ``python tests/formats/make/gbench_copy.py --style rocprim
--benchmark_out=tests/formats/gbench-rocprim-copy.json --benchmark_out_format=json
--benchmark_min_time=0.05s`` (and ``--style args`` with ``gbench-copy.json``)."""

from __future__ import annotations

import json
import sys
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


def _name(style: str, type_name: str) -> str:
    if style == "rocprim":
        return json.dumps({"lvl": "device", "algo": "copy", "type": type_name, "cfg": "default_config"},
                          separators=(",", ":"))
    return f"copy/type:{type_name}"


def main() -> None:
    style = "rocprim"
    if "--style" in sys.argv:
        at = sys.argv.index("--style")
        style = sys.argv[at + 1]
        del sys.argv[at:at + 2]
    for type_name, itemsize in (("char", 1), ("long long", 8)):

        def run(state: benchmark.State, itemsize: int = itemsize) -> None:
            _copy(state, itemsize)

        benchmark.register(benchmark.option.repetitions(3)(benchmark.option.use_manual_time()(run)),
                           name=_name(style, type_name))
    benchmark.main()


if __name__ == "__main__":
    main()
