"""`primbench run FILE` and `python FILE` behave the same (checked with --dry: no GPU needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COPY = ROOT / "examples" / "copy_benchmark.py"


def _strip(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    general = doc["context"]["general"]
    for key in ("date", "host_name"):
        general.pop(key, None)
    doc["context"]["settings"].pop("json_out")
    doc["summary"].pop("elapsed_secs")
    return doc


def test_primbench_run_equals_python_file(tmp_path):
    via_python = tmp_path / "python.json"
    via_cli = tmp_path / "cli.json"
    args = ["--dry", "--size", "64MiB", "--filter", "long", "--extra-percent", "1", "--branch", "b", "--commit", "c"]
    proc = subprocess.run([sys.executable, str(COPY), *args, "--json-out", str(via_python)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    result = CliRunner().invoke(app, ["run", str(COPY), *args, "--json-out", str(via_cli)])
    assert result.exit_code == 0, result.output
    a, b = _strip(json.loads(via_python.read_text())), _strip(json.loads(via_cli.read_text()))
    assert a == b
    assert [s["name"] for s in a["specializations"]] == ["type: long long"]
    assert a["context"]["custom_settings"] == {"extra_percent": 1.0}


def test_example_help_lists_every_option_without_a_gpu():
    proc = subprocess.run([sys.executable, str(COPY), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    for name in Settings.__dataclass_fields__:
        assert "--" + name.replace("_", "-") in proc.stdout, name
    assert "--extra-percent" in proc.stdout


def test_bad_option_through_primbench_run_exits_2(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(COPY), "--size", "12XB", "--json-out", str(out)])
    assert result.exit_code == 2
    assert not out.exists()


def test_missing_file_exits_2():
    result = CliRunner().invoke(app, ["run", "no/such/bench.py"])
    assert result.exit_code == 2


@pytest.mark.parametrize("design", ["single", "default", "--processes 3", "--devices 0,1"])
def test_no_gpu_is_a_clear_error(tmp_path, design):
    """Without CuPy, a real run names the extra to install (exit 2), and writes nothing: in one process, and
    where the parent would start workers (the default protocol, --processes, --devices), once, before any."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:  # pragma: no cover - GPU machines
        pytest.skip("CuPy is installed here")
    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k != "PRIMBENCH_DESIGN"}
    if design == "single":
        env["PRIMBENCH_DESIGN"] = "single"
    args = design.split() if design.startswith("--") else []
    proc = subprocess.run([sys.executable, str(COPY), "--json-out", str(out), *args], capture_output=True, text=True,
                          check=False, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert "pip install cupy-cuda13x nvidia-ml-py" in proc.stderr and "'primbench[" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_import_primbench_loads_no_heavy_or_gpu_module():
    code = (
        "import sys, primbench, primbench.cli;"
        "names = ('cupy', 'pynvml', 'amdsmi', 'pandas', 'scipy', 'duckdb', 'matplotlib');"
        "heavy = [m for m in names if m in sys.modules];"
        "print(heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_help_after_file_is_the_programs_help():
    result = CliRunner().invoke(app, ["run", str(COPY), "--help"])
    assert result.exit_code == 0
    assert "--extra-percent" in result.output and "--min-gpu-ms-per-batch" in result.output


def test_run_help_and_missing_file():
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0 and "every option after FILE goes to the program" in result.output
    assert CliRunner().invoke(app, ["run"]).exit_code == 2
