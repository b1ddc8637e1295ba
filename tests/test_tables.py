"""The one table policy (`primbench.tables`): a terminal's width on a terminal, the full width
unwrapped in a pipe or CI log, COLUMNS honoured, a left-out column always named."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from primbench import tables
from primbench.tables import Column, render, table_width

COLS = [Column("name", "name", 0, wrap=True), Column("value", "value", 0, right=True),
        Column("host", "host", 3), Column("extra", "extra", 5)]
ROWS = [("type: unsigned long long, layout: strided, size: 128MiB", "1.08 TB/s", "runner-17", "x" * 30),
        ("type: char", "371.93 GB/s", "runner-1", "y")]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _console(tty: bool, width: int = 60, force: bool = False) -> Console:
    return Console(file=_Tty() if tty else io.StringIO(), width=width, force_terminal=tty or force,
                   color_system="standard" if force else None)


@pytest.mark.parametrize(("env", "tty", "expected"), [
    ({}, True, 60), ({}, False, None), ({"COLUMNS": "100"}, False, 100), ({"CI": "true"}, True, None),
    ({"GITHUB_ACTIONS": "true"}, True, None), ({"CI": "false"}, True, 60), ({"COLUMNS": "90", "CI": "1"}, True, 90),
])
def test_width_policy(env: dict[str, str], tty: bool, expected: int | None) -> None:
    assert table_width(_console(tty), env) == expected


def test_a_pipe_gets_every_column_unwrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    c = _console(False, force=True)  # colour forced (as in a CI log) and still full width
    notes = render(ROWS, COLS, console=c)
    out = c.file.getvalue()  # type: ignore[attr-defined]
    assert notes == [] and ROWS[0][0] in out and "x" * 30 in out
    assert all(ln == ln.rstrip() for ln in out.splitlines())


def test_a_narrow_terminal_wraps_names_and_names_what_it_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    c = _console(True, width=40)
    notes = render(ROWS, COLS, console=c)
    out = c.file.getvalue()  # type: ignore[attr-defined]
    assert max(len(ln) for ln in out.splitlines() if not ln.startswith("note:")) <= 40
    assert notes and notes[-1].startswith("40 columns: left out ") and "extra" in notes[-1]
    assert f"note: {notes[-1][:20]}" in out


def test_rows_are_capped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "PIPE_LIMIT", 1)
    monkeypatch.delenv("COLUMNS", raising=False)
    c = _console(False)
    assert render(ROWS, COLS, console=c)[0].startswith("1 of 2 rows not shown")
