"""Readers for the results files of other harnesses: one module per format, each turning a
file into a results document that the results model (`primbench.results`) decodes, validates
and holds as typed `Results`, exactly as it does a primbench results.json.

* `cpp_legacy`: the C++ primbench's results.json before 4.0.0 (``context.results_version``
  1.0.0, 2.0.0 or 3.0.0);
* `cpp_csv`: the C++ primbench's ``--csv-out`` file, and primbench's own CSV (a first line
  ``index,name,...``);
* `nvbench`: NVBench's ``--json``, with ``--jsonbin`` sample files where they are found
  (``benchmarks[].states``, no ``context``);
* `gbench`: Google Benchmark's ``--benchmark_out`` JSON, repetitions and aggregates
  (``context`` without ``results_version``, ``benchmarks[].run_type`` or ``real_time``);
* `pytest_benchmark`: pytest-benchmark's ``--benchmark-json`` (``machine_info`` and
  ``benchmarks[].stats``).

The loader (`primbench.results.load_results`, the one entry point of every command) reads a
file once, decodes primbench's own versions directly and asks `convert` about anything else;
a file that matches no format is refused with one line that names every format tried
(`FORMATS`). A reader never imports the results model: it returns plain JSON values
(`Converted`) and the model checks them, so what a foreign file becomes obeys every rule a
results.json does. What a format cannot give (a CSV has no batches, no context, no date) is
left out and named in `Converted.lacks`.
"""

from __future__ import annotations

import csv
from typing import Any

from primbench.formats._base import FORMATS, NOT_JSON, Converted, FormatError, tried

__all__ = ["FORMATS", "NOT_JSON", "Converted", "FormatError", "convert", "tried"]


def convert(data: bytes, parsed: Any, source: str) -> Converted | None:
    """`data` (the file's bytes; `parsed` its JSON values, or `NOT_JSON`) as a results
    document, when it is one of the foreign formats; None when it is not (a primbench
    results.json, or nothing known: the loader's own checks then say what is wrong).
    `source` is the file's path where there is one (NVBench's sample files lie beside it; a
    file without a date is dated by its modification time). Raises `FormatError`."""
    from primbench.formats import cpp_csv, cpp_legacy, gbench, nvbench, pytest_benchmark

    if parsed is NOT_JSON:
        if not cpp_csv.detect(data):
            return None
        try:
            return cpp_csv.read(data, source)
        except (ValueError, OverflowError, csv.Error) as exc:
            raise FormatError(None, f"looks like {FORMATS[2]} but cannot be read ({type(exc).__name__}: {exc})"
                              ) from None
    if not isinstance(parsed, dict):
        return None
    for module, label in ((cpp_legacy, FORMATS[1]), (nvbench, FORMATS[3]), (gbench, FORMATS[4]),
                          (pytest_benchmark, FORMATS[5])):
        if module.detect(parsed):
            try:
                return module.read(parsed, source)
            except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
                # a value of a kind the reader did not check: still one line naming the format
                raise FormatError(None, f"looks like {label} but cannot be read ({type(exc).__name__}: {exc})"
                                  ) from None
    return None
