"""Issue 15: what `primbench compare` prints. Reasons in the terminal and the markdown (items 1
and 8), tables that fit 80 columns (item 5), a markdown table that fits a pull-request comment
(item 6), warnings in the markdown and the right unit on removed rows (item 8)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.compare.render import MARKDOWN_LIMIT, TERMINAL_ROWS, method_line
from tests import history_data as hd
from tests.compare_data import document, spec, write

TB = 1.0e12
LONG = "ipt: 4, op: copy, type: unsigned long long, layout: strided, size: 128MiB"


def pair(tmp_path: Path, base: list[dict[str, Any]], head: list[dict[str, Any]], **kw: Any) -> tuple[str, str]:
    return (str(write(tmp_path / "base.json", document(base, **kw))),
            str(write(tmp_path / "head.json", document(head, **kw))))


def compare(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["compare", *args], env=env)


def table_row(text: str, name: str) -> list[str]:
    """The markdown row of `name` as cells."""
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {name} |"))
    return [c.strip() for c in line.strip("|").split(" | ")]


def why_line(text: str, name: str) -> str:
    """The terminal's Why cell of `name`'s row (piped: the full width, one line a row)."""
    lines = text.splitlines()
    header = next(ln for ln in lines if "Specialization" in ln and "Why" in ln)
    row = next(ln for ln in lines if ln.startswith(name))
    return row[header.index("Why"):].strip()


# --------------------------------------------------------------------------- items 1 and 8: reasons


def test_noise_timeout_reason_in_terminal_and_markdown(tmp_path: Path) -> None:
    """A -20 % drop with a noise timeout in a run without rounds: inconclusive, and it says why."""
    b, h = pair(tmp_path, [spec("type: char", TB, round_cv=None), spec("type: int", TB, round_cv=None)],
                [spec("type: char", TB * 0.8, noise_timeout=True, round_cv=None), spec("type: int", TB, round_cv=None)])
    term = compare(b, h)
    assert term.exit_code == 0
    assert why_line(term.stdout, "type: char").startswith("noise timeout in head: change -20.00 %")
    md = compare(b, h, "--format", "markdown").stdout
    cells = table_row(md, "type: char")
    assert "inconclusive" in cells[-2] and cells[-1].startswith("noise timeout in head")
    assert table_row(md, "type: int")[-1] == ""  # an obvious verdict needs no reason


def test_throttled_clock_reason(tmp_path: Path) -> None:
    slow = spec("type: char", TB * 0.7)
    slow["sm_clock"] = {"average_mhz": 1100.0, "fraction_of_default": 0.56, "below_expected": True}
    b, h = pair(tmp_path, [spec("type: char", TB), spec("type: int", TB)], [slow, spec("type: int", TB)],
                version="4.2.0")
    r = compare(b, h)
    assert "SM clock below expected in head (1100 MHz, 56 % of default)" in why_line(r.stdout, "type: char")
    assert "SM clock below expected in head" in table_row(compare(b, h, "-f", "markdown").stdout, "type: char")[-1]


def test_runs_without_rounds_can_fail_ci_and_the_output_says_on_what_evidence(tmp_path: Path) -> None:
    b, h = pair(tmp_path, [spec("type: char", TB, round_cv=None)], [spec("type: char", TB * 0.95, round_cv=None)])
    r = compare(b, h)
    assert r.exit_code == 1
    assert "without rounds" in r.stderr + r.stdout and "prior" in r.stderr + r.stdout
    md = compare(b, h, "-f", "markdown").stdout
    assert "regression" in table_row(md, "type: char")[-2]
    data = json.loads(compare(b, h, "-f", "json").stdout)
    assert data["specializations"][0]["run_to_run_source"] == "no rounds: 64 MiB prior of a run"


def test_verdicts_relative_to_a_suite_shift_say_so(tmp_path: Path) -> None:
    """Everything 6 % slower, one kernel 10 %: the -6 % rows are unchanged relative to the shift,
    the -10 % one a regression relative to it; both say so."""
    names = [f"type: t{i}" for i in range(12)]
    base = [spec(n, TB) for n in names]
    head = [spec(n, TB * (0.90 if n == names[0] else 0.94)) for n in names]
    b, h = pair(tmp_path, base, head)
    md = compare(b, h, "-f", "markdown", "--suite-shift-limit", "100%").stdout
    reg, same = table_row(md, names[0]), table_row(md, names[1])
    assert "regression" in reg[-2] and reg[-1].startswith("judged relative to the suite-wide shift -6.00 %")
    # moved 6 % with a suite whose shift does not count: not "unchanged", and it says why
    assert "inconclusive" in same[-2] and "moved with the suite" in same[-1] and "-6.00 %" in same[-1]
    term = compare(b, h).stdout  # by default the -6 % shift counts, and every row that moved is a regression
    assert "12 regressions" in term


def test_warnings_reach_the_markdown(tmp_path: Path) -> None:
    b = write(tmp_path / "base.json", document([spec("a", TB)]))
    h = write(tmp_path / "head.json", document([spec("a", TB)], gpu={"name": "NVIDIA H200", "uuid": "GPU-x"}))
    md = compare(str(b), str(h), "-f", "markdown").stdout
    assert "> **Warning:** physical GPU (same model) differs: base GPU-0a1b2c3d, head GPU-x" in md


def test_history_compare_markdown_keeps_its_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8: the fork-point note of `history compare` reaches the markdown, not only the terminal."""
    db = hd.standard_history(tmp_path)
    monkeypatch.chdir(tmp_path)  # not a git checkout: git cannot name the fork point
    r = CliRunner().invoke(app, ["history", "compare", "feat", "--base", "main", "--db", str(db),
                                 "--format", "markdown", "--fail-on", "never"])
    assert r.exit_code == 0, r.output
    assert "> **Warning:** fork point unknown" in r.stdout


