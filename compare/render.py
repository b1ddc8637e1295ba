"""Renderings of a Comparison: a terminal table (Rich), GitHub-flavoured markdown, JSON."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, overload

import msgspec

from primbench.compare.model import VERDICTS, Comparison, ReasonKind, SpecComparison, Verdict
from primbench.metrics import by_name
from primbench.textsafe import md_escape, term_clean

if TYPE_CHECKING:
    from rich.console import Console

def _value(row: SpecComparison, value: float | None) -> str:
    """A value in its row's metric, as the registry prints it (``2.72 TB/s``, ``5.72 µs``)."""
    if value is None:
        return "—"
    return by_name(row.metric or "bytes_per_second").format(value)


def _change(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.2f} %"


def _noise(value: float | None, timeout: bool) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.3f} %" + (" (timeout)" if timeout else "")


def _detectable(row: SpecComparison) -> str:
    """The smallest change these runs could have flagged (a noise timeout marks it)."""
    if row.min_detectable_change is None or not math.isfinite(row.min_detectable_change):
        return "—"
    timeout = "*" if row.base_noise_timeout or row.head_noise_timeout else ""
    return f"±{row.min_detectable_change * 100:.2f} %{timeout}"


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def summary_line(c: Comparison) -> str:
    """``1 regression, 0 improvements, … · geometric mean −0.13 % over 14 compared``."""
    counts = c.summary.counts
    shown = [Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.UNCHANGED, Verdict.INCONCLUSIVE, Verdict.ADDED,
             Verdict.REMOVED]
    if counts.get(Verdict.SKIPPED, 0):  # only where a benchmark skipped one (results 4.5.0)
        shown.append(Verdict.SKIPPED)
    words = [(v, VERDICTS[v].word) for v in shown]
    parts = []
    for v, word in words:
        n = counts.get(v, 0)
        parts.append(_plural(n, word) if v in (Verdict.REGRESSION, Verdict.IMPROVEMENT) else f"{n} {word}")
    if c.summary.not_comparable:
        parts.append(f"{c.summary.not_comparable} not comparable (counted as inconclusive)")
    g = c.summary.geomean_ratio
    lower = c.method.metric if c.method.metric in ("energy", "graph") else "time"  # --metric energy, graph
    of = "" if c.summary.higher_is_better else f" {by_name(lower).label}"
    geo = f"geometric mean of head/base{of} {g:.4f} ({(g - 1) * 100:+.2f} %)" if g is not None else "no geometric mean"
    return f"{', '.join(parts)}; {geo} over {c.summary.compared} compared"


def method_line(c: Comparison) -> str:
    return (f"threshold ±{c.threshold * 100:g} %, α = {c.alpha:g} (Benjamini–Hochberg across specializations), "
            "t-tests against each run's rounds plus the measured process and suite priors (or repeats, or history), "
            f"absolute and relative to the suite; a significant suite-wide shift beyond "
            f"{c.method.suite_shift_limit * 100:g} % counts; smallest detectable change at 80 % power")


def _side_label(c: Comparison, side: str) -> str:
    ctx = c.context.get(side) or {}
    files = ", ".join(ctx.get("files") or [])
    commit = ctx.get("commit")
    if isinstance(commit, str) and len(commit) > 12 and all(ch in "0123456789abcdef" for ch in commit.lower()):
        commit = commit[:12]
    ref = "@".join(str(x) for x in (ctx.get("branch"), commit) if x)
    gpu = ctx.get("gpu")
    extra = ", ".join(str(x) for x in (ref, gpu) if x)
    return f"{files}" + (f" ({extra})" if extra else "")


#: Order of the rows in the tables: what needs a look first (the verdicts' rank,
#: `primbench.compare.model.VERDICTS`). Within a verdict, the largest regressions and
#: improvements come first, every other row keeps the order of base.
PRIORITY = tuple(sorted(VERDICTS, key=lambda v: VERDICTS[v].rank))
#: Rows of a terminal table unless --max-rows says otherwise.
TERMINAL_ROWS = 100
#: A GitHub pull-request comment holds at most this many characters (counted as UTF-16 units).
MARKDOWN_LIMIT = 65_536
FULL_OUTPUT = "every row with its reason: `--format json`"
#: The first line of the markdown: hidden in a rendered comment; a sticky-comment action (or a
#: script) finds the comment to update by it.
MARKER = "<!-- primbench-compare -->"
#: Rows the markdown's head names (the worst first) before the table.
WORST = 3



