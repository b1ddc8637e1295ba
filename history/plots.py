"""Pictures of the history: a PNG trend chart per specialization, a static HTML report per branch.

matplotlib runs with the Agg backend (no display needed). The HTML report is one file with
its charts embedded as data URIs, so a CI job can publish it as a single artifact.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE, confidence_text
from history.deps import require
from history.errors import HistoryError
from history.queries import METRICS, cap_notes, changes_of, connection, per_commit, series
from primbench.textsafe import term_clean

if TYPE_CHECKING:
    import pandas as pd

    from history.changepoints import ChangePoint, Drift

UNITS = {"bytes_per_second": ("GB/s", 1e9), "items_per_second": ("G items/s", 1e9), "noise_percent": ("%", 1.0),
         "sm_clock_mhz": ("MHz", 1.0), "sm_clock_fraction": ("of default", 1.0), "gpu_temp_start": ("°C", 1.0),
         "gpu_temp_end": ("°C", 1.0),
         "ms_per_batch": ("ms", 1.0), "elapsed_gpu_secs": ("s", 1.0), "elapsed_host_secs": ("s", 1.0)}
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"]


def _pyplot() -> Any:
    matplotlib = require("matplotlib")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _short(commit: str) -> str:
    return _label(commit[4:16] if commit.startswith("run:") else commit[:8])


def _label(text: object) -> str:
    """Text for a chart: no control characters, and no `$` that mathtext would parse (a name
    such as ``$x^$`` would make matplotlib raise)."""
    return term_clean(text).replace("$", r"\$")


def trend_figure(frame: pd.DataFrame, *, metric: str = "bytes_per_second", title: str | None = None,
                 alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                 min_shift: float = DEFAULT_MIN_SHIFT, reference: pd.DataFrame | None = None,
                 reference_label: str = "base") -> Any:
    """A matplotlib Figure: one specialization's runs (dots), per-commit medians (line),
    noise (error bars), and change points (dashed lines, segment levels, labels); one colour
    per series: physical GPU and config (runs of other settings are never joined). `frame` is
    what `history.queries.series` returns for one name; `reference` (the same for the base
    branch) is drawn in grey on the same time-ordered axis, one line per series."""
    plt = _pyplot()
    unit, scale = UNITS.get(metric, ("", 1.0))
    better = METRICS.get(metric)
    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=110)
    import pandas as pd

    points = per_commit(frame)
    ref = per_commit(reference) if reference is not None and not reference.empty else None
    lines = list(dict.fromkeys(zip(points["gpu_key"], points["config_key"], strict=True))) if not points.empty else []
    several_gpus = len({g for g, _ in lines}) > 1
    several_configs = len({c for _, c in lines}) > 1
    # one x axis for all GPUs (and the reference): every commit, by its first run
    both = pd.concat([points, ref]) if ref is not None else points
    all_commits = commit_axis(both)
    x_of = {c: i for i, c in enumerate(all_commits)}
    if ref is not None:
        for r_i, (_, part) in enumerate(ref.groupby(["gpu_key", "config_key"], sort=False, dropna=False)):
            ax.plot([x_of[c] for c in part["commit"]], part["value"] / scale, color="#999999", marker=".", lw=1,
                    zorder=1, label=None if r_i else _label(f"{reference_label}: median per commit"))
    configs = frame["config_key"].fillna("") if "config_key" in frame.columns else None
    for g_i, (gpu_key, config) in enumerate(lines):
        pts = points[(points["gpu_key"] == gpu_key) & (points["config_key"] == config)].reset_index(drop=True)
        color = COLORS[g_i % len(COLORS)]
        label_gpu = _label(f"{pts['branch'].iloc[0]} on {pts['gpu_name'].iloc[0]}")
        if several_gpus:
            label_gpu += _label(f" ({str(gpu_key)[:16]})")
        if several_configs:
            label_gpu += _label(f", {config}")
        runs = frame[(frame["gpu_key"] == gpu_key) & ((configs == config) if configs is not None else True)]
        run_commits = runs["commit"].where(runs["commit"].notna(), "run:" + runs["run_id"].astype(str))
        ax.scatter([x_of[c] for c in run_commits], runs["value"] / scale, s=10, color=color, alpha=0.35,
                   zorder=2, label=None)
        y = pts["value"] / scale
        yerr = (pts["value"] * pts["noise_percent"].fillna(0) / 100) / scale if metric != "noise_percent" else None
        xs = [x_of[c] for c in pts["commit"]]
        ax.errorbar(xs, y, yerr=yerr, color=color, marker="o", ms=4, lw=1.2, capsize=2, zorder=3,
                    label=f"{label_gpu}: median per commit")
        changes = changes_of(pts, alpha=alpha, min_size=min_size, min_shift=min_shift)
        for cp in changes.points:
            _draw_change(ax, cp, pts, xs, scale, better)
        for d in changes.drifts:
            _draw_drift(ax, d, pts, xs, scale, better)
        if changes.capped:
            ax.text(0.01, 0.01, changes.note(), transform=ax.transAxes, fontsize=7, color="#a60")
    n = len(all_commits)
    step = max(1, (n + 24) // 25)
    ax.set_xticks(range(0, n, step))
    ax.set_xticklabels([_short(c) for c in all_commits[::step]], rotation=60, ha="right", fontsize=7,
                       family="monospace")
    ax.set_xlabel("commit (oldest first)")
    ax.set_ylabel(f"{metric} ({unit})" if unit else metric)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(_label(title), fontsize=11)
    if lines:
        ax.legend(loc="best", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.margins(x=0.02, y=0.15)
    fig.tight_layout()
    return fig


def commit_axis(points: pd.DataFrame) -> list[str]:
    """One x axis of commits for several series (`per_commit` rows): every series keeps its own
    order (its commits by their first run in it), so no line runs backwards, and commits no
    series orders are placed by their first run. The longest series sets the frame; the
    others' commits go between their neighbours in their own series. (Ordering all commits
    by their first run alone zigzags when a commit was measured with one config long before
    another: the 128 MiB run of a commit first, its 1 MiB run in a later batch.)"""
    if points.empty:
        return []
    first = points.groupby("commit", sort=False)["date"].min().to_dict()
    keys = [k for k in ("gpu_key", "config_key", "branch") if k in points.columns]
    groups = [list(g["commit"]) for _, g in points.groupby(keys, sort=False, dropna=False)] if keys else \
        [list(points["commit"])]
    axis: list[str] = []
    for seq in sorted(groups, key=len, reverse=True):
        for i, commit in enumerate(seq):
            if commit in axis:
                continue
            position = {c: j for j, c in enumerate(axis)}
            lo = next((position[c] + 1 for c in reversed(seq[:i]) if c in position), 0)
            hi = next((position[c] for c in seq[i + 1:] if c in position and position[c] >= lo), len(axis))
            at = next((j for j in range(lo, hi) if first[axis[j]] > first[commit]), hi)
            axis.insert(at, commit)
    return axis


def _draw_change(ax: Any, cp: ChangePoint, pts: pd.DataFrame, xs: Sequence[int], scale: float,
                 better: bool | None) -> None:
    worse = better is not None and ((cp.shift > 0) != better)
    color = "#d62728" if worse else "#2ca02c" if better is not None else "#555555"
    start, stop = cp.segment
    edge = (xs[cp.index - 1] + xs[cp.index]) / 2
    ax.axvline(edge, color=color, ls="--", lw=1.2, zorder=1)
    ax.hlines(cp.before / scale, xs[start] - 0.3, edge, colors=color, lw=2.5, alpha=0.45, zorder=1)
    ax.hlines(cp.after / scale, edge, xs[stop - 1] + 0.3, colors=color, lw=2.5, alpha=0.45, zorder=1)
    commit = _short(str(pts["commit"].iloc[cp.index]))
    text = f"{cp.shift * 100:+.1f} % at {commit}\n(confidence {confidence_text(cp.confidence)})"
    ax.annotate(text, xy=(edge, cp.after / scale), xytext=(6, -28 if cp.shift < 0 else 12),
                textcoords="offset points", fontsize=8, color=color)


def _draw_drift(ax: Any, d: Drift, pts: pd.DataFrame, xs: Sequence[int], scale: float,
                better: bool | None) -> None:
    worse = better is not None and ((d.change > 0) != better)
    color = "#d62728" if worse else "#2ca02c" if better is not None else "#555555"
    ax.plot([xs[d.start], xs[d.end]], [d.before / scale, d.after / scale], color=color, ls="--", lw=2, alpha=0.7,
            zorder=1)
    text = (f"drift {d.change * 100:+.1f} % ({d.slope * 100:+.2f} %/commit)\n"
            f"{_short(str(pts['commit'].iloc[d.start]))}..{_short(str(pts['commit'].iloc[d.end]))} "
            f"(confidence {confidence_text(d.confidence)})")
    ax.annotate(text, xy=(xs[d.end], d.after / scale), xytext=(-150, 12 if d.change > 0 else -28),
                textcoords="offset points", fontsize=8, color=color)


def save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write the chart (whole or not at all); a path that cannot be written is a HistoryError."""
    from primbench.atomicfile import write_bytes_atomic

    target = Path(path)
    try:
        write_bytes_atomic(target, _png_bytes(fig))
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the chart ({exc.strerror or exc})") from None
    return target


