"""``primbench history …``: the DuckDB history of results across commits and branches.

Thin: each command is a function here that maps its options to the keyword arguments of one
function of `primbench.history.commands` (the filters as one `history.selector.Selector`)
and renders what it returns (a table laid out by `primbench.tables`, or ``--format
json``/``csv`` on stdout); `register` adds them to the ``history`` group. Every filter is
checked against the store first (`history.selection`). DuckDB, pandas, SciPy and matplotlib
are imported only inside the commands. Exit codes: 0 ok; 1 a regression was found
(``compare``, ``regressions`` with ``--fail-on``); 2 usage or bad input (a filter that matches
nothing; a bad results file is named with its field, and the good files of the same call are
still stored).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import typer

from primbench import tables
from primbench.cli import options
from primbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, PrimbenchError
from primbench.textsafe import csv_cell, md_escape, term_clean

T = TypeVar("T")

DB_HELP = "History store: a DuckDB file, a directory of Parquet parts, or a database server's URL " \
          "(docs/history.md; default $PRIMBENCH_HISTORY_DB, else .primbench/history.duckdb)."
CONFIG_HELP = ("Only runs of this config key (the settings that change results, e.g. 'size=1MiB' or "
               "'size=128MiB hot'; see the config_key column).")
WAIT_HELP = "Seconds to wait while another process holds the store (default $PRIMBENCH_HISTORY_WAIT_SECS, else 60)."
GPU_HELP = "Only this GPU: its uuid (or the uuid's start), serial or name."
ALGORITHM_HELP = "Only this algorithm."
SERIES_BRANCH_HELP = "The branch whose commits make the series."
METRIC_HELP = ("What to follow: time (GPU seconds per call, lower is better), bytes or items (per second, higher "
               "is better), energy (the board's joules per call, lower is better; runs that read it) or graph "
               "(the CUDA-graph replay's seconds per call; runs with --graph); default: bytes where the benchmark "
               "declares them, else items, else time. Also a stored value: noise_percent, sm_clock_mhz, watts, ... "
               "(an unknown name lists them all).")
TABLE_HELP = "table, json or csv."
BASE_HELP = "The branch to compare against."
GIT_HELP = "Ask git for the fork point and its ancestors."
ORDER_HELP = "Order the commits as git here does, where it knows them all (else, and with --no-git: ingest order)."


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


class LineFormat(StrEnum):
    """Commands that print lines, not a table: no csv (refused, exit 2, rather than ignored)."""

    table = "table"
    json = "json"


def _fail(exc: BaseException) -> typer.Exit:
    typer.echo(f"primbench history: error: {term_clean(exc)}", err=True)
    return typer.Exit(getattr(exc, "exit_code", EXIT_USAGE))


def _store_error(exc: BaseException) -> bool:
    """A DuckDB or OS error that got past the core: one line and exit 2, never a traceback."""
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb")


def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run one core function; a PrimbenchError (or a DuckDB or OS error) becomes a message
    and exit 2; the warnings it gives (e.g. a skipped Parquet part) are printed as lines."""
    import warnings

    from primbench.history.errors import HistoryWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", HistoryWarning)
            return fn(*args, **kwargs)
    except PrimbenchError as exc:
        raise _fail(exc) from None
    except Exception as exc:
        from primbench.signals import received

        if received() is not None:  # DuckDB's error for an interrupt raised inside it: the interrupt
            raise KeyboardInterrupt from None
        if not _store_error(exc):
            raise
        from primbench.history.errors import one_line

        raise _fail(PrimbenchError(one_line(exc))) from None
    finally:  # outside catch_warnings: the others are shown as Python would have
        for w in caught:
            if issubclass(w.category, HistoryWarning):
                typer.echo(f"primbench history: warning: {term_clean(w.message)}", err=True)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _fraction(text: str, option: str) -> float:
    """A fraction option of history: ``1%`` or ``0.01``, zero allowed."""
    return options.parse_fraction(text, option, allow_zero=True, example="0.01 or 1%")


def _json_frame(df: Any) -> str:
    return df.to_json(orient="records", date_format="iso", indent=2) + "\n"


COMMIT_CHARS = 10  # of a commit hash or run id in a table (JSON and CSV have them whole)


