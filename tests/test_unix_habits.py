"""Unix habits (issue 22): ``-`` is standard output for --json-out/--csv-out and standard input
for compare, /dev/stdout works into a pipe, ``-o`` is a file when it names one, a stray JSON
file in a results directory is skipped with a note, an empty date range is an empty table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
COPY = REPO / "examples" / "copy_benchmark.py"
H200 = REPO / "examples" / "results" / "h200"


def _run(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PRIMBENCH_HISTORY_DB", None)
    return subprocess.run([str(BIN / "primbench"), *args], cwd=cwd, input=stdin, capture_output=True, env=env,
                          timeout=300)


@pytest.mark.parametrize("target", ["-", "/dev/stdout"])
def test_json_out_to_standard_output_in_a_pipe(tmp_path: Path, target: str) -> None:
    done = _run("run", str(COPY), "--dry", "--json-out", target, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)  # only the document on stdout: the progress went to stderr
    assert results["context"]["general"]["algorithm"] == "copy"
    assert not (tmp_path / "-").exists()


def test_csv_out_dash_and_both_dashes(tmp_path: Path) -> None:
    done = _run("run", str(COPY), "--dry", "--csv-out", "-", "--json-out", "r.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[0].startswith("index,")
    assert (tmp_path / "r.json").is_file() and not (tmp_path / "-").exists()
    both = _run("run", str(COPY), "--dry", "--csv-out", "-", "--json-out", "-", cwd=tmp_path)
    assert both.returncode == 2 and b"only one of them can be standard output" in both.stderr


def test_compare_reads_a_side_from_standard_input(tmp_path: Path) -> None:
    done = _run("compare", "-", str(H200 / "copy-run2.json"), cwd=tmp_path,
                stdin=(H200 / "copy-run1.json").read_bytes())
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("base: <stdin>")
    twice = _run("compare", "-", "-", cwd=tmp_path, stdin=b"")
    assert twice.returncode == 2 and b"only one side can be -" in twice.stderr


def test_a_stray_json_in_a_results_directory_is_skipped_with_a_note(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(H200 / "copy-run2.json", results / "copy.json")
    (results / "nsys-summary.json").write_text('{"tool": "nsys", "kernels": []}')
    done = _run("compare", str(H200 / "copy-run1.json"), "results", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "note: results/nsys-summary.json: not a results file (no context or specializations): skipped" in (
        done.stdout.decode())
    (results / "broken.json").write_text('{"x":')  # a broken file is still an error
    assert _run("compare", str(H200 / "copy-run1.json"), "results", cwd=tmp_path).returncode == 2


@pytest.fixture(scope="module")
def history_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("duckdb")
    db = tmp_path_factory.mktemp("h") / "h.duckdb"
    done = _run("history", "ingest", str(H200 / "history"), "--db", str(db), cwd=db.parent)
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.slow
def test_plot_o_names_a_file_not_a_folder(history_db: Path, tmp_path: Path) -> None:
    done = _run("history", "plot", "-o", "all.png", "--db", str(history_db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "all.png").is_dir()
    assert sorted(p.name for p in tmp_path.glob("all*.png")) == ["all-copy-type_char.png",
                                                                 "all-copy-type_long_long.png"]
    one = _run("history", "plot", "type: char", "-o", "char.png", "--db", str(history_db), cwd=tmp_path)
    assert one.returncode == 0 and (tmp_path / "char.png").is_file()


@pytest.mark.slow
def test_an_empty_date_range_is_an_empty_table_with_exit_0(history_db: Path, tmp_path: Path) -> None:
    done = _run("history", "runs", "--since", "2027-01-01", "--db", str(history_db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "0 run(s)" and lines[1].split()[:3] == ["date", "branch", "commit"] and len(lines) == 2
    typo = _run("history", "runs", "--branch", "mian", "--db", str(history_db), cwd=tmp_path)
    assert typo.returncode == 2 and b"did you mean 'main'" in typo.stderr  # a misspelled filter still is not
