"""Interactive trend charts for the HTML report: the data of each chart as JSON, drawn in the
browser by uPlot (a small, well-kept charting library: https://github.com/leeoniya/uPlot,
MIT), whose JavaScript and CSS are inlined from `history/vendor/` so the page works offline.

A chart is one specialization, config and GPU model (`history.plots.Chart`): the per-commit
median of each series (physical GPU and config), the range of its runs, the base branch's
level as a flat line (a branch report: "is the branch below main?"), and the change points as
dashed vertical lines. Hover shows the values of a commit; drag to zoom, double-click to reset.
Canvas, so the lines are drawn at the screen's resolution (sharp on a HiDPI screen), with no
offset axis: ticks are the values themselves in the axis's unit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.history.labels import short_gpu_ids
from primbench.history.plots import COLORS, commit_axis
from primbench.history.trends import changes_of, metric_in, per_commit
from primbench.textsafe import term_clean

if TYPE_CHECKING:
    import pandas as pd

UPLOT_VERSION = "1.6.32"
VENDOR = Path(__file__).resolve().parent / "vendor"


def _short(commit: str) -> str:
    return commit[4:16] if commit.startswith("run:") else commit[:8]


def _num(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return float(f"{v:.6g}") if v == v and abs(v) != float("inf") else None  # 6 digits: far below the noise


def chart_data(frame: pd.DataFrame, *, metric: str | None, title: str, reference: pd.DataFrame | None = None,
               reference_label: str = "main", alpha: float, min_size: int, min_shift: float,
               steps: Mapping[tuple[Any, Any], Sequence[tuple[int, float]]] | None = None,
               points: pd.DataFrame | None = None, reference_points: pd.DataFrame | None = None) -> dict[str, Any]:
    """What the browser draws for one chart (see the module): plain JSON data, no markup.
    `steps`: each line's (GPU key, config) level shifts as (position in its per-commit series,
    shift), already found (`history.trends.regressions_of`'s step rows): the series is then not
    analysed again; None: found here (`history.trends.changes_of`). `points`, `reference_points`:
    `frame`'s and `reference`'s per-commit points where the caller has them (`per_commit` of
    each, as one call for many charts gives them), else computed here."""
    import pandas as pd

    followed = metric_in(frame, metric)
    points = per_commit(frame) if points is None else points
    ref = None
    if reference is not None and not reference.empty:
        ref = per_commit(reference) if reference_points is None else reference_points
    shown = [float(v) for v in frame["value"].dropna()]
    if ref is not None:
        shown += [float(v) for v in ref["value"].dropna()]
    scale, unit = followed.scale_for(shown)
    axis = commit_axis(points)
    x_of = {c: i for i, c in enumerate(axis)}
    lines = (list(dict.fromkeys(zip(points["gpu_key"].tolist(), points["config_key"].tolist(), strict=True)))
             if not points.empty else [])  # lists: iterating a pandas column boxes every value
    several_gpus = len({g for g, _ in lines}) > 1
    several_configs = len({c for _, c in lines}) > 1
    ids = short_gpu_ids(g for g, _ in lines)
    series: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    f = frame.assign(commit=frame["commit"].where(frame["commit"].notna(), "run:" + frame["run_id"].astype(str)))
    better = followed.higher_is_better
    for i, (gpu_key, config) in enumerate(lines):
        pts = points[(points["gpu_key"] == gpu_key) & (points["config_key"] == config)].reset_index(drop=True)
        label = f"{pts['branch'].iloc[0]} on {pts['gpu_name'].iloc[0]}"
        if several_gpus:
            label += f" ({ids[str(gpu_key)]})"
        if several_configs:
            label += f", {config}"
        median: list[float | None] = [None] * len(axis)
        for c, v in zip(pts["commit"].tolist(), pts["value"].tolist(), strict=True):
            median[x_of[c]] = _num(v / scale)
        runs = f[(f["gpu_key"] == gpu_key) & (f["config_key"].fillna("") == (config or ""))] \
            if "config_key" in f.columns else f[f["gpu_key"] == gpu_key]
        low: list[float | None] = [None] * len(axis)
        high: list[float | None] = [None] * len(axis)
        if not runs["commit"].is_unique:  # one run a commit (the usual line): no range to draw, no group-by
            # one pass, not one per commit
            spread = runs.groupby("commit", sort=False)["value"].agg(["size", "min", "max"])
            for c, n, lo, hi in zip(spread.index.tolist(), spread["size"].tolist(), spread["min"].tolist(),
                                    spread["max"].tolist(), strict=True):
                if c in x_of and n > 1:
                    low[x_of[c]], high[x_of[c]] = _num(lo / scale), _num(hi / scale)
        color = COLORS[i % len(COLORS)]
        series.append({"label": term_clean(f"{label}: median per commit"), "color": color, "values": median,
                       "low": low, "high": high})
        found = (steps.get((gpu_key, config), ()) if steps is not None else
                 [(cp.index, cp.shift) for cp in changes_of(pts, alpha=alpha, min_size=min_size,
                                                            min_shift=min_shift).points])
        xs = [x_of[c] for c in pts["commit"].tolist()]
        for index, shift in found:
            worse = better is not None and ((shift > 0) != better)
            changes.append({"x": (xs[index - 1] + xs[index]) / 2, "worse": bool(worse),
                            "text": f"{shift * 100:+.1f} % at {_short(str(pts['commit'].iloc[index]))}"})
    level = None
    if ref is not None and not ref.empty:
        recent = ref.sort_values("date").tail(30)
        level = {"label": term_clean(f"{reference_label}: median of its last {len(recent)} commits"),
                 "value": _num(float(pd.Series(recent["value"]).median()) / scale)}
    return {"title": term_clean(title), "unit": unit, "axis": f"{followed.label} ({unit})" if unit else followed.label,
            "commits": [_short(c) for c in axis], "series": series, "level": level, "changes": changes}


_SCRIPT = r"""
(function () {
  function draw(el) {
    var d = JSON.parse(el.querySelector('script[type="application/json"]').textContent);
    var n = d.commits.length, xs = [], data, series = [{label: 'commit', value: function (u, v) {
      return v == null ? '' : d.commits[Math.round(v)] || ''; }}];
    for (var i = 0; i < n; i++) xs.push(i);
    data = [xs];
    d.series.forEach(function (s) {
      data.push(s.values);
      series.push({label: s.label, stroke: s.color, width: 2, spanGaps: true, points: {show: true, size: 6}});
      if (s.low.some(function (v) { return v != null; })) {
        data.push(s.low); data.push(s.high);
        ['runs: lowest', 'runs: highest'].forEach(function (l) {
          series.push({label: l, stroke: s.color + '66', width: 0, paths: function () { return null; },
                       points: {show: true, size: 4, fill: s.color + '66'}});
        });
      }
    });
    if (d.level && d.level.value != null) {
      data.push(xs.map(function () { return d.level.value; }));
      series.push({label: d.level.label, stroke: '#888', width: 1.5, dash: [6, 4], points: {show: false}});
    }
    var opts = {
      title: d.title, width: Math.max(320, el.clientWidth || 900), height: 300, series: series,
      scales: {x: {time: false}},
      axes: [{values: function (u, vals) { return vals.map(function (v) { return d.commits[v] || ''; }); },
              incrs: [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000], font: '11px monospace'},
             {label: d.axis, size: 70, values: function (u, vals) { return vals.map(function (v) {
               return v.toPrecision(4).replace(/\.?0+$/, ''); }); }}],
      cursor: {drag: {x: true, y: false}},
      hooks: {draw: [function (u) {
        var ctx = u.ctx; ctx.save();
        d.changes.forEach(function (c) {
          var x = u.valToPos(c.x, 'x', true);
          ctx.strokeStyle = c.worse ? '#d62728' : '#2ca02c'; ctx.setLineDash([5, 4]); ctx.lineWidth = 1.5;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
          ctx.fillStyle = ctx.strokeStyle; ctx.font = (11 * devicePixelRatio) + 'px sans-serif';
          ctx.fillText(c.text, x + 4, u.bbox.top + 14 * devicePixelRatio);
        });
        ctx.restore();
      }]}
    };
    el.uplot = new uPlot(opts, data, el.querySelector('.plot'));
    el.setAttribute('data-drawn', String(d.series.length));
  }
  document.querySelectorAll('.chart').forEach(draw);
})();
"""


def assets() -> str:
    """The inlined library (CSS and JavaScript), once per page."""
    css = (VENDOR / "uPlot.min.css").read_text(encoding="utf-8")
    js = (VENDOR / "uPlot.iife.min.js").read_text(encoding="utf-8")
    return f"<style>{css}</style><script>/* uPlot {UPLOT_VERSION}, MIT */\n{js}</script>"


def chart_html(anchor: str, data: dict[str, Any]) -> str:
    """A chart's place in the page: its data as JSON (``<`` escaped: never closes the script)."""
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")
    return (f"<figure class='chart' id='{anchor}'><div class='plot'></div>"
            f"<script type='application/json'>{payload}</script></figure>")


def script() -> str:
    """The code that draws every chart of the page (after the charts)."""
    return f"<script>{_SCRIPT}</script>"
