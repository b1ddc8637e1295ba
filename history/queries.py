"""Queries on the history: each returns a pandas DataFrame (and never prints).

Every function takes `db`: a DuckDB store's path, a directory of Parquet parts
(`history.shared`), an open DuckDB connection on either, or None for the default store.
User strings (branch, GPU, names, dates) reach SQL only as parameters; metric names are
checked against `METRICS` before they become column names.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from primbench.errors import UsageError
from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE
from primbench.history.deps import require

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.history.changepoints import ChangePoint, Changes, Drift

DB = "str | os.PathLike[str] | duckdb.DuckDBPyConnection | None"

#: Metrics a series can follow, and whether higher is better (None: neither).
METRICS: dict[str, bool | None] = {
    "bytes_per_second": True,
    "items_per_second": True,
    "noise_percent": False,
    "ms_per_batch": None,
    "elapsed_gpu_secs": None,
    "elapsed_host_secs": None,
    "gpu_temp_start": None,
    "gpu_temp_end": None,
    "sm_clock_mhz": True,
    "sm_clock_fraction": True,
}


@contextmanager
def connection(db: Any = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`db` as an open read-only connection (an open connection is used as is, not closed)."""
    require("pandas")  # every query hands back a DataFrame
    if db is not None and hasattr(db, "execute") and not isinstance(db, (str, os.PathLike)):
        yield db
        return
    from primbench.history.access import open_for_query

    with open_for_query(db) as con:
        yield con


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}; choose one of: {', '.join(METRICS)}")
    return metric


def _instant(value: str | _dt.datetime | _dt.date | None, option: str) -> _dt.datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        when = value
    elif isinstance(value, _dt.date):
        when = _dt.datetime(value.year, value.month, value.day)
    else:
        try:
            when = _dt.datetime.fromisoformat(str(value))
        except ValueError:
            raise UsageError(
                f"{option} {value!r}: not an ISO 8601 date (2026-01-31 or 2026-01-31T12:00+01:00)"
            ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.UTC)


class _Where:
    """WHERE clauses with their parameters."""

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def add(self, clause: str, *params: Any) -> None:
        self.clauses.append(clause)
        self.params.extend(params)

    def runs(self, *, branch: str | None = None, gpu: str | None = None, algorithm: str | None = None,
             since: Any = None, until: Any = None, config: str | None = None, alias: str = "r") -> _Where:
        if branch is not None:
            self.add(f"coalesce({alias}.branch, '') = ?", branch)  # '': runs with no branch
        if config is not None:
            self.add(f"{alias}.config_key = ?", config)
        if gpu is not None:
            self.add(f"(? IN ({alias}.gpu_key, {alias}.gpu_uuid, {alias}.gpu_serial, {alias}.gpu_name) "
                     f"OR starts_with({alias}.gpu_key, ?) OR starts_with({alias}.gpu_key, 'GPU-' || ?))",
                     gpu, gpu, gpu)  # the last: a uuid's start without GPU-, as tables show it
        if algorithm is not None:
            self.add(f"{alias}.algorithm = ?", algorithm)
        start, stop = _instant(since, "--since"), _instant(until, "--until")
        if start is not None:
            self.add(f"{alias}.date >= ?", start)
        if stop is not None:
            self.add(f"{alias}.date <= ?", stop)
        return self

    def sql(self) -> str:
        return (" WHERE " + " AND ".join(self.clauses)) if self.clauses else ""


# --------------------------------------------------------------------------- runs


def list_runs(db: Any = None, *, branch: str | None = None, gpu: str | None = None, algorithm: str | None = None,
              since: Any = None, until: Any = None, limit: int | None = None,
              config: str | None = None) -> pd.DataFrame:
    """Stored runs, newest first: one row per run with its branch, commit, date, GPU, config and host."""
    where = _Where().runs(branch=branch, gpu=gpu, algorithm=algorithm, since=since, until=until, config=config)
    sql = (
        'SELECT r.run_id, r.date, r.branch, r."commit", r.algorithm, r.gpu_name, r.gpu_key, r.config_key, r.host, '
        "r.specialization_count AS specializations, r.failures, r.noise_timeouts, r.results_version, "
        "r.source_path FROM runs r" + where.sql() + " ORDER BY r.date DESC, r.run_id"
    )
    params = list(where.params)
    if limit is not None:
        if limit < 1:
            raise UsageError(f"--limit must be at least 1, got {limit}")
        sql += " LIMIT ?"
        params.append(int(limit))
    with connection(db) as con:
        return con.execute(sql, params).df()


