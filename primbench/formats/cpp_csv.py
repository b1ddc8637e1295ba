"""The C++ primbench's CSV (``--csv-out``): ``index,name,bytes_per_second,gib_per_second,
items_per_second,noise_timeout,noise_percent`` (the header 4.x writes), the older
``index,name,bytes_per_second,items_per_second,noise_timeout,noise_percent``, and
primbench's own CSV, which appends ``gpu_seconds_per_call``.

A CSV is a summary: it holds no context (no algorithm, GPU, date, settings, branch or
commit), no batches, calls, elapsed times or items. The algorithm is the file's name without
its suffix (``copy.csv`` is ``copy``), the date the file's modification time; what is missing
stays missing (`LACKS`): the time per call of a C++ CSV is unknown, so its metric is the
bandwidth (or the item rate)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from primbench.formats._base import Converted, FormatError
from primbench.formats._document import document, file_date, non_negative, specialization
from primbench.textsafe import csv_uncell

REQUIRED = ("index", "name", "bytes_per_second", "items_per_second", "noise_timeout", "noise_percent")
OPTIONAL = ("gib_per_second", "gpu_seconds_per_call")
#: What a CSV does not hold (named in `Converted.lacks`).
LACKS = ("context", "batches", "calls", "elapsed_secs", "items", "bytes_per_item", "date")


def in_directory(path: Path) -> bool:
    """Whether a ``*.csv`` found in a directory (by ``compare`` or ``history ingest``) is taken
    as a results file: its first line is a results CSV's header, and no results.json of the
    same name lies beside it (``--csv-out`` next to ``--json-out``: the JSON is the same run,
    with all of it). A CSV named on the command line is always read."""
    if path.with_suffix(".json").is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return True  # the loader names what is wrong with it
    return detect(head)


def detect(data: bytes) -> bool:
    head = data.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip().lower()
    return head.startswith(b"index,name,")


def read(data: bytes, source: str) -> Converted:
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(None, f"a CSV that is not UTF-8 ({exc})") from None
    rows = list(csv.reader(io.StringIO(content, newline="")))
    header = [h.strip() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise FormatError("header", f"a C++ primbench CSV lacks column(s) {', '.join(missing)}")
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise FormatError("header", f"unknown column(s) {', '.join(unknown)}")
    algorithm = Path(source).stem if source and not source.startswith("<") else "csv"
    specs: list[dict[str, Any]] = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise FormatError(f"line {line}", f"has {len(row)} fields, the header {len(header)}")
        cells = dict(zip(header, row, strict=True))
        where = f"line {line}"
        index = cells["index"].strip()
        if not index.isdigit():
            raise FormatError(f"{where}.index", f"must be a whole number, got {index!r}")
        timeout = cells["noise_timeout"].strip().lower()
        if timeout not in ("0", "1", "true", "false"):
            raise FormatError(f"{where}.noise_timeout", f"must be 0 or 1, got {timeout!r}")
        per_call_text = cells.get("gpu_seconds_per_call", "").strip()
        per_call = non_negative(per_call_text, f"{where}.gpu_seconds_per_call") if per_call_text else None
        name = csv_uncell(cells["name"])  # primbench's own CSV marks a name that begins like a formula
        specs.append(specialization(
            int(index), name, {"algo": algorithm}, seconds_per_call=per_call,
            bytes_per_second=non_negative(cells["bytes_per_second"], f"{where}.bytes_per_second"),
            items_per_second=non_negative(cells["items_per_second"], f"{where}.items_per_second"),
            noise_percent=non_negative(cells["noise_percent"], f"{where}.noise_percent"),
            noise_timeout=timeout in ("1", "true"),
        ))
    if not specs:
        raise FormatError(None, "a CSV with a header and no rows")
    doc = document(algorithm, specs, general={"date": file_date(source)})
    return Converted("cpp-csv", "cpp-csv", doc, lacks=LACKS)
