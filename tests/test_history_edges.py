"""Issue 29's history edges: a file name that is not UTF-8, unreadable entries of an ingested
directory, a Parquet part whose columns do not fit its table, and dates a runner's clock got
wrong (real files in tmp_path, real DuckDB, every backend for the first: tests/backends/)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.errors import HistoryWarning
from primbench.history.selector import Selector
from primbench.history.storage.contract import Store
from primbench.history.storage.duckdb_file import DuckDBStore
from primbench.history.storage.parquet import ParquetStore
from tests import backends
from tests import history_data as hd

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args])
    return result.exit_code, result.stdout, result.stderr


def _store(kind: str, where: Path, request: pytest.FixtureRequest) -> Store:
    return backends.cases()[kind].make(where, request)


def _non_utf8(directory: Path, doc: dict[str, object]) -> str:
    """A results file whose name holds the byte 0xff (not UTF-8); its name as Python holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    name = os.fsdecode(os.fsencode(directory) + b"/run-\xff.json")
    written = hd.write(Path(name), doc)
    return str(written)


# --------------------------------------------------------------------------- non-UTF-8 names


@pytest.mark.parametrize("kind", list(backends.cases()))
def test_a_file_name_that_is_not_utf8_is_stored_escaped(kind: str, tmp_path: Path,
                                                         request: pytest.FixtureRequest) -> None:
    store = _store(kind, tmp_path, request)
    path = _non_utf8(tmp_path / "in", hd.document([1.0e12], commit=hd.sha("a")))
    report = store.ingest([path])
    assert not report.errors, report.to_dict()
    assert len(report.stored) == 1
    assert report.stored[0].path.endswith("run-\\xff.json")
    runs = store.runs()
    assert list(runs["source_path"]) == [report.stored[0].path]
    assert store.ingest([path]).duplicates  # and once only


def test_a_non_utf8_name_ingests_on_the_command_line(tmp_path: Path) -> None:
    path = _non_utf8(tmp_path / "in", hd.document([1.0e12], commit=hd.sha("a")))
    db = str(tmp_path / "h.duckdb")
    code, out, err = run("ingest", path, "--db", db)
    assert code == 0, err
    assert "Traceback" not in out + err
    code, out, err = run("runs", "--db", db, "-f", "csv")
    assert code == 0 and "run-\\xff.json" in out


def test_a_bad_file_with_a_non_utf8_name_is_one_escaped_line(tmp_path: Path) -> None:
    directory = tmp_path / "in"
    directory.mkdir()
    bad = os.fsdecode(os.fsencode(directory) + b"/bad-\xff.json")
    Path(bad).write_text("{not json", encoding="utf-8")
    code, out, err = run("ingest", bad, "--db", str(tmp_path / "h.duckdb"))
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("primbench history: error:")]
    assert len(lines) == 1 and "bad-\\xff.json" in lines[0]
    assert "Traceback" not in out + err


# --------------------------------------------------------------------------- unreadable entries


def _with_stored_run(tmp_path: Path) -> str:
    db = str(tmp_path / "h.duckdb")
    first = hd.write(tmp_path / "before" / "first.json", hd.document([1.0e12], commit=hd.sha("before")))
    assert run("ingest", str(first), "--db", db)[0] == 0
    return db


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("primbench history: error:")]


def test_dangling_and_looping_links_in_a_directory_are_reported_with_exit_2(tmp_path: Path) -> None:
    db = _with_stored_run(tmp_path)
    d = tmp_path / "in"
    hd.write(d / "good.json", hd.document([1.0e12], commit=hd.sha("good")))
    hd.write(d / "sub" / "good2.json", hd.document([1.0e12], commit=hd.sha("good2")))
    (d / "dangling.json").symlink_to(d / "nowhere.json")
    (d / "sub" / "loop.json").symlink_to(d / "sub" / "loop.json")
    code, out, err = run("ingest", str(d), "--db", db)
    assert code == 2
    lines = _error_lines(err)
    assert len(lines) == 2
    assert any("dangling.json" in line and "leads nowhere" in line for line in lines)
    assert any("loop.json" in line for line in lines)
    assert "2 run(s) stored" in out + err
    code, out, _ = run("runs", "--db", db, "-f", "csv")
    assert code == 0 and out.count("\n") == 4  # the header, the run stored before and the two readable ones


