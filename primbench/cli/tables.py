"""Tables of `primbench history` for people: fitted to the terminal, plain when piped.

* **A terminal** (Rich says so; ``COLUMNS`` sets its width): a Rich table that fits the
  width. Names wrap instead of being cut; where even that does not fit, the columns of
  lowest priority are left out (and named in a note); a wider terminal shows more of them.
  At most `limit` rows (default 50), with a note of how many were left out.
* **A pipe or a file**: plain text, no box drawing, no colour, no wrapping: one line per
  row, columns separated by two spaces, every column. Rows are capped only when ``--limit``
  is given. This is fast (no layout engine): 100,000 rows in about a second.

Cells come formatted by the caller (`Column.cell`); every string goes through `term_clean`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from primbench.textsafe import term_clean

DEFAULT_LIMIT = 50  # rows of a terminal table, unless --limit says otherwise
_PAD = 2  # columns are separated by two spaces (Rich: one each side)


@dataclass(frozen=True)
class Column:
    """A column of a frame: its header, its priority (0: always shown; higher: left out first
    on a narrow terminal), right-aligned numbers, and whether it may wrap (names)."""

    key: str
    header: str
    priority: int = 0
    right: bool = False
    wrap: bool = False


@dataclass(frozen=True)
class Layout:
    """What a terminal of `width` columns shows: the columns kept, and those left out."""

    shown: list[Column]
    dropped: list[Column]


def fit(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> Layout:
    """The columns that fit in `width`: every column at its widest cell, except wrapping ones
    at down to 12 characters; the lowest priority (the highest number, rightmost first) goes
    first until the rest fit. Columns of priority 0 always stay."""
    natural = [max([len(c.header)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    least = [min(n, max(12, len(c.header))) if c.wrap else n for n, c in zip(natural, columns, strict=True)]
    keep = list(range(len(columns)))
    by_priority = sorted(keep, key=lambda i: (columns[i].priority, i), reverse=True)

    def need(kept: Sequence[int]) -> int:
        return sum(least[i] for i in kept) + _PAD * max(len(kept) - 1, 0)

    for i in by_priority:
        if need(keep) <= width or columns[i].priority == 0:
            break
        keep.remove(i)
    return Layout([columns[i] for i in keep], [c for i, c in enumerate(columns) if i not in keep])


def plain(columns: Sequence[Column], cells: Sequence[Sequence[str]], out: IO[str]) -> None:
    """Columns padded to their widest cell, two spaces apart, no box: for pipes and files."""
    widths = [max([len(c.header)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    last = len(columns) - 1

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if c.right else (v if i == last else v.ljust(w))
                 for i, (v, w, c) in enumerate(zip(values, widths, columns, strict=True))]
        return "  ".join(parts).rstrip()

    out.write(line([c.header for c in columns]) + "\n")
    out.write("\n".join(line(row) for row in cells) + ("\n" if cells else ""))


def render(rows: Sequence[Sequence[Any]], columns: Sequence[Column], cell: Callable[[Any, str], str], *,
           title: str | None = None, limit: int | None = None, newest_last: bool = False,
           styles: Sequence[str | None] | None = None, console: Any = None) -> list[str]:
    """Print `rows` (tuples in the order of `columns`) as a table; return the notes printed
    after it (rows and columns left out). `limit`: None for the default (50 rows on a
    terminal, all when piped), 0 for all. `newest_last`: keep the last rows when capping."""
    from primbench.console import make_console

    console = console or make_console()
    terminal = console.is_terminal
    cap = (DEFAULT_LIMIT if terminal else 0) if limit is None else limit
    total = len(rows)
    index = list(range(total))
    if cap and total > cap:
        index = index[total - cap:] if newest_last else index[:cap]
    cells = [[term_clean(cell(rows[i][j], c.key)) for j, c in enumerate(columns)] for i in index]
    notes: list[str] = []
    if len(index) < total:
        which = "oldest" if newest_last else "last"
        notes.append(f"{total - len(index):,} of {total:,} rows not shown (the {which}); --limit N shows N, "
                     "--limit 0 all, --format csv or json everything")
    if not terminal:
        if title:
            console.file.write(term_clean(title) + "\n")
        plain(columns, cells, console.file)
        for n in notes:
            console.file.write(f"note: {n}\n")
        return notes
    layout = fit(columns, cells, console.width)
    if layout.dropped:
        notes.append(f"{console.width} columns: left out {', '.join(c.header for c in layout.dropped)} "
                     "(a wider terminal or --format csv shows them)")
    _rich(columns, cells, layout, title, [styles[i] for i in index] if styles else None, console)
    for n in notes:
        console.print(f"note: {n}", style="dim", markup=False, highlight=False, soft_wrap=False)
    return notes


def _rich(columns: Sequence[Column], cells: Sequence[Sequence[str]], layout: Layout, title: str | None,
          styles: Sequence[str | None] | None, console: Any) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(term_clean(title)) if title else None, title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True)
    at = [columns.index(c) for c in layout.shown]
    for c in layout.shown:
        table.add_column(c.header, justify="right" if c.right else "left", no_wrap=not c.wrap,
                         overflow="fold" if c.wrap else "ellipsis",
                         min_width=None if c.wrap else max([len(c.header)] + [len(r[columns.index(c)])
                                                                               for r in cells]))
    for k, row in enumerate(cells):
        table.add_row(*(Text(row[i]) for i in at), style=styles[k] if styles else None)
    console.print(table)
