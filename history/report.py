"""The static HTML report of a branch: one file, works offline, every string escaped.

It answers first: a headline ("main: no regression in the last 14 commits", or "2 regressions
since abc123: …"), from the change points of the branch's history and its latest verdicts
against the base (comparable comparisons only: a base of another config or GPU model is never
taken, and a note says none exists). Then what needs attention: every change point and every
verdict that is not "unchanged", each linked to its chart; then the charts, the most
interesting first, at most `max_charts` of them (the others are listed by name), each an
interactive chart (`history.interactive`: hover values, drag to zoom, the base's level drawn
beside a branch's points); a series of one or two commits is a row of a table instead; then
the full tables.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.errors import UsageError
from primbench.history import interactive
from primbench.history.bounded import bounded
from primbench.history.changepoints import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_POINTS,
    DEFAULT_MIN_SHIFT,
    DEFAULT_MIN_SIZE,
    confidence_text,
)
from primbench.history.errors import HistoryError
from primbench.history.labels import model
from primbench.history.plots import Chart
from primbench.history.selector import Selector
from primbench.history.trends import cap_notes, regressions_in
from primbench.metrics import by_name
from primbench.textsafe import term_clean

if TYPE_CHECKING:
    import pandas as pd

    from primbench.history.branch_compare import BranchComparison

#: A series of this many commits or fewer is a table row, not a chart.
SHORT_SERIES = 2
#: About how many `series` rows (a run's specialization each, strings and all) the charts read in one
#: query (`_Drawing.rows`): the 40 charts of a window of 1,000 commits in one query, a chart a query
#: over a whole history of 100,000 runs.
CHART_ROWS = 50_000
#: DuckDB's threads while a report of a window of commits (`last`) reads a store file: its dozen
#: queries are short, and one thread spends less CPU on them than two (100,000 runs, a window of
#: 1,000 commits: 4.0 s of CPU instead of 4.5 s, 0.25 s more of wall time). A whole history keeps
#: every thread (its scans are long).
WINDOW_THREADS = 1
#: The base's commits a chart's reference line is the level of (the newest, up to the chart's last run's date).
REFERENCE_COMMITS = 30


def _rank(kind: str) -> int:
    """Where a verdict or a change point's kind sorts: the verdict table's rank
    (`primbench.compare.model.VERDICTS`, the one every renderer reads); a change point that is
    neither regression nor improvement (``up``, ``down``: a metric without a better direction)
    beside the improvements; anything else last."""
    from primbench.compare.model import VERDICTS, Verdict, look

    found = look(kind)
    if found is not None:
        return found.rank
    return VERDICTS[Verdict.IMPROVEMENT].rank if kind in ("up", "down") else 9


@dataclass
class Report:
    path: Path
    branch: str
    charts: int
    change_points: int
    verdicts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    size_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "branch": self.branch, "charts": self.charts,
                "change_points": self.change_points, "verdicts": self.verdicts, "notes": self.notes,
                "size_bytes": self.size_bytes}


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.regression{color:#b00;font-weight:bold}.improvement{color:#070;font-weight:bold}.inconclusive{color:#a60}
code{font-size:.9em}figure{margin:1em 0}img{max-width:100%}.muted{color:#777;font-size:.85em}
.headline{font-size:1.25em;font-weight:600;padding:.6em .9em;border-radius:6px}
.headline.good{background:#e9f6ec;color:#155724}.headline.bad{background:#fbeaea;color:#8a1c1c}
"""
_STAMP = "%Y-%m-%d %H:%M UTC"


def _e(value: Any) -> str:
    return html.escape("" if value is None else term_clean(value))


