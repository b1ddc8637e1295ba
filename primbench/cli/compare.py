"""``primbench compare BASE HEAD``: regression verdicts between two sets of results.

Thin: parse options, call `compare.core.compare_runs`, render. The analysis modules (and
SciPy) are imported only when the command runs.
"""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from primbench.atomicfile import unwritable_reason, write_output
from primbench.cli.options import (
    ALPHA_HELP,
    CHANGED_ONLY_HELP,
    FAIL_ON_HELP,
    FORMAT_HELP,
    MAX_ROWS_HELP,
    METRIC_HELP,
    THRESHOLD_HELP,
    MetricChoice,
    PlainOptionsCommand,
    check_probability,
    parse_fail_on,
    parse_fraction,
)
from primbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, PrimbenchError
from primbench.textsafe import term_clean

if TYPE_CHECKING:
    from primbench.compare.model import Comparison


class Format(StrEnum):
    terminal = "terminal"
    markdown = "markdown"
    json = "json"




def register(app: typer.Typer) -> None:
    @app.command("compare", cls=PlainOptionsCommand)
    def compare(
        paths: list[Path] = typer.Argument(
            ..., metavar="BASE... [--] HEAD...",
            help="Results files (primbench or C++ results.json, C++ CSV, NVBench, Google Benchmark or "
            "pytest-benchmark JSON) or directories: BASE HEAD, or several repeats per side separated by "
            "--: BASE1 BASE2 -- HEAD1 HEAD2 (options go before --). A specialization found in several "
            "files of a side is a repeat: all its rounds are pooled, each file a run (a --processes file's "
            "workers share its run). - reads one side from standard input."),
        threshold: str = typer.Option("0.3%", "--threshold", "-t", help=THRESHOLD_HELP),
        alpha: float = typer.Option(0.05, "--alpha", help=ALPHA_HELP),
        output_format: Format = typer.Option(Format.terminal, "--format", "-f", help=FORMAT_HELP),
        metric: MetricChoice | None = typer.Option(None, "--metric", "-m", help=METRIC_HELP, show_default=False),
        fail_on: str = typer.Option("regression", "--fail-on", metavar="WHAT[,WHAT]", help=FAIL_ON_HELP),
        changed_only: bool = typer.Option(False, "--changed-only", help=CHANGED_ONLY_HELP),
        max_rows: int | None = typer.Option(None, "--max-rows", min=0, metavar="N", help=MAX_ROWS_HELP),
        suite_shift_limit: str = typer.Option(
            "1%", "--suite-shift-limit",
            help="A suite-wide shift (the change most of the suite's rows share) is tested against what A/A suites "
            "share; a significant one beyond this fraction counts as a regression or improvement for the exit "
            "code, and the specializations that moved with it are judged on their own change (0% every "
            "significant one; 100% never)"),
        max_detectable: str = typer.Option(
            "5%", "--max-detectable", metavar="FRACTION",
            help="A specialization whose runs could not have detected a change under this (its smallest detectable "
            "change, at 80% power) is inconclusive, and counted in a warning; with --fail-on inconclusive it fails"),
        allow_mismatch: bool = typer.Option(
            False, "--allow-mismatch",
            help="Compare sides that measure different things (size, custom settings, GPU model, timer, metric, "
            "hot/cold) instead of exiting 2: every such row is marked 'not comparable' and gets no verdict"),
        markdown_out: str | None = typer.Option(
            None, "--markdown", metavar="FILE",
            help="Also write the markdown (a pull-request comment: a hidden marker, the verdict counts, the worst "
            "rows, the table) to FILE; - is standard output (instead of --format's)"),
        json_out: str | None = typer.Option(
            None, "--json", metavar="FILE",
            help="Also write the JSON (every row with its reason) to FILE; - is standard output (instead of "
            "--format's)"),
        strict_environment: bool = typer.Option(
            False, "--strict-environment",
            help="Treat another physical GPU of the same model, or another driver, as not comparable too "
            "(by default a warning)"),
    ) -> None:
        """Compare two runs: per specialization regression / improvement / unchanged / inconclusive
        / added / removed, with a CI exit code (0 none, 1 regression or what --fail-on names, 2 usage, bad
        input or unwritable output, 3 internal error). A verdict that needs a reason shows it ("why")."""
        _one_blas_thread()
        fail_when = parse_fail_on(fail_on)
        files = {"--markdown": markdown_out, "--json": json_out}
        _check_files(files)
        fraction = parse_fraction(threshold, "--threshold")
        limit = parse_fraction(suite_shift_limit, "--suite-shift-limit", allow_zero=True, allow_one=True)
        detectable = parse_fraction(max_detectable, "--max-detectable", allow_one=True)
        check_probability(alpha, "--alpha")
        base, head = _split_sides([str(p) for p in paths])
        if [*base, *head].count("-") > 1:
            typer.echo("primbench compare: error: only one side can be - (standard input)", err=True)
            raise typer.Exit(EXIT_USAGE)
        notes: list[str] = []
        from primbench.results import cyclic_gc_paused

        # The cyclic collector paused for the whole command, not only within loading and comparing:
        # rendering allocates enough to start full collections, each walking the millions of objects
        # of both sides (0.3 s of 100,000 specializations' terminal table); none of them is in a cycle.
        with cyclic_gc_paused():
            try:
                from primbench.compare.core import compare_runs, load_side

                base_runs = [r for p in base for r in load_side(p, notes)]
                head_runs = [r for p in head for r in load_side(p, notes)]
                comparison = compare_runs(base_runs, head_runs, threshold=fraction, alpha=alpha,
                                          suite_shift_limit=limit,
                                          metric=metric.value if metric is not None else None,
                                          max_detectable=detectable,
                                          allow_mismatch=allow_mismatch, strict_environment=strict_environment)
                # where the process ends after the command: not freed object by object
                keep_until_exit(base_runs, head_runs)
                del base_runs, head_runs
            except PrimbenchError as exc:
                typer.echo(f"primbench compare: error: {term_clean(exc)}", err=True)
                raise typer.Exit(getattr(exc, "exit_code", EXIT_USAGE)) from None
            view = _View(changed_only, max_rows, notes)
            _write_files(comparison, markdown_out, json_out, view)
            _show(comparison, output_format, "-" in files.values(), view)
            failed = comparison.failed(fail_when)
            if keep_until_exit(comparison):
                # and the collector, resumed when this block ends, would walk every object of both
                # sides and the rows once more (0.15-0.2 s at 100,000 specializations): not them
                gc.freeze()
        raise typer.Exit(EXIT_FAILED if failed else EXIT_OK)


