"""The storage seam (`history/storage/`): a location is a string and `open_store` picks the
backend; ingest and merge go through it, for every backend. The contract every backend shares
is tests/test_history_store_contract.py; what a backend adds is tested in its module of
tests/backends/."""

from __future__ import annotations

import ast
from pathlib import Path

from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.storage.contract import backends, open_store
from primbench.history.storage.duckdb_file import DuckDBStore
from primbench.history.storage.parquet import ParquetStore
from tests import history_data as hd

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


_runs = hd.three_spec_runs


# --------------------------------------------------------------------------- the seam


def test_a_location_is_a_string_and_picks_its_backend(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    parts = open_store(tmp_path / "parts")
    assert isinstance(parts, ParquetStore) and parts.location == str(tmp_path / "parts")
    assert isinstance(open_store(tmp_path / "new.duckdb"), DuckDBStore)
    assert isinstance(open_store("a-name-no-backend-claims"), DuckDBStore)  # the fallback
    kinds = backends()  # each declared by its module; a server's URL: tests/backends/<name>.py
    assert [c.fallback for c in kinds].count(True) == 1 and kinds[-1] is DuckDBStore  # asked last


def test_ingest_into_a_parquet_folder_given_as_db(tmp_path: Path) -> None:
    """`history ingest R.json --db DIR` takes the folder that `history runs --db DIR` reads
    (it failed with "is a directory")."""
    parts = tmp_path / "parts"
    hd.ingest_shared(_runs(tmp_path / "a", 2), parts, runner="r1")
    more = _runs(tmp_path / "b", 3, seed=2)
    result = invoke("history", "ingest", *map(str, more), "--db", str(parts), "--runner", "r2")
    assert result.exit_code == 0, result.output
    assert len(open_store(parts).runs()) == 5
    assert {p.parent.name for p in parts.glob("runs/*/*.parquet")} == {"runner=r1", "runner=r2"}
    assert invoke("history", "runs", "--db", str(parts), "--format", "json").exit_code == 0


def test_no_private_name_is_imported_across_modules() -> None:
    found = []
    for package in ("primbench", "compare", "history"):
        for path in (ROOT / package).rglob("*.py"):
            if package == "primbench" and path.relative_to(ROOT).parts[1] in ("compare", "history"):
                continue  # links to the folders below
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                        ("primbench", "compare", "history")):
                    found += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []


def test_queries_do_not_import_the_writer() -> None:
    tree = ast.parse((ROOT / "history" / "queries.py").read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "primbench.history.storage.ingest" not in modules and "primbench.history.storage.schema" in modules