def _headline(branch: str, base: str, changes: pd.DataFrame, verdicts: Sequence[_Verdict], commits: int,
              comparisons: Sequence[tuple[str, BranchComparison]], metric: str | None) -> tuple[bool, str]:
    """(whether it regressed, the sentence) that answers "did `branch` regress?"."""
    found: list[tuple[float, str]] = []
    since: list[str] = []
    if not changes.empty:
        for c in changes.itertuples():
            if c.kind == "regression":
                found.append((-abs(c.shift or 0.0), f"{c.name} {c.shift * 100:+.1f} % at {str(c.commit)[:8]}"))
                since.append(str(c.previous_commit)[:8])
    for v in verdicts:
        if v.verdict == "regression":
            found.append((-abs(v.change or 0.0), f"{v.name} {(v.change or 0) * 100:+.1f} % against {base}"))
    for _, bc in comparisons:
        if any(v.verdict == "regression" for v in verdicts) and bc.base_commit:
            since.append(str(bc.base_commit)[:8])
    if not found:
        inconclusive = [v for v in verdicts if v.verdict == "inconclusive"]
        against = ""
        if inconclusive:
            worst = max(inconclusive, key=lambda v: abs(v.change or 0.0))
            moved = f", the largest change {worst.change * 100:+.1f} % ({worst.name})" if worst.change else ""
            against = (f"; against {base}: {len(inconclusive)} of {len(verdicts)} specializations could not be "
                       f"judged (inconclusive){moved}")
        elif verdicts:
            against = f"; against {base}: {len(verdicts)} specializations judged, none worse"
        return False, (f"{branch}: no regression found in the last {commits} commit{'s' if commits != 1 else ''}"
                       f"{against}")
    found.sort()
    shown = "; ".join(text for _, text in found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    word = "regression" if len(found) == 1 else "regressions"
    start = f" since {sorted(set(since))[0]}" if since else ""
    return True, f"{branch}: {len(found)} {word}{start}: {shown}"


def _fmt_value(value: Any, metric: str | None) -> str:
    """A value in its metric's unit (`primbench.metrics`); a bare number without a metric."""
    if value is None or value != value:
        return "—"
    if metric is None:
        return f"{float(value):,.4g}"
    return by_name(metric).format(float(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows]
    out.append("</table>")
    return "\n".join(out)


def _day(value: Any) -> str:
    return value.strftime(_STAMP) if hasattr(value, "strftime") else str(value)


def _kind(kind: str) -> str:
    return f"<span class='{_e(kind)}'>{_e(kind)}</span>"


@dataclass
class _Verdict:
    algorithm: str
    name: str
    config: str
    verdict: str
    base: Any
    head: Any
    change: float | None
    p_value: float | None
    reason: str
    metric: str | None
    standard_error: float | None = None


def _comparisons(reader: Any, configs: Sequence[str], head: Selector, base: str, use_git: bool,
                 notes: list[str]) -> list[tuple[str, BranchComparison]]:
    """The latest verdicts of the head's branch against `base`, once per config the branch has runs of
    (`configs`: their keys, empty text for unknown, sorted)."""
    from dataclasses import replace

    from primbench.errors import PrimbenchError
    from primbench.history.branch_compare import branch_comparison

    out = []
    for config in configs:
        try:
            out.append((config, branch_comparison(reader, replace(head, config=config or None), base,
                                                  use_git=use_git)))
        except PrimbenchError as exc:
            notes.append(f"no verdicts for config {config or '(unknown)'}: {exc}")
    return out


def _verdicts(comparisons: Sequence[tuple[str, BranchComparison]]) -> list[_Verdict]:
    rows = []
    for config, bc in comparisons:
        for r in bc.comparison.rows:
            if not r.comparable:  # never happens through branch_comparison; kept out all the same
                continue
            rows.append(_Verdict(r.algorithm, r.name, config, str(r.verdict), r.base_value, r.head_value, r.change,
                                 r.p_value, r.reason or "", r.metric, r.standard_error))
    return rows


def _rank_charts(charts: Sequence[Chart], changes: pd.DataFrame, verdicts: Sequence[_Verdict]) -> list[Chart]:
    """Charts with regressions first, then improvements, inconclusive verdicts, the rest."""
    rank: dict[tuple[str, str, str], tuple[int, float]] = {}

    def note(key: tuple[str, str, str], kind: str, size: float) -> None:
        r = (_rank(kind), -abs(size))
        rank[key] = min(rank.get(key, r), r)

    for c in changes.itertuples():
        note((c.algorithm, c.name, c.config_key or ""), c.kind, c.shift or 0.0)
    for v in verdicts:
        if v.verdict != "unchanged":
            note((v.algorithm, v.name, v.config), v.verdict, v.change or 0.0)
    return sorted(charts, key=lambda ch: (*rank.get((ch.algorithm, ch.name, ch.config_key), (9, 0.0)),
                                          ch.algorithm, ch.name, ch.config_key, ch.gpu_model))


def _verdict_counts(verdicts: Sequence[_Verdict]) -> dict[str, int]:
    """How many latest verdicts of each kind."""
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    return counts


def _summary(changes: pd.DataFrame, counts: dict[str, int], base: str) -> str:
    """The report's summary: change points by kind, latest verdicts against `base` by verdict."""
    kinds: dict[str, int] = {}
    for k in changes["kind"] if not changes.empty else []:
        kinds[k] = kinds.get(k, 0) + 1
    return ("<h2>Summary</h2><p>Change points: " + (", ".join(f"{n} {_e(k)}" for k, n in sorted(kinds.items()))
                                                   or "none") + ". Latest verdicts against "
            f"<code>{_e(base)}</code>: " + (", ".join(f"{n} {_e(k)}" for k, n in sorted(counts.items()))
                                            or "none") + ".</p>")


def _anchor(i: int) -> str:
    return f"chart-{i}"


def write_report(db: Any, selector: Selector, out: str | os.PathLike[str] = "history-report.html", *,
                 base: str = "main", metric: str | None = None, alpha: float = DEFAULT_ALPHA,
                 min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT, use_git: bool = False,
                 max_charts: int = 40, max_points: int = DEFAULT_MAX_POINTS, last: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> Report:
    """A static HTML report for the selector's branch (see the module), of its GPU and dates
    where it names them. Verdicts: the branch's latest run of each config against `base` (for
    the base itself: its newest commit against the one before). `metric`: a ``--metric`` name
    for the change points and charts (None: each specialization's default); `last`: the
    newest `last` commits. `progress` is told of every chart drawn. `db`: a store, a reader, an
    open connection or a path (`history.storage.contract.reading`)."""
    from primbench.history.storage.contract import reading

    if selector.branch is None:
        raise UsageError("a report needs a branch")
    branch, gpu = selector.branch, selector.gpu
    head = selector.only("branch", "gpu")
    notes: list[str] = []
    with reading(db) as reader, bounded(reader.con, threads=WINDOW_THREADS if last is not None else None), \
            reader.pinned(selector, last):  # the window's commits found once, for all its queries
        (runs, commits, first, newest), groups = reader.overview(selector, metric=metric, last=last)
        if not runs:
            raise HistoryError(f"no runs of branch {branch!r}" + (f" on GPU {gpu!r}" if gpu else ""))
        # one point per commit in SQL, a batch of specializations at a time: a whole history is never in memory
        # (the points are read once and kept where they are few, else read anew each pass: `trends.regressions_in`)
        changes = regressions_in(lambda: reader.commit_points(selector, metric=metric, last=last), metric=metric,
                                 alpha=alpha, min_size=min_size, min_shift=min_shift, max_points=max_points)
        comparisons = _comparisons(reader, sorted({g[2] for g in groups}), head, base, use_git, notes)
        # energy per call (results 4.5.0) beside whatever the charts follow, where runs read it
        energy = None if metric == "energy" else reader.series(selector, metric="energy", last=last)
        reference = None
        if branch != base:
            gpu_key = comparisons[0][1].gpu_key if comparisons else gpu
            reference = Selector(branch=base, gpu=gpu_key, since=selector.since)
        verdicts = _verdicts(comparisons)
        followed = ", ".join(sorted({str(g[4]) for g in groups}))
        charts = _rank_charts(sorted({Chart(str(a), str(n), str(c), str(model(m))) for a, n, c, m, _ in groups}),
                              changes, verdicts)
        drawn = charts[:max_charts]
        anchors = {(c.algorithm, c.name, c.config_key): _anchor(i) for i, c in enumerate(drawn)}

        def link(algorithm: str, name: str, config: str) -> str:
            a = anchors.get((algorithm, name, config or ""))
            return f"<a href='#{a}'>{_e(name)}</a>" if a else _e(name)

        regressed, headline = _headline(branch, base, changes, verdicts, commits, comparisons, metric)
        missing = [n for n in notes if "no comparable base" in n]
        if missing and not comparisons:
            headline += f"; no verdicts against {base}: no comparable base (see the notes at the end)"
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><meta name='viewport' "
                 f"content='width=device-width'><title>primbench history: {_e(branch)}</title>"
                 f"<style>{_CSS}</style>{interactive.assets()}</head><body>",
                 f"<h1>primbench history: <code>{_e(branch)}</code></h1>",
                 f"<p id='headline' class='headline {'bad' if regressed else 'good'}'>{_e(headline)}</p>",
                 f"<p>{runs} runs of {commits} commits, {_e(_day(first))} "
                 f"to {_e(_day(newest))}; {len(charts)} series. Metric: <code>{_e(followed)}</code>. "
                 f"Generated {_e(_dt.datetime.now(_dt.UTC).strftime(_STAMP))}.</p>"]
        counts = _verdict_counts(verdicts)
        parts.append(_summary(changes, counts, base))
        parts.append(_attention(changes, verdicts, link, metric))
        parts.append("<h2>Trends</h2>")
        if len(charts) > len(drawn):
            rest = ", ".join(f"{_e(c.algorithm)} / {_e(c.name)} ({_e(c.config_key)})" for c in charts[len(drawn):])
            notes.append(f"{len(charts)} series: charts for the {len(drawn)} most interesting only "
                         "(primbench history plot draws any other)")
            parts.append(f"<p class='muted'>Not drawn ({len(charts) - len(drawn)}, nothing changed there): "
                         f"{rest}</p>")
        drawing = _Drawing(reader, selector, branch, base, metric, last, alpha, min_size, min_shift,
                           _steps(changes, max_points), reference, len({c.gpu_model for c in charts}) > 1, runs)
        short = drawing.draw(drawn, parts, progress)
    if short:
        parts.append(f"<h3>Series of {SHORT_SERIES} commits or fewer</h3>" + _table(
            ["algorithm", "specialization", "config", "GPU", "commits", "values (oldest first)",
             f"{base} level"], short))
    parts.append(interactive.script())
    if progress is not None:
        progress(len(drawn), len(drawn))
    parts.append(_energy_section(energy, link))
    parts.append(_verdict_section(comparisons, verdicts, link, metric, base, branch))
    parts.append(_changes_section(changes, link, alpha, min_size, min_shift))
    if not changes.empty:
        notes.extend(cap_notes(changes, max_points))
    parts += [f"<p class='muted'>{_e(n)}</p>" for n in notes]
    parts.append("<p class='muted'>Made by <code>primbench history report</code>. Change points: binary "
                 "segmentation on ln(value) with a robust noise estimate, t-tests with Bonferroni correction, "
                 "drifts where a ramp fits as well as a staircase (docs/history.md).</p></body></html>")
    target = Path(out)
    from primbench.atomicfile import write_bytes_atomic

    data = b"\n".join(p.encode("utf-8") for p in parts)  # one copy of the page (40 charts of 95,000 points: 110 MB)
    parts.clear()
    try:
        write_bytes_atomic(target, data)
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return Report(target, branch, len(drawn), len(changes), counts, notes, len(data))


_Steps = dict[tuple[str, str], dict[tuple[Any, Any], list[tuple[int, float]]]]


def _steps(changes: pd.DataFrame, max_points: int) -> _Steps | None:
    """The level shifts the charts mark, per (algorithm, name) and per line (GPU key, config):
    the step rows of the report's own change points, so that no series is analysed twice. None
    (each chart finds its own) where the report's cap is not the charts' default one."""
    if max_points != DEFAULT_MAX_POINTS:
        return None
    out: _Steps = {}
    if changes.empty:
        return out
    for c in changes[changes["shape"] == "step"].itertuples():
        line = out.setdefault((c.algorithm, c.name), {}).setdefault((c.gpu_key, c.config_key), [])
        line.append((int(c.position), float(c.shift)))
    return out


@dataclass
class _Drawing:
    """The report's charts, read from the store a batch of charts at a time (their
    specializations' rows in one query: about `CHART_ROWS` rows, at most one chart's more;
    `runs`, the runs selected, bounds a chart's rows) and the base's rows for each chart's
    reference line on their own: never more than a batch's rows in memory."""

    reader: Any
    selector: Selector
    branch: str
    base: str
    metric: str | None
    last: int | None
    alpha: float
    min_size: int
    min_shift: float
    steps: _Steps | None
    reference: Selector | None
    models: bool
    runs: int

    def rows(self, charts: Sequence[Chart]) -> Iterator[tuple[Chart, pd.DataFrame, pd.DataFrame | None,
                                                             pd.DataFrame | None, pd.DataFrame | None]]:
        """Each chart with its rows of the report's `series` frame (`Chart.rows` of its
        specialization's), its reference rows (`base_rows`), and the per-commit points of both
        (`trends.per_commit`), in the order given: a batch of charts read in one query and
        reduced to points in one call a side."""
        per_batch = max(1, CHART_ROWS // max(1, self.runs))  # a specialization has a row per run at most
        for first in range(0, len(charts), per_batch):
            batch = charts[first:first + per_batch]
            frame = self.reader.series(self.selector, metric=self.metric, last=self.last,
                                       names=sorted({c.name for c in batch}))
            of = dict(iter(frame.groupby(["algorithm", "name"], sort=False)))  # each specialization's rows, once
            parts = [chart.rows(of.get((chart.algorithm, chart.name), frame.iloc[:0])) for chart in batch]
            refs = self.base_rows(batch, parts)
            yield from zip(batch, parts, refs, _points_of(parts), _points_of(refs), strict=True)

    def base_rows(self, charts: Sequence[Chart], parts: Sequence[pd.DataFrame]) -> list[pd.DataFrame | None]:
        """The base's rows for each chart's reference line (`_reference` of the base's `series`
        frame of its specialization), None for the base itself: each chart's newest 30 commits
        found in one query (`history.queries.newest_commits`), then the rows of those commits
        alone read in one query per metric (each specialization's default decided over all
        its base rows, as its whole frame decides it), never the base's whole history."""
        if self.reference is None:
            return [None] * len(charts)
        from primbench.history import queries

        con = self.reader.con
        wanted = [(c.algorithm, c.name, c.config_key, c.gpu_model,
                   part["date"].max().to_pydatetime() if len(part) else None) for c, part in zip(charts, parts,
                                                                                               strict=True)]
        keep = queries.newest_commits(con, self.reference, wanted, model, REFERENCE_COMMITS)
        commits = sorted({c for found in keep.values() for c in found})
        if self.metric is not None:
            metrics: dict[tuple[str, str], str | None] = {(c.algorithm, c.name): self.metric for c in charts}
        else:
            decided = {(a, n): m for a, n, _, m in queries.specialization_sizes(con, self.reference)}
            metrics = {(c.algorithm, c.name): decided.get((c.algorithm, c.name)) for c in charts}
        names = sorted({c.name for c in charts})
        frames = {m: self.reader.series(self.reference, metric=m, names=names, commits=commits)
                  for m in sorted({m for m in metrics.values() if m is not None})}
        return [_reference(frames.get(metrics[(c.algorithm, c.name)] or ""), c, part)
                for c, part in zip(charts, parts, strict=True)]

    def draw(self, drawn: Sequence[Chart], parts: list[str],
             progress: Callable[[int, int], None] | None) -> list[list[str]]:
        """Each chart's HTML appended to `parts`; the rows of the series too short for a chart returned."""
        short: list[list[str]] = []
        for i, (chart, part, ref, points, ref_points) in enumerate(self.rows(drawn)):
            if progress is not None:
                progress(i, len(drawn))
            commits = part["commit"].fillna("run:" + part["run_id"].astype(str)).nunique()
            if commits <= SHORT_SERIES:  # one or two commits: numbers say more than a chart
                short.append(_short_row(part, chart, _anchor(i), self.metric, ref, self.base))
                continue
            steps = self.steps.get((chart.algorithm, chart.name), {}) if self.steps is not None else None
            data = interactive.chart_data(part, metric=self.metric, title=chart.title(self.branch, self.models),
                                          reference=ref, reference_label=self.base, alpha=self.alpha,
                                          min_size=self.min_size, min_shift=self.min_shift, steps=steps,
                                          points=points, reference_points=ref_points)
            parts.append(interactive.chart_html(_anchor(i), data))
        return short


def _points_of(parts: Sequence[pd.DataFrame | None]) -> list[pd.DataFrame | None]:
    """`trends.per_commit` of each part (a chart's rows; None and empty parts: None, `chart_data`
    then reduces them itself), from one call over all of them: a chart's series
    (`trends.SERIES_KEYS`) are its own, so each part's points are the call's rows of its series, in
    the call's order, as `per_commit` of that part alone gives them (pandas' fixed cost a call,
    some 20 ms, paid once a batch rather than once a chart)."""
    import pandas as pd

    from primbench.history.trends import per_commit

    tagged = [part.assign(_chart=i) for i, part in enumerate(parts) if part is not None and len(part)]
    if not tagged:
        return [None] * len(parts)
    points = per_commit(pd.concat(tagged, ignore_index=True), carry=("_chart",))
    of = {int(i): p.drop(columns="_chart").reset_index(drop=True)
          for i, p in points.groupby("_chart", sort=False)}
    return [of.get(i) for i in range(len(parts))]


def _reference(reference: pd.DataFrame | None, chart: Chart, part: pd.DataFrame) -> pd.DataFrame | None:
    """The base's newest `REFERENCE_COMMITS` commits of the same specialization, config and GPU model."""
    if reference is None or reference.empty:
        return None
    ref = reference[(reference["algorithm"] == chart.algorithm) & (reference["name"] == chart.name)
                    & (reference["config_key"].fillna("") == chart.config_key)
                    & (reference["gpu_name"].map(model) == chart.gpu_model)]
    ref = ref[ref["date"] <= part["date"].max()]
    keep = set(ref["commit"].dropna().drop_duplicates().iloc[-REFERENCE_COMMITS:])
    return ref[ref["commit"].isin(keep)]


def _attention(changes: pd.DataFrame, verdicts: Sequence[_Verdict], link: Callable[[str, str, str], str],
               metric: str | None) -> str:
    """What needs a look: change points and verdicts other than unchanged, worst first."""
    rows: list[tuple[tuple[int, float], list[str]]] = []
    for c in changes.itertuples():
        rows.append(((_rank(c.kind), -abs(c.shift or 0.0)), [
            "change point", _e(c.algorithm), link(c.algorithm, c.name, c.config_key or ""), _e(c.config_key),
            _kind(c.kind), _e(f"{c.shift * 100:+.2f} %"),
            f"{_e(c.shape)} at <code>{_e(str(c.commit)[:12])}</code> "
            f"({_e(_confidence(c.confidence, 'confidence '))})"]))
    for v in verdicts:
        if v.verdict == "unchanged":
            continue
        rows.append(((_rank(v.verdict), -abs(v.change or 0.0)), [
            "latest verdict", _e(v.algorithm), link(v.algorithm, v.name, v.config), _e(v.config), _kind(v.verdict),
            _e("—" if v.change is None else f"{v.change * 100:+.2f} %"),
            _e(f"{_fmt_value(v.base, v.metric or metric)} → {_fmt_value(v.head, v.metric or metric)}; {v.reason}")]))
    if not rows:
        return "<h2>Needs attention</h2><p>Nothing: no change points, every latest verdict unchanged.</p>"
    rows.sort(key=lambda r: r[0])
    return "<h2>Needs attention</h2>" + _table(
        ["what", "algorithm", "specialization", "config", "kind", "change", "detail"], [r for _, r in rows])


def _verdict_section(comparisons: Sequence[tuple[str, BranchComparison]], verdicts: Sequence[_Verdict],
                     link: Callable[[str, str, str], str], metric: str | None, base: str, branch: str) -> str:
    parts = ["<h2>Latest verdicts</h2>"]
    if not comparisons:
        parts.append("<p>None (see the notes below).</p>")
    for config, bc in comparisons:
        h = bc.header()
        parts.append(
            f"<p>Config <code>{_e(config)}</code>: head <code>{_e(branch)}</code> at "
            f"<code>{_e((h['head_commit'] or '?')[:12])}</code>; base <code>{_e(base)}</code> at "
            f"<code>{_e((h['base_commit'] or '?')[:12])}</code> ({_e(h['base_selection'])}). Run-to-run "
            f"variability from history: {_e(h['run_to_run'])}.</p>")
        parts += [f"<p class='muted'>warning: {_e(w)}</p>" for w in [*bc.comparison.warnings, *h["notes"]]]
    if verdicts:
        parts.append(_table(["algorithm", "specialization", "config", "verdict", "base", "head", "change", "p",
                             "reason"],
                            [[_e(v.algorithm), link(v.algorithm, v.name, v.config), _e(v.config), _kind(v.verdict),
                              _e(_fmt_value(v.base, v.metric or metric)), _e(_fmt_value(v.head, v.metric or metric)),
                              _e("—" if v.change is None else f"{v.change * 100:+.2f} %"),
                              _e(_p_text(v)), _e(v.reason)] for v in verdicts]))
    return "\n".join(parts)


def _confidence(value: float | None, label: str = "") -> str:
    """A change point's confidence as text; an outlier burst has none (no change of level)."""
    if value is None or value != value:
        return "a burst of bad runs, no change of level" if label else "—"
    return label + confidence_text(float(value))
def _p_text(v: _Verdict) -> str:
    """The p-value, or — where there was no variability to test against (a p of 0 there would
    read as certainty)."""
    if v.p_value is None or v.standard_error is None or not v.standard_error > 0:
        return "—"
    return f"{v.p_value:.2g}"


def _energy_section(energy: pd.DataFrame | None, link: Callable[[str, str, str], str]) -> str:
    """Energy per call (the board's joules per call, results 4.5.0) of each specialization that
    has it: its newest run's value, its first in the range and the change between them (the
    series itself: ``primbench history report --metric energy``); empty where no run read it."""
    if energy is None or energy.empty:
        return ""
    unit = by_name("energy")
    rows = []
    for (algorithm, name, config), part in energy.groupby(["algorithm", "name", "config_key"], sort=True,
                                                          dropna=False):
        part = part.sort_values(["date", "run_id"])
        first, newest = float(part["value"].iloc[0]), float(part["value"].iloc[-1])
        change = f"{(newest / first - 1) * 100:+.2f} %" if first > 0 and len(part) > 1 else "—"
        rows.append([_e(algorithm), link(str(algorithm), str(name), str(config or "")), _e(config),
                     _e(unit.format(newest)), _e(unit.format(first)), _e(change), str(len(part))])
    return ("<h2 id='energy'>Energy per call</h2><p class='muted'>The board's energy over each round's measured "
            "batches per call (cache clears, the idle spin and idle power included; compare runs of one "
            "benchmark and settings). Charts: <code>primbench history report --metric energy</code>.</p>"
            + _table(["algorithm", "specialization", "config", "newest", "first", "change", "runs"], rows))


def _short_row(part: pd.DataFrame, chart: Chart, anchor: str, metric: str | None, ref: pd.DataFrame | None,
               base: str) -> list[str]:
    """A series too short for a chart, as a table row: its per-commit values."""
    from primbench.history.trends import per_commit

    pts = per_commit(part)
    values = ", ".join(f"{_fmt_value(v, m)} ({str(c)[:8]})" for v, m, c in
                       zip(pts["value"], pts["metric"] if "metric" in pts.columns else [metric] * len(pts),
                           pts["commit"], strict=True))
    level = "—"
    if ref is not None and not ref.empty:
        level = _fmt_value(float(per_commit(ref)["value"].tail(30).median()), metric or chart_metric(part))
    return [_e(chart.algorithm), f"<span id='{anchor}'>{_e(chart.name)}</span>", _e(chart.config_key),
            _e(chart.gpu_model), str(len(pts)), _e(values), _e(level)]


def chart_metric(part: pd.DataFrame) -> str | None:
    return str(part["metric"].iloc[0]) if "metric" in part.columns and not part.empty else None


def _changes_section(changes: pd.DataFrame, link: Callable[[str, str, str], str], alpha: float,
                     min_size: int, min_shift: float) -> str:
    if changes.empty:
        return (f"<h2>Change points</h2><p>None found (alpha {alpha:g}, at least {min_size} commits each side, "
                f"shifts of {min_shift * 100:g} % or more).</p>")
    rows = [[_e(c.algorithm), link(c.algorithm, c.name, c.config_key or ""), _e(c.config_key), _kind(c.kind),
             _e(c.shape), f"<code>{_e(str(c.end_commit)[:12])}</code>",
             f"<code>{_e(str(c.previous_commit)[:12])}</code>",
             _e(_fmt_value(c.before, c.metric)), _e(_fmt_value(c.after, c.metric)), _e(f"{c.shift * 100:+.2f} %"),
             _e("—" if c.slope is None or c.slope != c.slope else f"{c.slope * 100:+.3f} %/commit"),
             _e(_confidence(c.confidence))] for c in changes.itertuples()]
    return "<h2>Change points</h2>" + _table(
        ["algorithm", "specialization", "config", "kind", "shape", "first commit at new level", "last commit before",
         "before", "after", "change", "per commit", "confidence"], rows)
