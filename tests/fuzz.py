"""Fuzzers for results files (issue 16, item 8): structural and field-aware mutations of a
valid results.json, run through every command that reads one.

* `structural` - the JSON tree changed blindly (keys dropped, values of another type, lists
  emptied or repeated, deep nesting) and then, sometimes, its bytes (truncated, a byte
  flipped, a BOM, bytes that are not UTF-8).
* `field_aware` - the fields the commands use set to hostile values: names, branches, GPU
  names and algorithms with surrogates, control characters, markdown and HTML, very long
  strings; dates out of range; indexes of 2**31 and more; throughputs of 0, 5e-324, 1e308.

`run_campaign` feeds the inputs to ``primbench compare`` (terminal, markdown, JSON, both
directions), ``history ingest`` (into a DuckDB store and a shared Parquet folder, several
files per call), and now and then the query commands on what was stored. An *uncaught
exception* is any exception other than the SystemExit of an exit code; an *injection* is a
control character in terminal output or a raw ``<``/``\\r`` in markdown made from a bad name.
Used by tests/test_fuzz.py (a CI-sized budget) and tests/benchmarks/fuzz_campaign.py.
"""

from __future__ import annotations

import copy
import json
import random
import re
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from primbench.errors import EXIT_INTERNAL
from tests import history_data as hd

HOSTILE_TEXT = [
    "", " ", "\ud800", "x\udfffy", "\ud83d", "\x00", "\x1b[2J\x1b]0;title\x07", "\x9b31m", "a\rb", "a\nb",
    "\u2028\u2029", "\u202eevil", "<img src=x onerror=alert(1)>", "</table>", "![i](http://e.x/i.png)",
    "[l](https://e.x)", "@octocat", "| a | b |", "`code`", "\\", "$x^$", "\\frac{", "%s%n", "{0}",
    "'; DROP TABLE runs;--", "../../etc/passwd", "g[1]*?", "\ufeff", "\N{GRINNING FACE}", "é" * 3, "type: char",
]
HOSTILE_NUMBERS: list[Any] = [
    0, -0.0, 5e-324, 1e-300, 2.2250738585072014e-308, 1e300, 1.7976931348623157e308, 2**31, 2**31 - 1, 2**53,
    2**53 + 1, 2**63, 2**64, -1, -5e-324, 0.5, 1, True, False, None, "1", [], {}, 10**400,
]
HOSTILE_DATES: list[Any] = [
    "9999-12-31T23:59:59-08:00", "0001-01-01T00:00:00+14:00", "2026-02-30T00:00:00", "not a date", "", 0, None,
    "2026-01-01", "2026-01-01T00:00:00Z", "+10000-01-01T00:00:00", "2026-01-01T25:00:00", "\ud800",
]


def seed_document(rng: random.Random) -> dict[str, Any]:
    """A valid document to mutate: a few specializations, some with batches."""
    n = rng.randint(1, 4)
    values = {hd.spec_name(i): rng.choice([1e12, 2e12, 5e11]) for i in range(n)}
    return hd.document(values, commit=hd.sha(str(rng.random())), batches=rng.choice([0, 0, 3]),
                       branch=rng.choice(["main", "feat", None]))


def hostile_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(HOSTILE_TEXT)
    if roll < 0.9:
        return "".join(rng.choice(HOSTILE_TEXT) for _ in range(rng.randint(2, 5)))
    if roll < 0.97:
        return "".join(chr(rng.choice([rng.randint(0, 0x2FFF), rng.randint(0xD800, 0xDFFF), rng.randint(0, 0x10FFFF)]))
                       for _ in range(rng.randint(1, 20)))
    return "n" * rng.choice([4096, 70000])