def _rank(r: SpecComparison) -> tuple[int, float]:
    size = -abs(r.change) if r.change is not None and r.verdict in _CHANGES else 0.0
    return VERDICTS[r.verdict].rank, size


class _Cells(Sequence[tuple[str, ...]]):
    """The cells of a table's rows, made when a row is read: a table shows its first rows
    only (`primbench.tables.render`), and 100,000 rows need not be formatted for 100."""

    def __init__(self, rows: Sequence[SpecComparison], make: Callable[[SpecComparison], tuple[str, ...]]) -> None:
        self._rows, self._make = rows, make
        self._made: dict[int, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> tuple[str, ...]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[str, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[str, ...] | list[tuple[str, ...]]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self._rows))[i]]
        k = i + len(self._rows) if i < 0 else i
        made = self._made.get(k)
        if made is None:
            made = self._made[k] = self._make(self._rows[k])
        return made


def _rows(c: Comparison, changed_only: bool) -> list[SpecComparison]:
    """The rows a table may show, in its order (`PRIORITY`; the largest changes first)."""
    rows = c.rows if not changed_only else [r for r in c.rows if r.verdict is not Verdict.UNCHANGED]
    return sorted(rows, key=_rank)


def _left_out(rows: list[SpecComparison]) -> str:
    """``9,900 rows not shown (12 inconclusive, 9,888 unchanged)``."""
    counts = {v: 0 for v in PRIORITY}
    for r in rows:
        counts[r.verdict] += 1
    parts = ", ".join(f"{n:,} {VERDICTS[v].word}" for v, n in counts.items() if n)
    return f"{len(rows):,} {'row' if len(rows) == 1 else 'rows'} not shown ({parts})"


def _multi_algorithm(c: Comparison) -> bool:
    return len({r.algorithm for r in c.rows}) > 1