def _png_bytes(fig: Any) -> bytes:
    plt = _pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def file_name(algorithm: str, name: str, taken: set[str] | None = None) -> str:
    """A file-system-safe name for a specialization's chart. Where that name is already
    `taken` in the same folder (compared case-insensitively, as some file systems do: two
    names that differ only in punctuation or case), a hash of the algorithm and name makes
    it unique: ``copy-type_a_b-1f2e3d4c.png``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{algorithm}-{name}").strip("._-")[:120] or "series"
    if taken is not None and f"{slug}.png".lower() in taken:
        digest = hashlib.sha256(f"{algorithm}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        slug = f"{slug[:111]}-{digest}"
    if taken is not None:
        taken.add(f"{slug}.png".lower())
    return f"{slug}.png"


def plot_series(db: Any = None, name: str | None = None, out: str | os.PathLike[str] = "history-plots", *,
                branch: str = "main", algorithm: str | None = None, gpu: str | None = None,
                metric: str = "bytes_per_second", alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                min_shift: float = DEFAULT_MIN_SHIFT, config: str | None = None) -> list[Path]:
    """Trend chart PNGs. With `name`, one chart written to `out` (a ``.png`` path, or a folder);
    without, one chart per specialization of the branch into the folder `out`. A
    specialization measured with several configs gets one line per config (`config`: one only)."""
    frame = series(db, name, branch=branch, algorithm=algorithm, gpu=gpu, metric=metric, config=config)
    if frame.empty:
        what = f"specialization {name!r}" if name else "any specialization"
        raise HistoryError(f"no runs of {what} on branch {branch!r}" + (f" on GPU {gpu!r}" if gpu else "")
                           + (f" with config {config!r}" if config else ""))
    written = []
    keys = sorted({(a, n) for a, n in frame[["algorithm", "name"]].itertuples(index=False, name=None)})
    out = Path(out)
    single = name is not None and len(keys) == 1 and out.suffix.lower() == ".png"
    taken: set[str] = set()
    for algorithm_, name_ in keys:
        part = frame[(frame["algorithm"] == algorithm_) & (frame["name"] == name_)]
        fig = trend_figure(part, metric=metric, title=f"{algorithm_} / {name_} on {branch}", alpha=alpha,
                           min_size=min_size, min_shift=min_shift)
        written.append(save_png(fig, out if single else out / file_name(algorithm_, name_, taken)))
    return written


# --------------------------------------------------------------------------- report


@dataclass
class Report:
    path: Path
    branch: str
    charts: int
    change_points: int
    verdicts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "branch": self.branch, "charts": self.charts,
                "change_points": self.change_points, "verdicts": self.verdicts, "notes": self.notes}


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.regression{color:#b00;font-weight:bold}.improvement{color:#070;font-weight:bold}.inconclusive{color:#a60}
code{font-size:.9em}figure{margin:1em 0}img{max-width:100%}.muted{color:#777;font-size:.85em}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else term_clean(value))


def _fmt_value(value: Any, metric: str) -> str:
    if value is None or value != value:
        return "—"
    unit, scale = UNITS.get(metric, ("", 1.0))
    return f"{float(value) / scale:,.4g} {unit}".strip()


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] | None = None) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def write_report(db: Any = None, out: str | os.PathLike[str] = "history-report.html", *, branch: str = "main",
                 base: str = "main", gpu: str | None = None, metric: str = "bytes_per_second",
                 alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT,
                 use_git: bool = False, max_charts: int = 200, max_points: int = DEFAULT_MAX_POINTS) -> Report:
    """A static HTML report for `branch`: latest verdicts against `base` (for the base itself:
    its newest commit against the one before), change points, and a trend chart per
    specialization."""
    from history.branch_compare import branch_comparison
    from history.queries import regressions
    from primbench.errors import PrimbenchError

    notes: list[str] = []
    with connection(db) as con:
        frame = series(con, None, branch=branch, gpu=gpu, metric=metric)
        if frame.empty:
            raise HistoryError(f"no runs of branch {branch!r}" + (f" on GPU {gpu!r}" if gpu else ""))
        changes = regressions(con, branch=branch, gpu=gpu, metric=metric, alpha=alpha, min_size=min_size,
                              min_shift=min_shift, max_points=max_points)
        try:
            comparison = branch_comparison(con, branch, base, gpu=gpu, use_git=use_git)
        except PrimbenchError as exc:
            comparison = None
            notes.append(f"no verdicts: {exc}")
        runs = con.execute('SELECT count(*), count(DISTINCT "commit"), min(date), max(date) FROM runs '
                           "WHERE coalesce(branch, '') = ?", [branch]).fetchone()
        reference = None
        if branch != base:
            reference = series(con, None, branch=base, gpu=comparison.gpu_key if comparison else gpu, metric=metric)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>primbench history: {_e(branch)}</title>"
             f"<style>{_CSS}</style></head><body>",
             f"<h1>primbench history: <code>{_e(branch)}</code></h1>",
             f"<p>{runs[0]} runs of {runs[1]} commits, {_e(_day(runs[2]))} to {_e(_day(runs[3]))}. "
             f"Metric: <code>{_e(metric)}</code>. Generated {_e(_dt.datetime.now(_dt.UTC).strftime(_STAMP))}.</p>"]
    verdict_counts: dict[str, int] = {}
    parts.append("<h2>Latest verdicts</h2>")
    if comparison is not None:
        h = comparison.header()
        parts.append(
            f"<p>Head: <code>{_e(branch)}</code> at <code>{_e((h['head_commit'] or '?')[:12])}</code>; base: "
            f"<code>{_e(base)}</code> at <code>{_e((h['base_commit'] or '?')[:12])}</code> ({_e(h['base_selection'])})"
            f"; config <code>{_e(h['config_key'])}</code>. Run-to-run variability from history: "
            f"{_e(h['run_to_run'])}.</p>")
        for w in [*comparison.comparison.warnings, *h["notes"]]:
            parts.append(f"<p class='muted'>warning: {_e(w)}</p>")
        rows, classes = [], []
        for r in comparison.comparison.rows:
            v = str(r.verdict)
            verdict_counts[v] = verdict_counts.get(v, 0) + 1
            rows.append([_e(r.algorithm), _e(r.name), f"<span class='{_e(v)}'>{_e(v)}</span>",
                         _e(_fmt_value(r.base_value, r.metric or metric)),
                         _e(_fmt_value(r.head_value, r.metric or metric)),
                         _e("—" if r.change is None else f"{r.change * 100:+.2f} %"),
                         _e("—" if r.p_value is None else f"{r.p_value:.2g}"), _e(r.reason)])
            classes.append("")
        parts.append(_table(["algorithm", "specialization", "verdict", "base", "head", "change", "p", "reason"],
                            rows, classes))
    else:
        parts.append(f"<p>{_e('; '.join(notes))}</p>")

    parts.append("<h2>Change points</h2>")
    if changes.empty:
        parts.append(f"<p>None found (alpha {alpha:g}, at least {min_size} commits each side, shifts of "
                     f"{min_shift * 100:g} % or more).</p>")
    else:
        rows = [[_e(c.algorithm), _e(c.name), _e(c.config_key), f"<span class='{_e(c.kind)}'>{_e(c.kind)}</span>",
                 _e(c.shape), f"<code>{_e(str(c.end_commit)[:12])}</code>",
                 f"<code>{_e(str(c.previous_commit)[:12])}</code>",
                 _e(_fmt_value(c.before, metric)), _e(_fmt_value(c.after, metric)), _e(f"{c.shift * 100:+.2f} %"),
                 _e("—" if c.slope is None or c.slope != c.slope else f"{c.slope * 100:+.3f} %/commit"),
                 _e(confidence_text(c.confidence))] for c in changes.itertuples()]
        parts.append(_table(["algorithm", "specialization", "config", "kind", "shape", "first commit at new level",
                             "last commit before",
                             "before", "after", "change", "per commit", "confidence"], rows))
        notes.extend(cap_notes(changes, max_points))
    parts.append("<h2>Trends</h2>")
    keys = sorted({(a, n) for a, n in frame[["algorithm", "name"]].itertuples(index=False, name=None)})
    if len(keys) > max_charts:
        notes.append(f"{len(keys)} specializations: charts for the first {max_charts} only")
    for algorithm, name in keys[:max_charts]:
        part = frame[(frame["algorithm"] == algorithm) & (frame["name"] == name)]
        ref = None
        if reference is not None and not reference.empty:
            ref = reference[(reference["algorithm"] == algorithm) & (reference["name"] == name)
                            & reference["config_key"].isin(set(part["config_key"]))]  # the same configs only
            ref = ref[ref["date"] <= part["date"].max()]
            keep = set(ref["commit"].dropna().drop_duplicates().iloc[-30:])  # the base's newest 30 commits
            ref = ref[ref["commit"].isin(keep)]
        fig = trend_figure(part, metric=metric, title=f"{algorithm} / {name} on {branch}", alpha=alpha,
                           min_size=min_size, min_shift=min_shift, reference=ref, reference_label=base)
        data = base64.b64encode(_png_bytes(fig)).decode("ascii")
        parts.append(f"<figure><img alt='{_e(algorithm)} / {_e(name)}' src='data:image/png;base64,{data}'>"
                     f"</figure>")
    for n in notes:
        parts.append(f"<p class='muted'>{_e(n)}</p>")
    parts.append("<p class='muted'>Made by <code>primbench history report</code>. Change points: binary "
                 "segmentation on ln(value) with a robust noise estimate, t-tests with Bonferroni correction, "
                 "drifts where a ramp fits as well as a staircase (docs/history.md).</p></body></html>")
    target = Path(out)
    from primbench.atomicfile import write_atomic

    try:
        write_atomic(target, "\n".join(parts))
    except OSError as exc:
        raise HistoryError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return Report(target, branch, min(len(keys), max_charts), len(changes), verdict_counts, notes)


_STAMP = "%Y-%m-%d %H:%M UTC"


def _day(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if hasattr(value, "strftime") else str(value)
