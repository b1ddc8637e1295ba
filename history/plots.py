"""Pictures of the history: a PNG trend chart per specialization, a static HTML report per branch.

matplotlib runs with the Agg backend (no display needed). The HTML report is one file with
its charts embedded as data URIs, so a CI job can publish it as a single artifact.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE, confidence_text
from primbench.history.deps import require
from primbench.history.errors import HistoryError
from primbench.history.labels import model, short_gpu_ids
from primbench.history.selector import Selector
from primbench.history.trends import changes_of, metric_in, per_commit
from primbench.textsafe import term_clean

if TYPE_CHECKING:
    import pandas as pd

    from primbench.history.changepoints import ChangePoint, Drift

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


#: A series of more commits than this is drawn as a line without markers or error bars (a
#: 10-inch figure has no room for them: 100,000 markers cost seconds and show a smear).
DENSE_POINTS = 2000


def trend_figure(frame: pd.DataFrame, *, metric: str | None = None, title: str | None = None,
                 alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                 min_shift: float = DEFAULT_MIN_SHIFT, reference: pd.DataFrame | None = None,
                 reference_label: str = "base", figsize: tuple[float, float] = (10, 4.8), dpi: int = 110) -> Any:
    """A matplotlib Figure: one specialization's runs (dots), per-commit medians (line),
    noise (error bars), and change points (dashed lines, segment levels, labels); one colour
    per series: physical GPU and config (runs of other settings are never joined). `frame` is
    what `history.queries.series` returns for one name; `reference` (the same for the base
    branch) is drawn in grey on the same time-ordered axis, one line per series. The axis's
    unit and which way is better (red or green change points) come from the metric of the
    values (`primbench.metrics`; `metric` names it for a frame without a ``metric`` column)."""
    plt = _pyplot()
    followed = metric_in(frame, metric)
    better = followed.higher_is_better
    fig, ax = plt.subplots(figsize=figsize, dpi=dpi)
    import pandas as pd

    points = per_commit(frame)
    ref = per_commit(reference) if reference is not None and not reference.empty else None
    shown = [float(v) for v in frame["value"].dropna()] if not frame.empty else []
    if ref is not None:
        shown += [float(v) for v in ref["value"].dropna()]
    scale, unit = followed.scale_for(shown)
    lines = list(dict.fromkeys(zip(points["gpu_key"], points["config_key"], strict=True))) if not points.empty else []
    several_gpus = len({g for g, _ in lines}) > 1
    several_configs = len({c for _, c in lines}) > 1
    short_ids = short_gpu_ids(g for g, _ in lines)
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
            label_gpu += _label(f" ({short_ids[str(gpu_key)]})")
        if several_configs:
            label_gpu += _label(f", {config}")
        runs = frame[(frame["gpu_key"] == gpu_key) & ((configs == config) if configs is not None else True)]
        run_commits = runs["commit"].where(runs["commit"].notna(), "run:" + runs["run_id"].astype(str))
        dense = len(pts) > DENSE_POINTS  # more commits than the figure has room for markers
        ax.scatter([x_of[c] for c in run_commits], runs["value"] / scale, s=2 if dense else 10, color=color,
                   alpha=0.35, zorder=2, label=None, rasterized=dense)
        y = pts["value"] / scale
        noise = followed.name != "noise_percent" and not dense
        yerr = (pts["value"] * pts["noise_percent"].fillna(0) / 100) / scale if noise else None
        xs = [x_of[c] for c in pts["commit"]]
        ax.errorbar(xs, y, yerr=yerr, color=color, marker="" if dense else "o", ms=4, lw=0.8 if dense else 1.2,
                    capsize=2, zorder=3, label=f"{label_gpu}: median per commit")
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
    ax.set_ylabel(f"{followed.label} ({unit})" if unit else followed.label)
    ax.grid(True, alpha=0.3)
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)  # the values themselves, never "+1.082" above
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
    order (its commits by their first run in it), so no line runs backwards, and where the
    series leave the order open, commits go by their first run. (Ordering all commits by their
    first run alone zigzags when a commit was measured with one config long before another:
    the 128 MiB run of a commit first, its 1 MiB run in a later batch.)

    A topological order of the graph whose edges join neighbours within a series, taking the
    earliest ready commit first (a heap): O(n log n) for n points. Series that disagree (a
    cycle) are resolved by taking the earliest commit not yet placed."""
    import heapq

    if points.empty:
        return []
    commits = points["commit"].tolist()
    first: dict[str, int] = {}
    for commit, when in zip(commits, points["date"].astype("int64").tolist(), strict=True):
        if commit not in first or when < first[commit]:
            first[commit] = when
    order = {c: i for i, c in enumerate(first)}  # first appearance: the tie-break
    keys = [k for k in ("gpu_key", "config_key", "branch") if k in points.columns]
    if not keys or all(points[k].nunique(dropna=False) == 1 for k in keys):
        groups = [commits]  # one series (the group-by's one group, its rows in order), found without a group-by
    else:
        groups = [g["commit"].tolist() for _, g in points.groupby(keys, sort=False, dropna=False)]
    if len(groups) == 1 and len(first) == len(groups[0]):
        return groups[0]  # one series, each commit once: a chain, whose only topological order is itself
    after: dict[str, list[str]] = {c: [] for c in first}
    waiting = dict.fromkeys(first, 0)
    for seq in groups:
        for a, b in itertools.pairwise(seq):
            if a != b:
                after[a].append(b)
                waiting[b] += 1
    ready = [(first[c], order[c], c) for c, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    by_date = sorted((first[c], order[c], c) for c in first)  # for cycles: the earliest unplaced
    placed: set[str] = set()
    axis: list[str] = []
    cursor = 0
    while len(axis) < len(first):
        if ready:
            commit = heapq.heappop(ready)[2]
            if commit in placed:
                continue
        else:
            while by_date[cursor][2] in placed:
                cursor += 1
            commit = by_date[cursor][2]
        placed.add(commit)
        axis.append(commit)
        for nxt in after[commit]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0 and nxt not in placed:
                heapq.heappush(ready, (first[nxt], order[nxt], nxt))
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
    fig.savefig(buf, format="png", dpi=fig.dpi * 2)  # 2x: sharp on a HiDPI screen
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


@dataclass(frozen=True, order=True)
class Chart:
    """One chart: a specialization of an algorithm, with one config, on one GPU model (the
    physical GPUs of that model are its lines). Values of other configs or models would
    share an axis with it and flatten its changes."""

    algorithm: str
    name: str
    config_key: str
    gpu_model: str

    def title(self, branch: str, several_models: bool = False) -> str:
        return (f"{self.algorithm} / {self.name} on {branch}, {self.config_key or 'config unknown'}"
                + (f", {self.gpu_model}" if several_models else ""))

    def rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of `frame` (a `series` frame) this chart draws."""
        import numpy as np
        import pandas as pd

        codes, names = pd.factorize(frame["gpu_name"], use_na_sentinel=False)  # the model once per GPU name
        models = np.array([model(n) for n in names], dtype=object)[codes] if len(frame) else np.array([], dtype=object)
        return frame[(frame["algorithm"] == self.algorithm) & (frame["name"] == self.name)
                     & (frame["config_key"].fillna("") == self.config_key) & (models == self.gpu_model)]


def charts_of(frame: pd.DataFrame) -> list[Chart]:
    """The charts a `series` frame makes, sorted."""
    if frame.empty:
        return []
    keys = zip(frame["algorithm"], frame["name"], frame["config_key"].fillna(""), frame["gpu_name"].map(model),
               strict=True)
    return sorted(Chart(str(a), str(n), str(c), str(m)) for a, n, c, m in set(keys))


def _variant(chart: Chart, alone: bool, models: bool) -> str:
    """What a file name adds for a chart that is not its specialization's only one."""
    return "" if alone else "-".join([chart.config_key] + ([chart.gpu_model] if models else []))


def chart_paths(charts: Sequence[Chart], out: Path, single: bool) -> list[Path]:
    """Where each chart goes. `out` a ``.png`` file: `out` itself with one chart; with several,
    files beside it, each named after `out` and what tells its chart apart (``all.png`` ->
    ``all-copy-type_char.png``; of one specialization, its config: ``char-size_1MiB.png``);
    never a folder called ``all.png``. Else a file per chart in the folder `out`."""
    per_name: dict[tuple[str, str], int] = {}
    for c in charts:
        per_name[(c.algorithm, c.name)] = per_name.get((c.algorithm, c.name), 0) + 1
    models = len({c.gpu_model for c in charts}) > 1
    taken: set[str] = set()
    paths = []
    for c in charts:
        variant = _variant(c, per_name[(c.algorithm, c.name)] == 1, models)
        if single and len(charts) == 1:
            paths.append(out)
        elif single and len(per_name) == 1:
            paths.append(out.with_name(file_name(out.stem, variant, taken)))
        elif single:
            label = c.name + (f" {variant}" if variant else "")
            paths.append(out.with_name(file_name(f"{out.stem}-{c.algorithm}", label, taken)))
        else:
            paths.append(out / file_name(c.algorithm, c.name + (f" {variant}" if variant else ""), taken))
    return paths


def plot_series(db: Any, selector: Selector, out: str | os.PathLike[str] = "history-plots", *,
                metric: str | None = None, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Trend chart PNGs of the selected series (give a branch), one per specialization, config
    and GPU model (`Chart`). A ``.png`` path `out`: there, or beside it (`chart_paths`); else
    one file per chart in the folder `out`.
    `metric`: a ``--metric`` name (None: each specialization's default); `last`: only the
    newest `last` commits. `progress` is told of every chart written. `db`: a store, a reader,
    an open connection or a path (`history.storage.contract.reading`)."""
    from primbench.history.bounded import bounded
    from primbench.history.storage.contract import reading

    with reading(db) as reader, bounded(reader.con):  # DuckDB's blocks let go, not kept for the drawing
        frame = reader.series(selector, metric=metric, last=last)
    if frame.empty:
        what = f"specialization {selector.name!r}" if selector.name else "any specialization"
        raise HistoryError(f"no runs of {what} on branch {selector.branch!r}"
                           + (f" on GPU {selector.gpu!r}" if selector.gpu else "")
                           + (f" with config {selector.config!r}" if selector.config else ""))
    charts = charts_of(frame)
    out = Path(out)
    single = out.suffix.lower() == ".png"  # -o is a file when it names one
    models = len({c.gpu_model for c in charts}) > 1
    written = []
    branch = "" if selector.branch is None else selector.branch
    for i, (chart, path) in enumerate(zip(charts, chart_paths(charts, out, single), strict=True)):
        if progress is not None:
            progress(i, len(charts))
        fig = trend_figure(chart.rows(frame), metric=metric, title=chart.title(branch, models), alpha=alpha,
                           min_size=min_size, min_shift=min_shift)
        written.append(save_png(fig, path))
    if progress is not None:
        progress(len(charts), len(charts))
    return written