#: Columns that hold the followed metric's values: shown in its unit (`primbench.metrics`).
METRIC_VALUES = ("value", "before", "after")
#: Diagnostic columns: their registry unit, with these decimals.
DECIMALS = {"noise_percent": 3, "sm_clock_mhz": 0, "gpu_temp_start": 0, "gpu_temp_end": 0}


def _cell(value: Any, column: str) -> str:
    import math

    from primbench.metrics import METRICS

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if hasattr(value, "strftime"):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, str):  # commits and run ids shortened; values already in their unit (`_in_units`)
        short = column in ("commit", "latest_commit", "previous_commit", "end_commit", "run_id", "latest_run_id")
        return term_clean(value[:COMMIT_CHARS] if short else value)
    if column in METRICS and column in DECIMALS:
        return f"{float(value):.{DECIMALS[column]}f} {METRICS[column].unit}"
    if column in METRICS:
        return METRICS[column].format(float(value))
    if column in METRIC_VALUES:
        from primbench.console import si

        return si(float(value), "")
    if column in ("shift", "change"):
        return f"{float(value) * 100:+.2f} %"
    if column == "slope":
        return f"{float(value) * 100:+.3f} %/commit"
    if column == "confidence":
        from primbench.history.changepoints import confidence_text

        return confidence_text(float(value))
    if column in ("p_value", "q_value"):
        return f"{float(value):.2g}"
    return term_clean(value)


def _in_units(df: Any) -> Any:
    """`df` with the followed metric's values as text in each row's metric's unit
    (``1.00 TB/s``, ``4.83 µs``)."""
    import math

    from primbench.metrics import by_name

    if "metric" not in df.columns or df.empty:
        return df

    def text(value: Any, metric: Any) -> str | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return by_name(str(metric)).format(float(value))

    return df.assign(**{c: [text(v, m) for v, m in zip(df[c], df["metric"], strict=True)]
                        for c in METRIC_VALUES if c in df.columns})


def _metric_title(df: Any, metric: str | None) -> str:
    """The metric(s) a frame follows, by name, for a title."""
    if "metric" in df.columns and not df.empty:
        return ", ".join(sorted({str(m) for m in df["metric"]}))
    if metric is None:
        return "default metric"
    from primbench.metrics import by_name

    return by_name(metric).name


LIMIT_HELP = "Rows of a terminal table (default 50; piped output shows all unless given); 0: all."
LAST_HELP = "Only the newest N commits of the branch."
#: The newest commits `regressions`, `report` and `plot` analyse unless told otherwise (``--window`` /
#: ``--last``; 0: the whole history): about six weeks of a branch with a commit an hour. What it
#: buys: the commands read, search and draw a bounded number of commits per series whatever the
#: store's size (100,000 runs: tests/benchmarks/history_scale/README.md); what it costs: a shift
#: older than that is not found, and the first shift inside it is measured against the window's
#: start, not the older history.
WINDOW = 1000
WINDOW_HELP = (f"Analyse only the newest N commits of the branch (default {WINDOW:,}; 0: the whole history, "
               "which grows with the store).")
REPORT_LAST_HELP = (f"Only the newest N commits of the branch (default {WINDOW:,}; 0: the whole history, "
                    "which grows with the store).")
SINCE_HELP = "Only runs from this date on (ISO 8601, e.g. 2026-01-31)."


def _style(kind: object) -> str | None:
    """A verdict's style from the one table of verdicts (`primbench.compare.model.VERDICTS`);
    None for a change's direction (``up``, ``down``) and an unstyled verdict."""
    from primbench.compare.model import look

    entry = look(str(kind))
    return (entry.style or None) if entry is not None else None


def _with_gpu(df: Any) -> Any:
    """`df` with a ``gpu`` column: the model and a short id that tells two GPUs of one model apart."""
    if df.empty or "gpu_key" not in df.columns:
        return df.assign(gpu=df["gpu_name"] if "gpu_name" in df.columns else "")
    from primbench.history.labels import gpu_labels

    names = df["gpu_name"] if "gpu_name" in df.columns else [None] * len(df)
    labels = gpu_labels(zip(df["gpu_key"], names, strict=True))
    return df.assign(gpu=df["gpu_key"].astype(str).map(labels))


