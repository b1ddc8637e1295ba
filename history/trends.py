"""A series per commit, and its change points as table rows.

`per_commit` reduces the runs of a series (`history.queries.series`) to one point per commit;
`regressions_of` runs the change-point search (`history.changepoints`) over every series in a
frame and names each change by the followed metric's better direction, read from
`primbench.metrics` (a faster time per call is an improvement, a higher bandwidth too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from primbench.benchmark import natural_key
from primbench.errors import UsageError
from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE
from primbench.metrics import METRICS, Metric, by_name

if TYPE_CHECKING:
    import pandas as pd

    from primbench.history.changepoints import Burst, ChangePoint, Changes, Drift, NoiseFit
    from primbench.history.segmentation import Segments

#: What makes one series: a specialization of an algorithm, on one physical GPU, measured with
#: one configuration (`primbench.resultconfig.config_key`: size, hot, cache_size, sync, custom
#: settings). Runs that differ in any of these are never mixed.
SERIES_KEYS = ["algorithm", "name", "gpu_key", "config_key"]

T = TypeVar("T")

#: The `kind` of an outlier burst row: a few bad runs that came back, neither regression nor fix.
OUTLIER = "outlier"

#: The columns of `regressions_of`.
REGRESSION_COLUMNS = ["algorithm", "name", "gpu_key", "gpu_name", "config_key", "kind", "shape", "commit",
                      "previous_commit", "end_commit", "date", "position", "end_position", "commits", "before",
                      "after", "shift", "slope", "p_value", "confidence", "metric", "capped"]


def metric_in(frame: pd.DataFrame, fallback: str | None = None) -> Metric:
    """The metric of a series frame's values: its ``metric`` column (one series holds one), else
    `fallback` (a ``--metric`` name), else bandwidth."""
    if "metric" in frame.columns and not frame.empty:
        return by_name(str(frame["metric"].iloc[0]))
    return by_name(fallback) if fallback else METRICS["bytes_per_second"]


def _with_config(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a config_key column (empty text where unknown: one config)."""
    f = frame.copy()
    f["config_key"] = f["config_key"].fillna("") if "config_key" in f.columns else ""
    return f


def per_commit(frame: pd.DataFrame, order: Mapping[str, int] | None = None, *,
               carry: Sequence[str] = ()) -> pd.DataFrame:
    """A series reduced to one point per commit (the median of its runs), ordered by `order`
    (each commit's place in git's history: `history.forkpoint.commit_order`) where it places
    every commit of the frame, else by each commit's first run in ingest order
    (`history.queries.RUN_ORDER`), never by the dates a runner's clock wrote; runs with no
    commit hash count as commits of their own. Every series (`SERIES_KEYS`) in `frame` gets
    its own points; `date` is each commit's earliest run date, as written. `carry`: columns
    of `frame` that are constant within a series, kept: one call then
    serves several callers' series (a report's charts), each telling its own apart by them."""
    import pandas as pd

    if frame.empty:
        f = frame.assign(runs=pd.Series(dtype="int64"), position=pd.Series(dtype="int64"))
        return f if "config_key" in f.columns else f.assign(config_key=pd.Series(dtype="object"))
    f = _with_config(frame)
    f["commit"] = f["commit"].where(f["commit"].notna(), "run:" + f["run_id"].astype(str))
    by = [c for c in ("ingested_at", "date", "run_id") if c in f.columns]
    f["_order"] = _ingest_rank(f, by)
    if order is not None and f["commit"].isin(list(order)).all():
        f["_order"] = f["commit"].map(order)
    grouped = f.groupby([*SERIES_KEYS, "commit"], sort=False, dropna=False)
    metric = {"metric": ("metric", "first")} if "metric" in f.columns else {}
    out = grouped.agg(
        date=("date", "min"), value=("value", "median"), **metric, noise_percent=("noise_percent", "median"),
        runs=("run_id", "count"), gpu_name=("gpu_name", "first"), branch=("branch", "first"),
        last_run_id=("run_id", "last"), _order=("_order", "min"), **{c: (c, "first") for c in carry},
    ).reset_index()
    # names in their natural order: a sweep's ``size: 256`` before ``size: 1024``
    out = out.sort_values([*SERIES_KEYS, "_order", "commit"], kind="stable",
                          key=lambda c: _natural_rank(c) if c.name == "name" else c).reset_index(drop=True)
    out = out.drop(columns="_order")
    out["position"] = out.groupby(SERIES_KEYS, sort=False).cumcount()
    return out


def _ingest_rank(frame: pd.DataFrame, by: list[str]) -> Any:
    """Each row's place in ingest order (`history.queries.RUN_ORDER`, by the columns `by` the
    frame has), as an array of numbers in the frame's row order."""
    import numpy as np

    ranked = frame[by].reset_index(drop=True).sort_values(by, kind="stable").index.to_numpy()
    place = np.empty(len(frame), dtype=np.int64)
    place[ranked] = np.arange(len(frame))
    return place


