"""Property tests: the results loader fed corrupted files raises ResultsFileError and nothing
else, and whatever it accepts, compare and its renderers handle."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primbench.compare.core import NothingToCompareError, compare_runs, load_side
from primbench.compare.render import render_json, render_markdown
from primbench.results import Batch, ResultsFileError, load_results, results_from_dict
from tests.compare_data import batch_times, document, run_from_batches, spec

_rng = np.random.default_rng(0)
VALID = document([
    run_from_batches("size: 1MiB, type: char", batch_times(_rng, 0.25, n=4)),
    spec("size: 1MiB, type: long long", 1e12),
    spec("size: 2MiB, type: char", 1e12, error="boom"),
])
VALID_TEXT = json.dumps(VALID, indent=1)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-(10**30), max_value=10**30), st.integers().map(lambda x: x * 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=6)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


PATHS = _paths(VALID)


def _mutate(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


def _dump(doc: Any) -> str:
    try:
        return json.dumps(doc)  # writes NaN / Infinity for non-finite floats: invalid JSON
    except (OverflowError, ValueError):
        return repr(doc)


def _check(path: Path) -> None:
    """Only ResultsFileError may come out of loading; a loaded file must survive compare."""
    try:
        results = load_results(path)
    except ResultsFileError as exc:
        assert str(path) in str(exc)
        return
    try:
        c = compare_runs([results], [results])
    except NothingToCompareError:
        assert not results.specializations
        return
    json.loads(render_json(c))
    render_markdown(c)


common = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@common
@given(data=st.binary(max_size=300))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    f = tmp_path / "r.json"
    f.write_bytes(data)
    _check(f)


@common
@given(cut=st.integers(min_value=0, max_value=len(VALID_TEXT) - 1))
def test_truncated_files(tmp_path: Path, cut: int) -> None:
    f = tmp_path / "r.json"
    f.write_text(VALID_TEXT[:cut])
    with pytest.raises(ResultsFileError, match="not valid JSON"):
        load_results(f)


@common
@given(pos=st.integers(min_value=0, max_value=len(VALID_TEXT) - 1), char=st.characters())
def test_one_character_changed(tmp_path: Path, pos: int, char: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(VALID_TEXT[:pos] + char + VALID_TEXT[pos + 1:], encoding="utf-8", errors="surrogatepass")
    _check(f)


@common
@given(path=st.sampled_from(PATHS), value=json_values, delete=st.booleans())
def test_a_field_replaced_or_deleted(tmp_path: Path, path: tuple[Any, ...], value: Any, delete: bool) -> None:
    f = tmp_path / "r.json"
    f.write_text(_dump(_mutate(VALID, path, value, delete and bool(path))))
    _check(f)


# --------------------------------------------------------------------------- the errors named in the issue


def _error_for(tmp_path: Path, doc: Any) -> str:
    f = tmp_path / "r.json"
    f.write_text(_dump(doc))
    with pytest.raises(ResultsFileError) as info:
        load_results(f)
    return str(info.value)


def test_unreadable_and_malformed(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match=r"nope\.json: no such file"):
        load_results(tmp_path / "nope.json")
    (tmp_path / "r.json").write_text("{not json")
    with pytest.raises(ResultsFileError, match=r"r\.json: not valid JSON"):
        load_results(tmp_path / "r.json")


@pytest.mark.parametrize(("path", "value", "expected"), [
    (("context", "results_version"), "9.0.0", "context.results_version: unknown schema version '9.0.0'"),
    (("specializations", 1, "bytes_per_second"), float("nan"), "not valid JSON"),
    (("specializations", 1, "bytes_per_second"), -1.0, "specializations[1].bytes_per_second: must not be negative"),
    (("specializations", 1, "items_per_second"), 10**400, "specializations[1].items_per_second: must be finite"),
    (("specializations", 1, "noise_percent"), "low", "specializations[1].noise_percent: must be a number"),
    (("specializations", 1, "name"), "size: 1MiB, type: char", "specializations[1].name: duplicate name"),
    (("specializations", 0, "batches", 2, "batch_ms"), None, "specializations[0].batches[2].batch_ms"),
])
def test_bad_fields_are_named(tmp_path: Path, path: tuple[Any, ...], value: Any, expected: str) -> None:
    message = _error_for(tmp_path, _mutate(VALID, path, value, False))
    assert "r.json" in message and expected in message


def test_missing_field_is_named(tmp_path: Path) -> None:
    message = _error_for(tmp_path, _mutate(VALID, ("specializations", 1, "bytes_per_second"), None, True))
    assert "specializations[1].bytes_per_second: missing" in message


def test_the_valid_document_loads_and_compares(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_text(VALID_TEXT)
    (results,) = load_side(f)
    assert len(results.specializations) == 3
    c = compare_runs([results], [results_from_dict(VALID)])
    assert c.summary.compared == 3
    assert all(math.isfinite(r.change) for r in c.rows if r.change is not None)


def test_huge_kernel_calls_in_a_batch_are_refused(tmp_path: Path) -> None:
    # found by test_a_field_replaced_or_deleted: the loader's fast path for batches let it through
    message = _error_for(tmp_path, _mutate(VALID, ("specializations", 0, "batches", 3, "kernel_calls"), 10**400, False))
    assert "specializations[0].batches[3].kernel_calls: must be finite" in message


# --------------------------------------------------------------------------- batches


def _loaded_batches(batches: list[Any]) -> Any:
    doc = _mutate(VALID, ("specializations", 0, "batches"), batches, False)
    return results_from_dict(doc, "r.json").specializations[0].batches


def test_batches_load_as_batch_records_and_write_back_as_read() -> None:
    written = [
        {"batch_ms": 1.5, "iterations_ms": [0.25, 0.5, 0.5, 0.25], "kernel_calls": 4, "host_secs": 0.5},
        {"batch_ms": 2.0, "iterations_ms": [], "kernel_calls": 4, "host_secs": 0.75, "round": 1},
    ]
    batches = _loaded_batches(written)
    assert batches == (Batch(batch_ms=1.5, iterations_ms=(0.25, 0.5, 0.5, 0.25), kernel_calls=4, host_secs=0.5),
                       Batch(batch_ms=2.0, iterations_ms=(), kernel_calls=4, host_secs=0.75, round=1))
    doc = _mutate(VALID, ("specializations", 0, "batches"), written, False)
    assert results_from_dict(doc).to_dict()["specializations"] == doc["specializations"]


@pytest.mark.parametrize("batches", [
    [{"batch_ms": 1}, {"batch_ms": 2.5, "kernel_calls": 3}],  # an integer time
    [{"batch_ms": 1.0, "host_secs": None}, {"batch_ms": 2.0, "host_secs": 0.5}],  # null beside a value
    [{"batch_ms": 1.0, "iterations_ms": [1]}, {"batch_ms": 2.0}],
    [],
])
def test_unusual_batches_load_as_written(batches: list[Any]) -> None:
    doc = _mutate(VALID, ("specializations", 0, "batches"), batches, False)
    results = results_from_dict(doc)
    assert results.to_dict()["specializations"][0]["batches"] == [
        {k: v for k, v in b.items() if v is not None} for b in batches]
    assert [b.batch_ms for b in results.specializations[0].batches or ()] == [b["batch_ms"] for b in batches]


@pytest.mark.parametrize(("j", "key", "value", "expected"), [
    (1, "batch_ms", -1.0, "batches[1].batch_ms: must not be negative"),
    (2, "batch_ms", True, "batches[2].batch_ms: must be a number, got a boolean"),
    (0, "kernel_calls", -3, "batches[0].kernel_calls: must not be negative"),
    (3, "kernel_calls", 2.5, "batches[3].kernel_calls: must be a whole number"),
    (3, "kernel_calls", 3.0, "batches[3].kernel_calls: must be a whole number written as an integer"),
    (1, "host_secs", "soon", "batches[1].host_secs: must be a number"),
    (2, "iterations_ms", [0.1, -0.1], "batches[2].iterations_ms[1]: must not be negative"),
    (0, "batch_ms", float("inf"), "batches[0].batch_ms: must be finite"),
])
def test_a_bad_batch_is_named(j: int, key: str, value: Any, expected: str) -> None:
    doc = _mutate(VALID, ("specializations", 0, "batches", j, key), value, False)
    with pytest.raises(ResultsFileError, match=re.escape(f"r.json: specializations[0].{expected}")):
        results_from_dict(doc, "r.json")