def csv_frame(df: Any) -> str:
    """`df` as CSV: every text cell through `csv_cell` (formula prefixes neutralised, numbers never),
    and every field holding a quote, a comma, ``\\n`` or ``\\r`` quoted (pandas alone leaves a
    ``\\r`` bare, which breaks the row for most readers)."""
    import csv

    text = df.copy()
    for col in text.columns:
        if text[col].dtype == object or str(text[col].dtype) in ("string", "str"):
            text[col] = text[col].map(lambda v: csv_cell(v) if isinstance(v, str) else v)
    return str(text.to_csv(index=False, date_format="%Y-%m-%dT%H:%M:%S%z", lineterminator="\r\n",
                           quoting=csv.QUOTE_MINIMAL)).replace("\r\n", "\n")


def _emit(df: Any, fmt: Format, columns: Sequence[tables.Column], title: str | None = None, *,
          limit: int | None = None, newest_last: bool = False) -> list[str]:
    """JSON and CSV: every column of `df`. A table: `columns`, fitted (see `tables`)."""
    if fmt is Format.json:
        typer.echo(_json_frame(df), nl=False)
        return []
    if fmt is Format.csv:
        typer.echo(csv_frame(df), nl=False)
        return []
    df = _in_units(_with_gpu(df))
    if newest_last and "date" in df.columns:
        df = df.sort_values("date", kind="stable")
    cols = [_keep_if_varied(c, df) for c in columns if c.key in df.columns]
    rows = list(df[[c.key for c in cols]].itertuples(index=False, name=None))
    styles = None
    if "kind" in df.columns or "verdict" in df.columns:
        kinds = df["kind"] if "kind" in df.columns else df["verdict"]
        styles = [_style(k) for k in kinds]
    return tables.render(rows, cols, _cell, title=title, limit=limit, newest_last=newest_last, styles=styles)


#: Columns that tell two series apart: never left out of a table whose rows differ in them.
SERIES_COLUMNS_KEYS = ("algorithm", "name", "gpu", "config_key", "branch")


def _keep_if_varied(column: tables.Column, df: Any) -> tables.Column:
    if column.key in SERIES_COLUMNS_KEYS and column.priority and df[column.key].nunique(dropna=False) > 1:
        return tables.Column(column.key, column.header, 0, column.right, column.wrap)
    return column


C = tables.Column
RUNS_COLUMNS = [C("date", "date", 1), C("branch", "branch", 0, wrap=True), C("commit", "commit"),
                C("algorithm", "algorithm", 2), C("gpu", "gpu", 1), C("config_key", "config", 1, wrap=True),
                C("host", "host", 5), C("specializations", "specs", 3, right=True),
                C("failures", "failed", 3, right=True), C("noise_timeouts", "timeouts", 4, right=True),
                C("run_id", "run_id", 6), C("date_flag", "date flag", 2, wrap=True)]
SERIES_COLUMNS = [C("date", "date", 1), C("commit", "commit"), C("gpu", "gpu", 2), C("config_key", "config", 1),
                  C("algorithm", "algorithm", 3), C("value", "value", right=True),
                  C("noise_percent", "noise", 1, right=True), C("runs", "runs", 2, right=True),
                  C("host", "host", 5), C("gpu_temp_start", "temp", 6, right=True),
                  C("sm_clock_mhz", "clock", 4, right=True)]
BRANCHES_COLUMNS = [C("branch", "branch", 0, wrap=True), C("algorithm", "algorithm", 1), C("gpu", "gpu"),
                    C("config_key", "config", 0, wrap=True), C("runs", "runs", 2, right=True),
                    C("commits", "commits", 2, right=True), C("latest_date", "latest", 1),
                    C("latest_commit", "commit", 3), C("latest_host", "host", 4)]
REGRESSION_COLUMNS = [C("algorithm", "algorithm", 2), C("name", "name", 0, wrap=True), C("gpu", "gpu", 2),
                      C("config_key", "config", 1, wrap=True), C("kind", "kind"), C("shape", "shape", 3),
                      C("commit", "commit"), C("end_commit", "end", 5), C("date", "date", 4),
                      C("before", "before", 3, right=True), C("after", "after", 3, right=True),
                      C("shift", "shift", 0, right=True), C("slope", "slope", 5, right=True),
                      C("confidence", "confidence", 1, right=True)]