def test_footer_claims_no_prior() -> None:
    """Item 8: the footer named a 0.1 % prior that history had replaced; it names none now."""
    from primbench.compare.model import Comparison, Method, Summary

    c = Comparison(rows=(), warnings=[], summary=Summary(counts={}, compared=0, geomean_ratio=None),
                   method=Method(threshold=0.005, alpha=0.05, description=""))
    assert "0.1 %" not in method_line(c) and "measured process and suite priors" in method_line(c)


def test_removed_and_added_rows_keep_their_unit(tmp_path: Path) -> None:
    """Item 8: a removed items/s-only row printed its value as B/s."""
    items_only = spec("type: gone", 0.0, items_per_second=5e9)
    b, h = pair(tmp_path, [spec("a", TB), items_only], [spec("a", TB), spec("type: new", 0.0, items_per_second=7e9)])
    md = compare(b, h, "-f", "markdown").stdout
    assert table_row(md, "type: gone")[1] == "5.00 Gitems/s"
    assert table_row(md, "type: new")[2] == "7.00 Gitems/s"
    data = json.loads(compare(b, h, "-f", "json").stdout)
    assert {s["name"]: s["metric"] for s in data["specializations"]}["type: gone"] == "items_per_second"


# --------------------------------------------------------------------------- item 5: 80 columns


def _mixed(tmp_path: Path) -> tuple[str, str]:
    """Two algorithms, a long name, items/s values: the widest rows compare prints."""
    algo = "reduce_by_key_long_algorithm_name"
    sides = {
        "base": ([spec(LONG, TB, items_per_second=TB * 8), spec("type: char", TB), spec("type: short", TB)],
                 [spec("type: char", TB, algo=algo)]),
        "head": ([spec(LONG, TB * 0.97, items_per_second=TB * 8 * 0.97, noise_timeout=True),
                  spec("type: char", TB * 0.9), spec("type: short", TB)],
                 [spec("type: char", TB * 1.05, algo=algo)]),
    }
    for side, (copy, other) in sides.items():
        (tmp_path / side).mkdir()
        write(tmp_path / side / "copy.json", document(copy))
        write(tmp_path / side / "other.json", document(other, algorithm=algo))
    return str(tmp_path / "base"), str(tmp_path / "head")


@pytest.mark.parametrize("columns", ["80", "60"])
def test_terminal_table_fits_columns(tmp_path: Path, columns: str) -> None:
    """COLUMNS is honoured: every line fits, names wrap (never cut), a left-out column is named."""
    b, h = _mixed(tmp_path)
    r = compare(b, h, env={"COLUMNS": columns})
    width = int(columns)
    assert r.exit_code == 1
    assert max(len(ln) for ln in r.stdout.splitlines()) <= width, r.stdout
    assert "regression" in r.stdout and "type: char" in r.stdout
    assert "\u2502" not in r.stdout and "\x1b[" not in r.stdout  # no colour when piped
    words = " ".join(r.stdout.split())
    assert LONG.split(",")[0] in words and "size: 128MiB" in words  # wrapped, not cut
    assert f"note: {width} columns: left out " in words and "Detectable" in words


