"""The ``primbench`` command: one sub-module per command group, each a thin layer that maps
options to one core function and renders its result.

Exit codes (the one table, also in README.md#exit-codes):

====  =====================================================================================
0     success: no regression (nothing that ``--fail-on`` names)
1     compare found a regression (or what ``--fail-on`` names); ``run``: a benchmark failed
2     bad usage or bad input, or an output that cannot be written (a full disk, a closed
      pipe, a stream whose encoding cannot hold the text): one line naming the file or stream
3     internal error: an exception no command expected, one line ending "please report";
      ``PRIMBENCH_DEBUG=1`` prints its traceback as well
130   interrupted (Ctrl-C); 143 on SIGTERM and 129 on SIGHUP, after writing what finished
====  =====================================================================================

Every command gets this: `PrimbenchGroup.invoke` turns what a command raises into its code
(commands run from `app`, as CliRunner does), and `main` also covers option parsing and the
last flush of stdout.
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import sys
import threading
import traceback
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.exceptions import TyperException

from primbench.cli import run as run_cmd
from primbench.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, PrimbenchError
from primbench.version import __version__

PROG = "primbench"
DEBUG_ENV = "PRIMBENCH_DEBUG"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _stream_path(stream: Any, fallback: str) -> str:
    """``stdout (/dev/full)``: the stream and, where the OS says, the file behind it."""
    from primbench.stdio import describe_stream

    return describe_stream(stream, fallback)


def _failing_stream(exc: BaseException) -> tuple[str, Any] | None:
    """Which standard stream an OSError or UnicodeEncodeError without a file name came from."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            continue
        if isinstance(exc, UnicodeEncodeError):
            # the stream whose encoding cannot hold the text (names differ: latin-1 is iso8859-1,
            # and cp1252's errors say 'charmap')
            enc = getattr(stream, "encoding", None)
            chunk = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
            if enc and chunk:
                try:
                    chunk.encode(enc)
                except UnicodeEncodeError:
                    return name, stream
                except LookupError:
                    pass
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return name, stream
    return None


def _silence(stream: Any) -> None:
    """Point a failed standard stream at /dev/null (`primbench.stdio.silence`)."""
    from primbench.stdio import silence

    silence(stream)


_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EBADF})


def _say(message: str) -> None:
    from primbench.stdio import say

    say(message)


def describe_failure(exc: BaseException) -> tuple[str, int]:
    """One line for an exception that reached the command line, and its exit code."""
    from primbench.textsafe import term_clean

    if isinstance(exc, PrimbenchError):
        return f"{PROG}: error: {term_clean(exc)}", getattr(exc, "exit_code", EXIT_USAGE)
    if isinstance(exc, UnicodeEncodeError):
        found = _failing_stream(exc)
        if found is not None:
            name, stream = found
            char = exc.object[exc.start:exc.start + 1] if isinstance(exc.object, str) else ""
            where = _stream_path(stream, name)
            _silence(stream)
            encoding = getattr(stream, "encoding", None) or exc.encoding
            return (f"{PROG}: error: cannot write to {where}: its encoding {encoding!r} "
                    f"cannot hold {char!r} (U+{ord(char):04X}); set PYTHONIOENCODING=utf-8 or a UTF-8 locale"
                    if char else f"{PROG}: error: cannot write to {where}: {term_clean(exc)}"), EXIT_USAGE
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        if exc.filename is not None:
            where = term_clean(exc.filename)
            if exc.filename2 is not None:
                where += f" -> {term_clean(exc.filename2)}"
            return f"{PROG}: error: {where}: {term_clean(reason)}", EXIT_USAGE
        found = _failing_stream(exc)
        if found is None and exc.errno in _WRITE_ERRNOS:  # the buffer was dropped: primbench writes to stdout
            found = ("stdout", sys.stdout)
        if found is not None:
            name, stream = found
            where = _stream_path(stream, name)
            _silence(stream)
            return f"{PROG}: error: cannot write to {where}: {term_clean(reason)}", EXIT_USAGE
        return f"{PROG}: error: {term_clean(reason)}", EXIT_USAGE
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        parts = last.filename.replace("\\", "/").split("/")
        where = f" at {'/'.join(parts[-2:])}:{last.lineno}"
    hint = "" if _debug() else f"; {DEBUG_ENV}=1 shows the traceback"
    text = term_clean(f"{type(exc).__name__}: {exc}")
    if len(text) > 300:
        text = text[:299] + "…"
    return f"{PROG}: internal error{where}: {text} (please report{hint})", EXIT_INTERNAL