def test_a_directory_of_only_a_dangling_link_names_the_link(tmp_path: Path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    (d / "results.json").symlink_to(tmp_path / "gone.json")
    code, _, err = run("ingest", str(d), "--db", str(tmp_path / "h.duckdb"))
    assert code == 2
    lines = _error_lines(err)
    assert len(lines) == 1 and "results.json" in lines[0]


def _folder_with_a_locked_folder_and_a_secret_file(tmp_path: Path) -> tuple[str, Path, Path, Path]:
    """A store holding one run, and a folder to ingest: one good file, a subfolder `locked`
    and a file `secret.json` (each holding a run) for the test to make unreadable."""
    db = _with_stored_run(tmp_path)
    d = tmp_path / "in"
    hd.write(d / "good.json", hd.document([1.0e12], commit=hd.sha("good")))
    locked = d / "locked"
    hd.write(locked / "hidden.json", hd.document([1.0e12], commit=hd.sha("locked")))
    secret = hd.write(d / "secret.json", hd.document([1.0e12], commit=hd.sha("secret")))
    return db, d, locked, secret


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder and a file of mode 000: nothing to report")
def test_a_locked_folder_and_an_unreadable_file_are_reported_with_exit_2(tmp_path: Path) -> None:
    db, d, locked, secret = _folder_with_a_locked_folder_and_a_secret_file(tmp_path)
    locked.chmod(0)
    secret.chmod(0)
    try:
        code, out, err = run("ingest", str(d), "--db", db)
    finally:
        locked.chmod(0o755)
        secret.chmod(0o644)
    assert code == 2
    lines = _error_lines(err)
    assert len(lines) == 2
    assert any("locked" in line for line in lines) and any("secret.json" in line for line in lines)
    assert "1 run(s) stored" in out + err


# --------------------------------------------------------------------------- Parquet misfits


def _parquet(tmp_path: Path, n: int = 3) -> Path:
    shared = tmp_path / "shared"
    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(n, specs=2), batches=2)
    assert not ParquetStore(shared, runner="r1").ingest(files).errors
    return shared


def _misplace(shared: Path) -> dict[str, Path]:
    """Parts that do not fit their tables, each of a write of its own: a runs part among the
    specializations, a specializations part among the runs, a batches part with a NULL in a
    column that takes none, and a text file named like a part."""
    con = duckdb.connect()
    try:
        runs, specs, batches = (sorted((shared / t).glob("*/*.parquet"))[0] for t in ("runs", "specializations",
                                                                                    "batches"))
        out = {"runs-in-specs": shared / "specializations" / "runner=r2" / "part-a.parquet",
               "specs-in-runs": shared / "runs" / "runner=r2" / "part-b.parquet",
               "null-batch": shared / "batches" / "runner=r2" / "part-c.parquet",
               "text": shared / "runs" / "runner=r3" / "part-d.parquet"}
        for p in out.values():
            p.parent.mkdir(parents=True, exist_ok=True)
        out["runs-in-specs"].write_bytes(runs.read_bytes())
        out["specs-in-runs"].write_bytes(specs.read_bytes())
        con.execute("COPY (SELECT * REPLACE (NULL::DOUBLE AS batch_ms) FROM read_parquet(?)) TO ? (FORMAT parquet)",
                    [str(batches), str(out["null-batch"])])
        out["text"].write_text("run_id,branch\nabc,main\n", encoding="utf-8")
    finally:
        con.close()
    return out


def test_parts_whose_columns_do_not_fit_are_skipped_quarantined_and_reported(tmp_path: Path) -> None:
    shared = _parquet(tmp_path)
    bad = _misplace(shared)
    code, out, err = run("runs", "--db", str(shared), "-f", "csv")
    assert code == 0, err
    assert out.count("\n") == 4  # the header and the three runs
    warned = [line for line in err.splitlines() if line.startswith("primbench history: warning:")]
    assert len(warned) == len(bad)
    for p in bad.values():
        assert not p.exists()
        assert (shared / "quarantine" / p.parent.parent.name / p.parent.name / p.name).is_file()
        assert sum(str(p) in line for line in warned) == 1
    assert any("not a Parquet file" in line for line in warned)
    assert any("do not fit the specializations table" in line for line in warned)
    # every query keeps working, and info says what was moved
    for args in (["series", hd.spec_name(0)], ["branches"], ["regressions", "--branch", "main"]):
        code, _, err = run(*args, "--db", str(shared))
        assert code in (0, 1), (args, err)
        assert "Traceback" not in err
    code, out, _ = run("info", "--db", str(shared))
    assert code == 0 and "quarantined_parts: 4" in out
    # and a merge takes the good runs
    db = tmp_path / "h.duckdb"
    code, _, err = run("merge", str(shared), "--db", str(db))
    assert code == 0, err
    assert len(DuckDBStore(db).runs()) == 3


def test_history_quarantine_moves_a_misfit_part(tmp_path: Path) -> None:
    shared = _parquet(tmp_path)
    bad = _misplace(shared)
    code, out, err = run("quarantine", str(shared))
    assert code == 0, err
    assert "4 part(s) moved" in out
    assert all(not p.exists() for p in bad.values())