def why(row: SpecComparison, c: Comparison) -> str:
    """One short clause for a verdict that needs one (empty for a plain regression, improvement
    or unchanged): why a row is inconclusive (noise timeout, throttled SM clock, no run-to-run
    variability, too noisy), that it was judged relative to a suite-wide shift, a failure."""
    if not row.comparable:
        return _short("; ".join(row.not_comparable))
    if row.verdict in (Verdict.INCONCLUSIVE, Verdict.SKIPPED):
        return _short(row.clause)  # the reason without its statistics
    if row.verdict in (Verdict.ADDED, Verdict.REMOVED):
        side = "head" if row.verdict is Verdict.ADDED else "base"
        if row.reason_kind is ReasonKind.FAILED and (failure := row.failure) is not None:
            return _short(f"failed in {side}: {failure}")
        timeout = row.head_noise_timeout if row.verdict is Verdict.ADDED else row.base_noise_timeout
        return f"noise timeout in {side}" if timeout else ""
    shift = c.suite_shift
    if shift is not None and row.relative_change is not None and row.change is not None:
        moved = (abs(row.change) >= c.threshold) != (abs(row.relative_change) >= c.threshold)
        if shift.detected or moved:
            # the shift of the row's own suite (each pair of GPUs' with --devices: compare.core._judge_by_process)
            # in the row's own direction (a time row of a throughput suite sees 1/(1+x) - 1): what its
            # change and its change relative to the suite imply
            suite = (1 + row.change) / (1 + row.relative_change) - 1
            return (f"judged relative to the suite-wide shift {suite * 100:+.2f} %: "
                    f"{row.relative_change * 100:+.2f} %")
    return ""


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _utf16(text: str) -> int:
    """Length as GitHub counts a comment: UTF-16 code units (an emoji is two)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


# --------------------------------------------------------------------------- terminal


def verdict_label(row: SpecComparison) -> str:
    """``regression``, …, or ``not comparable`` for a row whose sides measure different things."""
    return "not comparable" if not row.comparable else VERDICTS[row.verdict].word


def render_terminal(c: Comparison, console: Console, *, changed_only: bool = False,
                    max_rows: int | None = TERMINAL_ROWS, notes: Sequence[str] = ()) -> None:
    """Warnings, then one row per specialization (`primbench.tables`: the terminal's width on
    a terminal, the full width unwrapped in a pipe or CI log; a column left out is named in a
    note), then the summary. A verdict that needs a reason says why in the last column. At
    most `max_rows` rows (None or 0: all), regressions first; a note says what was left out."""
    from rich.text import Text

    from primbench.tables import Column, emit, render, table_width

    width = table_width(console)

    def line(label: str, text: str, style: str) -> None:
        emit(console, Text.assemble((label, style), term_clean(text)), soft_wrap=width is None, width=width,
             overflow="fold" if width is not None else "ignore", crop=width is not None)

    line("base: ", _side_label(c, "base"), "bold")
    line("head: ", _side_label(c, "head"), "bold")
    for n in notes:
        line("note: ", n, "bold")
    for w in c.warnings:
        line("warning: ", w, "bold yellow")
    multi = _multi_algorithm(c)
    columns = ([Column("algorithm", "Algorithm", 0, wrap=True)] if multi else []) + [
        Column("name", "Specialization", 0, wrap=True), Column("base", "Base", 2, right=True),
        Column("head", "Head", 2, right=True), Column("change", "Change", 0, right=True, styled=True),
        Column("detectable", "Detectable", 4, right=True), Column("verdict", "Verdict", 0, styled=True),
        Column("why", "Why", 1, wrap=True)]
    candidates = _rows(c, changed_only)
    limit = max_rows if max_rows else len(candidates)
    table = _Cells(candidates, lambda r: ((r.algorithm,) if multi else ()) + (
        r.name, _value(r, r.base_value), _value(r, r.head_value), _change(r.change), _detectable(r),
        verdict_label(r), why(r, c)))
    styles = [VERDICTS[r.verdict].style if r.comparable else "magenta" for r in candidates]
    render(table, columns, title=None, limit=limit, styles=styles, console=console,
           left_out=lambda hidden: f"… {_left_out([candidates[i] for i in hidden])}: --max-rows 0 shows them all; "
                                   f"{FULL_OUTPUT}")
    regressed = VERDICTS[Verdict.REGRESSION].style if c.summary.regressions else ""
    summary = Text.assemble(("Summary: ", "bold"), (summary_line(c), regressed))
    emit(console, summary, soft_wrap=width is None, width=width, crop=width is not None)
    emit(console, Text(method_line(c), style="grey50"), soft_wrap=width is None, width=width,
         crop=width is not None)


_CHANGES = (Verdict.REGRESSION, Verdict.IMPROVEMENT)


# --------------------------------------------------------------------------- markdown


_md = md_escape  # every value that comes from a results file, on one line
_WARNINGS_BUDGET = 16_000  # characters of warnings before the table (the rest are counted, not shown)


def render_markdown(c: Comparison, *, changed_only: bool = False, max_rows: int | None = None,
                    limit: int = MARKDOWN_LIMIT, notes: Sequence[str] = ()) -> str:
    """A GitHub-flavoured summary, warnings and table, for PR comments and CI job summaries.

    Starts with a hidden marker (`MARKER`) and a short head: the verdict counts and the worst
    `WORST` rows (regressions first, the largest changes first). Fits one pull-request comment
    (`limit` characters): the summary, every warning (as many as fit in `_WARNINGS_BUDGET`),
    then the rows in `PRIORITY` order, regressions first, each with a "Why" for a verdict that
    needs one, until `max_rows` or the limit; then a note of what was left out and where to
    find it."""
    lines = [MARKER, "### primbench compare", ""]
    lead = summary_line(c)
    if c.summary.regressions:
        lead = f"**{lead}**"
    lines.append(lead)
    lines.append("")
    worst = [r for r in _rows(c, True) if r.verdict not in (Verdict.ADDED, Verdict.REMOVED, Verdict.SKIPPED)]
    if worst:
        lines.append("Worst: " + "; ".join(
            f"{VERDICTS[r.verdict].icon} {_md(r.name)} {_change(r.change)} ({verdict_label(r)})"
            for r in worst[:WORST]))
        lines.append("")
    lines.append(f"Base: {_md(_side_label(c, 'base'))}  ")
    lines.append(f"Head: {_md(_side_label(c, 'head'))}")
    lines.append("")
    warnings = [*notes, *c.warnings]
    spent = 0
    for n, w in enumerate(warnings):
        line = f"> **Warning:** {_md(_short(w, 2_000))}"
        if spent + len(line) > _WARNINGS_BUDGET:
            lines.append(f"> **Warning:** {len(warnings) - n} more warning(s) not shown ({FULL_OUTPUT})")
            break
        lines.append(line)
        spent += len(line)
    if warnings:
        lines.append("")
    multi = _multi_algorithm(c)
    header = (["Algorithm"] if multi else []) + ["Specialization", "Base", "Head", "Change", "Detectable", "Verdict",
                                                 "Why"]
    align = (["---"] if multi else []) + ["---", "---:", "---:", "---:", "---:", "---", "---"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(align) + "|")
    footer = [f"<sub>{_md(method_line(c))}</sub>"]
    unchanged_hidden = len(c.rows) - sum(1 for r in c.rows if not changed_only or r.verdict is not Verdict.UNCHANGED)
    reserve = _utf16("\n".join(footer)) + 400  # the notes of what was left out
    used = _utf16("\n".join(lines)) + 1
    rows = _rows(c, changed_only)
    shown = 0
    for r in rows:
        if max_rows and shown >= max_rows:
            break
        verdict = f"{VERDICTS[r.verdict].icon} {verdict_label(r)}"
        if r.verdict is Verdict.REGRESSION:
            verdict = f"**{verdict}**"
        cells = ([_md(r.algorithm)] if multi else []) + [
            _md(r.name), _value(r, r.base_value), _value(r, r.head_value), _change(r.change), _detectable(r), verdict,
            _md(why(r, c)),
        ]
        line = "| " + " | ".join(cells) + " |"
        size = _utf16(line) + 1
        if used + size + reserve > limit:
            break
        lines.append(line)
        used += size
        shown += 1
    hidden = rows[shown:]
    if hidden or unchanged_hidden:
        lines.append("")
    if hidden:
        why_cut = (f"--max-rows {max_rows}" if max_rows and shown >= max_rows
                   else f"a pull-request comment holds {limit:,} characters")
        lines.append(f"{_left_out(hidden)}: {why_cut}; {FULL_OUTPUT}.")
    if unchanged_hidden:
        lines.append(f"{unchanged_hidden} unchanged specialization(s) not shown.")
    lines.append("")
    lines.extend(footer)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- JSON


def render_json(c: Comparison) -> str:
    """The whole comparison, every verdict with its reason, test and p-values, on one line
    (the C encoder: 10,000 rows in well under a second; pipe through ``jq`` to read it)."""
    return "".join(json_chunks(c))


#: Rows a piece of `json_chunks` holds.
JSON_ROWS = 2000


def json_chunks(c: Comparison, rows: int = JSON_ROWS) -> Iterator[str]:
    """`render_json`'s text in pieces, the same characters: the comparison without its rows, then
    its rows `rows` at a time, so that 100,000 rows are never all dicts and text at once (as one
    document: 130 MB of text and 400 MB of dicts at its peak)."""
    head = _dumps(dataclasses.replace(c, rows=()).to_dict())
    assert head.endswith(_NO_ROWS)  # `Comparison.to_dict`'s last key holds the rows
    yield head[:-len(_NO_ROWS)] + _ROWS_OPEN
    for start in range(0, len(c.rows), rows):
        part = ",".join(_dumps(r.to_dict()) for r in c.rows[start:start + rows])
        yield part if start == 0 else "," + part
    yield "]}\n"


_ROWS_OPEN = '"specializations":['
_NO_ROWS = _ROWS_OPEN + "]}"


def _dumps(value: object) -> str:
    """Compact JSON by msgspec's encoder (half the CPU of the standard library's at 10,000 rows;
    its floats are the shortest text that reads back as the same double, without an exponent)."""
    return msgspec.json.encode(value).decode()
