"""Issue 15: the exit codes a CI job gates on (items 1 and 3) and the command-line conventions
(item 10). One table: 0 ok, 1 regression (or what --fail-on names), 2 usage, bad input or an
output that cannot be written, 3 internal error, 130 interrupted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.cli.reference import command_tree
from primbench.errors import EXIT_INTERNAL
from tests.compare_data import document, spec, write

ROOT = Path(__file__).resolve().parent.parent
TB = 1.0e12


def invoke(*args: str, env: dict[str, str | None] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


def pair(tmp_path: Path, base: list[dict[str, Any]], head: list[dict[str, Any]]) -> tuple[str, str]:
    return (str(write(tmp_path / "base.json", document(base))), str(write(tmp_path / "head.json", document(head))))


def cli(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("PRIMBENCH_DEBUG", "FORCE_COLOR", "CLICOLOR_FORCE")}
    full.update({"PYTHONPATH": str(ROOT), "NO_COLOR": "1", **(env or {})})
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "primbench", *args], env=full, text=True, timeout=120, cwd=ROOT,
                          **kw)


@pytest.fixture
def timed_out(tmp_path: Path) -> tuple[str, str]:
    """A -20 % drop measured with a noise timeout in runs without rounds: inconclusive (item 1; a run
    of rounds that timed out is judged on their spread)."""
    return pair(tmp_path, [spec("type: char", TB, round_cv=None), spec("type: int", TB, round_cv=None)],
                [spec("type: char", TB * 0.8, noise_timeout=True, round_cv=None), spec("type: int", TB, round_cv=None)])


# --------------------------------------------------------------------------- item 1: --fail-on inconclusive


@pytest.mark.parametrize(("fail_on", "code"), [
    (None, 0), ("regression", 0), ("inconclusive", 1), ("regression,inconclusive", 1), ("change", 0),
    ("change, inconclusive", 1), ("never", 0), ("never,inconclusive", 2), ("always", 2), ("", 2),
])
def test_fail_on_inconclusive_and_combinations(timed_out: tuple[str, str], fail_on: str | None, code: int) -> None:
    args = ["compare", *timed_out] + (["--fail-on", fail_on] if fail_on is not None else [])
    r = invoke(*args)
    assert r.exit_code == code, r.output
    if code == 2:
        assert "--fail-on" in r.stderr


def test_fail_on_combination_still_fails_on_a_regression(tmp_path: Path) -> None:
    b, h = pair(tmp_path, [spec("a", TB), spec("b", TB)], [spec("a", TB * 0.97), spec("b", TB)])
    assert invoke("compare", b, h, "--fail-on", "regression,inconclusive").exit_code == 1
    assert invoke("compare", b, h, "--fail-on", "inconclusive").exit_code == 0


def test_fail_on_is_defined_once() -> None:
    """Item 1 / What to build: one FailOn, used by compare and history."""
    hits = [p for p in (ROOT / "primbench").rglob("*.py") if "class FailOn" in p.read_text(encoding="utf-8")]
    hits += [p for p in (ROOT / "history").rglob("*.py") if "class FailOn" in p.read_text(encoding="utf-8")]
    assert hits == []
    from primbench.compare.model import FailOn, parse_fail_on

    assert {f.value for f in FailOn} == {"regression", "change", "inconclusive", "never"}
    assert parse_fail_on("regression,inconclusive") == {FailOn.REGRESSION, FailOn.INCONCLUSIVE}
    assert parse_fail_on("never") == frozenset()


def test_history_regressions_refuses_inconclusive() -> None:
    r = invoke("history", "regressions", "--fail-on", "inconclusive", "--db", "/nonexistent/x.duckdb")
    assert r.exit_code == 2 and "--fail-on" in r.stderr


# --------------------------------------------------------------------------- item 3: crashes are not regressions


def test_internal_error_is_one_line_and_exit_3(timed_out: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import primbench.compare.core

    def boom(*_a: Any, **_k: Any) -> None:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(primbench.compare.core, "compare_runs", boom)
    r = invoke("compare", *timed_out)
    assert r.exit_code == EXIT_INTERNAL == 3
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("primbench: internal error at ")
    assert "ZeroDivisionError: float division by zero" in lines[0] and "please report" in lines[0]
    assert "PRIMBENCH_DEBUG=1" in lines[0]
    debug = invoke("compare", *timed_out, env={"PRIMBENCH_DEBUG": "1"})
    assert debug.exit_code == 3
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1].startswith("primbench: internal error")


def test_internal_error_in_a_history_command_is_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import primbench.history.commands

    def boom(*_a: Any, **_k: Any) -> None:
        raise KeyError("column")

    monkeypatch.setattr(primbench.history.commands, "info", boom)
    r = invoke("history", "info", "--db", str(tmp_path / "h.duckdb"))
    assert r.exit_code == 3
    assert "internal error" in r.stderr and "Traceback" not in r.stderr


def test_an_os_error_in_a_command_names_the_path_and_exits_2(timed_out: tuple[str, str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:

    def denied(*_a: Any, **_k: Any) -> None:
        raise PermissionError(13, "Permission denied", "/proc/nope.png")

    import primbench.compare.core

    monkeypatch.setattr(primbench.compare.core, "compare_runs", denied)
    r = invoke("compare", *timed_out)
    assert r.exit_code == 2
    assert r.stderr.strip() == "primbench: error: /proc/nope.png: Permission denied"


def test_a_benchmark_programs_own_exception_is_its_traceback_and_exit_1(tmp_path: Path) -> None:
    """`primbench run FILE` is `python FILE`: a bug in FILE is not primbench's internal error."""
    (tmp_path / "bad.py").write_text("raise NameError('oops')\n")
    done = cli("run", str(tmp_path / "bad.py"))
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "NameError: oops" in done.stderr and "internal error" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("fmt", ["terminal", "markdown", "json"])
def test_stdout_on_a_full_disk_is_one_line_and_exit_2(timed_out: tuple[str, str], fmt: str) -> None:
    with open("/dev/full", "w") as full:
        done = cli("compare", *timed_out, "--format", fmt, stdout=full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "primbench: error: cannot write to stdout (/dev/full): " \
                                                  "No space left on device"
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_an_ascii_stdout_is_one_line_and_exit_2(timed_out: tuple[str, str]) -> None:
    done = cli("compare", *timed_out, env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("primbench: error: cannot write to stdout") and "encoding 'ascii'" in last
    assert "PYTHONIOENCODING=utf-8" in last and "Traceback" not in done.stderr


def test_a_closed_pipe_is_not_a_regression(tmp_path: Path) -> None:
    """Rich exits 1 on a broken pipe; primbench says so and exits 2."""
    many = [spec(f"type: t{i}", TB) for i in range(400)]
    b, h = pair(tmp_path, many, many)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "primbench", "compare", b, h, "--max-rows", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away before anything was read
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 2, err
    assert err.strip().splitlines()[-1] == "primbench: error: cannot write to stdout: Broken pipe"


# --------------------------------------------------------------------------- item 10: conventions


def test_dash_h_on_primbench_and_every_command() -> None:
    for path, _ in command_tree():
        if path == ("run",):  # -h after FILE belongs to the benchmark; alone it is run's help
            continue
        r = invoke(*path, "-h")
        assert r.exit_code == 0, (path, r.output)
        assert r.stdout.startswith("Usage: primbench"), path
        assert r.stdout == invoke(*path, "--help").stdout
    assert invoke("run", "-h").stdout.startswith("Usage: primbench run")


def test_python_dash_m_primbench() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("primbench ")
    assert cli("compare", "-h").stdout.startswith("Usage: primbench compare")


def test_shell_completion_is_offered() -> None:
    help_text = invoke("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    # Typer detects the shell from the process tree (shellingham), which fails under a parent it
    # does not know (`timeout`, a CI runner); its test switch makes the shell an argument instead.
    done = cli("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert done.returncode == 0 and "_PRIMBENCH_COMPLETE" in done.stdout


def test_force_color_colours_a_pipe_and_no_color_wins(timed_out: tuple[str, str]) -> None:
    ansi = "\x1b["
    env: dict[str, str | None] = {"NO_COLOR": None, "CLICOLOR_FORCE": None}
    assert ansi not in invoke("compare", *timed_out, env=env).stdout
    assert ansi in invoke("compare", *timed_out, env={**env, "FORCE_COLOR": "1"}).stdout
    assert ansi not in invoke("compare", *timed_out, env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def test_gitignore_holds_what_the_commands_write() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for entry in (".primbench/", "history-plots/", "history-report.html"):
        assert entry in ignored or f"/{entry}" in ignored, entry
