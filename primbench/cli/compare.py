"""``primbench compare BASE HEAD``: regression verdicts between two sets of results.

Thin: parse options, call `compare.core.compare_runs`, render. The analysis modules (and
SciPy) are imported only when the command runs.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from compare.model import FailOn
from primbench.cli.options import (
    ALPHA_HELP,
    CHANGED_ONLY_HELP,
    FAIL_ON_HELP,
    FORMAT_HELP,
    THRESHOLD_HELP,
    check_probability,
    parse_fraction,
)
from primbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, PrimbenchError
from primbench.textsafe import term_clean


class Format(StrEnum):
    terminal = "terminal"
    markdown = "markdown"
    json = "json"


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare(
        base: Path = typer.Argument(..., metavar="BASE", help="Base results: a results.json or a directory of them."),
        head: Path = typer.Argument(..., metavar="HEAD", help="Head results: a results.json or a directory of them."),
        threshold: str = typer.Option("0.5%", "--threshold", "-t", help=THRESHOLD_HELP),
        alpha: float = typer.Option(0.05, "--alpha", help=ALPHA_HELP),
        output_format: Format = typer.Option(Format.terminal, "--format", "-f", help=FORMAT_HELP),
        fail_on: FailOn = typer.Option(FailOn.REGRESSION, "--fail-on", help=FAIL_ON_HELP),
        changed_only: bool = typer.Option(False, "--changed-only", help=CHANGED_ONLY_HELP),
    ) -> None:
        """Compare two runs: per specialization regression / improvement / unchanged / inconclusive
        / added / removed, with a CI exit code (0 none, 1 regression, 2 usage or bad input)."""
        fraction = parse_fraction(threshold, "--threshold")
        check_probability(alpha, "--alpha")
        try:
            from compare.core import compare_runs, load_side

            comparison = compare_runs(load_side(base), load_side(head), threshold=fraction, alpha=alpha)
        except PrimbenchError as exc:
            typer.echo(f"primbench compare: error: {term_clean(exc)}", err=True)
            raise typer.Exit(getattr(exc, "exit_code", EXIT_USAGE)) from None

        from compare import render

        if output_format is Format.json:
            for w in comparison.warnings:
                typer.echo(f"primbench compare: warning: {term_clean(w)}", err=True)
            typer.echo(render.render_json(comparison), nl=False)
        elif output_format is Format.markdown:
            typer.echo(render.render_markdown(comparison, changed_only=changed_only), nl=False)
        else:
            from primbench.console import make_console

            render.render_terminal(comparison, make_console(), changed_only=changed_only)
        raise typer.Exit(EXIT_FAILED if comparison.failed(fail_on) else EXIT_OK)
