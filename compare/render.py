"""Renderings of a Comparison: a terminal table (Rich), GitHub-flavoured markdown, JSON."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from compare.model import Comparison, SpecComparison, Verdict
from primbench.console import si
from primbench.textsafe import md_escape, term_clean

if TYPE_CHECKING:
    from rich.console import Console

STYLES = {
    Verdict.REGRESSION: "bold red",
    Verdict.IMPROVEMENT: "bold green",
    Verdict.UNCHANGED: "",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.ADDED: "cyan",
    Verdict.REMOVED: "cyan",
}

ICONS = {
    Verdict.REGRESSION: "🔴",
    Verdict.IMPROVEMENT: "🟢",
    Verdict.UNCHANGED: "⚪",
    Verdict.INCONCLUSIVE: "🟡",
    Verdict.ADDED: "➕",
    Verdict.REMOVED: "➖",
}

UNITS = {"bytes_per_second": "B/s", "items_per_second": "items/s"}


def _value(row: SpecComparison, value: float | None) -> str:
    if value is None:
        return "—"
    return si(value, UNITS.get(row.metric or "bytes_per_second", "B/s"))


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
    words = [
        (Verdict.REGRESSION, "regression"), (Verdict.IMPROVEMENT, "improvement"),
        (Verdict.UNCHANGED, "unchanged"), (Verdict.INCONCLUSIVE, "inconclusive"),
        (Verdict.ADDED, "added"), (Verdict.REMOVED, "removed"),
    ]
    parts = []
    for v, word in words:
        n = counts.get(v, 0)
        parts.append(_plural(n, word) if v in (Verdict.REGRESSION, Verdict.IMPROVEMENT) else f"{n} {word}")
    g = c.summary.geomean_ratio
    geo = f"geometric mean of head/base {g:.4f} ({(g - 1) * 100:+.2f} %)" if g is not None else "no geometric mean"
    return f"{', '.join(parts)}; {geo} over {c.summary.compared} compared"


def method_line(c: Comparison) -> str:
    return (f"threshold ±{c.threshold * 100:g} %, α = {c.alpha:g} (Benjamini–Hochberg across specializations), "
            "t-tests against the spread between rounds and repeats (moderated across the suite) or history's, "
            f"whichever is larger; suite-wide shifts beyond {c.method.suite_shift_limit * 100:g} % count")


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


def _rows(c: Comparison, changed_only: bool) -> list[SpecComparison]:
    if not changed_only:
        return list(c.rows)
    return [r for r in c.rows if r.verdict is not Verdict.UNCHANGED]


def _multi_algorithm(c: Comparison) -> bool:
    return len({r.algorithm for r in c.rows}) > 1


# --------------------------------------------------------------------------- terminal


def render_terminal(c: Comparison, console: Console, *, changed_only: bool = False) -> None:
    """A table with one row per specialization, warnings above it, the summary below.

    The table is laid out here and printed as one styled text (a Rich Table takes seconds
    for 10,000 rows)."""
    from rich.text import Text

    console.print(Text.assemble(("base: ", "bold"), term_clean(_side_label(c, "base"))))
    console.print(Text.assemble(("head: ", "bold"), term_clean(_side_label(c, "head"))))
    for w in c.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), term_clean(w)))
    multi = _multi_algorithm(c)
    header = (["Algorithm"] if multi else []) + [
        "Specialization", "Base", "Head", "Change", "Detectable", "Verdict"]
    right = ([False] if multi else []) + [False, True, True, True, True, False]
    rows = _rows(c, changed_only)
    table: list[tuple[list[str], SpecComparison]] = []
    for r in rows:
        cells = [term_clean(r.name), _value(r, r.base_value), _value(r, r.head_value), _change(r.change),
                 _detectable(r), r.verdict.value]
        table.append((([term_clean(r.algorithm)] if multi else []) + cells, r))
    widths = [max([len(h)] + [len(cells[i]) for cells, _ in table]) for i, h in enumerate(header)]
    change_col, verdict_col = len(header) - 3, len(header) - 1

    def pad(i: int, text: str) -> str:
        return text.rjust(widths[i]) if right[i] else text.ljust(widths[i])

    out = Text()
    out.append("  ".join(pad(i, h) for i, h in enumerate(header)).rstrip(), style="bold")
    for cells, r in table:
        out.append("\n")
        style = STYLES[r.verdict]
        for i, cell in enumerate(cells):
            if i:
                out.append("  ")
            text = pad(i, cell) if i < len(cells) - 1 else cell
            colour = style if i == verdict_col or (i == change_col and r.verdict in _CHANGES) else ""
            out.append(text, style=colour or None)
    console.print(out, no_wrap=True, overflow="ignore", crop=False)
    counts = c.summary.counts
    console.print(Text.assemble(("Summary: ", "bold"),
                                (summary_line(c), "bold red" if counts.get(Verdict.REGRESSION) else "")))
    console.print(Text(method_line(c), style="grey50"))


_CHANGES = (Verdict.REGRESSION, Verdict.IMPROVEMENT)


# --------------------------------------------------------------------------- markdown


_md = md_escape  # every value that comes from a results file, on one line


def render_markdown(c: Comparison, *, changed_only: bool = False) -> str:
    """A GitHub-flavoured summary line and table, for PR comments and CI job summaries."""
    lines = ["### primbench compare", ""]
    lead = summary_line(c)
    if c.summary.regressions:
        lead = f"**{lead}**"
    lines.append(lead)
    lines.append("")
    lines.append(f"Base: {_md(_side_label(c, 'base'))}  ")
    lines.append(f"Head: {_md(_side_label(c, 'head'))}")
    lines.append("")
    for w in c.warnings:
        lines.append(f"> **Warning:** {_md(w)}")
    if c.warnings:
        lines.append("")
    multi = _multi_algorithm(c)
    header = (["Algorithm"] if multi else []) + ["Specialization", "Base", "Head", "Change", "Detectable", "Verdict"]
    align = (["---"] if multi else []) + ["---", "---:", "---:", "---:", "---:", "---"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(align) + "|")
    rows = _rows(c, changed_only)
    for r in rows:
        verdict = f"{ICONS[r.verdict]} {r.verdict.value}"
        if r.verdict is Verdict.REGRESSION:
            verdict = f"**{verdict}**"
        cells = ([_md(r.algorithm)] if multi else []) + [
            _md(r.name), _value(r, r.base_value), _value(r, r.head_value), _change(r.change), _detectable(r), verdict,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if changed_only and len(rows) < len(c.rows):
        lines.append("")
        lines.append(f"{len(c.rows) - len(rows)} unchanged specialization(s) not shown.")
    lines.append("")
    lines.append(f"<sub>{_md(method_line(c))}</sub>")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- JSON


def render_json(c: Comparison) -> str:
    """The whole comparison, every verdict with its reason, test and p-values, on one line
    (the C encoder: 10,000 rows in well under a second; pipe through ``jq`` to read it)."""
    return json.dumps(c.to_dict(), ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