#: Whether the process ends as soon as the command returns: `primbench.cli.main` called as the
#: program sets it (`primbench.cli._called_as_program`); CliRunner and a test calling `main` do not.
exit_follows = False
#: What the command left to the end of the process (`keep_until_exit`).
left_to_exit: list[Any] = []


#: The thread-count variables of the BLAS libraries numpy may load.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread() -> None:
    """One BLAS thread for compare, unless the user chose: its arrays are long vectors and small
    matrices, on which BLAS threads only spin (a third of the CPU time of 10,000 specializations,
    the same bytes out: `tests/benchmarks/compare_scale/run-s7-quiet-merged.txt`). Only before numpy
    is loaded: its BLAS reads these once, at load (in-process callers keep theirs)."""
    if "numpy" in sys.modules:
        return
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")


def keep_until_exit(*objects: Any) -> bool:
    """Leave `objects` to the end of the process instead of freeing them one by one when the
    command returns, where the process ends right after it (`exit_follows`): `primbench.cli.main`
    then ends it without tearing them down (`primbench.cli._end_process`; 100,000 specializations'
    comparison takes 0.5 s to free). Anywhere else nothing is kept: the objects are freed as
    usual. Whether they were kept."""
    if exit_follows:
        left_to_exit.extend(objects)
    return exit_follows


