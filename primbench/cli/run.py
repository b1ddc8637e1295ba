"""``primbench run FILE [OPTIONS]``: run a benchmark program exactly as ``python FILE`` would."""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

import typer

from primbench.errors import EXIT_FAILED, EXIT_USAGE, PrimbenchError
from primbench.textsafe import term_clean


def run_file(path: Path, args: list[str]) -> int:
    """Execute `path` as ``__main__`` with `args` as its command line; returns the exit code. An
    exception the program does not handle is its own bug, not primbench's: its traceback and exit
    1, as ``python FILE``. A program that ends with ``executor.run()`` rather than
    ``executor.main()`` returns the code its run would have (1 when a specialization failed;
    `primbench.runlog`)."""
    from primbench import runlog

    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    try:
        with runlog.recording() as runs:
            runpy.run_path(str(path), run_name="__main__")
    except PrimbenchError as exc:
        typer.echo(f"primbench run: error: {term_clean(exc)}", err=True)
        raise typer.Exit(exc.exit_code) from None
    except Exception:
        traceback.print_exc()
        raise typer.Exit(EXIT_FAILED) from None
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    return runlog.exit_code(runs)


def register(app: typer.Typer) -> None:
    # No --help option of its own: after FILE, --help belongs to the benchmark program.
    @app.command(
        "run",
        add_help_option=False,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def run(
        ctx: typer.Context,
        file: Path = typer.Argument(None, metavar="FILE", help="The benchmark program (a Python file).",
                                   show_default=False),
    ) -> None:
        """Run a benchmark program; every option after FILE goes to the program.

        `primbench run bench.py --size 64MiB` is the same as `python bench.py --size 64MiB`;
        `primbench run bench.py --help` lists the program's options."""
        args = list(ctx.args)
        if file is None or str(file) in ("--help", "-h"):
            typer.echo(ctx.get_help())
            raise typer.Exit(0 if file is not None or "--help" in args or "-h" in args else EXIT_USAGE)
        if not file.is_file():
            typer.echo(f"primbench run: error: {file}: no such file", err=True)
            raise typer.Exit(EXIT_USAGE)
        if code := run_file(file, args):
            raise typer.Exit(code)