def names(db: Any = None, *, branch: str | None = None, algorithm: str | None = None) -> list[str]:
    """Specialization names present (for suggestions)."""
    where = _Where().runs(branch=branch, algorithm=algorithm)
    with connection(db) as con:
        rows = con.execute("SELECT DISTINCT s.name FROM specializations s JOIN runs r USING (run_id)"
                           + where.sql() + " ORDER BY 1", where.params).fetchall()
    return [r[0] for r in rows]


# --------------------------------------------------------------------------- series


def series(db: Any = None, name: str | None = None, *, branch: str | None = "main", algorithm: str | None = None,
           gpu: str | None = None, metric: str = "bytes_per_second", since: Any = None,
           until: Any = None, config: str | None = None, last: int | None = None) -> pd.DataFrame:
    """One specialization (or, with `name` None, every one) across the runs of a branch,
    oldest first: one row per (run, specialization) that did not fail, the chosen metric in
    `value`, and noise, temperatures and clock beside it. Different GPUs have different
    `gpu_key` values and different measurement settings different `config_key` values
    (`primbench.resultconfig`): keep their series apart (`SERIES_KEYS`). `config`: one
    config key only (``size=1MiB``); `last`: only the runs of the newest `last` commits
    (by each commit's first run) among the runs the other filters select."""
    metric = check_metric(metric)
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    where = _Where().runs(branch=branch, gpu=gpu, since=since, until=until, config=config)
    if last is not None:
        runs_where = _Where().runs(branch=branch, gpu=gpu, since=since, until=until, config=config, alias="r2")
        where.add(f"{_COMMIT.format(a='r')} IN (SELECT {_COMMIT.format(a='r2')} FROM runs r2{runs_where.sql()} "
                  "GROUP BY 1 ORDER BY min(r2.date) DESC LIMIT ?)", *runs_where.params, int(last))
    where.add("s.error IS NULL")
    if name is not None:
        where.add("s.name = ?", name)
    if algorithm is not None:
        where.add("s.algorithm = ?", algorithm)
    sql = (
        'SELECT r.date, r.branch, r."commit", r.run_id, r.gpu_key, r.gpu_name, r.config_key, r.host, s.algorithm, '
        f"s.name, s.{metric} AS value, s.bytes_per_second, s.items_per_second, s.noise_percent, s.noise_timeout, "
        f"s.gpu_temp_start, s.gpu_temp_end, s.sm_clock_mhz "
        f"FROM specializations s JOIN runs r USING (run_id){where.sql()} "
        f"ORDER BY r.date, r.run_id, s.idx"
    )
    with connection(db) as con:
        return con.execute(sql, where.params).df()


#: A run's commit, or for a run without one, the run itself (a commit of its own).
_COMMIT = "coalesce({a}.\"commit\", 'run:' || {a}.run_id)"


#: What makes one series: a specialization of an algorithm, on one physical GPU, measured with
#: one configuration (`primbench.resultconfig.config_key`: size, hot, cache_size, sync, custom
#: settings). Runs that differ in any of these are never mixed.
SERIES_KEYS = ["algorithm", "name", "gpu_key", "config_key"]


