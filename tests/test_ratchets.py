"""Ratchets that only move one way: no product module imports another module's private name
(tests may), and every file exempt from ruff's complexity limit (C901, pyproject.toml) still
needs its exemption (a file whose functions were split leaves the list), and a history backend
touches at most five files."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("primbench", "compare", "history")
#: Private names imported across modules that another change removes (issue 25's history
#: storage seam); an entry that no longer occurs fails the test, so the list only shrinks.
KNOWN: set[tuple[str, str, str]] = set()  # none left since history/storage/ (issue 25)


def _product_files() -> list[Path]:
    """primbench/, compare/ and history/ once each (not through primbench's links to them)."""
    files = [p for p in (ROOT / "primbench").rglob("*.py")
             if p.relative_to(ROOT).parts[1] not in ("compare", "history")]
    return [*files, *(ROOT / "compare").rglob("*.py"), *(ROOT / "history").rglob("*.py")]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(path: Path, root: Path = ROOT) -> set[tuple[str, str, str]]:
    """(file relative to `root`, module, name) of each private name `path` imports from a project module."""
    name = path.relative_to(root).as_posix()
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] in PROJECT):
            module = "." * node.level + (node.module or "")
            found.update((name, module, a.name) for a in node.names if _private(a.name))
        elif isinstance(node, ast.Import):
            found.update((name, a.name, a.name) for a in node.names
                         if a.name.split(".")[0] in PROJECT and any(map(_private, a.name.split("."))))
    return found


def test_no_module_imports_a_private_name_from_another_module() -> None:
    found = set().union(*(private_imports(p) for p in _product_files()))
    assert found - KNOWN == set()
    assert KNOWN - found == set(), "no longer imported: take it out of KNOWN"


def test_the_check_finds_a_private_import(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text("from primbench.executor import _partial_path\nfrom primbench.version import __version__\n"
                    "from .sibling import _helper\nimport primbench.formats._base\n")
    assert private_imports(path, tmp_path) == {("probe.py", "primbench.executor", "_partial_path"),
                                               ("probe.py", ".sibling", "_helper"),
                                               ("probe.py", "primbench.formats._base", "primbench.formats._base")}


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    return [exe]


def test_every_file_exempt_from_the_complexity_limit_still_needs_it() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in config["select"] and config["mccabe"]["max-complexity"] <= 15
    exempt = sorted(f for f, rules in config.get("per-file-ignores", {}).items() if "C901" in rules)
    done = subprocess.run([*_ruff(), "check", "--isolated", "--select", "C901", "--config",
                           f"lint.mccabe.max-complexity={config['mccabe']['max-complexity']}",
                           "--output-format", "json", "--exit-zero", *exempt],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    complex_files = {Path(d["filename"]).resolve().relative_to(ROOT).as_posix() for d in json.loads(done.stdout)}
    assert [f for f in exempt if f not in complex_files] == [], "below the limit now: take it out of per-file-ignores"


def _backend_files() -> Any:
    path = ROOT / "tests" / "benchmarks" / "storage_concurrency" / "backend_files.py"
    spec = importlib.util.spec_from_file_location("backend_files", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_a_history_backend_touches_at_most_five_files() -> None:
    """Issue 25: a backend is at most 5 files (tests/benchmarks/storage_concurrency/backend_files.py
    counts every file that mentions it, outside the benchmarks), each with its role."""
    counted = _backend_files()
    for name in counted.NAMES:
        files = counted.footprint(name)
        assert f"history/storage/{name}.py" in files and f"tests/backends/{name}.py" in files  # not vacuous
        assert [f for f in files if counted.role(name, f) is None] == [], "a file no role covers mentions it"
        assert len(files) <= counted.LIMIT, files
