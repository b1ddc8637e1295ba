"""Issue 29, CSV escaping: a ``\\r`` in a value is quoted, and a text cell that begins like a
formula (=, +, -, @) is neutralised in every CSV writer; numbers never are, so the C++ CSV's
columns stay parseable and primbench reads its own names back unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

import primbench as pb
from primbench.cli.history import csv_frame
from primbench.formats import cpp_csv
from primbench.textsafe import csv_cell, csv_uncell
from tests.fakes import FakeDevice

pb.register_type(np.int8, "char")
ROOT = Path(__file__).resolve().parents[1]


class Hostile(pb.Benchmark):
    def __init__(self, key: str) -> None:
        self.key = key

    def meta(self) -> dict[str, object]:
        return {"algo": "csv", self.key: 1}

    def run(self, state: pb.State) -> None:
        state.set_items(1000)
        state.run(state.device.launch)


def test_csv_cell_neutralises_formulas_and_never_numbers() -> None:
    for text in ("=1+1", "+cmd", "-cmd|' /C calc'!A0", "@SUM(A1)", "\t=x"):
        assert csv_cell(text) == "'" + text and csv_uncell(csv_cell(text)) == text
    for number in ("-2", "+3.5", "-1e-3", "12", "-inf"):
        assert csv_cell(number) == number
    assert csv_cell("n: 1") == "n: 1"


def test_the_results_csv_neutralises_a_formula_name_and_reads_it_back(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    ex = pb.Executor(["--csv-out", str(out), "--json-out", str(tmp_path / "r.json"), "--rounds", "1",
                      "--min-secs", "0"], device=FakeDevice(0.25))
    ex.queue(Hostile("=HYPERLINK(\"http://x\")"))
    ex.queue(Hostile("@cmd\rx"))
    ex.run()
    text = out.read_bytes().decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 3  # the \r stayed inside its quoted cell
    names = sorted(r[1] for r in rows[1:])
    assert all(n.startswith("'") for n in names), names
    assert all(float(c) >= 0 for r in rows[1:] for c in r[2:7])  # numbers as they were
    read = cpp_csv.read(out.read_bytes(), str(out))
    specs = read.document["specializations"]
    assert sorted(s["name"] for s in specs) == sorted(['=HYPERLINK("http://x"): 1', "@cmd\rx: 1"])


def test_history_csv_quotes_a_carriage_return_and_neutralises_formulas() -> None:
    df = pd.DataFrame({"branch": ["=evil\rmain", "main"], "value": [-2.5, 3.0], "note": ["-2", "+x"]})
    rows = list(csv.reader(io.StringIO(csv_frame(df), newline="")))
    assert rows == [["branch", "value", "note"], ["'=evil\rmain", "-2.5", "-2"], ["main", "3.0", "'+x"]]


def test_history_runs_csv_of_a_hostile_branch_is_one_row(tmp_path: Path) -> None:
    import subprocess
    import sys

    doc = json.loads((ROOT / "tests" / "gpu_results" / "gpu-copy-run1.json").read_text())
    doc["context"]["general"]["branch_name"] = "=evil\rmain"
    src = tmp_path / "r.json"
    src.write_text(json.dumps(doc))
    db = tmp_path / "h.duckdb"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "primbench", "history", "ingest", str(src), "--db", str(db)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "primbench", "history", "runs", "--db", str(db), "--branch",
                           "=evil\rmain", "-f", "csv"], capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout.decode(), newline="")))
    assert len(rows) == 2, rows
    assert "'=evil\rmain" in rows[1]
