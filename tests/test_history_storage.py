"""The storage seam (`history/storage/`): a location is a string and `open_store` picks the
backend; ingest and merge go through it, for every backend; what the PostgreSQL backend adds
(many writers at once, its migrations, the Grafana view, one-line errors), on a real server
(the `postgres_url` fixture: tests/conftest.py). The contract every backend shares is
tests/test_history_store_contract.py."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.errors import SchemaError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from primbench.history.storage.duckdb_file import DuckDBStore
from primbench.history.storage.parquet import ParquetStore
from primbench.history.storage.postgres import PostgresStore, redact
from tests import history_data as hd

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _runs(directory: Path, n: int, *, branch: str = "main", seed: int = 1) -> list[Path]:
    return hd.branch_series(directory, hd.noisy_levels(n, specs=3, cv=0.002, seed=seed), branch=branch,
                            prefix=f"{branch}{seed}", batches=2)


# --------------------------------------------------------------------------- the seam


def test_a_location_is_a_string_and_picks_its_backend(tmp_path: Path) -> None:
    url = "postgresql://ci:s3cret@db.example:5432/bench?sslmode=require"
    store = open_store(url)
    assert isinstance(store, PostgresStore) and store.location == url  # not Path(url): postgresql:/ci...
    assert "s3cret" not in store.display and "s3cret" not in repr(store) and store.display.startswith("postgresql://ci:")
    assert isinstance(open_store("postgres://u@h/db"), PostgresStore)
    (tmp_path / "parts").mkdir()
    assert isinstance(open_store(tmp_path / "parts"), ParquetStore)
    assert isinstance(open_store(tmp_path / "new.duckdb"), DuckDBStore)
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redact("postgresql://u@h/db?sslmode=require&password=pw") == "postgresql://u@h/db?sslmode=require&password=***"


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


def test_merge_goes_through_open_store_into_any_backend(tmp_path: Path, postgres_url: str) -> None:
    parts = tmp_path / "parts"
    hd.ingest_shared(_runs(tmp_path / "a", 4), parts, runner="r1")
    result = invoke("history", "merge", str(parts), "--db", postgres_url)
    assert result.exit_code == 0, result.output
    assert "4 run(s) added" in result.output
    assert hd.merge(parts, postgres_url).added_runs == 0  # idempotent
    other = tmp_path / "other"
    other.mkdir()
    assert hd.merge(postgres_url, other).added_runs == 4  # and out of it, into a Parquet folder
    assert len(open_store(other).series(S(branch="main"))) == 4 * 3


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


# --------------------------------------------------------------------------- PostgreSQL


def test_postgres_migrations_have_their_own_table(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    store = PostgresStore(postgres_url)
    assert store.migrate() == [5, 6]  # the layout of history schema 5 is this backend's first migration
    assert store.migrate() == []
    info = store.info()
    assert info["schema_version"] == 6 and info["runs"] == 0 and info["migrations"][0].startswith("5: tables")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, description) VALUES (99, 'from the future')")
    with pytest.raises(SchemaError, match="version 99, newer than this primbench"):
        store.ingest(_runs(tmp_path, 1))
    result = invoke("history", "runs", "--db", postgres_url)
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "upgrade primbench" in result.output


def test_a_short_hash_becomes_the_full_one_on_the_server(postgres_url: str, tmp_path: Path) -> None:
    full = hd.sha("short")
    short = hd.write(tmp_path / "s.json", hd.document([1e12], commit=full[:9], date="2026-01-01T00:00:00+00:00"))
    long = hd.write(tmp_path / "l.json", hd.document([1.1e12], commit=full, date="2026-01-02T00:00:00+00:00"))
    hd.ingest([short], postgres_url)
    hd.ingest([long], postgres_url)
    assert set(open_store(postgres_url).runs()["commit"]) == {full}


def test_many_writers_at_once_store_each_run_once(postgres_url: str, tmp_path: Path) -> None:
    """Four processes, started together, ingest overlapping halves of 24 runs, one file at a time."""
    files = [str(f) for f in _runs(tmp_path / "in", 24)]
    procs = []
    for i in range(4):
        mine = files[:16] if i % 2 == 0 else files[8:]
        code = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(ROOT)!r})
            from primbench.history.storage.contract import open_store
            store = open_store({postgres_url!r})
            for f in {mine!r}[::{1 if i < 2 else -1}]:
                report = store.ingest([f])
                assert not report.errors, report.errors
        """)
        procs.append(subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    info = PostgresStore(postgres_url).info()
    assert (info["runs"], info["specializations"], info["batches"]) == (24, 24 * 3, 24 * 3 * 2)


def test_the_grafana_view_is_the_series(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    hd.ingest(_runs(tmp_path / "in", 6), postgres_url)
    name = hd.spec_name(1)
    with psycopg.connect(postgres_url) as conn:  # the panel query of docs/history.md
        rows = conn.execute(
            'SELECT "time", value, "commit", metric FROM grafana_series '
            "WHERE branch = %s AND specialization = %s ORDER BY 1", ["main", name]).fetchall()
    series = open_store(postgres_url).series(S(branch="main", name=name))
    assert [r[1] for r in rows] == pytest.approx(list(series["value"]))
    assert [r[2] for r in rows] == list(series["commit"]) and {r[3] for r in rows} == {"bytes_per_second"}
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)


def test_documents_are_fetched_only_for_the_runs_asked_for(postgres_url: str, tmp_path: Path) -> None:
    hd.ingest(_runs(tmp_path / "in", 5), postgres_url)
    with open_store(postgres_url).read() as r:
        tables = dict(r.con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        assert tables["runs"] == "VIEW" and tables["runs_rows"] == "BASE TABLE"  # no document column copied
        run_id = str(r.runs(limit=1)["run_id"].iloc[0])
        assert r.results(run_id).general.branch_name == "main"


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    url = "postgresql://ci:s3cret@127.0.0.1:1/none"
    result = invoke("history", "runs", "--db", url)  # port 1: refused at once
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "cannot connect to the PostgreSQL history" in result.output and "s3cret" not in result.output


def test_without_the_driver_the_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    result = invoke("history", "runs", "--db", "postgresql://u@127.0.0.1:1/x")
    assert result.exit_code == 2 and "psycopg" in result.output and "postgres" in result.output


def test_the_commands_answer_alike_on_a_server_and_a_file(postgres_url: str, tmp_path: Path) -> None:
    """A command's reader copies from the server only what its filters can reach (the runs of
    their branches, of their specialization's name): the output is the DuckDB file's."""
    duck = hd.standard_history(tmp_path / "a", tmp_path / "h.duckdb")
    hd.standard_history(tmp_path / "b", postgres_url)  # type: ignore[arg-type]
    for args in (["series", hd.spec_name(0), "-b", "main", "--format", "csv"],
                 ["series", "type: new", "-b", "main"],  # not on main: the same error and suggestions
                 ["series", "type: nope", "-b", "feat"],
                 ["regressions", "-b", "main", "--format", "csv"],
                 ["compare", "feat", "--base", "main", "--no-git", "--format", "json"],
                 ["branches", "--format", "csv"]):
        a = invoke("history", *args, "--db", str(duck))
        b = invoke("history", *args, "--db", postgres_url)
        assert (a.exit_code, a.output) == (b.exit_code, b.output), args


def test_a_scoped_read_copies_only_what_the_filters_reach(postgres_url: str, tmp_path: Path) -> None:
    hd.standard_history(tmp_path, postgres_url)  # type: ignore[arg-type]
    store = open_store(postgres_url)
    count = lambda r, t: r.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # noqa: E731
    with store.read() as everything, store.read(S(branch="feat", name=hd.spec_name(1))) as narrow:
        # every run and every specialization's key: the filters are checked on them ...
        assert count(narrow, "runs") == count(everything, "runs")
        assert count(narrow, "specializations") == count(everything, "specializations")
        # ... the values only of those in reach
        measured = "(SELECT * FROM specializations WHERE bytes_per_second IS NOT NULL)"
        assert count(narrow, measured) == 2 < count(everything, measured)
        assert len(narrow.series(S(branch="feat", name=hd.spec_name(1)))) == 2