@pytest.mark.parametrize("env", [{}, {"CI": "true"}, {"GITHUB_ACTIONS": "true", "FORCE_COLOR": "1"}])
def test_piped_and_ci_tables_are_full_width_and_unwrapped(tmp_path: Path, env: dict[str, str]) -> None:
    """A pipe or a CI log: every column, one line a row, no name or unit split."""
    b, h = _mixed(tmp_path)
    out = compare(b, h, env={"COLUMNS": "", **env}).stdout
    header = next(ln for ln in out.splitlines() if "Specialization" in ln)
    for col in ("Algorithm", "Base", "Head", "Change", "Detectable", "Verdict", "Why"):
        assert col in header
    assert any(ln.startswith("copy") and LONG in ln for ln in out.splitlines())  # the long name on one line
    assert "left out" not in out and all(ln == ln.rstrip() for ln in out.splitlines())


def test_wider_terminals_show_more_columns(tmp_path: Path) -> None:
    b, h = _mixed(tmp_path)
    narrow = compare(b, h, env={"COLUMNS": "80"}).stdout.splitlines()
    wide = compare(b, h, env={"COLUMNS": "200"}).stdout.splitlines()
    head_narrow = next(ln for ln in narrow if "Specialization" in ln)
    head_wide = next(ln for ln in wide if "Specialization" in ln)
    assert "Detectable" not in head_narrow and "Detectable" in head_wide
    assert "Algorithm" in head_wide and "Base" in head_wide
    assert len(wide) < len(narrow)  # no wrapped names


# --------------------------------------------------------------------------- item 6: 10,000 specializations


@pytest.fixture(scope="module")
def ten_thousand(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """10,000 specializations: 40 regressions, 20 improvements, 30 inconclusive, the rest unchanged."""
    tmp = tmp_path_factory.mktemp("big")
    base, head = [], []
    for i in range(10_000):
        name = f"ipt: {i % 7}, op: copy, type: t{i}, size: {1 << (i % 12)}KiB"
        base.append(spec(name, TB))
        if i % 250 == 3:
            head.append(spec(name, TB * 0.97))
        elif i % 500 == 7:
            head.append(spec(name, TB * 1.04))
        elif i % 333 == 5:
            head.append(spec(name, TB * 0.9, noise_timeout=True, round_cv=None))
        else:
            head.append(spec(name, TB))
    return pair(tmp, base, head)


def test_markdown_of_10000_specializations_fits_a_pull_request_comment(ten_thousand: tuple[str, str]) -> None:
    start = time.process_time()  # CPU time: what other processes on the machine do does not count
    r = compare(*ten_thousand, "--format", "markdown")
    elapsed = time.process_time() - start
    assert r.exit_code == 1
    md = r.stdout
    assert len(md.encode("utf-16-le")) // 2 <= MARKDOWN_LIMIT
    lines = md.splitlines()
    assert lines[3].startswith("**40 regressions, 20 improvements, 9910 unchanged, 30 inconclusive")
    verdicts = [ln.split(" | ")[-2] for ln in lines if ln.startswith("| ipt:")]
    order = ["regression", "improvement", "inconclusive", "unchanged"]
    ranks = [next(k for k, v in enumerate(order) if v in cell) for cell in verdicts]
    assert ranks == sorted(ranks) and ranks[:60] == [0] * 40 + [1] * 20  # every regression and improvement shown
    note = next(ln for ln in lines if "not shown" in ln)
    assert note.startswith(f"{10_000 - len(verdicts):,} rows not shown (") and "unchanged" in note
    assert "`--format json`" in note and "65,536 characters" in note
    assert lines[-1].startswith("<sub>threshold")
    assert elapsed < 30


def test_max_rows_caps_markdown_and_terminal(ten_thousand: tuple[str, str]) -> None:
    md = compare(*ten_thousand, "--format", "markdown", "--max-rows", "5").stdout
    assert sum(ln.startswith("| ipt:") for ln in md.splitlines()) == 5
    assert "9,995 rows not shown (35 regression, 20 improvement, 30 inconclusive, 9,910 unchanged)" in md
    assert "--max-rows 5" in md
    term = compare(*ten_thousand).stdout
    assert sum(1 for ln in term.splitlines() if ln.startswith("ipt:")) == TERMINAL_ROWS
    assert f"note: … {10_000 - TERMINAL_ROWS:,} rows not shown" in term and "--max-rows 0" in term
    every = compare(*ten_thousand, "--max-rows", "0", "--changed-only").stdout
    assert sum(1 for ln in every.splitlines() if ln.startswith("ipt:")) == 90
    assert "not shown" not in every