def random_place(doc: Any, rng: Any) -> tuple[tuple[Any, ...], Any] | None:
    """A random place below the root of `doc`'s tree: its path and the container holding it
    (None where the document has no such place)."""
    paths = [p for p in _paths(doc) if p]
    if not paths:
        return None
    path = rng.choice(paths)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    return path, parent


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if len(prefix) > 12:
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice(HOSTILE_NUMBERS)
    if kind == 1:
        return hostile_text(rng)
    if kind == 2:
        return rng.random() * 10 ** rng.randint(-10, 15)
    if kind == 3:
        return rng.choice([None, True, False])
    if kind == 4:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == 5:
        return {hostile_text(rng): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    nested: Any = 1
    for _ in range(rng.choice([10, 100, 5000])):
        nested = [nested]
    return nested


def structural(rng: random.Random) -> bytes:
    """A seed document mutated blindly in its tree, and sometimes in its bytes."""
    doc = seed_document(rng)
    for _ in range(rng.randint(1, 4)):
        place = random_place(doc, rng)
        if place is None:
            break
        path, parent = place
        op = rng.randrange(5)
        if op == 0 and isinstance(parent, dict):
            parent.pop(path[-1], None)
        elif op == 1:
            _set(doc, path, _random_value(rng))
        elif op == 2 and isinstance(parent, list):
            try:
                parent.append(copy.deepcopy(parent[path[-1]]))
            except RecursionError:  # a 5000-deep list from _random_value: repeat it by reference
                parent.append(parent[path[-1]])
        elif op == 3 and isinstance(parent, list):
            parent.clear()
        elif op == 4 and isinstance(parent, dict):
            parent[hostile_text(rng)] = parent.pop(path[-1])
    try:
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    except (RecursionError, ValueError):
        text = "[" * 10000
    data = text.encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.1 and data:
        data = data[: rng.randrange(len(data))]
    elif roll < 0.2 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    elif roll < 0.25:
        data = b"\xef\xbb\xbf" + data
    elif roll < 0.3:
        data = data.replace(b"main", b"ma\xffin", 1)
    return data


FIELD_SETTERS: list[tuple[str, Callable[[dict[str, Any], random.Random], None]]] = []


def _field(name: str) -> Callable[[Callable[[dict[str, Any], random.Random], None]], Any]:
    def register(fn: Callable[[dict[str, Any], random.Random], None]) -> Any:
        FIELD_SETTERS.append((name, fn))
        return fn
    return register


def _spec(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return rng.choice(doc["specializations"])


@_field("name")
def _name(doc: dict[str, Any], rng: random.Random) -> None:
    _spec(doc, rng)["name"] = hostile_text(rng)


@_field("general text")
def _general(doc: dict[str, Any], rng: random.Random) -> None:
    key = rng.choice(["branch_name", "commit_hash", "algorithm", "host_name"])
    doc["context"]["general"][key] = hostile_text(rng)


@_field("gpu")
def _gpu(doc: dict[str, Any], rng: random.Random) -> None:
    doc["context"]["general"]["gpu"][rng.choice(["name", "uuid", "serial"])] = hostile_text(rng)


@_field("algo")
def _algo(doc: dict[str, Any], rng: random.Random) -> None:
    _spec(doc, rng)["meta"]["algo"] = hostile_text(rng)


@_field("date")
def _date(doc: dict[str, Any], rng: random.Random) -> None:
    doc["context"]["general"]["date"] = rng.choice(HOSTILE_DATES)


@_field("index")
def _index(doc: dict[str, Any], rng: random.Random) -> None:
    _spec(doc, rng)["index"] = rng.choice(HOSTILE_NUMBERS)


@_field("throughput")
def _throughput(doc: dict[str, Any], rng: random.Random) -> None:
    _spec(doc, rng)[rng.choice(["bytes_per_second", "items_per_second"])] = rng.choice(HOSTILE_NUMBERS)


@_field("noise")
def _noise(doc: dict[str, Any], rng: random.Random) -> None:
    s = _spec(doc, rng)
    key = rng.choice(["noise_percent", "noise_timeout", "bytes_per_item", "items"])
    s[key] = rng.choice(HOSTILE_NUMBERS)


@_field("calls")
def _calls(doc: dict[str, Any], rng: random.Random) -> None:
    s = _spec(doc, rng)
    if isinstance(s.get("calls"), dict):
        s["calls"][rng.choice(list(s["calls"]))] = rng.choice(HOSTILE_NUMBERS)


@_field("batches")
def _batches(doc: dict[str, Any], rng: random.Random) -> None:
    s = _spec(doc, rng)
    s["batches"] = [{"batch_ms": rng.choice(HOSTILE_NUMBERS), "kernel_calls": rng.choice(HOSTILE_NUMBERS),
                     "host_secs": rng.choice(HOSTILE_NUMBERS), "iterations_ms": [rng.choice(HOSTILE_NUMBERS)]}
                    for _ in range(rng.randint(0, 3))]


@_field("version")
def _version(doc: dict[str, Any], rng: random.Random) -> None:
    doc["context"]["results_version"] = rng.choice(["4.0.0", "4.1.0", "4.2.0", "5.0.0", "", "\ud800", 4])


@_field("settings")
def _settings(doc: dict[str, Any], rng: random.Random) -> None:
    doc["context"]["settings"][rng.choice(["size", "hot", "cache_size", "min_gpu_temp"])] = _random_value(rng)


@_field("error")
def _error(doc: dict[str, Any], rng: random.Random) -> None:
    _spec(doc, rng)["error"] = rng.choice([hostile_text(rng), 5, None])


def field_aware(rng: random.Random) -> bytes:
    """A seed document with one to three of its used fields set to hostile values."""
    doc = seed_document(rng)
    for _ in range(rng.randint(1, 3)):
        _, setter = rng.choice(FIELD_SETTERS)
        setter(doc, rng)
    try:
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.7)
    except RecursionError:  # a 5000-deep list from _random_value
        text = "[" * 5000 + "]" * 5000
    return text.encode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- campaign


CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass
class Tally:
    inputs: int = 0
    runs: int = 0
    exits: Counter[str] = field(default_factory=Counter)
    uncaught: list[str] = field(default_factory=list)
    injections: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)  # exit 3: caught, but a bug all the same

    def summary(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "command_runs": self.runs, "exit_codes": dict(sorted(self.exits.items())),
                "uncaught_exceptions": len(self.uncaught),
                "internal_errors": len(self.internal),
                "injections": len(self.injections)}


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    project = [f for f in frames if "/site-packages/" not in f.filename]
    mine = project[-1] if project else last
    place = f"{Path(mine.filename).parent.name}/{Path(mine.filename).name}:{mine.lineno}" if mine else "?"
    return f"{type(exc).__name__} at {place}: {str(exc)[:120]!r}"