def test_a_misfit_runs_part_does_not_make_its_run_a_duplicate(tmp_path: Path) -> None:
    shared = _parquet(tmp_path, n=1)
    other = hd.write(tmp_path / "other.json", hd.document([2.0e12], commit=hd.sha("other")))
    lone = tmp_path / "lone"
    assert not ParquetStore(lone, runner="x").ingest([other]).errors
    spec = sorted((lone / "specializations").glob("*/*.parquet"))[0]
    misplaced = shared / "runs" / "runner=r9" / "part-z.parquet"
    misplaced.parent.mkdir(parents=True)
    misplaced.write_bytes(spec.read_bytes())  # holds the run id of `other`, and no run
    report = ParquetStore(shared, runner="r1").ingest([other])
    assert len(report.stored) == 1, report.to_dict()
    with pytest.warns(HistoryWarning, match="part-z.parquet"):
        assert len(ParquetStore(shared).runs()) == 2


# --------------------------------------------------------------------------- dates


@pytest.mark.parametrize("kind", list(backends.cases()))
def test_dates_later_than_the_ingest_or_earlier_than_the_branch_are_flagged(kind: str, tmp_path: Path,
                                                                            request: pytest.FixtureRequest) -> None:
    store = _store(kind, tmp_path, request)
    now = dt.datetime.now(dt.UTC)
    first = hd.write(tmp_path / "in" / "first.json", hd.document([1.0e12], commit=hd.sha("1"),
                                                                 date=now - dt.timedelta(days=2)))
    ahead = hd.write(tmp_path / "in" / "ahead.json", hd.document([1.0e12], commit=hd.sha("2"),
                                                                 date=now + dt.timedelta(days=365)))
    within = hd.write(tmp_path / "in" / "within.json", hd.document([1.0e12], commit=hd.sha("3"),
                                                                   date=now + dt.timedelta(minutes=1)))
    with pytest.warns(HistoryWarning, match="ahead.json.*later than its ingest") as caught:
        report = store.ingest([first, ahead, within])
    assert len(report.stored) == 3 and [f.path for f in report.date_flags] == [str(ahead)]
    assert len([w for w in caught if issubclass(w.category, HistoryWarning)]) == 1
    # 1970 on main is earlier than main's newest (the run a year ahead does not count); another branch is not
    old = hd.write(tmp_path / "more" / "old.json", hd.document([0.8e12], commit=hd.sha("4"),
                                                               date=dt.datetime(1970, 1, 2, tzinfo=dt.UTC)))
    feat = hd.write(tmp_path / "more" / "feat.json", hd.document([1.0e12], branch="feat", commit=hd.sha("5"),
                                                                 date=now - dt.timedelta(days=30)))
    with pytest.warns(HistoryWarning, match="old.json.*earlier than the newest run already stored on branch 'main'"):
        report = store.ingest([old, feat])
    assert [f.path for f in report.date_flags] == [str(old)]
    assert (now + dt.timedelta(minutes=1)).isoformat(timespec="minutes")[:16] in report.date_flags[0].reason
    from primbench.history import commands

    runs = commands.runs(store.location, Selector())
    flagged = dict(zip(runs["source_path"], runs["date_flag"], strict=True))
    assert flagged[str(ahead)] and "later than its ingest" in flagged[str(ahead)]
    assert flagged[str(old)] and "earlier than" in flagged[str(old)]
    assert all(pd.isna(flagged[str(p)]) for p in (first, within, feat))


def test_history_ingest_warns_of_a_flagged_date_in_one_line_and_runs_shows_it(tmp_path: Path) -> None:
    db = str(tmp_path / "h.duckdb")
    ahead = hd.write(tmp_path / "ahead.json", hd.document([1.0e12], commit=hd.sha("2"),
                                                          date=dt.datetime.now(dt.UTC) + dt.timedelta(days=365)))
    code, out, err = run("ingest", str(ahead), "--db", db)
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("primbench history: warning:")]
    assert len(warned) == 1 and "ahead.json" in warned[0] and "later than its ingest" in warned[0]
    code, out, _ = run("runs", "--db", db, "-f", "json")
    assert code == 0 and "later than its ingest" in out


def test_a_folder_that_cannot_be_listed_and_a_file_that_cannot_be_opened_are_reported_even_as_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What mode 000 does to a user other than root, made so for root too (os.scandir and
    os.access answer as they would)."""
    db, d, locked, secret = _folder_with_a_locked_folder_and_a_secret_file(tmp_path)
    real_scandir, real_access = os.scandir, os.access

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(locked):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)  # type: ignore[call-overload]

    def access(path: object, mode: int, **kw: object) -> bool:
        return False if os.fspath(path) == str(secret) else real_access(path, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "access", access)
    code, out, err = run("ingest", str(d), "--db", db)
    assert code == 2
    lines = _error_lines(err)
    assert any(str(locked) in line and "cannot list it" in line for line in lines)
    assert any("secret.json" in line and "permission denied" in line for line in lines)
    assert len(lines) == 2 and "1 run(s) stored" in out + err