@dataclass(frozen=True)
class _View:
    """What the renderings show: only the changed rows, at most how many, the notes of the loading."""

    changed_only: bool
    max_rows: int | None
    notes: list[str]


def _check_files(files: dict[str, str | None]) -> None:
    """--markdown and --json: at most one is standard output, each can be written (else exit 2 now)."""
    if sum(1 for f in files.values() if f == "-") > 1:
        typer.echo("primbench compare: error: only one of --markdown and --json can be - (standard output)",
                   err=True)
        raise typer.Exit(EXIT_USAGE)
    for option, target in files.items():
        if target and target != "-" and (why := unwritable_reason(target)):
            typer.echo(f"primbench compare: error: {option} {term_clean(target)}: cannot write there ({why})",
                       err=True)
            raise typer.Exit(EXIT_USAGE)


def _write_files(comparison: Comparison, markdown_out: str | None, json_out: str | None, view: _View) -> None:
    """The --markdown and --json outputs (exit 2 with one line where one cannot be written)."""
    from primbench.compare import render

    try:
        if markdown_out:
            write_output(markdown_out, render.render_markdown(comparison, changed_only=view.changed_only,
                                                              max_rows=view.max_rows, notes=view.notes))
        if json_out:
            write_output(json_out, render.render_json(comparison))
    except OSError as exc:
        typer.echo(f"primbench compare: error: cannot write the output ({term_clean(exc.strerror or exc)})",
                   err=True)
        raise typer.Exit(EXIT_USAGE) from None


def _show(comparison: Comparison, output_format: Format, stdout_taken: bool, view: _View) -> None:
    """--format's rendering on standard output, unless --markdown - or --json - took it (the notes and
    warnings then go to stderr, as with --format json)."""
    from primbench.compare import render

    if stdout_taken or output_format is Format.json:
        for n in view.notes:
            typer.echo(f"primbench compare: note: {term_clean(n)}", err=True)
        for w in comparison.warnings:
            typer.echo(f"primbench compare: warning: {term_clean(w)}", err=True)
    if stdout_taken:
        return
    if output_format is Format.json:
        for chunk in render.json_chunks(comparison):  # 100,000 rows: never all in memory as text
            typer.echo(chunk, nl=False)
    elif output_format is Format.markdown:
        typer.echo(render.render_markdown(comparison, changed_only=view.changed_only, max_rows=view.max_rows,
                                          notes=view.notes), nl=False)
    else:
        from primbench.console import make_console

        render.render_terminal(comparison, make_console(), changed_only=view.changed_only, notes=view.notes,
                               max_rows=render.TERMINAL_ROWS if view.max_rows is None else view.max_rows)


#: What `primbench.cli.main` turns the ``--`` between the sides into (Click swallows ``--``).
SIDE_SEPARATOR = "::"


def separate_sides(argv: list[str]) -> list[str]:
    """``compare A B -- C D`` -> ``compare A B :: C D``: keep the separator past Click's parser."""
    if "compare" in argv and "--" in argv[argv.index("compare"):]:
        at = argv.index("--", argv.index("compare"))
        return [*argv[:at], SIDE_SEPARATOR, *argv[at + 1:]]
    return argv


def _split_sides(paths: list[str]) -> tuple[list[str], list[str]]:
    """BASE HEAD, or BASE... -- HEAD... (arriving as BASE... :: HEAD...)."""
    if SIDE_SEPARATOR in paths:
        at = paths.index(SIDE_SEPARATOR)
        base, head = paths[:at], paths[at + 1:]
        if base and head and SIDE_SEPARATOR not in head:
            return base, head
    elif len(paths) == 2:
        return paths[:1], paths[1:]
    typer.echo("primbench compare: error: give BASE HEAD, or several files per side as BASE1 BASE2 -- HEAD1 HEAD2 "
               f"(got {len(paths)} path(s))", err=True)
    raise typer.Exit(EXIT_USAGE)
