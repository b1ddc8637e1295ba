"""Issue 15, the history half: filters that match nothing (2), readable tables (5), long work
(6), GPU and config visible (7), caveats (8), Parquet export (9)."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from tests import history_data as hd

runner = CliRunner()
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
BOX = set("─│┃━┏┓┗┛╭╮╰╯┡┩├┤┼")


def run(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def terminal(columns: int) -> dict[str, str | None]:
    """A terminal of that width for Rich (forced colour makes the console a terminal)."""
    return {"NO_COLOR": None, "CLICOLOR_FORCE": "1", "COLUMNS": str(columns)}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hd.standard_history(tmp_path_factory.mktemp("history"))


# --------------------------------------------------------------------------- 2: filters that match nothing


@pytest.mark.parametrize(("args", "said"), [
    (["regressions", "-b", "nosuch"], "no runs of branch 'nosuch'; branches stored: 'main', 'feat'"),
    (["regressions", "-b", "mian"], "no runs of branch 'mian'; did you mean 'main'?"),
    (["regressions", "--name", "type: tt0"], "no runs of specialization 'type: tt0'; did you mean 'type: t0'"),
    (["regressions", "--config", "size=2MiB"], "no runs of config 'size=2MiB'; did you mean 'size=128MiB'?"),
    (["regressions", "--gpu", "A100"], "no runs of GPU 'A100'; GPUs stored: 'NVIDIA H200'"),
    (["regressions", "-a", "cpy"], "no runs of algorithm 'cpy'; did you mean 'copy'"),
    (["runs", "--branch", "nosuch"], "no runs of branch 'nosuch'"),
    (["branches", "--config", "size=1MiB"], "no runs of config 'size=1MiB'"),
    (["branches", "-a", "cpy"], "did you mean 'copy'"),
    (["series", "type: t0", "-b", "nosuch"], "no runs of branch 'nosuch'"),
    (["series", "type: t0", "--gpu", "A100"], "no runs of GPU 'A100'"),
    (["series", "type: new"], "no runs of specialization 'type: new' with branch 'main'"),
    (["plot", "type: t0", "-a", "cpy"], "did you mean 'copy'"),
    (["plot", "-b", "nosuch"], "no runs of branch 'nosuch'"),
    (["report", "-b", "nosuch"], "no runs of branch 'nosuch'"),
    (["report", "-b", "feat", "--base", "mian"], "no runs of base branch 'mian'; did you mean 'main'?"),
    (["compare", "nosuch", "--no-git"], "no runs of branch 'nosuch'"),
    (["compare", "feat", "--base", "mian", "--no-git"], "no runs of base branch 'mian'; did you mean 'main'?"),
    (["compare", "feat", "--gpu", "A100", "--no-git"], "no runs of GPU 'A100'"),
    (["compare", "feat", "--config", "size=2MiB", "--no-git"], "did you mean 'size=128MiB'"),
])
def test_a_filter_that_matches_nothing_exits_2_with_did_you_mean(db: Path, tmp_path: Path, args: list[str],
                                                                 said: str) -> None:
    if args[0] in ("plot", "report"):
        args = [*args, "-o", str(tmp_path / ("x.png" if args[0] == "plot" else "r.html"))]
    code, out, err = run(*args, "--db", str(db))
    assert code == 2, (out, err)
    assert said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "r.html").exists()


def test_filters_that_match_still_pass(db: Path) -> None:
    """Filters that exist: an empty result is still an answer (no change points on feat)."""
    code, out, _ = run("regressions", "-b", "feat", "--db", str(db))
    assert code == 0 and "0 change point(s)" in out
    assert run("regressions", "--gpu", "5d6e1a0c-b", "--db", str(db))[0] == 0  # the short id tables show
    assert run("runs", "--gpu", "NVIDIA H200", "-a", "copy2", "--db", str(db))[0] == 0
    code, out, _ = run("compare", "main", "--gpu", "5d6e1a0c-b", "--no-git", "-f", "json", "--db", str(db))
    assert code in (0, 1) and json.loads(out)["history"]["gpu_key"] == hd.H200_B["uuid"]


# --------------------------------------------------------------------------- 5: tables


def _long_name_store(tmp_path: Path) -> Path:
    name = "type: " + "very_long_template_argument_" * 3 + "end"
    levels = [{name: v[0], "type: short": v[1]} for v in hd.noisy_levels(12, specs=2, shifts={6: -0.05}, seed=3)]
    files = hd.branch_series(tmp_path / "in", levels)
    from tests.history_data import ingest

    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    return db


def test_tables_fit_80_columns_wrap_names_and_show_more_when_wider(tmp_path: Path) -> None:
    db = _long_name_store(tmp_path)
    for args in (["regressions", "--min-shift", "0.1%"], ["runs"], ["branches"], ["series", "type: short"]):
        code, out, _ = run(*args, "--db", str(db), env=terminal(80))
        text = ANSI.sub("", out)
        assert code == 0 and all(len(line) <= 80 for line in text.splitlines()), text
        assert "…" not in text  # nothing cut: names wrap, whole columns are left out (and said so)
    code, out, _ = run("regressions", "--db", str(db), env=terminal(80))
    text = ANSI.sub("", out)
    assert "very_long_template_ar" in text and "end" in text and "regression" in text
    assert "left out" in text
    wide = ANSI.sub("", run("regressions", "--db", str(db), env=terminal(220))[1])
    assert "confidence" in wide and "before" in wide and "left out" not in wide


def test_piped_tables_are_plain_and_complete(db: Path) -> None:
    code, out, _ = run("runs", "--db", str(db), "--limit", "0")
    assert code == 0 and not BOX & set(out) and "\x1b" not in out
    assert len(out.splitlines()) == 1 + 1 + 46  # title, header, every run
    code, out, _ = run("series", "type: t0", "-a", "copy", "--db", str(db))
    assert len(out.splitlines()) == 2 + 38 and "not shown" not in out  # piped: every commit


def test_terminal_tables_are_capped_with_a_note(db: Path) -> None:
    code, out, _ = run("series", "type: t0", "-a", "copy", "--db", str(db), env=terminal(200))
    text = ANSI.sub("", out)
    assert code == 0 and "note: 0 of" not in text
    code, out, _ = run("series", "type: t0", "-a", "copy", "--db", str(db), "--limit", "5", env=terminal(200))
    text = ANSI.sub("", out)
    assert "33 of 38 rows not shown (the oldest)" in text
    assert hd.sha("main-29")[:10] in text and hd.sha("main-0")[:10] not in text


def test_a_piped_table_is_capped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap of a piped table (`PIPE_LIMIT`), at a tenth of its size; 100,000 rows at the real
    cap, with the time they take, are tests/benchmarks/test_speed.py's (marked slow)."""
    from rich.console import Console

    from primbench import tables
    from primbench.cli.history import SERIES_COLUMNS, _cell

    monkeypatch.setattr(tables, "PIPE_LIMIT", 1_000)
    rows = [("2026-01-01T00:00:00", f"{i:040x}", "H200 5d6e1a0c", "size=128MiB", "copy", 1.1e12 + i, 0.05, 1,
             "runner-1", 41.0, 1978.0) for i in range(10_000)]
    for force in (False, True):
        buf = io.StringIO()
        tables.render(rows, SERIES_COLUMNS, _cell, console=Console(file=buf, force_terminal=force, width=80))
    assert "9,000 of 10,000 rows not shown" in buf.getvalue()  # a pipe: PIPE_LIMIT rows


