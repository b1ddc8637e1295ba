"""``primbench compare BASE HEAD``: regression verdicts between two sets of results.

Thin: parse options, call `compare.core.compare_runs`, render. The analysis modules (and
SciPy) are imported only when the command runs.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from compare.model import FailOn
from primbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, PrimbenchError


class Format(StrEnum):
    terminal = "terminal"
    markdown = "markdown"
    json = "json"


def parse_fraction(text: str, option: str) -> float:
    """``0.5%`` or ``0.005`` -> 0.005; a bare number of 1 or more is refused as ambiguous."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number (write 0.005 or 0.5%)", param_hint=option) from None
    if not raw.endswith("%") and value >= 1:
        raise typer.BadParameter(f"{text} is a fraction of 1 or more; did you mean {text}%?", param_hint=option)
    if not 0 < value < 1:
        raise typer.BadParameter(f"{text} must lie between 0 and 100 %", param_hint=option)
    return value


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare(
        base: Path = typer.Argument(..., metavar="BASE", help="Base results: a results.json or a directory of them."),
        head: Path = typer.Argument(..., metavar="HEAD", help="Head results: a results.json or a directory of them."),
        threshold: str = typer.Option(
            "0.5%", "--threshold", "-t",
            help="Smallest change of throughput that matters: 0.5% or 0.005.",
        ),
        alpha: float = typer.Option(
            0.05, "--alpha",
            help="False-discovery rate across specializations, and the level of the equivalence test.",
        ),
        output_format: Format = typer.Option(Format.terminal, "--format", "-f", help="terminal, markdown or json."),
        fail_on: FailOn = typer.Option(
            FailOn.REGRESSION, "--fail-on",
            help="Exit 1 on: any regression; any change (regression or improvement); never.",
        ),
        changed_only: bool = typer.Option(
            False, "--changed-only", help="Leave unchanged specializations out of the table (not out of JSON).",
        ),
    ) -> None:
        """Compare two runs: per specialization regression / improvement / unchanged / inconclusive
        / added / removed, with a CI exit code (0 none, 1 regression, 2 usage or bad input)."""
        fraction = parse_fraction(threshold, "--threshold")
        if not 0 < alpha < 1:
            raise typer.BadParameter(f"{alpha} must lie between 0 and 1", param_hint="--alpha")
        try:
            from compare.core import compare_runs, load_side

            comparison = compare_runs(load_side(base), load_side(head), threshold=fraction, alpha=alpha)
        except PrimbenchError as exc:
            typer.echo(f"primbench compare: error: {exc}", err=True)
            raise typer.Exit(getattr(exc, "exit_code", EXIT_USAGE)) from None

        from compare import render

        if output_format is Format.json:
            for w in comparison.warnings:
                typer.echo(f"primbench compare: warning: {w}", err=True)
            typer.echo(render.render_json(comparison), nl=False)
        elif output_format is Format.markdown:
            typer.echo(render.render_markdown(comparison, changed_only=changed_only), nl=False)
        else:
            from primbench.console import make_console

            render.render_terminal(comparison, make_console(), changed_only=changed_only)
        raise typer.Exit(EXIT_FAILED if comparison.failed(fail_on) else EXIT_OK)
