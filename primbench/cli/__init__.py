"""The ``primbench`` command: one sub-module per command group, each a thin layer that maps
options to one core function and renders its result.

Exit codes: 0 success; 1 a benchmark failed, or compare found a regression; 2 usage or
bad input; 130 interrupted.
"""

from __future__ import annotations

import typer

from primbench.cli import run as run_cmd
from primbench.version import __version__

app = typer.Typer(
    name="primbench",
    help="Low-noise GPU kernel benchmarks, regression verdicts and history for CI.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"primbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Low-noise GPU kernel benchmarks, regression verdicts and history for CI."""


run_cmd.register(app)

try:  # analysis commands: their modules import no heavy dependency at import time
    from primbench.cli import compare as compare_cmd

    compare_cmd.register(app)
except ImportError:  # pragma: no cover - module not written yet
    pass
try:
    from primbench.cli import history as history_cmd

    history_cmd.register(app)
except ImportError:  # pragma: no cover
    pass


def main() -> None:
    """Console-script entry point."""
    import sys

    from primbench.cli.compare import separate_sides

    app(args=separate_sides(sys.argv[1:]), prog_name="primbench")