def invoke(tally: Tally, label: str, args: list[str], *, check_terminal: bool = False,
           check_markdown: bool = False) -> None:
    from typer.testing import CliRunner

    from primbench.cli import app

    result = CliRunner().invoke(app, args)
    tally.runs += 1
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        where = _where(exc)
        tally.uncaught.append(f"{label}: {where}")
        tally.exits["exception"] += 1
        return
    tally.exits[str(result.exit_code)] += 1
    out = result.output
    if result.exit_code == EXIT_INTERNAL:  # the CLI's last resort: one line, but a bug to find
        tally.internal.append(f"{label}: {out.strip().splitlines()[-1][:200] if out.strip() else '(no output)'}")
    if check_terminal and CONTROL.search(out.replace("\n", "")):
        tally.injections.append(f"{label}: control character in terminal output")
    markdown = result.stdout  # not the error line on stderr: that is terminal text
    if check_markdown and ("\r" in markdown or "<img" in markdown or "\u2028" in markdown):
        tally.injections.append(f"{label}: raw markdown")


def run_campaign(work: Path, count: int, seed: int, *, ingest_every: int = 20, query_every: int = 200,
                 progress: Callable[[Tally], None] | None = None) -> Tally:
    """`count` inputs (half structural, half field-aware) through the commands; see the module."""
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    base = hd.write(work / "base.json", seed_document(random.Random(seed + 1)))
    db, shared = work / "fuzz.duckdb", work / "shared"
    tally = Tally()
    pending: list[Path] = []
    for i in range(count):
        data = structural(rng) if i % 2 == 0 else field_aware(rng)
        path = work / f"in-{i % (ingest_every * 2):04d}.json"
        path.write_bytes(data)
        tally.inputs += 1
        label = f"input {i} ({'structural' if i % 2 == 0 else 'field-aware'})"
        fmt = ["terminal", "markdown", "json"][i % 3]
        invoke(tally, f"{label} compare -f {fmt}", ["compare", str(base), str(path), "-f", fmt, "--fail-on", "never"],
               check_terminal=fmt == "terminal", check_markdown=fmt == "markdown")
        if i % 4 == 1:
            invoke(tally, f"{label} compare reversed", ["compare", str(path), str(base), "-f", "markdown"],
                   check_markdown=True)
        pending.append(path)
        if len(pending) >= ingest_every:
            files = [str(p) for p in pending]
            invoke(tally, f"{label} ingest", ["history", "ingest", *files, "--db", str(db)], check_terminal=True)
            if (i // ingest_every) % 5 == 0:
                invoke(tally, f"{label} ingest --shared", ["history", "ingest", *files, "--shared", str(shared)])
            pending = []
        if i and i % query_every == 0:
            _queries(tally, label, db, shared)
        if progress is not None and i and i % 500 == 0:
            progress(tally)
    _queries(tally, "final", db, shared)
    return tally


def _queries(tally: Tally, label: str, db: Path, shared: Path) -> None:
    for store in (db, shared):
        if not store.exists():
            continue
        for args in (["history", "runs", "-n", "0"], ["history", "branches"], ["history", "series", "type: t0"],
                     ["history", "regressions"], ["history", "compare", "feat", "--no-git", "-f", "markdown"],
                     ["history", "compare", "main", "--no-git"], ["history", "info"]):
            invoke(tally, f"{label} {' '.join(args[:2])} on {store.name}", [*args, "--db", str(store)],
                   check_terminal=args[-1] != "markdown" and "-f" not in args)
