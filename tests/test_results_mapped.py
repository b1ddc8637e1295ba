"""`Results.load` without the file's text kept (compare's loader) maps the usual file instead of
reading it (`primbench.results._load_mapped`): the same Results, and for anything unusual (not
ASCII, an older version, a bad field, not JSON, empty) the same Results or the same error as the
file read whole."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from primbench import results as results_module
from primbench.results import ResultsFileError, load_results

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "results" / "h200" / "copy-run1.json"


def _read_whole(path: Path) -> object:
    """What `Results.load(keep_written=False)` gave before the mapped path: the text read, then dropped."""
    try:
        loaded = results_module._decode(results_module._read(path, str(path)), str(path))
    except ResultsFileError as exc:
        return str(exc)
    return dataclasses.replace(loaded, _written=None)


def _mapped(path: Path) -> object:
    try:
        return load_results(path, keep_written=False)
    except ResultsFileError as exc:
        return str(exc)


def _variants(tmp_path: Path) -> dict[str, Path]:
    doc = json.loads(EXAMPLE.read_text())
    out: dict[str, Path] = {}

    def write(name: str, text: str | bytes) -> None:
        path = out[name] = tmp_path / f"{name}.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    write("as_is", EXAMPLE.read_text())
    older = json.loads(json.dumps(doc))
    older["context"]["results_version"] = "4.6.0"
    write("older", json.dumps(older))
    accented = json.loads(json.dumps(doc))
    accented["specializations"][0]["name"] += " é"
    write("not_ascii", json.dumps(accented, ensure_ascii=False))
    write("latin1", json.dumps(accented, ensure_ascii=False).encode("latin-1"))
    bad = json.loads(json.dumps(doc))
    bad["specializations"][0]["noise_percent"] = -1
    write("bad_field", json.dumps(bad))
    twice = json.loads(json.dumps(doc))
    twice["specializations"].append(twice["specializations"][0])
    write("duplicate", json.dumps(twice))
    write("not_json", "{ not json")
    write("empty", "")
    return out


def test_mapped_load_is_the_whole_read(tmp_path: Path) -> None:
    for name, path in _variants(tmp_path).items():
        assert _mapped(path) == _read_whole(path), name


def test_the_usual_file_is_mapped_and_the_rest_read(tmp_path: Path) -> None:
    paths = _variants(tmp_path)
    for name in ("as_is", "older"):
        assert results_module._load_mapped(paths[name], str(paths[name])) is not None, name
    for name in ("not_ascii", "latin1", "bad_field", "not_json", "empty"):
        assert results_module._load_mapped(paths[name], str(paths[name])) is None, name
    with pytest.raises(ResultsFileError, match="duplicate name"):
        results_module._load_mapped(paths["duplicate"], str(paths["duplicate"]))
    assert results_module._load_mapped(tmp_path, str(tmp_path)) is None  # a directory: `_read` says so
