"""The one table engine and policy of every command (`primbench compare`, `history compare`,
`history runs|series|branches|regressions|…`): a Rich table, laid out by one rule.

* **Width.** ``COLUMNS`` set: that width. Else a terminal (the stream is a TTY, and neither
  ``CI`` nor ``GITHUB_ACTIONS`` is set): the terminal's width. Else (a pipe, a file, a CI log,
  even with colour forced): the table's full natural width, nothing wrapped, so a log line is
  one row and a name or a value is never split.
* **Columns.** Where the width is limited, wrapping columns (names) shrink to down to 12
  characters; where even that does not fit, the columns of lowest priority are left out, and a
  note after the table names them. A column is never dropped without that note.
* **Box.** A terminal: a rule under the header. A pipe: none (plain columns for grep and awk).
* **Rows.** At most `limit` rows (a terminal 50 unless the caller says otherwise, a pipe
  `PIPE_LIMIT`), with a note of how many were left out and how to get them all.

Measured (Rich 15, this repository's 2-core CI machine): a 6-column table of 10,000 rows takes
2–3 s to lay out and print (about 0.2 ms a row; `tests/benchmarks/rich_tables_bench.txt`), so a
pipe is capped at `PIPE_LIMIT` rows and everything is one ``--format csv``/``json`` away.

Cells come formatted by the caller; every string goes through `term_clean`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from primbench.textsafe import term_clean

DEFAULT_LIMIT = 50  # rows of a terminal table, unless the caller says otherwise
PIPE_LIMIT = 10_000  # rows of a piped table (about 3 s of Rich), unless the caller says otherwise
_PAD = 2  # columns are separated by two spaces (Rich: one each side)
MIN_WRAP = 12  # a wrapping column shrinks to no less than this


@dataclass(frozen=True)
class Column:
    """A column: its key and header, its priority (0: always shown; higher: left out first on a
    narrow width), right-aligned numbers, whether it may wrap (names, reasons), and whether the
    row's style colours it (`styled`; None: every column takes the row's style)."""

    key: str
    header: str
    priority: int = 0
    right: bool = False
    wrap: bool = False
    styled: bool | None = None


@dataclass(frozen=True)
class Layout:
    """What a width shows: the columns kept and those left out."""

    shown: list[Column]
    dropped: list[Column]


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no")


def table_width(console: Any, env: Mapping[str, str] | None = None) -> int | None:
    """The width a table gets (see the module): ``COLUMNS``; else a TTY's width outside CI;
    else None (full natural width, unwrapped)."""
    env = os.environ if env is None else env
    columns = env.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if _truthy(env.get("CI")) or _truthy(env.get("GITHUB_ACTIONS")):
        return None
    try:
        tty = bool(console.file.isatty())
    except (AttributeError, ValueError):
        tty = False
    return int(console.width) if tty else None


def fit(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int | None) -> Layout:
    """The columns that fit in `width` (None: all): every column at its widest cell, except
    wrapping ones at down to `MIN_WRAP` characters; the lowest priority (the highest number,
    rightmost first) goes first until the rest fit. Columns of priority 0 always stay."""
    if width is None:
        return Layout(list(columns), [])
    from rich.cells import cell_len

    natural = [max([cell_len(c.header)] + [cell_len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    least = [min(n, max(MIN_WRAP, cell_len(c.header))) if c.wrap else n for n, c in zip(natural, columns, strict=True)]
    keep = list(range(len(columns)))
    by_priority = sorted(keep, key=lambda i: (columns[i].priority, i), reverse=True)

    def need(kept: Sequence[int]) -> int:
        return sum(least[i] for i in kept) + _PAD * max(len(kept) - 1, 0)

    for i in by_priority:
        if need(keep) <= width or columns[i].priority == 0:
            break
        keep.remove(i)
    return Layout([columns[i] for i in keep], [c for i, c in enumerate(columns) if i not in keep])


def render(rows: Sequence[Sequence[Any]], columns: Sequence[Column], cell: Callable[[Any, str], str] | None = None,
           *, title: str | None = None, limit: int | None = None, newest_last: bool = False,
           styles: Sequence[str | None] | None = None, console: Any = None,
           left_out: Callable[[Sequence[int]], str] | None = None) -> list[str]:
    """Print `rows` (tuples in the order of `columns`, formatted by `cell(value, key)`, or
    strings already) as a table; return the notes printed after it (rows and columns left out).
    `limit`: None for the default (`DEFAULT_LIMIT` on a terminal, `PIPE_LIMIT` in a pipe), 0
    for all. `newest_last`: keep the last rows when capping. `left_out`: the note for the rows
    not shown (given their indices), instead of the default."""
    from primbench.console import make_console

    console = console or make_console()
    width = table_width(console)
    cap = (DEFAULT_LIMIT if width is not None and console.is_terminal else PIPE_LIMIT) if limit is None else limit
    total = len(rows)
    index = list(range(total))
    if cap and total > cap:
        index = index[total - cap:] if newest_last else index[:cap]
    fmt = cell or (lambda value, _key: "" if value is None else str(value))
    cells = [[term_clean(fmt(rows[i][j], c.key)) for j, c in enumerate(columns)] for i in index]
    notes: list[str] = []
    if len(index) < total:
        shown = set(index)
        hidden = [i for i in range(total) if i not in shown]
        if left_out is not None:
            notes.append(left_out(hidden))
        else:
            which = "oldest" if newest_last else "last"
            notes.append(f"{total - len(index):,} of {total:,} rows not shown (the {which}); --limit N shows N, "
                         "--limit 0 all, --format csv or json everything")
    layout = _rich(columns, cells, fit(columns, cells, width), title,
                   [styles[i] for i in index] if styles else None, console, width)
    if layout.dropped:
        notes.append(f"{width} columns: left out {', '.join(c.header for c in layout.dropped)} "
                     "(a wider terminal, COLUMNS=N or --format json shows them)")
    for n in notes:
        emit(console, f"note: {n}", style="dim", markup=False, highlight=False, soft_wrap=width is None,
             crop=width is not None)
    return notes


def _table(columns: Sequence[Column], cells: Sequence[Sequence[str]], at: Sequence[int], title: str | None,
           styles: Sequence[str | None] | None, full: bool) -> Any:
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    natural = {i: max([cell_len(columns[i].header)] + [cell_len(r[i]) for r in cells]) for i in at}
    table = Table(title=Text(term_clean(title)) if title else None, title_justify="left",
                  box=None if full else box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
                  collapse_padding=not full, expand=False)
    for i in at:
        c = columns[i]
        wraps = c.wrap and not full
        table.add_column(c.header, justify="right" if c.right else "left", no_wrap=not wraps,
                         overflow="fold" if wraps or full else "ignore",
                         width=natural[i] if full else None,
                         min_width=min(natural[i], max(MIN_WRAP, cell_len(c.header))) if wraps else natural[i])
    any_styled = any(c.styled for c in columns)
    for k, row in enumerate(cells):
        style = styles[k] if styles else None
        if style and any_styled:
            table.add_row(*(Text(row[i], style=style if columns[i].styled else "") for i in at))
        else:
            table.add_row(*(Text(row[i]) for i in at), style=style)
    return table


def _rich(columns: Sequence[Column], cells: Sequence[Sequence[str]], layout: Layout, title: str | None,
          styles: Sequence[str | None] | None, console: Any, width: int | None) -> Layout:
    """Print the table; on a limited width, leave out more columns (lowest priority first) while
    Rich cannot fit what `fit` kept. Returns the layout printed."""
    from rich.cells import cell_len

    at = [columns.index(c) for c in layout.shown]
    full = width is None
    if not full:
        assert width is not None
        by_priority = [i for i in sorted(at, key=lambda i: (columns[i].priority, i), reverse=True)
                       if columns[i].priority > 0]
        while True:
            text = _captured(console, _table(columns, cells, at, title, styles, full), width=width)
            if not by_priority or max((cell_len(ln) for ln in _plain_lines(console, text)), default=0) <= width:
                break
            at.remove(by_priority.pop(0))
        console.file.write(text)
        return Layout([columns[i] for i in at], [c for i, c in enumerate(columns) if i not in at])
    table = _table(columns, cells, at, title, styles, full)
    natural = [max([cell_len(columns[i].header)] + [cell_len(r[i]) for r in cells]) for i in at]
    total = max(sum(natural) + _PAD * max(len(at) - 1, 0) + 2, cell_len(title or ""))
    saved = console.width
    console.width = max(total, 20)  # Rich prints no wider than its console: widen it for this table
    try:
        emit(console, table, crop=False)
    finally:
        console.width = saved
    return layout


def _captured(console: Any, renderable: Any, **kwargs: Any) -> str:
    """What `console.print` would write, without the spaces Rich pads lines with at their end."""
    with console.capture() as captured:
        console.print(renderable, **kwargs)
    return "\n".join(ln.rstrip() for ln in captured.get().split("\n"))


def _plain_lines(console: Any, text: str) -> list[str]:
    from rich.text import Text

    return Text.from_ansi(text).plain.split("\n") if "\x1b" in text else text.split("\n")


def emit(console: Any, renderable: Any, **kwargs: Any) -> None:
    """`console.print`, without the spaces Rich pads lines with at their end."""
    console.file.write(_captured(console, renderable, **kwargs))