def report_failure(exc: BaseException) -> int:
    """Print `describe_failure`'s line (with the traceback first under PRIMBENCH_DEBUG=1); its code."""
    message, code = describe_failure(exc)
    if _debug():
        _say("".join(traceback.format_exception(exc)).rstrip())
    _say(message)
    return code


class PrimbenchGroup(TyperGroup):
    """The root group: a command's unexpected exception becomes one line and its exit code; its
    own options are coerced without pydantic (`primbench.cli.options.coerce_plainly`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        from primbench.cli.options import coerce_plainly

        coerce_plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (TyperException, typer.Exit, typer.Abort):  # usage errors, exits: Typer reports them
            raise
        except Exception as exc:
            from primbench.signals import received

            if received() is not None:  # a library turned the interrupt into its own error
                raise KeyboardInterrupt from None
            raise typer.Exit(report_failure(exc)) from None


HELP = """Low-noise GPU kernel benchmarks, regression verdicts and history for CI.

Exit codes: 0 ok (no regression); 1 a regression, or what --fail-on names (run: a benchmark
failed); 2 bad usage, bad input or an output that cannot be written; 3 internal error (please
report; PRIMBENCH_DEBUG=1 shows the traceback); 130 interrupted. Shell completion:
--install-completion."""

app = typer.Typer(
    name=PROG,
    cls=PrimbenchGroup,
    help=HELP,
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
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


def _flush_stdout(code: Any) -> Any:
    """The last flush of stdout: a full disk or a closed pipe shows here when the output was small."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError, UnicodeError) as exc:
        return report_failure(exc)
    return code


def _interrupted_code(code: Any) -> Any:
    """`code`, unless a signal came that a library swallowed (the command then ended as if it
    had finished, or failed): 130 for Ctrl-C, 128 + its number for SIGTERM or SIGHUP."""
    from primbench.signals import received

    signum = received()
    if signum is None:
        return code
    return EXIT_INTERRUPTED if signum == signal.SIGINT else 128 + signum


def _called_as_program(depth: int = 2) -> bool:
    """Whether the function calling this one was called by the ``__main__`` module's own top-level
    code: the console script, ``python -m primbench`` or ``python -c``; not a test calling `main`,
    nor a function of a script (a forked child of it, e.g. the fault campaign's, would run its
    parent's atexit handlers, which delete the parent's temporary folders)."""
    frame = sys._getframe(depth)
    return frame.f_globals.get("__name__") == "__main__" and frame.f_code.co_name == "<module>"


def _end_process(code: Any) -> None:
    """End the process now with `code`, without freeing what the command left to its end
    (`primbench.cli.compare.keep_until_exit`), where it left something: the standard streams
    flushed and the atexit handlers run first, as the interpreter's own exit does; no other
    thread may be running. Returns (for `sys.exit`) where nothing is left, the code is not a
    number, or a stream cannot be flushed (the ordinary exit then reports it)."""
    from primbench.cli import compare

    if not compare.left_to_exit or not (code is None or isinstance(code, int)) or threading.active_count() > 1:
        return
    streams = [s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) if s is not None]
    try:
        for stream in streams:
            stream.flush()
        atexit._run_exitfuncs()
        for stream in streams:
            stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code or 0)


def main() -> None:
    """Console-script entry point (also ``python -m primbench``). Called as the program
    (`_called_as_program`), it ends the process without freeing what compare left to the end
    (`primbench.cli.compare.keep_until_exit`, `_end_process`)."""
    from primbench.cli import compare
    from primbench.signals import exit_code, terminate_as_interrupt

    compare.exit_follows = _called_as_program()
    code: Any = 0
    try:
        # SIGTERM and SIGHUP as Ctrl-C in every command (history ones roll back), exit 143 / 129;
        # the exit code decided inside, where a signal a library swallowed is still known. The
        # handlers first: nothing of main runs without them (the fault campaign's phases).
        with terminate_as_interrupt(interrupt=True):
            try:
                from primbench.cli.compare import separate_sides
                from primbench.stdio import occupy_closed_streams

                occupy_closed_streams()  # `>&-`: writes fail as on a closed descriptor, and are reported
                app(args=separate_sides(sys.argv[1:]), prog_name=PROG)
            except SystemExit as done:
                code = _interrupted_code(_flush_stdout(done.code))
            except KeyboardInterrupt as exc:
                code = _interrupted_code(exit_code(exc, 130))
            except Exception as exc:  # raised outside a command (option parsing, completion)
                code = _interrupted_code(_flush_stdout(report_failure(exc)))
    except KeyboardInterrupt as exc:  # a signal in the moment before the handlers were restored
        code = exit_code(exc, 130)
    _end_process(code)
    sys.exit(code)