# --------------------------------------------------------------------------- 6: long work


def test_ingest_reports_progress_per_file(tmp_path: Path) -> None:
    from tests.history_data import ingest

    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(5, specs=2))
    seen: list[tuple[int, int]] = []
    ingest(files, tmp_path / "h.duckdb", progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 5) and seen[-1] == (5, 5) and len(seen) == 6


def test_progress_bars_stay_out_of_pipes(tmp_path: Path) -> None:
    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2))
    code, out, err = run("ingest", *map(str, files), "--db", str(tmp_path / "h.duckdb"), env=terminal(80))
    assert code == 0 and err == "" and "3 run(s) stored" in ANSI.sub("", out)


def test_the_commit_axis_is_built_in_linear_time() -> None:
    import pandas as pd

    from primbench.history.plots import commit_axis

    n = 20_000
    t0 = pd.Timestamp("2026-01-01T00:00Z")
    frame = pd.DataFrame({"commit": [f"c{i}" for i in range(n)] * 2,
                          "date": [t0 + pd.Timedelta(minutes=i) for i in range(n)] * 2,
                          "gpu_key": ["A"] * n + ["B"] * n, "config_key": ["x"] * (2 * n)})
    t = time.process_time()  # CPU time: what other processes on the machine do does not count
    axis = commit_axis(frame)
    assert time.process_time() - t < 2.0  # 6.5 s when it was quadratic
    assert axis == [f"c{i}" for i in range(n)]


