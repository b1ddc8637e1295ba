"""The PostgreSQL backend's test side (`tests.backends`): a real server for its tests, its
contract case, and its own tests (many writers at once, its migrations, the Grafana view, lazy
documents, one-line errors), on a real server.

The server: ``$PRIMBENCH_TEST_POSTGRES`` when set (``.ci/run`` starts one through `SERVICE`),
else a throw-away server that `ThrowAwayServer` starts with ``initdb`` and ``pg_ctl`` (found on
PATH or under ``/usr/lib/postgresql/*/bin``) in a temporary folder on a free port, stopped
afterwards; else its tests skip, saying why. As root, the server runs as the ``postgres`` user
(initdb refuses root). `fresh_database` makes an empty database on it per test (the
`postgres_url` fixture). The benchmarks of tests/benchmarks/ use the same helpers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.errors import SchemaError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store
from primbench.history.storage.postgres import PostgresStore, redact
from tests import history_data as hd
from tests.backends import Case
from tests.layout_data import answers, rounds_files

ENV = "PRIMBENCH_TEST_POSTGRES"
ROOT = Path(__file__).resolve().parents[2]


def binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres`` (PATH first, then Debian's)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name, reverse=True):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThrowAwayServer:
    """A PostgreSQL server in a temporary folder, its superuser ``primbench`` trusted on
    127.0.0.1 (`start`, `stop`). `fsync` off by default: nothing here survives the run anyway."""

    def __init__(self, bin_dir: Path, *, fsync: bool = False, root: Path | None = None,
                 user: str | None = None) -> None:
        self.bin = bin_dir
        self.fsync = fsync
        self.root = root if root is not None else Path(tempfile.mkdtemp(prefix="primbench-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user: str | None = user
        if root is None and os.geteuid() == 0:  # initdb refuses root: run the server as postgres (or nobody)
            for name in ("postgres", "nobody"):
                try:
                    pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                break
            if self.user is None:
                raise RuntimeError("running as root and no 'postgres' user to run the server as")
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.url = f"postgresql://primbench@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> str:
        done = self._run("initdb", "-D", str(self.data), "-U", "primbench", "--auth=trust", "-E", "UTF8",
                         "--no-sync", "--locale=C")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.fsync:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        done = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        if done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log[-2000:]}")
        return self.url

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def fresh_database(server: str) -> str:
    """A new, empty database on the server at `server` (a URL whose user may create databases);
    its URL."""
    import psycopg

    name = f"primbench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, rest = server.rpartition("/")
    query = rest.partition("?")[2]
    return f"{base}/{name}" + (f"?{query}" if query else "")


class PostgresService:
    """The server ``.ci/run`` starts for the whole run (`tests.backends.Service`)."""

    packages = ("postgresql",)

    def available(self) -> bool:
        return binaries() is not None

    def start(self) -> tuple[dict[str, str], str]:
        found = binaries()
        if os.environ.get(ENV) or found is None:
            return {}, ""
        server = ThrowAwayServer(found)
        try:
            url = server.start()
        except RuntimeError:
            server.stop()
            raise
        state = json.dumps({"bin": str(server.bin), "root": str(server.root), "user": server.user})
        return {ENV: url}, state

    def stop(self, state: str) -> None:
        found = json.loads(state)
        ThrowAwayServer(Path(found["bin"]), root=Path(found["root"]), user=found["user"]).stop()


SERVICE = PostgresService()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server's URL: $PRIMBENCH_TEST_POSTGRES, else a throw-away server started
    with initdb and pg_ctl; skipped, saying why, when neither is there."""
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("psycopg is not installed (pip install -e '.[postgres]')")
    if os.environ.get(ENV):
        yield os.environ[ENV]
        return
    found = binaries()
    if found is None:
        pytest.skip(f"no PostgreSQL: set {ENV} to a server URL, or install initdb and pg_ctl")
    server = ThrowAwayServer(found)
    try:
        url = server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.skip(f"could not start a throw-away PostgreSQL server: {exc}")
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """An empty database of its own on the test server."""
    return fresh_database(postgres_server)


def _make(where: Path, request: pytest.FixtureRequest) -> Store:
    return PostgresStore(fresh_database(request.getfixturevalue("postgres_server")))


CASE = Case("postgres", PostgresStore, _make)


# --------------------------------------------------------------------------- its own tests


def invoke(*args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


_runs = hd.three_spec_runs


def test_a_url_is_a_postgres_store_and_its_password_is_never_shown() -> None:
    url = "postgresql://ci:s3cret@db.example:5432/bench?sslmode=require"
    store = open_store(url)
    assert isinstance(store, PostgresStore) and store.location == url  # not Path(url): postgresql:/ci...
    assert "s3cret" not in store.display and "s3cret" not in repr(store) and store.display.startswith("postgresql://ci:")
    assert isinstance(open_store("postgres://u@h/db"), PostgresStore)
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redact("postgresql://u@h/db?sslmode=require&password=pw") == "postgresql://u@h/db?sslmode=require&password=***"


def test_merge_into_the_server_and_out_of_it(tmp_path: Path, postgres_url: str) -> None:
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

def test_postgres_migrations_have_their_own_table(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    store = PostgresStore(postgres_url)
    assert store.migrate() == [5, 6, 7]  # the layout of history schema 5 is this backend's first migration
    assert store.migrate() == []
    info = store.info()
    assert info["schema_version"] == 7 and info["runs"] == 0 and info["migrations"][0].startswith("5: tables")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, description) VALUES (99, 'from the future')")
    with pytest.raises(SchemaError, match="version 99, newer than this primbench"):
        store.ingest(_runs(tmp_path, 1))
    result = invoke("history", "runs", "--db", postgres_url)
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "upgrade primbench" in result.output


def test_migration_7_keeps_every_answer_on_the_server(postgres_url: str, tmp_path: Path) -> None:
    """A store as schema 6 left it (between_rounds and time_per_call in extra as well as in the
    document; made here from one ingested at 7) holds after migration 7 what an ingest at 7
    stores, and every query answers alike."""
    import psycopg

    hd.ingest(rounds_files(tmp_path / "in", runs=6, specs=3), postgres_url)
    store = PostgresStore(postgres_url)
    with store.read() as reader:  # (a reader refuses a store of an older schema: what 7 answers)
        before = answers(reader)
    extra = "SELECT run_id, name, extra::jsonb FROM specializations ORDER BY run_id, name"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        ingested = conn.execute(extra).fetchall()
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # back to schema 6's rows
        conn.execute("""UPDATE specializations s
                        SET extra = (coalesce(s.extra::jsonb, '{}'::jsonb) || jsonb_build_object(
                            'between_rounds', d.spec -> 'between_rounds',
                            'time_per_call', d.spec -> 'time_per_call'))::json
                        FROM (SELECT r.run_id, e.spec FROM runs r,
                              jsonb_array_elements(r.document::jsonb -> 'specializations') AS e(spec)) d
                        WHERE d.run_id = s.run_id AND (d.spec ->> 'name') = s.name""")
        conn.execute("DELETE FROM schema_migrations WHERE version = 7")
        twice = conn.execute("SELECT count(*) FROM specializations WHERE extra::jsonb ? 'time_per_call'").fetchone()
    assert twice is not None and twice[0] == 6 * 3
    assert store.migrate() == [7]
    with store.read() as reader:
        assert answers(reader) == before
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute(extra).fetchall() == ingested  # extra as a store of schema 7 holds it


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