def _natural_rank(names: pd.Series) -> pd.Series:
    """Each name's place in natural order (`natural_key`), computed once per distinct name
    rather than once per row: the same order as sorting by the keys themselves."""
    import pandas as pd

    distinct = pd.unique(names)
    keys = [natural_key(n) for n in distinct]
    place = {k: i for i, k in enumerate(sorted(set(keys)))}
    return names.map(dict(zip(distinct, (place[k] for k in keys), strict=True)))


def git_order(frame: pd.DataFrame, cwd: str | None = None) -> dict[str, int] | None:
    """The place in git's history here of every commit of a series frame
    (`history.forkpoint.commit_order`), for `per_commit`; None where a run has no commit or git
    does not know one of them (the ingest order stands)."""
    from primbench.history.forkpoint import commit_order

    if frame.empty or "commit" not in frame.columns or frame["commit"].isna().any():
        return None
    return commit_order(frame["commit"].astype(str).unique().tolist(), cwd)


def regressions_of(frame: pd.DataFrame, *, metric: str | None = None, alpha: float = DEFAULT_ALPHA,
                   min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                   max_points: int = DEFAULT_MAX_POINTS, order: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Change points of every per-commit series in `frame` (as `history.queries.series` returns
    it; one per specialization, GPU and config: `SERIES_KEYS`): the commit where the level
    shifted, the size of the shift and its confidence. `kind` is regression or improvement by
    the metric's better direction (`primbench.metrics`), else up or down; `shape` is step (a
    level shift at `commit`) or drift (a steady change from `previous_commit` to `end_commit`,
    `slope` per commit); a burst of 2-3 bad runs that came back is a row of kind outlier and
    shape burst (`commit` to `end_commit`), no change of level. Each commit's own noise
    (``noise_percent``) weighs its point (`changepoints.analyse`'s `uncertainty`).
    `capped` is true for every row of a series whose search stopped at
    the cap of `max_points` change points. `last` keeps only changes that reach the `last`
    newest commits of each series. `metric` names the values of a frame without a ``metric``
    column. `order`: the commits' order (`git_order`) for `per_commit`; None: ingest order."""
    _check_settings(alpha, min_size, last)
    return regressions_in([per_commit(frame, order)], metric=metric, alpha=alpha, min_size=min_size,
                          min_shift=min_shift, last=last, max_points=max_points)


def _check_settings(alpha: float, min_size: int, last: int | None) -> None:
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie between 0 and 1, got {alpha}")
    if min_size < 1:
        raise UsageError(f"--min-size must be at least 1, got {min_size}")


def regressions_in(batches: Iterable[pd.DataFrame] | Callable[[], Iterable[pd.DataFrame]], *,
                   metric: str | None = None, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                   min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                   max_points: int = DEFAULT_MAX_POINTS, order: Mapping[str, int] | None = None) -> pd.DataFrame:
    """`regressions_of` of per-commit points (`per_commit`'s columns; or
    `history.queries.commit_points`', reduced in SQL, each series in ingest order) that come a
    batch at a time, each batch whole series of specializations after those of the batch before
    (key order): the rows `regressions_of` gives for all of them at once, with one batch in
    memory at a time. `order` (each commit's place in git's history: `git_order`, placing every
    commit) reorders each series' points by it. The settings are checked before the first batch
    is asked for.

    The series are measured alike (one store: the same harness, the same machines), so their
    noise is pooled (`changepoints.pool_noise`, as `analyse_many`): a first pass takes each
    series' noise (`changepoints.noise_fit_and_segments`) and pools it, a second takes it again
    with the first pooling's prior about the same segmentation and pools that, the third analyses
    each with the pooled prior, from that segmentation too (each series is searched once).
    That needs the batches three times: `batches` is then a sequence, or a function that returns them
    anew (read once and kept where they hold `CACHED_POINT_ROWS` rows or fewer); a one-pass iterable is
    analysed series by series without pooling."""
    import pandas as pd

    from primbench.history.changepoints import Prepared, analyse, noise_fit_and_segments, pool_noise, prepare

    _check_settings(alpha, min_size, last)
    source = batches if callable(batches) else lambda: batches
    # each series split out of its batch once, where they fit (`CACHED_POINT_ROWS`), not once a pass
    each_series = _kept(lambda: _series_of(source(), order, min_size), CACHED_POINT_ROWS, size=lambda s: len(s[1]))

    prior = None
    # each series' first segmentation, as the first pass found it; made ready whole (`changepoints.prepare`:
    # its logarithm, weights, segmentation and noise, and its excursions' gate) while the series so far hold
    # `CACHED_POINT_ROWS` points or fewer, so that the later passes compute none of it again (the same results)
    first: list[Prepared | Segments] = []

    def known(i: int) -> dict[str, Any]:
        """What the first pass found of series `i`, as `noise_fit_and_segments` and `analyse` take it."""
        return {"prepared": first[i]} if isinstance(first[i], Prepared) else {"segments": first[i]}

    def uncertainty(i: int, group: pd.DataFrame) -> Any:
        """`_uncertainty(group)`, kept with series `i` where it was made ready."""
        found = first[i] if i < len(first) else None
        return found.uncertainty if isinstance(found, Prepared) else _uncertainty(group)

    if callable(batches) or isinstance(batches, Sequence):
        # twice, as `analyse_many`: the second time each series' noise is gated by the first
        # pooling (`changepoints._clean`), about the segmentation the first time found
        fits: list[NoiseFit | None] = []
        points = 0
        for _, group, values in each_series():
            points += len(values)
            ready = prepare(values, alpha=alpha, min_size=min_size, max_points=max_points,
                            uncertainty=_uncertainty(group))
            fit, segments = noise_fit_and_segments(values, alpha=alpha, min_size=min_size, max_points=max_points,
                                                   prepared=ready)
            fits.append(fit)
            first.append(ready if points <= CACHED_POINT_ROWS else segments)
        prior = pool_noise(fits)
        if prior is not None:
            prior = pool_noise([noise_fit_and_segments(values, alpha=alpha, min_size=min_size, max_points=max_points,
                                                       uncertainty=uncertainty(i, group), prior=prior, **known(i))[0]
                                for i, (_, group, values) in enumerate(each_series())])
    rows: list[dict[str, Any]] = []
    for i, (key, group, values) in enumerate(each_series()):
        followed = metric_in(group, metric)
        # each series' first segmentation as the first pass found it (not searched a third time)
        changes = analyse(values, alpha=alpha, min_size=min_size, min_shift=min_shift, max_points=max_points,
                          uncertainty=uncertainty(i, group), prior=prior, **(known(i) if first else {}))
        found = [_step_row(key, group, cp, followed) for cp in changes.points]
        found += [_drift_row(key, group, d, followed) for d in changes.drifts]
        found += [_burst_row(key, group, b, followed) for b in changes.bursts]
        for row in sorted(found, key=lambda r: r["position"]):
            if last is not None and row["end_position"] < len(values) - last:
                continue
            rows.append({**row, "capped": changes.capped})
    return pd.DataFrame(rows, columns=REGRESSION_COLUMNS)


#: Rows of per-commit points `regressions_in` keeps from its first read of a function's batches (as the series
#: it analyses, each split out of its batch once), so that its later passes (the pooled noise: three in all)
#: neither read the store nor split the batches again; beyond them each pass reads anew (memory stays bounded).
#: A default window of 1,000 commits x 100 specializations is 100,000 rows.
CACHED_POINT_ROWS = 250_000


def _kept(source: Callable[[], Iterable[T]], limit: int, size: Callable[[T], int]
          ) -> Callable[[], Iterator[T]]:
    """`source`'s items (batches of rows, series) as a function that returns them anew: the first call
    reads them, keeping them while they hold `limit` rows (`size` of each) or fewer; a later call, once
    one read ran to its end, serves what was kept, else reads again."""
    kept: list[T] | None = []
    whole = False

    def items() -> Iterator[T]:
        nonlocal kept, whole
        if whole and kept is not None:
            yield from kept
            return
        rows = 0
        for item in source():
            if not whole and kept is not None:
                rows += size(item)
                if rows <= limit:
                    kept.append(item)
                else:
                    kept = None
            yield item
        whole = True

    return items


def _series_of(batches: Iterable[pd.DataFrame], order: Mapping[str, int] | None,
               min_size: int) -> Iterator[tuple[Any, pd.DataFrame, Any]]:
    """Each series of the batches long enough to analyse: its key, its points (in `order` where
    it places every commit) and their values."""
    for points in batches:
        if order is not None and len(points) and points["commit"].isin(list(order)).all():
            points = points.assign(_git=points["commit"].map(order)).sort_values(
                [*SERIES_KEYS, "_git"], kind="stable").drop(columns="_git")
            if "position" in points.columns:
                points["position"] = points.groupby(SERIES_KEYS, sort=False, dropna=False).cumcount()
        for key, group in points.groupby(SERIES_KEYS, sort=True, dropna=False):
            group = group.reset_index(drop=True)
            values = group["value"].astype(float).to_numpy()
            if len(values) < 2 * min_size or not (values == values).all():
                continue
            values.setflags(write=False)  # kept for every pass (`regressions_in`): no pass may change them
            yield key, group, values


def cap_notes(changes: pd.DataFrame, max_points: int = DEFAULT_MAX_POINTS) -> list[str]:
    """One line per series of a `regressions_of` frame whose search stopped at the cap."""
    if changes.empty or "capped" not in changes.columns:
        return []
    capped = changes[changes["capped"].astype(bool)]
    keys = dict.fromkeys(capped[["algorithm", "name", "gpu_name", "config_key"]].itertuples(index=False, name=None))
    return [f"{a} / {n} on {g} ({c}): stopped at the cap of {max_points} change points; further shifts may be missing"
            for a, n, g, c in keys]


def kind(change: float, metric: Metric) -> str:
    """regression or improvement by the metric's better direction; up or down where neither is better."""
    if metric.higher_is_better is None:
        return "up" if change > 0 else "down"
    return "improvement" if (change > 0) == metric.higher_is_better else "regression"


def _step_row(key: tuple[Any, ...], group: pd.DataFrame, cp: ChangePoint, metric: Metric) -> dict[str, Any]:
    algorithm, name, gpu_key, config = key
    return {
        "algorithm": algorithm, "name": name, "gpu_key": gpu_key, "gpu_name": group["gpu_name"].iloc[0],
        "config_key": config,
        "kind": kind(cp.shift, metric), "shape": "step", "commit": group["commit"].iloc[cp.index],
        "previous_commit": group["commit"].iloc[cp.index - 1], "end_commit": group["commit"].iloc[cp.index],
        "date": group["date"].iloc[cp.index], "position": cp.index, "end_position": cp.index, "commits": len(group),
        "before": cp.before, "after": cp.after, "shift": cp.shift, "slope": None,
        "p_value": cp.p_value, "confidence": cp.confidence, "metric": metric.name,
    }


def _drift_row(key: tuple[Any, ...], group: pd.DataFrame, d: Drift, metric: Metric) -> dict[str, Any]:
    """A drift as a `regressions_of` row: `commit` is the first that moved, `previous_commit` the
    last at the old level, `end_commit` the first at the new level; `shift` the total change."""
    algorithm, name, gpu_key, config = key
    first = min(d.start + 1, d.end)
    return {
        "algorithm": algorithm, "name": name, "gpu_key": gpu_key, "gpu_name": group["gpu_name"].iloc[0],
        "config_key": config,
        "kind": kind(d.change, metric), "shape": "drift", "commit": group["commit"].iloc[first],
        "previous_commit": group["commit"].iloc[d.start], "end_commit": group["commit"].iloc[d.end],
        "date": group["date"].iloc[first], "position": first, "end_position": d.end, "commits": len(group),
        "before": d.before, "after": d.after, "shift": d.change, "slope": d.slope,
        "p_value": d.p_value, "confidence": d.confidence, "metric": metric.name,
    }


def _uncertainty(points: pd.DataFrame) -> list[float] | None:
    """Each commit's own relative noise (its runs' median batch CV), where the frame has it."""
    if "noise_percent" not in points.columns:
        return None
    return [float(v) / 100 for v in points["noise_percent"].astype(float).fillna(0.0)]


def _burst_row(key: tuple[Any, ...], group: pd.DataFrame, b: Burst, metric: Metric) -> dict[str, Any]:
    """An outlier burst as a `regressions_of` row (kind outlier, shape burst): `commit` its first
    commit, `end_commit` its last, `previous_commit` the one before; `before` the level around it,
    `after` the burst's median, `shift` their relative difference; no p-value (it is no change)."""
    algorithm, name, gpu_key, config = key
    return {
        "algorithm": algorithm, "name": name, "gpu_key": gpu_key, "gpu_name": group["gpu_name"].iloc[0],
        "config_key": config,
        "kind": OUTLIER, "shape": "burst", "commit": group["commit"].iloc[b.start],
        "previous_commit": group["commit"].iloc[b.start - 1], "end_commit": group["commit"].iloc[b.stop - 1],
        "date": group["date"].iloc[b.start], "position": b.start, "end_position": b.stop - 1,
        "commits": len(group), "before": b.level, "after": b.value, "shift": b.shift, "slope": None,
        "p_value": None, "confidence": None, "metric": metric.name,
    }


def changes_of(points: pd.DataFrame, *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
               min_shift: float = DEFAULT_MIN_SHIFT) -> Changes:
    """Level shifts, drifts and the cap flag of one per-commit series (as `per_commit` returns it)."""
    from primbench.history.changepoints import Changes, analyse

    values = points["value"].astype(float).to_numpy()
    if len(values) < 2 * min_size:
        return Changes()
    return analyse(values, alpha=alpha, min_size=min_size, min_shift=min_shift, uncertainty=_uncertainty(points))