def _selector(**given: Any) -> Any:
    """The filters as one `Selector`; a date it cannot read is a one-line error, exit 2."""
    from primbench.history.selector import Selector

    return _call(Selector, **given)


@contextmanager
def _progress(what: str) -> Iterator[Callable[[int, int], None] | None]:
    """A Rich progress bar on stderr while long work runs, only when stderr is a terminal (not
    merely forced colour: a CI log gets no bar); yields the callback the core calls with
    (done, total), or None."""
    from primbench.console import make_console

    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        yield None
        return
    console = make_console(stderr=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _commands() -> Any:
    from primbench.history import commands

    return commands


def ingest(
    paths: list[Path] = typer.Argument(..., metavar="FILES|DIRS",
                                      help="results files (primbench or C++ results.json, C++ CSV, NVBench, "
                                           "Google Benchmark or pytest-benchmark JSON), or directories searched "
                                           "for *.json and *.csv."),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    shared: Path | None = typer.Option(None, "--shared", metavar="DIR",
                                       help="Write Parquet parts into DIR instead (many runners, no lock)."),
    runner: str | None = typer.Option(None, "--runner", help="Part-folder name for --shared (default: host)."),
    wait_secs: float | None = typer.Option(None, "--wait-secs", help=WAIT_HELP),
    fmt: LineFormat = typer.Option(LineFormat.table, "--format", "-f", help="table (one line) or json."),
    branch: str | None = typer.Option(None, "--branch", metavar="B",
                                      help="Store every file's runs under branch B (a detached or branch-less "
                                           "file's, e.g. a C++ build's DETACHED)."),
    commit: str | None = typer.Option(None, "--commit", metavar="C",
                                      help="Store every file's runs under commit C (short or full hash)."),
) -> None:
    """Store results files (idempotent: a run already stored is skipped). Bad files are named
    and store nothing; the good ones are stored; the exit code is then 2. A progress bar on
    stderr while the files are read (on a terminal). A short hash and the full hash of one
    commit are one commit."""
    if shared is not None and db is not None:
        raise typer.BadParameter("give --db or --shared, not both", param_hint="--shared")
    with _progress("reading results files") as progress:
        report = _call(_commands().ingest, paths, db=db, shared=shared, runner=runner, wait_secs=wait_secs,
                       progress=progress, branch=branch, commit=commit)
    for o in report.errors:
        message = o.message if o.message and o.path in o.message else f"{o.path}: {o.message}"
        typer.echo(f"primbench history: error: {term_clean(message)}", err=True)
    if fmt is LineFormat.json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        from primbench.console import make_console

        specs = sum(o.specializations for o in report.stored)
        make_console(sys.stderr if report.errors else None).print(
            f"{len(report.stored)} run(s) stored ({specs} specializations), {len(report.duplicates)} already "
            f"stored, {len(report.errors)} bad file(s) -> {term_clean(report.target)}", markup=False)
    raise typer.Exit(EXIT_USAGE if report.errors else EXIT_OK)


def runs(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    branch: str | None = typer.Option(None, "--branch", "-b", help="Only runs of this branch."),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    since: str | None = typer.Option(None, "--since", help="ISO date, e.g. 2026-01-31."),
    until: str | None = typer.Option(None, "--until", help="ISO date."),
    limit: int | None = typer.Option(50, "--limit", "-n", help="Newest N runs (0: all)."),
    config: str | None = typer.Option(None, "--config", metavar="KEY", help=CONFIG_HELP),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help=TABLE_HELP),
) -> None:
    """List stored runs, newest first."""
    sel = _selector(branch=branch, gpu=gpu, algorithm=algorithm, config=config, since=since, until=until)
    df = _call(_commands().runs, db, sel, limit=limit or None)
    _emit(df, fmt, RUNS_COLUMNS, title=f"{len(df)} run(s)", limit=0)
    if fmt is Format.table and limit and len(df) == limit:
        typer.echo(f"note: the newest {limit} runs; --limit N shows N, --limit 0 all")