def test_last_and_since_bound_series_plot_and_report(db: Path, tmp_path: Path) -> None:
    code, out, _ = run("series", "type: t0", "-a", "copy", "--gpu", hd.H200_A["uuid"], "--last", "5",
                       "--db", str(db), "-f", "json")
    rows = json.loads(out)
    assert code == 0 and [r["commit"] for r in rows] == [hd.sha(f"main-{i}") for i in range(25, 30)]
    since = (hd.START + dt.timedelta(hours=25)).isoformat()
    code, out, _ = run("series", "type: t0", "-a", "copy", "--gpu", hd.H200_A["uuid"], "--since", since,
                       "--db", str(db), "-f", "json")
    assert code == 0 and len(json.loads(out)) == 5
    code, out, _ = run("plot", "type: t0", "-a", "copy", "--last", "10", "--db", str(db), "-o", str(tmp_path / "a.png"))
    assert code == 0 and (tmp_path / "a.png").is_file()
    code, out, _ = run("report", "--last", "8", "--no-git", "--db", str(db), "-o", str(tmp_path / "r.html"))
    assert code == 0
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "runs of 8 commits" in text or "of 8 commits" in text
    assert run("series", "type: t0", "--last", "0", "--db", str(db))[0] == 2


def test_plot_draws_the_window_report_draws_unless_told_the_whole_history(db: Path, tmp_path: Path) -> None:
    """`plot`'s default `--last` is `report`'s window (a chart of a 100,000-run branch grows with the
    store); `--last 0` is the whole history. The store's branch is shorter than the window, so the
    default, `--last 0` and a window of its length draw the same chart, and a shorter window another."""
    import typer.main

    from primbench.cli.history import WINDOW

    history = typer.main.get_command(app).commands["history"]  # type: ignore[attr-defined]
    for command in ("plot", "report"):
        last = next(p for p in history.commands[command].params if p.name == "last")
        assert last.default == WINDOW
    drawn = {}
    for label, extra in (("default", []), ("all", ["--last", "0"]), ("30", ["--last", "30"]), ("10", ["--last", "10"])):
        out = tmp_path / f"{label}.png"
        code, _, err = run("plot", "type: t0", "-a", "copy", "--gpu", hd.H200_A["uuid"], *extra, "--db", str(db),
                           "-o", str(out))
        assert code == 0, err
        drawn[label] = out.read_bytes()
    assert drawn["default"] == drawn["all"] == drawn["30"]
    assert drawn["10"] != drawn["default"]


def test_the_report_opens_with_what_needs_attention_linked_to_charts_interesting_first(db: Path,
                                                                                       tmp_path: Path) -> None:
    from primbench.history.report import write_report
    from primbench.history.selector import Selector as S

    report = write_report(db, S(branch="main"), tmp_path / "r.html")
    text = report.path.read_text(encoding="utf-8")
    assert text.index("id='headline'") < text.index("Needs attention") < text.index("<figure") \
        < text.index("<h2>Latest verdicts")
    attention = text[text.index("Needs attention"):text.index("<h2>Trends")]
    assert "change point" in attention and "href='#chart-0'" in attention and "type: t0" in attention
    first = text[text.index("<figure class='chart' id='chart-0'"):][:400]
    assert '"title":"copy / type: t0' in first  # the chart with the regression comes first
    assert "copy2" in text  # every algorithm: verdicts and charts of copy2 too
    small = write_report(db, S(branch="main"), tmp_path / "s.html", max_charts=1)
    assert small.charts == 1 and "Not drawn (4" in small.path.read_text(encoding="utf-8")
    assert report.size_bytes == report.path.stat().st_size


# --------------------------------------------------------------------------- 7: GPU and config visible