def _with_config(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a config_key column (empty text where unknown: one config)."""
    f = frame.copy()
    f["config_key"] = f["config_key"].fillna("") if "config_key" in f.columns else ""
    return f


def per_commit(frame: pd.DataFrame) -> pd.DataFrame:
    """A series reduced to one point per commit (the median of its runs), ordered by each
    commit's first run; runs with no commit hash count as commits of their own. Every
    series (`SERIES_KEYS`) in `frame` gets its own points."""
    import pandas as pd

    if frame.empty:
        f = frame.assign(runs=pd.Series(dtype="int64"), position=pd.Series(dtype="int64"))
        return f if "config_key" in f.columns else f.assign(config_key=pd.Series(dtype="object"))
    f = _with_config(frame)
    f["commit"] = f["commit"].where(f["commit"].notna(), "run:" + f["run_id"].astype(str))
    grouped = f.groupby([*SERIES_KEYS, "commit"], sort=False, dropna=False)
    out = grouped.agg(
        date=("date", "min"), value=("value", "median"), noise_percent=("noise_percent", "median"),
        runs=("run_id", "count"), gpu_name=("gpu_name", "first"), branch=("branch", "first"),
        last_run_id=("run_id", "last"),
    ).reset_index()
    out = out.sort_values([*SERIES_KEYS, "date", "commit"], kind="stable").reset_index(drop=True)
    out["position"] = out.groupby(SERIES_KEYS, sort=False).cumcount()
    return out


# --------------------------------------------------------------------------- branches


def branches(db: Any = None, *, gpu: str | None = None, algorithm: str | None = None,
             config: str | None = None) -> pd.DataFrame:
    """Each branch (per algorithm, GPU and config) with its run count and its latest run, newest first."""
    where = _Where().runs(gpu=gpu, algorithm=algorithm, config=config)
    sql = (
        "SELECT branch, algorithm, gpu_name, gpu_key, config_key, count(*) AS runs, "
        'count(DISTINCT "commit") AS commits, min(date) AS first_date, max(date) AS latest_date, '
        'arg_max("commit", date) AS latest_commit, arg_max(run_id, date) AS latest_run_id, '
        "arg_max(host, date) AS latest_host "
        f"FROM runs r{where.sql()} GROUP BY branch, algorithm, gpu_name, gpu_key, config_key "
        "ORDER BY latest_date DESC, branch, config_key"
    )
    with connection(db) as con:
        return con.execute(sql, where.params).df()


# --------------------------------------------------------------------------- change points


def regressions(db: Any = None, *, branch: str = "main", name: str | None = None, algorithm: str | None = None,
                gpu: str | None = None, metric: str = "bytes_per_second", alpha: float = DEFAULT_ALPHA,
                min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT,
                last: int | None = None, config: str | None = None,
                max_points: int = DEFAULT_MAX_POINTS) -> pd.DataFrame:
    """Change points of every per-commit series on `branch` (one per specialization, GPU and
    config: `SERIES_KEYS`): the commit where the level shifted, the size of the shift and its
    confidence. `kind` is regression or improvement for metrics with a better direction, else
    up or down; `shape` is step (a level shift at `commit`) or drift (a steady change from
    `previous_commit` to `end_commit`, `slope` per commit). `capped` is true for every row of a
    series whose search stopped at the cap of `max_points` change points. `last` keeps only
    changes that reach the `last` newest commits of each series; `config` looks at one
    config key only."""
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie between 0 and 1, got {alpha}")
    if min_size < 1:
        raise UsageError(f"--min-size must be at least 1, got {min_size}")
    frame = series(db, name, branch=branch, algorithm=algorithm, gpu=gpu, metric=metric, config=config)
    return regressions_of(frame, metric=metric, alpha=alpha, min_size=min_size, min_shift=min_shift, last=last,
                          max_points=max_points)


def regressions_of(frame: pd.DataFrame, *, metric: str = "bytes_per_second", alpha: float = DEFAULT_ALPHA,
                   min_size: int = DEFAULT_MIN_SIZE, min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                   max_points: int = DEFAULT_MAX_POINTS) -> pd.DataFrame:
    """`regressions` of the runs in `frame` (as `series` returns them)."""
    import pandas as pd

    from primbench.history.changepoints import analyse

    better = METRICS[check_metric(metric)]
    points = per_commit(frame)
    rows: list[dict[str, Any]] = []
    for key, group in points.groupby(SERIES_KEYS, sort=True, dropna=False):
        group = group.reset_index(drop=True)
        values = group["value"].astype(float).to_numpy()
        if len(values) < 2 * min_size or not (values == values).all():
            continue
        changes = analyse(values, alpha=alpha, min_size=min_size, min_shift=min_shift, max_points=max_points)
        found = [_cp_row(key, group, cp, better, metric) for cp in changes.points]
        found += [_drift_row(key, group, d, better, metric) for d in changes.drifts]
        for row in sorted(found, key=lambda r: r["position"]):
            if last is not None and row["end_position"] < len(values) - last:
                continue
            rows.append({**row, "capped": changes.capped})
    return pd.DataFrame(rows, columns=REGRESSION_COLUMNS)


#: The columns of `regressions`.
REGRESSION_COLUMNS = ["algorithm", "name", "gpu_key", "gpu_name", "config_key", "kind", "shape", "commit",
                      "previous_commit", "end_commit", "date", "position", "end_position", "commits", "before",
                      "after", "shift", "slope", "p_value", "confidence", "metric", "capped"]


def cap_notes(changes: pd.DataFrame, max_points: int = DEFAULT_MAX_POINTS) -> list[str]:
    """One line per series of a `regressions` frame whose search stopped at the cap."""
    if changes.empty or "capped" not in changes.columns:
        return []
    capped = changes[changes["capped"].astype(bool)]
    keys = dict.fromkeys(capped[["algorithm", "name", "gpu_name", "config_key"]].itertuples(index=False, name=None))
    return [f"{a} / {n} on {g} ({c}): stopped at the cap of {max_points} change points; further shifts may be missing"
            for a, n, g, c in keys]


def _kind(shift: float, better: bool | None) -> str:
    if better is None:
        return "up" if shift > 0 else "down"
    return "improvement" if (shift > 0) == better else "regression"


def _cp_row(key: tuple[Any, ...], group: pd.DataFrame, cp: ChangePoint, better: bool | None,
            metric: str) -> dict[str, Any]:
    algorithm, name, gpu_key, config = key
    return {
        "algorithm": algorithm, "name": name, "gpu_key": gpu_key, "gpu_name": group["gpu_name"].iloc[0],
        "config_key": config,
        "kind": _kind(cp.shift, better), "shape": "step", "commit": group["commit"].iloc[cp.index],
        "previous_commit": group["commit"].iloc[cp.index - 1], "end_commit": group["commit"].iloc[cp.index],
        "date": group["date"].iloc[cp.index], "position": cp.index, "end_position": cp.index, "commits": len(group),
        "before": cp.before, "after": cp.after, "shift": cp.shift, "slope": None,
        "p_value": cp.p_value, "confidence": cp.confidence, "metric": metric,
    }


def _drift_row(key: tuple[Any, ...], group: pd.DataFrame, d: Drift, better: bool | None,
               metric: str) -> dict[str, Any]:
    """A drift as a `regressions` row: `commit` is the first that moved, `previous_commit` the
    last at the old level, `end_commit` the first at the new level; `shift` the total change."""
    algorithm, name, gpu_key, config = key
    first = min(d.start + 1, d.end)
    return {
        "algorithm": algorithm, "name": name, "gpu_key": gpu_key, "gpu_name": group["gpu_name"].iloc[0],
        "config_key": config,
        "kind": _kind(d.change, better), "shape": "drift", "commit": group["commit"].iloc[first],
        "previous_commit": group["commit"].iloc[d.start], "end_commit": group["commit"].iloc[d.end],
        "date": group["date"].iloc[first], "position": first, "end_position": d.end, "commits": len(group),
        "before": d.before, "after": d.after, "shift": d.change, "slope": d.slope,
        "p_value": d.p_value, "confidence": d.confidence, "metric": metric,
    }


def changes_of(points: pd.DataFrame, *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
               min_shift: float = DEFAULT_MIN_SHIFT) -> Changes:
    """Level shifts, drifts and the cap flag of one per-commit series (as `per_commit` returns it)."""
    from primbench.history.changepoints import Changes, analyse

    values = points["value"].astype(float).to_numpy()
    if len(values) < 2 * min_size:
        return Changes()
    return analyse(values, alpha=alpha, min_size=min_size, min_shift=min_shift)


def change_points_of(points: pd.DataFrame, *, alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                     min_shift: float = DEFAULT_MIN_SHIFT) -> list[ChangePoint]:
    """Change points of one per-commit series (as `per_commit` returns it)."""
    from primbench.history.changepoints import detect

    values = points["value"].astype(float).to_numpy()
    if len(values) < 2 * min_size:
        return []
    return detect(values, alpha=alpha, min_size=min_size, min_shift=min_shift)


def group_names(frame: pd.DataFrame) -> Sequence[tuple[str, str, str, str]]:
    """The (algorithm, name, gpu_key, config_key) series in a frame, sorted."""
    if frame.empty:
        return []
    return sorted({tuple(x) for x in _with_config(frame)[SERIES_KEYS].itertuples(index=False, name=None)})
