"""`primbench history …`: exit codes, formats, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from tests import history_data as hd

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hd.standard_history(tmp_path_factory.mktemp("history"))


def test_ingest_reports_and_is_idempotent(tmp_path: Path) -> None:
    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2))
    db = str(tmp_path / "h.duckdb")
    code, out, _ = run("ingest", str(tmp_path / "in"), "--db", db)
    assert code == 0 and "3 run(s) stored (6 specializations), 0 already stored, 0 bad file(s)" in out
    code, out, _ = run("ingest", str(files[0]), "--db", db, "--format", "json")
    assert code == 0 and json.loads(out)["duplicates"] == 1


def test_ingest_bad_file_is_named_exit_2_and_the_good_ones_are_stored(tmp_path: Path) -> None:
    good = hd.write(tmp_path / "good.json", hd.document([1e12], commit=hd.sha("g")))
    bad_doc = hd.document([1e12], commit=hd.sha("b"))
    bad_doc["specializations"][0]["bytes_per_second"] = -5
    bad = hd.write(tmp_path / "bad.json", bad_doc)
    db = str(tmp_path / "h.duckdb")
    code, _, err = run("ingest", str(good), str(bad), "--db", db)
    assert code == 2
    assert f"{bad}: specializations[0].bytes_per_second: must not be negative" in err
    assert "1 run(s) stored" in err
    code, out, _ = run("runs", "--db", db, "--format", "json")
    assert code == 0 and len(json.loads(out)) == 1


def test_db_from_the_environment(tmp_path: Path) -> None:
    f = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("e")))
    env = {"PRIMBENCH_HISTORY_DB": str(tmp_path / "env.duckdb")}
    assert run("ingest", str(f), env=env)[0] == 0
    assert (tmp_path / "env.duckdb").is_file()
    code, out, _ = run("info", "--format", "json", env=env)
    assert code == 0 and json.loads(out)["runs"] == 1


def test_runs_series_branches_tables_and_json(db: Path) -> None:
    code, out, _ = run("runs", "--db", str(db), "--branch", "feat")
    assert code == 0 and "feat" in out and "2 run(s)" in out
    code, out, _ = run("runs", "--db", str(db), "--format", "json", "--limit", "0")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 46 and rows[0]["date"].endswith("Z")
    code, out, _ = run("series", "type: t0", "--db", str(db), "-a", "copy", "--gpu", hd.H200_A["uuid"],
                       "--format", "json")
    points = json.loads(out)
    assert code == 0 and len(points) == 30 and points[0]["commit"] == hd.sha("main-0")
    code, out, _ = run("series", "type: t0", "--db", str(db), "--per-run", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("date,branch,commit")
    code, out, _ = run("branches", "--db", str(db))
    assert code == 0 and "feat" in out and "main" in out


def test_series_of_an_unknown_name_suggests_names(db: Path) -> None:
    code, _, err = run("series", "type: t9", "--db", str(db))
    assert code == 2 and "did you mean" in err and "'type: t0'" in err


def test_regressions_and_fail_on(db: Path) -> None:
    code, out, _ = run("regressions", "--db", str(db), "--format", "json")
    cps = json.loads(out)
    assert code == 0 and len(cps) == 1 and cps[0]["commit"] == hd.sha("main-20")
    assert run("regressions", "--db", str(db), "--fail-on", "regression")[0] == 1
    assert run("regressions", "--db", str(db), "--fail-on", "regression", "--last", "5")[0] == 0
    code, out, _ = run("regressions", "--db", str(db), "--branch", "feat")
    assert code == 0 and "0 change point(s)" in out
    assert run("regressions", "--db", str(db), "--min-shift", "7%", "--fail-on", "change")[0] == 0
    assert run("regressions", "--db", str(db), "--min-shift", "5", "--fail-on", "change")[0] == 2


def test_compare_exit_codes_and_formats(db: Path) -> None:
    args = ["compare", "feat", "--base", "main", "--db", str(db), "--no-git", "--fork-point", hd.sha("main-24")]
    code, out, _ = run(*args)
    assert code == 1 and "regression" in out and "fork point" in out
    assert run(*args, "--fail-on", "never")[0] == 0
    code, out, _ = run(*args, "--format", "json", "--fail-on", "never")
    data = json.loads(out)
    assert data["history"]["base_commit"] == hd.sha("main-24") and data["summary"]["counts"]["regression"] == 1
    code, out, _ = run(*args, "--format", "markdown")
    assert code == 1 and out.startswith("**feat @")
    code, _, err = run("compare", "nope", "--db", str(db), "--no-git")
    assert code == 2 and "no runs of branch 'nope'" in err
    assert run(*args, "--threshold", "2")[0] == 2


@pytest.mark.slow
def test_plot_and_report(db: Path, tmp_path: Path) -> None:
    code, out, _ = run("plot", "type: t1", "--db", str(db), "-a", "copy", "--out", str(tmp_path / "t1.png"))
    assert code == 0 and (tmp_path / "t1.png").read_bytes()[:4] == b"\x89PNG"
    code, out, _ = run("plot", "--db", str(db), "--out", str(tmp_path / "all"))
    assert code == 0 and len(list((tmp_path / "all").glob("*.png"))) == 5
    code, out, _ = run("report", "--db", str(db), "--branch", "feat", "--no-git", "--out", str(tmp_path / "r.html"))
    assert code == 0 and "Wrote" in out and (tmp_path / "r.html").is_file()
    assert run("plot", "nope", "--db", str(db), "--out", str(tmp_path / "x.png"))[0] == 2


def test_shared_ingest_query_and_merge(tmp_path: Path) -> None:
    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(4, specs=2))
    shared = tmp_path / "shared"
    code, out, _ = run("ingest", *map(str, files), "--shared", str(shared), "--runner", "ci-1")
    assert code == 0 and "4 run(s) stored" in out
    code, out, _ = run("runs", "--db", str(shared), "--format", "json")
    assert code == 0 and len(json.loads(out)) == 4
    code, out, _ = run("merge", str(shared), "--db", str(tmp_path / "h.duckdb"))
    assert code == 0 and "4 run(s) added" in out
    assert run("ingest", str(files[0]), "--shared", str(shared), "--db", "x.duckdb")[0] == 2


def test_missing_store_and_newer_schema_exit_2(tmp_path: Path) -> None:
    code, _, err = run("runs", "--db", str(tmp_path / "none.duckdb"))
    assert code == 2 and "no history store here" in err
    f = hd.write(tmp_path / "r.json", hd.document([1e12], commit=hd.sha("n")))
    db = tmp_path / "h.duckdb"
    run("ingest", str(f), "--db", str(db))
    from primbench.history.storage.duckdb_file import connect

    con = connect(db, read_only=False)
    con.execute("INSERT INTO schema_migrations VALUES (42, 'future', current_timestamp)")
    con.close()
    code, _, err = run("runs", "--db", str(db))
    assert code == 2 and "schema version 42, newer than this primbench" in err


def test_migrate_and_info(tmp_path: Path) -> None:
    from primbench.history.storage import schema
    from primbench.history.storage.duckdb_file import connect

    db = tmp_path / "old.duckdb"
    con = connect(db, read_only=False)
    schema.migrate(con, target=1)
    con.close()
    code, out, _ = run("migrate", "--db", str(db))
    assert code == 0 and "applied migrations: 2, 3" in out
    code, out, _ = run("migrate", "--db", str(db))
    assert code == 0 and "up to date" in out
    code, out, _ = run("info", "--db", str(db))
    assert code == 0 and f"schema_version: {schema.SCHEMA_VERSION}" in out


def test_bad_dates_exit_2(db: Path) -> None:
    code, _, err = run("runs", "--db", str(db), "--since", "last tuesday")
    assert code == 2 and "not an ISO 8601 date" in err


def test_regressions_and_report_read_a_window_of_commits_by_default(db: Path, tmp_path: Path) -> None:
    """`regressions --window N` analyses the newest N commits (default 1,000, 0: the whole history,
    as before the window); the report's `--last` defaults to the same window, 0 the whole history."""
    from primbench.cli.history import WINDOW

    whole = run("regressions", "--db", str(db), "--window", "0", "-f", "json")
    default = run("regressions", "--db", str(db), "-f", "json")
    assert whole[0] == default[0] == 0 and json.loads(whole[1])
    assert default[1] == whole[1]  # the standard story's branch: fewer commits than the window
    short = json.loads(run("regressions", "--db", str(db), "--window", "4", "-f", "json")[1])
    assert all(row["commits"] <= 4 for row in short)
    assert run("regressions", "--db", str(db), "--window", "-1")[0] == 2
    pages = []
    for last in ("0", str(WINDOW), None):
        out = tmp_path / f"{last}.html"
        code, said, _ = run("report", "--db", str(db), "--no-git", "-o", str(out), *(["--last", last] if last else []))
        assert code == 0, said
        pages.append(out.read_text().split("Generated", 1)[1].split(".</p>", 1)[1])
    assert pages[0] == pages[1] == pages[2]