def series(
    name: str = typer.Argument(..., metavar="NAME", help="Specialization name, e.g. 'type: char'."),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    branch: str = typer.Option("main", "--branch", "-b", help=SERIES_BRANCH_HELP),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    metric: str | None = typer.Option(None, "--metric", "-m", help=METRIC_HELP),
    config: str | None = typer.Option(None, "--config", metavar="KEY", help=CONFIG_HELP),
    last: int | None = typer.Option(None, "--last", min=1, help=LAST_HELP),
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
    per_run: bool = typer.Option(False, "--per-run", help="One row per run instead of per commit."),
    use_git: bool = typer.Option(True, "--git/--no-git", help=ORDER_HELP),
    limit: int | None = typer.Option(None, "--limit", "-n", min=0, help=LIMIT_HELP),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help=TABLE_HELP),
) -> None:
    """A specialization's values across the commits of a branch (median of each commit's runs);
    one series per GPU and config (the settings that change results), never mixed. A terminal
    table shows the newest 50 rows (--limit)."""
    sel = _selector(branch=branch, name=name, algorithm=algorithm, gpu=gpu, config=config, since=since)
    df = _call(_commands().series, db, sel, metric=metric, last=last, per_run=per_run, use_git=use_git)
    _emit(df, fmt, SERIES_COLUMNS, title=f"{name} on {branch}: {_metric_title(df, metric)}", limit=limit,
          newest_last=True)


def branches(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    config: str | None = typer.Option(None, "--config", metavar="KEY", help=CONFIG_HELP),
    limit: int | None = typer.Option(None, "--limit", "-n", min=0, help=LIMIT_HELP),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help=TABLE_HELP),
) -> None:
    """Branches (per algorithm, GPU and config) with their latest run; the gpu column tells two
    GPUs of one model apart (a short uuid that --gpu accepts)."""
    df = _call(_commands().branches, db, _selector(gpu=gpu, algorithm=algorithm, config=config))
    _emit(df, fmt, BRANCHES_COLUMNS, title="branches", limit=limit)


def compare(
    branch: str = typer.Argument(..., metavar="BRANCH", help="The branch whose latest run is the head."),
    base: str = typer.Option("main", "--base", help=BASE_HELP),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    fork_point: str | None = typer.Option(None, "--fork-point", metavar="SHA",
                                          help="Commit where BRANCH left BASE (default: git merge-base, if here)."),
    use_git: bool = typer.Option(True, "--git/--no-git", help=GIT_HELP),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    config: str | None = typer.Option(None, "--config", metavar="KEY",
                                      help="Head: BRANCH's latest run of this config key (default: latest)."),
    threshold: str = typer.Option("0.3%", "--threshold", "-t", help=options.THRESHOLD_HELP),
    alpha: float = typer.Option(0.05, "--alpha", help=options.ALPHA_HELP),
    fail_on: str = typer.Option("regression", "--fail-on", metavar="WHAT[,WHAT]", help=options.FAIL_ON_HELP),
    fmt: str = typer.Option("terminal", "--format", "-f", help=options.FORMAT_HELP),
    changed_only: bool = typer.Option(False, "--changed-only", help=options.CHANGED_ONLY_HELP),
    metric: options.MetricChoice | None = typer.Option(None, "--metric", "-m", help=options.METRIC_HELP,
                                                       show_default=False),
) -> None:
    """BRANCH's latest run against BASE at (or before) the fork point, else BASE's latest, with the
    head's config (the settings that change results); verdicts from compare's statistics with
    run-to-run variability from BASE's history."""
    if fmt not in ("terminal", "markdown", "json"):
        raise typer.BadParameter("choose terminal, markdown or json", param_hint="--format")
    fail_when = options.parse_fail_on(fail_on)
    options.check_probability(alpha, "--alpha")
    fraction = _fraction(threshold, "--threshold")
    head = _selector(branch=branch, gpu=gpu, algorithm=algorithm, config=config)
    bc = _call(_commands().compare, db, head, base=base, fork_point=fork_point, use_git=use_git,
               threshold=fraction, alpha=alpha, metric=metric.value if metric is not None else None)
    from primbench.compare import render

    h = bc.header()
    configs = h["config_key"] if h["config_key"] == h["base_config_key"] else (
        f"{h['config_key']} vs {h['base_config_key']}")
    line = (f"{branch} @ {(h['head_commit'] or '?')[:12]} vs {base} @ {(h['base_commit'] or '?')[:12]} "
            f"({h['base_selection']}); config {configs}; run-to-run variability from history: {h['run_to_run']}")
    if fmt == "json":
        for n in h["notes"]:
            typer.echo(f"primbench history: warning: {term_clean(n)}", err=True)
        typer.echo(json.dumps(bc.to_dict(), indent=2, default=str))
    elif fmt == "markdown":
        typer.echo(f"**{md_escape(line)}**\n")
        typer.echo(render.render_markdown(bc.comparison, changed_only=changed_only, notes=h["notes"]), nl=False)
    else:
        from primbench.console import make_console

        console = make_console()
        console.print(term_clean(line), markup=False)
        for n in h["notes"]:
            console.print(f"warning: {term_clean(n)}", style="yellow", markup=False)
        render.render_terminal(bc.comparison, console, changed_only=changed_only)
    raise typer.Exit(EXIT_FAILED if bc.comparison.failed(fail_when) else EXIT_OK)


