"""Hostile names through compare, history compare and the report (issue 16, item 4): no
forged markdown rows, raw HTML, images, links or mentions in a pull-request comment, and no
escape sequence reaches a terminal, with NO_COLOR and through a pipe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.textsafe import md_escape, term_clean
from tests import compare_data as cd
from tests import history_data as hd
from tests.history_data import ingest

FORGED = "a\r| forged | row | x | y | z | 🔴 regression |"
HTML = "<img src=x onerror=alert(1)></table><script>alert(1)</script>"
IMAGE = "![pixel](https://evil.example/p.png) [click](www.evil.example) <https://evil.example>"
MENTION = "@octocat and @github/security"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x9b31m\x85x\u2028y\u2029z\u202eevil"
NAMES = [FORGED, HTML, IMAGE, MENTION, ESCAPES, "back\\slash`code`*em*_u_~s~|pipe"]

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e]")


def assert_safe_markdown(text: str, columns: int | None = None) -> None:
    from primbench.compare.render import MARKER

    assert text.count(MARKER) <= 1
    text = text.replace(MARKER, "")  # compare's own hidden marker, the one HTML comment allowed
    assert "\r" not in text and "\u2028" not in text and "\u2029" not in text
    assert not CONTROL.search(text.replace("\n", ""))
    for bad in ("<img", "</table", "<script", "://", "www.", "@octocat", "@github", "<https"):
        assert bad not in text, bad
    assert not re.search(r"(?<!\\)[\]!]", text.replace("](#", "")), "an unescaped link or image"
    if columns is not None:
        for line in text.splitlines():
            if line.startswith("|"):
                cells = re.split(r"(?<!\\)\|", line)[1:-1]
                assert len(cells) == columns, line


def assert_safe_terminal(text: str) -> None:
    assert not CONTROL.search(text.replace("\n", "")), repr(text)


def test_md_escape_and_term_clean_units():
    assert md_escape("a|b") == "a\\|b"
    assert "\r" not in md_escape("a\rb") and "\n" not in md_escape("a\nb")
    assert md_escape("<b>") == "&lt;b&gt;"
    assert md_escape("the suite's \"shift\" & more") == "the suite's \"shift\" &amp; more"  # quotes: text
    assert md_escape("@me") == "@\u200bme"
    assert term_clean("a\x1b[2Jb\tc\nd") == "a\ufffd[2Jb c d"
    assert term_clean("\ud800") == "\ufffd"


@pytest.fixture
def hostile_pair(tmp_path: Path) -> tuple[Path, Path]:
    gpu = {**cd.GPU, "name": "GPU " + ESCAPES + HTML}
    base = [cd.spec(n, 1e12 * (1 + i)) for i, n in enumerate(NAMES)]
    head = [cd.spec(n, 1e12 * (1 + i) * (0.8 if i % 2 else 1.0)) for i, n in enumerate(NAMES)]
    b = cd.write(tmp_path / "base.json", cd.document(base, branch=MENTION + ESCAPES, gpu=gpu, algorithm=HTML))
    h = cd.write(tmp_path / "head.json", cd.document(head, branch=FORGED + IMAGE, gpu=gpu, algorithm=HTML,
                                                     commit=ESCAPES))
    return b, h


def test_compare_markdown_is_inert(hostile_pair):
    base, head = hostile_pair
    result = CliRunner().invoke(app, ["compare", str(base), str(head), "-f", "markdown", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert_safe_markdown(result.output, columns=7)


@pytest.mark.parametrize("no_color", ["1", ""])
def test_compare_terminal_strips_control_characters(hostile_pair, monkeypatch, no_color):
    monkeypatch.setenv("NO_COLOR", no_color)
    base, head = hostile_pair
    result = CliRunner().invoke(app, ["compare", str(base), str(head), "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert_safe_terminal(result.output)
    assert "pwned" in result.output  # shown, as text


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "h.duckdb"
    files = hd.branch_series(tmp_path / "main", [{n: 1e12 for n in NAMES}] * 3, gpu={**hd.H200_A, "name": HTML})
    branch = FORGED + MENTION + ESCAPES
    files += hd.branch_series(tmp_path / "b", [{n: 0.9e12 for n in NAMES}], branch=branch, prefix="b",
                              start=hd.START.replace(day=2), gpu={**hd.H200_A, "name": HTML})
    report = ingest(files, db)
    assert not report.errors
    return db


def test_history_compare_markdown_header_and_table_are_inert(tmp_path):
    db = _store(tmp_path)
    branch = FORGED + MENTION + ESCAPES
    result = CliRunner().invoke(app, ["history", "compare", branch, "--db", str(db), "--no-git", "-f", "markdown",
                                      "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0]
    assert header.startswith("**") and "forged" in header
    assert_safe_markdown(result.output, columns=7)


def test_history_commands_print_no_control_characters(tmp_path):
    db = _store(tmp_path)
    branch = FORGED + MENTION + ESCAPES
    for args in (["history", "compare", branch, "--no-git", "--fail-on", "never"], ["history", "runs"],
                 ["history", "branches"], ["history", "series", ESCAPES], ["history", "info"]):
        result = CliRunner().invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 0, (args, result.output)
        assert_safe_terminal(result.output)


def test_the_report_escapes_hostile_names(tmp_path):
    db = _store(tmp_path)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["history", "report", "--db", str(db), "-o", str(out), "--no-git"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    for bad in ("<img src=x", "<script>alert", "\x1b", "\x07"):
        assert bad not in page, bad
    assert page.count("</table>") == page.count("<table>")


def test_names_that_differ_only_in_punctuation_get_their_own_charts(tmp_path):
    names = ["type: a/b", "type: a b", "type: A-B", "$x^$ \\frac{"]
    db = tmp_path / "h.duckdb"
    files = hd.branch_series(tmp_path / "main", [{n: 1e12 for n in names}] * 2)
    assert not ingest(files, db).errors
    result = CliRunner().invoke(app, ["history", "plot", "--db", str(db), "-o", str(tmp_path / "charts")])
    assert result.exit_code == 0, result.output
    assert len({p.name.lower() for p in (tmp_path / "charts").iterdir()}) == len(names)


@pytest.mark.parametrize("command", ["plot", "report"])
def test_an_unwritable_output_is_one_line_and_exit_2(tmp_path, command):
    db = tmp_path / "h.duckdb"
    assert not ingest(hd.branch_series(tmp_path / "main", [[1e12]] * 2), db).errors
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file" / "x" / "out.html", Path("/proc/primbench/out.html")):
        result = CliRunner().invoke(app, ["history", command, "--db", str(db), "-o", str(out)]
                                    + (["--no-git"] if command == "report" else []))
        assert result.exit_code == 2, result.output
        assert isinstance(result.exception, SystemExit)
        assert result.output.count("\n") == 1 and "cannot write" in result.output