def test_branches_tells_two_gpus_of_one_model_apart(db: Path) -> None:
    code, out, _ = run("branches", "--db", str(db))
    rows = [line for line in out.splitlines() if line.startswith("main ") and " copy " in line]
    assert code == 0 and len(rows) == 2 and rows[0] != rows[1]
    assert "H200 5d6e1a0c-a" in out and "H200 5d6e1a0c-b" in out


def _two_sizes(tmp_path: Path) -> Path:
    from tests.history_data import ingest

    files = []
    for i, v in enumerate(hd.noisy_levels(8, specs=1, shifts={4: -0.05}, seed=2)):
        for size, scale in ((1048576, 0.33), (134217728, 1.0)):
            doc = hd.document({"type: char": v[0] * scale}, commit=hd.sha(f"m{i}"), settings={"size": size},
                              date=hd.START + dt.timedelta(hours=i, minutes=size % 7))
            files.append(hd.write(tmp_path / "in" / f"{i}-{size}.json", doc))
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    return db


@pytest.mark.slow
def test_plot_without_config_draws_each_config_on_its_own_chart(tmp_path: Path) -> None:
    db = _two_sizes(tmp_path)
    code, out, _ = run("plot", "type: char", "--db", str(db), "-o", str(tmp_path / "char.png"))
    assert code == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["char-size_128MiB.png", "char-size_1MiB.png"]
    code, out, _ = run("plot", "--db", str(db), "-o", str(tmp_path / "all"))
    assert code == 0 and len(list((tmp_path / "all").glob("*.png"))) == 2
    code, out, _ = run("plot", "type: char", "--config", "size=1MiB", "--db", str(db), "-o", str(tmp_path / "o.png"))
    assert code == 0 and out.count("Wrote") == 1


# --------------------------------------------------------------------------- 8: caveats


def test_history_compare_refuses_a_base_of_another_config(tmp_path: Path) -> None:
    from tests.history_data import ingest

    files = [hd.write(tmp_path / "in" / f"m{i}.json",
                      hd.document([1e12], commit=hd.sha(f"m{i}"), settings={"size": 1048576},
                                  date=hd.START + dt.timedelta(hours=i))) for i in range(3)]
    files.append(hd.write(tmp_path / "in" / "f.json", hd.document([1e12], branch="feat", commit=hd.sha("f"),
                                                                    date=hd.START + dt.timedelta(hours=5))))
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    code, _, err = run("compare", "feat", "--db", str(db), "--no-git", "-f", "markdown", "--fail-on", "never")
    assert code == 2 and "no comparable base" in err and "has config size=1MiB" in err
    code, _, err = run("compare", "feat", "--db", str(db), "--git", "-f", "markdown", "--fail-on", "never")
    assert "fork point unknown" in err


@pytest.mark.parametrize("command", ["ingest", "info"])
def test_csv_is_refused_where_it_would_be_ignored(db: Path, command: str) -> None:
    args = [command, *([str(db)] if command == "ingest" else []), "--db", str(db), "-f", "csv"]
    code, _, err = run(*args)
    assert code == 2 and "'csv' is not one of" in err


# --------------------------------------------------------------------------- 9: export


@pytest.mark.parametrize("shared", [False, True])
def test_export_parquet_of_any_store(tmp_path: Path, shared: bool) -> None:
    import duckdb

    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(4, specs=3), batches=2)
    store = tmp_path / ("shared" if shared else "h.duckdb")
    assert run("ingest", *map(str, files), *(["--shared", str(store)] if shared else ["--db", str(store)]))[0] == 0
    out_dir = tmp_path / "export"
    code, out, _ = run("export", "--parquet", str(out_dir), "--db", str(store))
    assert code == 0 and "Wrote" in out
    con = duckdb.connect()
    for table, rows in (("runs", 4), ("specializations", 12), ("batches", 24)):
        path = out_dir / f"{table}.parquet"
        assert con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()[0] == rows
    assert (out_dir / "schema_migrations.parquet").is_file()
    assert not list(out_dir.glob(".*tmp"))
    (tmp_path / "file").write_text("x")
    code, _, err = run("export", "--parquet", str(tmp_path / "file"), "--db", str(store))
    assert code == 2 and "needs a directory" in err