def regressions(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    branch: str = typer.Option("main", "--branch", "-b", help=SERIES_BRANCH_HELP),
    name: str | None = typer.Option(None, "--name", help="One specialization only."),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    metric: str | None = typer.Option(None, "--metric", "-m", help=METRIC_HELP),
    alpha: float = typer.Option(0.001, "--alpha", help="False change points per shift-free series."),
    min_shift: str = typer.Option("0.5%", "--min-shift", help="Smallest shift of level reported."),
    min_size: int = typer.Option(3, "--min-size", help="Commits needed on each side of a shift."),
    last: int | None = typer.Option(None, "--last", help="Only shifts among the newest N commits."),
    window: int = typer.Option(WINDOW, "--window", min=0, help=WINDOW_HELP),
    config: str | None = typer.Option(None, "--config", metavar="KEY", help=CONFIG_HELP),
    max_points: int = typer.Option(20, "--max-points", min=1,
                                   help="Stop searching a series after this many change points (noted)."),
    fail_on: str = typer.Option("never", "--fail-on", metavar="WHAT",
                                help="Exit 1 on: a regression; any shift (change); never (default)."),
    use_git: bool = typer.Option(True, "--git/--no-git", help=ORDER_HELP),
    limit: int | None = typer.Option(None, "--limit", "-n", min=0, help=LIMIT_HELP),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help=TABLE_HELP),
) -> None:
    """Change points per series on a branch (specialization, GPU and config): the commit where the
    level shifted (shape step) or the commits over which it drifted (shape drift: previous_commit
    to end_commit, slope per commit), the size of the change and its confidence; a burst of 2-3 bad
    runs that came back is listed as kind outlier, shape burst (no change, never a failure)."""
    from primbench.history.trends import OUTLIER, cap_notes

    fail_when = options.parse_fail_on(fail_on, allowed=("regression", "change", "never"))
    sel = _selector(branch=branch, name=name, algorithm=algorithm, gpu=gpu, config=config)
    df = _call(_commands().regressions, db, sel, metric=metric, alpha=alpha,
               min_shift=_fraction(min_shift, "--min-shift"), min_size=min_size, last=last, max_points=max_points,
               use_git=use_git, window=window or None)
    bursts = int((df["kind"] == OUTLIER).sum()) if not df.empty else 0
    title = f"{len(df) - bursts} change point(s) on {branch}" + (f", {bursts} outlier burst(s)" if bursts else "")
    _emit(df, fmt, REGRESSION_COLUMNS, title=title, limit=limit)
    if fmt is Format.table:
        for note in cap_notes(df, max_points):
            typer.echo(f"note: {note}")
    kinds = set(df["kind"]) - {OUTLIER} if not df.empty else set()  # a burst of bad runs is no change
    failed = ("regression" in fail_when and "regression" in kinds) or ("change" in fail_when and bool(kinds))
    raise typer.Exit(EXIT_FAILED if failed else EXIT_OK)


