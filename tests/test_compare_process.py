"""`primbench compare` as a process of its own (issue 28's start-up and exit): the process ends
without freeing the comparison (`primbench.cli.compare.keep_until_exit`, `primbench.cli._end_process`) and without
importing pydantic for Typer's options (`primbench.cli.options.coerce_plainly`), and says, writes
and exits exactly as the command run in-process (CliRunner) does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import primbench.cli as cli
from primbench.cli import app
from primbench.cli import compare as compare_cmd
from tests.compare_data import document, spec, write

ROOT = Path(__file__).resolve().parents[1]
TB = 1.0e12

#: Runs ``main`` as the program does (from ``__main__``) and, at exit, writes to the file in argv[1]
#: whether pydantic and numpy.ma were imported and what was kept for the end of the process.
_PROGRAM = textwrap.dedent("""
    import atexit, sys
    marker = sys.argv.pop(1)
    import primbench.cli.compare as compare

    def report():
        with open(marker, "w") as f:
            f.write(f"{'pydantic' in sys.modules} {'numpy.ma' in sys.modules} {len(compare.left_to_exit)}")

    atexit.register(report)
    sys.argv[0] = "primbench"
    from primbench.cli import main
    main()
""")


def _program(marker: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROGRAM, str(marker), *args], capture_output=True, text=True,
                          cwd=ROOT, input=stdin, timeout=120, env={"PYTHONPATH": str(ROOT), "NO_COLOR": "1",
                                                                   "COLUMNS": "120", "PATH": "/usr/bin:/bin"})


def _in_process(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": "120", "CLICOLOR_FORCE": None})


@pytest.fixture
def sides(tmp_path: Path) -> tuple[str, str]:
    b = write(tmp_path / "base.json", document([spec("type: char", TB), spec("type: long long", TB)]))
    h = write(tmp_path / "head.json", document([spec("type: char", TB * 0.98), spec("type: long long", TB)]))
    return str(b), str(h)


@pytest.mark.parametrize("options", [(), ("--format", "json"), ("--format", "markdown", "--max-rows", "1"),
                                     ("--metric", "time", "--alpha", "0.1", "-t", "0.5%", "--fail-on", "never"),
                                     ("--changed-only", "--max-detectable", "10%")])
def test_the_program_says_writes_and_exits_as_the_command_in_process(tmp_path: Path, sides: tuple[str, str],
                                                                     options: tuple[str, ...]) -> None:
    out = tmp_path / "also.json"
    args = ("compare", *sides, *options, "--json", str(out))
    proc = _program(tmp_path / "marker", *args)
    written = out.read_text()
    out.unlink()
    ref = _in_process(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (ref.exit_code, ref.stdout, ref.stderr)
    assert written == out.read_text()
    # it ended through `_end_process` (something was kept), its atexit handler ran, no pydantic or numpy.ma
    assert (tmp_path / "marker").read_text() == "False False 3"


def test_the_program_reports_a_bad_option_value_as_typer_does(tmp_path: Path, sides: tuple[str, str]) -> None:
    for bad in (("--max-rows", "-1"), ("--max-rows", "1.5"), ("--alpha", "x"), ("--metric", "nope"),
                ("--format", "TERMINAL")):
        proc = _program(tmp_path / "marker", "compare", *sides, *bad)
        ref = _in_process("compare", *sides, *bad)
        assert (proc.returncode, proc.stdout, proc.stderr) == (ref.exit_code, ref.stdout, ref.stderr), bad
        assert proc.returncode == 2 and "Invalid value" in proc.stderr


def test_an_error_ends_the_program_as_usual(tmp_path: Path, sides: tuple[str, str]) -> None:
    proc = _program(tmp_path / "marker", "compare", sides[0], str(tmp_path / "missing.json"))
    ref = _in_process("compare", sides[0], str(tmp_path / "missing.json"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (ref.exit_code, ref.stdout, ref.stderr)
    assert proc.returncode == 2
    assert (tmp_path / "marker").read_text().endswith(" 0")  # nothing kept: the ordinary exit


def test_a_closed_stdout_is_still_reported_by_the_program(tmp_path: Path, sides: tuple[str, str]) -> None:
    proc = subprocess.run(f"{sys.executable} -c '{_PROGRAM}' {tmp_path / 'marker'} compare {sides[0]} {sides[1]} "
                          "--format json > /dev/full", shell=True, capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    assert "cannot write to stdout" in proc.stderr


def test_main_called_by_a_test_keeps_nothing_and_raises_system_exit(sides: tuple[str, str],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["primbench", "compare", *sides, "--format", "json"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 1
    assert compare_cmd.left_to_exit == [] and not compare_cmd.exit_follows
    assert '"specializations"' in capsys.readouterr().out


def test_keep_until_exit_holds_only_when_the_process_ends_after_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    thing = object()
    assert not compare_cmd.keep_until_exit(thing)
    assert compare_cmd.left_to_exit == []
    monkeypatch.setattr(compare_cmd, "exit_follows", True)
    monkeypatch.setattr(compare_cmd, "left_to_exit", [])
    assert compare_cmd.keep_until_exit(thing)
    assert compare_cmd.left_to_exit == [thing]


# --------------------------------------------------------------------------- the plain coercion


_VALUES: dict[str, list[Any]] = {
    "paths": [("a.json", "b.json"), ["x"], ("-", "b"), ("",), ("dir/",)],
    "threshold": ["0.3%", "x", ""],
    "alpha": [0.05, "0.05", "1e-3", ".5", "5.", "-0", "+2", " 0.1", "1_0", "inf", "nan", "x", "", 1, True],
    "output_format": ["terminal", "json", "markdown", "JSON", "x"],
    "metric": ["time", "bytes", "energy", "Time", "x"],
    "max_rows": [0, 5, "0", "5", "05", "-1", "+5", " 5", "1.5", "x", True, -1],
    "changed_only": [True, False],
    "json_out": ["-", "out.json", ""],
}


def _outcome(param: Any, runtime: Any, value: Any, ctx: Any) -> tuple[str, Any]:
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # Typer's BadParameter, its message
        return "error", (type(exc).__name__, str(exc))
    return "value", (type(got).__name__, repr(got), [type(v).__name__ for v in got] if isinstance(got, list) else None)


def test_the_plain_coercion_gives_typers_values_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer._coercion import build_runtime_param

    from primbench.cli.options import _PlainRuntimeParam

    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    (tmp_path / "a.json").write_text("{}")
    command = typer.main.get_command(app).commands["compare"]  # type: ignore[attr-defined]
    ctx = command.make_context("compare", ["a", "b"])
    params = {p.name: p for p in command.params}
    for name, values in _VALUES.items():
        param = params[name]
        descriptor = param.type_descriptor
        typers = build_runtime_param(descriptor)
        plain = _PlainRuntimeParam(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
        for value in values:
            assert _outcome(param, plain, value, ctx) == _outcome(param, typers, value, ctx), (name, value)


def test_only_the_main_modules_top_level_code_counts_as_the_program() -> None:
    """A function of a script (a forked child of it, as the fault campaign's) calling `main` must
    not end the process by the fast path: that runs the parent's atexit handlers in the child."""
    from primbench.cli import _called_as_program

    def probe() -> bool:
        return _called_as_program()  # asks about the caller of probe, as main asks about its own

    top: dict[str, object] = {"__name__": "__main__", "probe": probe}
    exec("seen = probe()", top)  # the top level of a __main__ module
    assert top["seen"] is True
    inner: dict[str, object] = {"__name__": "__main__", "probe": probe}
    exec("def run():\n    return probe()\nseen = run()", inner)  # a function of that module
    assert inner["seen"] is False
    assert probe() is False  # a test module's function


def test_compare_asks_for_one_blas_thread_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before numpy loads, compare sets each BLAS thread count that is not set to 1, and leaves a
    set one as it is; once numpy is loaded (an in-process caller), it changes nothing."""
    from primbench.cli import compare

    for name in compare.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    monkeypatch.delitem(sys.modules, "numpy")
    compare._one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "4"
    monkeypatch.undo()
    for name in compare.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    compare._one_blas_thread()  # numpy is loaded here
    assert not any(name in os.environ for name in compare.BLAS_THREADS)
