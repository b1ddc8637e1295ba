"""The loader refuses what would crash a command later (issue 16, items 3 and 6): lone
surrogates, dates outside datetime's range, FIFOs and devices, oversized files and names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench import results as results_mod
from primbench.cli import app
from primbench.results import ResultsFileError, load_results, parse_results
from tests.compare_data import document, spec, write

ROOT = Path(__file__).resolve().parents[1]


def doc_text(**kw) -> str:
    return json.dumps(document([spec("type: char", 1e12), spec("type: int", 2e12)], **kw))


@pytest.mark.parametrize("where", ["name", "branch", "gpu_name", "algorithm", "date", "key"])
def test_a_lone_surrogate_anywhere_is_a_bad_file(where):
    text = doc_text(branch="BRANCH", gpu={"name": "GPUNAME"}, algorithm="ALGO")
    target = {"name": '"type: char"', "branch": '"BRANCH"', "gpu_name": '"GPUNAME"', "algorithm": '"ALGO"',
              "date": '"2026-11-30T04:00:00+00:00"', "key": '"temperature_type"'}[where]
    bad = text.replace(target, target[:-1] + '\\ud800"', 1)
    assert bad != text
    with pytest.raises(ResultsFileError, match="lone surrogate"):
        parse_results(bad, "bad.json")


def test_a_surrogate_pair_is_text_and_loads():
    text = doc_text().replace('"type: char"', '"type: \\ud83d\\ude00"')
    assert parse_results(text).specializations[0].name == "type: \N{GRINNING FACE}"


def test_a_lone_surrogate_is_exit_2_for_every_compare_output(tmp_path):
    good = write(tmp_path / "base.json", document([spec("type: char", 1e12)]))
    (tmp_path / "head.json").write_text(good.read_text().replace('"type: char"', '"type: \\udc80"'))
    for fmt in ("terminal", "markdown", "json"):
        result = CliRunner().invoke(app, ["compare", str(good), str(tmp_path / "head.json"), "-f", fmt])
        assert result.exit_code == 2, (fmt, result.output)
        assert isinstance(result.exception, SystemExit)
        assert "lone surrogate" in result.output


@pytest.mark.parametrize("date", ["9999-12-31T23:30:00-05:00", "0001-01-01T00:10:00+01:00"])
def test_a_date_outside_the_range_is_a_bad_file(date):
    text = doc_text().replace("2026-11-30T04:00:00+00:00", date)
    with pytest.raises(ResultsFileError, match=r"context\.general\.date"):
        parse_results(text, "x.json")


def test_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    code = f"from primbench.results import load_results\nload_results({str(fifo)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "not a regular file" in proc.stderr


def test_dev_zero_is_refused():
    with pytest.raises(ResultsFileError, match="not a regular file"):
        load_results("/dev/zero")


def test_a_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(doc_text())
    monkeypatch.setattr(results_mod, "MAX_FILE_BYTES", 100)
    with pytest.raises(ResultsFileError, match="over the limit"):
        load_results(path)


def test_a_name_over_the_length_limit_is_refused():
    over = results_mod.MAX_NAME_CHARS + 1
    text = doc_text().replace('"type: char"', '"' + "x" * over + '"')
    with pytest.raises(ResultsFileError, match=r"specializations\[0\]\.name: is over the limit of 65536 characters"):
        parse_results(text)
    with pytest.raises(ResultsFileError, match=r"context\.general\.branch_name: is over the limit"):
        parse_results(doc_text(branch="b" * over))
    assert parse_results(doc_text(branch="b" * (over - 1))).branch == "b" * (over - 1)