def plot(
    name: str | None = typer.Argument(None, metavar="[NAME]", help="Specialization (default: all of them)."),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    out: Path = typer.Option(Path("history-plots"), "--out", "-o",
                             help="A .png file (with NAME), or a folder for one PNG per specialization."),
    branch: str = typer.Option("main", "--branch", "-b", help=SERIES_BRANCH_HELP),
    algorithm: str | None = typer.Option(None, "--algorithm", "-a", help=ALGORITHM_HELP),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    metric: str | None = typer.Option(None, "--metric", "-m", help=METRIC_HELP),
    config: str | None = typer.Option(None, "--config", metavar="KEY", help=CONFIG_HELP),
    last: int = typer.Option(WINDOW, "--last", min=0, help=REPORT_LAST_HELP),
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
) -> None:
    """Trend charts (PNG): runs, per-commit medians, noise, change points. One chart per
    specialization, config and GPU model (1 MiB and 128 MiB never share an axis; a second
    chart is written beside the first, its config in the file name); one line per GPU."""
    sel = _selector(branch=branch, name=name, algorithm=algorithm, gpu=gpu, config=config, since=since)
    with _progress("drawing charts") as progress:
        written = _call(_commands().plot, db, sel, out=out, metric=metric, last=last or None, progress=progress)
    for p in written:
        typer.echo(f"Wrote {term_clean(p)}")


def report(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    branch: str = typer.Option("main", "--branch", "-b", help="The branch reported on."),
    base: str = typer.Option("main", "--base", help="The branch its latest run is compared against."),
    out: Path = typer.Option(Path("history-report.html"), "--out", "-o", help="The HTML file to write."),
    gpu: str | None = typer.Option(None, "--gpu", help=GPU_HELP),
    metric: str | None = typer.Option(None, "--metric", "-m", help=METRIC_HELP),
    use_git: bool = typer.Option(True, "--git/--no-git", help=GIT_HELP),
    last: int = typer.Option(WINDOW, "--last", min=0, help=REPORT_LAST_HELP),
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
    max_charts: int = typer.Option(40, "--max-charts", min=0,
                                   help="Charts drawn, the most interesting first (the rest are listed)."),
) -> None:
    """A static HTML report for a branch: a summary of change points and verdicts across every
    algorithm and config, each linked to its chart; then the charts, the most interesting
    first."""
    from primbench.atomicfile import unwritable_reason

    if why := unwritable_reason(out):
        typer.echo(f"primbench history report: error: --out {term_clean(out)}: cannot write there ({why})",
                   err=True)
        raise typer.Exit(EXIT_USAGE)
    sel = _selector(branch=branch, gpu=gpu, since=since)
    with _progress("drawing the report") as progress:
        done = _call(_commands().report, db, sel, out=out, base=base, metric=metric, use_git=use_git, last=last or None,
                     max_charts=max_charts, progress=progress)
    typer.echo(f"Wrote {term_clean(done.path)} ({done.charts} charts, {done.change_points} change points)")


def merge(
    source: str = typer.Argument(..., metavar="DIR", help="Parquet parts written by ingest --shared (or any store)."),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    wait_secs: float | None = typer.Option(None, "--wait-secs", help=WAIT_HELP),
) -> None:
    """Add the runs of a shared Parquet history to a DuckDB store (idempotent)."""
    done = _call(_commands().merge, source, db=db, wait_secs=wait_secs)
    typer.echo(f"{done.added_runs} run(s) added from {done.source} to {done.target}")


def quarantine(
    source: Path = typer.Argument(..., metavar="DIR", help="A shared Parquet history (ingest --shared)."),
    max_age_secs: float = typer.Option(3600.0, "--max-age-secs",
                                       help="Temporaries and orphan parts older than this are left by dead "
                                            "writers."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be done; change nothing."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table (lines) or json."),
) -> None:
    """Move unreadable and orphan Parquet parts into DIR/quarantine/ (readers skip them with a
    warning until then) and delete temporaries left by writers that died."""
    done = _call(_commands().quarantine, source, max_age_secs=max_age_secs, dry_run=dry_run)
    if fmt is Format.json:
        typer.echo(json.dumps(done.to_dict(), indent=2))
        return
    verb = "would move" if dry_run else "moved"
    for part, to, why in done.moved:
        typer.echo(term_clean(f"{verb} {part} -> {to} ({why})"))
    for tmp in done.removed:
        typer.echo(term_clean(f"removed stale temporary {tmp}"))
    typer.echo(f"{len(done.moved)} part(s) {verb} to quarantine, {len(done.removed)} temporary file(s) "
               "removed")


