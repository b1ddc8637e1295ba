"""What the product's docstrings, comments and documents cite exists: every file path
(``tests/benchmarks/rounds/evaluate.txt``) and every dotted name of the code
(`history.stores.open_store`, `primbench.metrics.choose`) resolves in this repository."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(r"(?<![\w./-])((?:tests|docs|examples|history|compare|primbench)/[\w./-]+"
                  r"\.(?:py|md|txt|json|sh|yml))")
NAME = re.compile(r"`{1,2}((?:primbench\.)?(?:history|compare)\.[A-Za-z_.]+|primbench\.[a-z_]+\.[A-Za-z_.]+)`{1,2}")


def _sources() -> list[Path]:
    """Product code (compare/ and history/ once, not through the links) and the documents."""
    code = [p for p in (ROOT / "primbench").rglob("*.py") if p.relative_to(ROOT).parts[1] not in ("compare", "history")]
    return [*code, *(ROOT / "compare").glob("*.py"), *(ROOT / "history").glob("*.py"), ROOT / "README.md",
            *(ROOT / "docs").glob("*.md")]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_cited_files_exist() -> None:
    missing = [f"{p.relative_to(ROOT)}: {m}" for p in _sources()
               for m in PATH.findall(p.read_text(encoding="utf-8")) if not (ROOT / m).exists()]
    assert not missing


def test_cited_names_of_the_code_exist() -> None:
    missing = []
    for p in _sources():
        for token in NAME.findall(p.read_text(encoding="utf-8")):
            token = token.rstrip(".")
            if re.search(r"\.(md|py|txt|json|duckdb|html|png)$", token):
                continue  # a file name, checked above
            if not _resolves(token if token.startswith("primbench.") else f"primbench.{token}"):
                missing.append(f"{p.relative_to(ROOT)}: {token}")
    assert not missing


def test_the_checks_can_fail() -> None:
    assert not _resolves("primbench.history.queries.no_such_query")
    assert _resolves("primbench.history.stores.open_store") and _resolves("primbench.metrics.choose")
    assert PATH.findall("see tests/benchmarks/rounds_eval.txt.") == ["tests/benchmarks/rounds_eval.txt"]
    assert not (ROOT / "tests/benchmarks/rounds_eval.txt").exists()  # the citation this test found once