def migrate(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    wait_secs: float | None = typer.Option(None, "--wait-secs", help=WAIT_HELP),
) -> None:
    """Bring a store to this primbench's schema version."""
    applied = _call(_commands().migrate, db, wait_secs=wait_secs)
    typer.echo(f"applied migrations: {', '.join(map(str, applied))}" if applied else "store is up to date")


def info(
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    fmt: LineFormat = typer.Option(LineFormat.table, "--format", "-f", help="table (key: value lines) or json."),
) -> None:
    """The store's path, schema version, migrations and row counts."""
    found = _call(_commands().info, db)
    if fmt is LineFormat.json:
        typer.echo(json.dumps(found, indent=2, default=str))
    else:
        for key, value in found.items():
            typer.echo(term_clean(f"{key}: {value}"))


def export(
    parquet: Path = typer.Option(..., "--parquet", metavar="DIR",
                                 help="Folder to write runs.parquet, specializations.parquet, batches.parquet "
                                      "and schema_migrations.parquet into."),
    documents: bool = typer.Option(False, "--documents",
                                   help="Also write the results documents: documents.parquet (run_id, codec, "
                                        "body: compressed as the store keeps them, readable by primbench only; "
                                        "most of an export's size and time), or, from a Parquet folder or a "
                                        "server, runs.parquet's document column (JSON text). Without it they "
                                        "are left out."),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    fmt: LineFormat = typer.Option(LineFormat.table, "--format", "-f", help="table (lines) or json."),
) -> None:
    """Write every table of a store (a DuckDB file or a folder of Parquet parts) as Parquet
    files: readable by any DuckDB (1.x too), pandas, Polars, Spark. The results documents only
    with --documents.

    A first export writes each table as DIR/<table>.parquet. Run again into the same DIR, it
    writes only the runs added to the store since (with their specializations, batches and,
    with --documents, documents), as new parts DIR/<table>.<sequence>.parquet, and nothing when
    none was added: read a table whole as DIR/<table>*.parquet (in DuckDB:
    read_parquet('DIR/runs*.parquet')). No part already written is rewritten; the parts are
    renamed into place once all are written, and DIR/primbench-export.json, which lists them,
    last: a failure leaves the earlier export as it was. DIR is written afresh (every table,
    the earlier parts removed) when it holds no export of this store, or the store has changed
    otherwise since: a migration, runs removed or their commits renamed, or --documents given
    where the earlier export had none (or the reverse)."""
    written = _call(_commands().export, db, parquet, documents=documents)
    if fmt is LineFormat.json:
        typer.echo(json.dumps({t: {"path": str(p), "rows": n} for t, (p, n) in written.items()}, indent=2))
        return
    if written.incremental and not written:
        typer.echo(term_clean(f"{parquet} is up to date: no run was added to the store since its export."))
    elif written.incremental:
        n = written.added_runs
        typer.echo(term_clean(f"Added {n} new run{'' if n == 1 else 's'} since the export in {parquet}:"))
    for table, (path, rows) in written.items():
        typer.echo(term_clean(f"Wrote {path} ({rows} rows of {table})"))
    if not documents:
        typer.echo("The results documents were not written (compressed, readable by primbench only): "
                   "--documents writes them.")
        stale = parquet / "documents.parquet"
        if stale.exists():
            typer.echo(term_clean(f"{stale} is an earlier export's, left as it was (not this store's "
                                  "documents now): --documents rewrites it."))


#: The ``history`` group's commands, in the order ``--help`` lists them.
COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("ingest", ingest), ("runs", runs), ("series", series), ("branches", branches), ("compare", compare),
    ("regressions", regressions), ("plot", plot), ("report", report), ("merge", merge),
    ("quarantine", quarantine), ("migrate", migrate), ("info", info), ("export", export),
)


def register(app: typer.Typer) -> None:
    """Add the ``history`` group and its commands to `app`."""
    history = typer.Typer(
        name="history",
        help="Results across commits and branches, in an embedded DuckDB store.",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    for name, command in COMMANDS:
        history.command(name)(command)
    app.add_typer(history, name="history")
