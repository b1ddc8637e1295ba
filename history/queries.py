"""The SQL of the history: runs, series, branches and names, each on an open connection to a
store (a DuckDB file, or the in-memory union of a Parquet dataset) and a `Selector`; each
returns a pandas DataFrame and never prints.

A store is opened, and these are called, through `history.reader.Reader`. User strings
(branch, GPU, names, dates) reach SQL only as parameters; a metric name only after it was
found in `primbench.metrics` and among the store's columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from primbench.errors import UsageError
from primbench.history.selector import Selector
from primbench.history.storage.schema import DATE_FLAG_KEY, SPEC_COLUMNS
from primbench.metrics import CHOICES, METRICS, Metric

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

#: Metrics without a column of their own, read from the ``extra`` column's JSON (the fields of a
#: specialization the table has no column for, by their results.json names): energy (results
#: 4.5.0) and the CUDA-graph replay (4.6.0). A run without the key has no point in the series.
EXTRA_METRICS = {"joules_per_call": "$.energy.joules_per_call", "watts": "$.energy.watts",
                 "graph_seconds_per_call": "$.graph.seconds_per_call"}

#: What ``--metric`` takes: a choice (time, bytes, items, energy, graph) or a stored metric's name.
FOLLOWABLE = [*(c for c, name in CHOICES.items() if name in SPEC_COLUMNS or name in EXTRA_METRICS),
              *(name for name in METRICS if name in SPEC_COLUMNS or name in EXTRA_METRICS)]


def metric_of(name: str | None) -> Metric | None:
    """The registry's metric for ``--metric`` `name` (``time``, ``bytes``, ``items`` or a stored
    column such as ``noise_percent``); None for None (each specialization's default:
    `primbench.metrics.choose`). An unknown name is a `UsageError` that lists the known ones."""
    if name is None:
        return None
    metric = METRICS.get(CHOICES.get(name, name))
    if metric is None or (metric.name not in SPEC_COLUMNS and metric.name not in EXTRA_METRICS):
        raise UsageError(f"unknown metric {name!r}; choose one of: {', '.join(FOLLOWABLE)}")
    return metric


#: The order of runs: their ingest (``runs.ingested_at``, the ingesting machine's clock, one
#: value per ingest call), never the date a runner's clock wrote into a run, which orders runs
#: only within one ingest call (a backfill of many files at once), then the run's key. A run
#: dated a year ahead is not the newest for it, nor is one dated 1970 never the newest.
#: (`history.trends.per_commit` orders a series' commits by git instead, where git knows them.)
RUN_ORDER = "{a}.ingested_at, {a}.date, {a}.run_id"
#: `RUN_ORDER`, newest first.
RUN_ORDER_DESC = "{a}.ingested_at DESC, {a}.date DESC, {a}.run_id"

#: A run's commit, or for a run without one, the run itself (a commit of its own).
_COMMIT = "coalesce({a}.\"commit\", 'run:' || {a}.run_id)"

#: Each specialization's default metric (`primbench.metrics.choose`) over the rows selected:
#: bytes per second where bytes were declared, else items per second, else GPU time per call.
_DEFAULT_METRIC = (
    "CASE WHEN max(s.bytes_per_second) OVER spec > 0 THEN 'bytes_per_second' "
    "WHEN max(s.items_per_second) OVER spec > 0 THEN 'items_per_second' ELSE 'gpu_seconds_per_call' END"
)
_DEFAULT_VALUE = ("CASE metric WHEN 'bytes_per_second' THEN bytes_per_second "
                  "WHEN 'items_per_second' THEN items_per_second ELSE gpu_seconds_per_call END")
_SERIES_RUN = ('r.date, r.branch, r."commit", r.run_id, r.gpu_key, r.gpu_name, r.config_key, r.host, s.algorithm, '
               "s.name, r.ingested_at")
_SERIES_BESIDE = ("s.bytes_per_second, s.items_per_second, s.gpu_seconds_per_call, s.noise_percent, s.noise_timeout, "
                  "s.gpu_temp_start, s.gpu_temp_end, s.sm_clock_mhz")


def runs(con: duckdb.DuckDBPyConnection, selector: Selector = Selector(), *,
         limit: int | None = None) -> pd.DataFrame:
    """Stored runs, newest first (`RUN_ORDER`): one row per run with its branch, commit, date, GPU, config
    and host."""
    where = selector.where("r")
    sql = (
        'SELECT r.run_id, r.date, r.branch, r."commit", r.algorithm, r.gpu_name, r.gpu_key, r.config_key, r.host, '
        "r.specialization_count AS specializations, r.failures, r.noise_timeouts, r.results_version, "
        "r.source_path FROM runs r" + where.sql() + " ORDER BY " + RUN_ORDER_DESC.format(a="r")
    )
    params = list(where.params)
    if limit is not None:
        if limit < 1:
            raise UsageError(f"--limit must be at least 1, got {limit}")
        sql += " LIMIT ?"
        params.append(int(limit))
    return con.execute(sql, params).df()


def names(con: duckdb.DuckDBPyConnection, selector: Selector = Selector()) -> list[str]:
    """The specialization names stored (for suggestions), sorted."""
    source, params = selector.source(spec=True)
    rows = con.execute(f"SELECT DISTINCT s.name{source} ORDER BY 1", params).fetchall()
    return [r[0] for r in rows]


def series(con: duckdb.DuckDBPyConnection, selector: Selector = Selector(), *, metric: str | None = None,
           last: int | None = None, newest: int | None = None, names: Sequence[str] | None = None,
           commits: Sequence[str] | None = None, window: Window | None = None) -> pd.DataFrame:
    """The selected specializations across their runs, oldest first (`RUN_ORDER`): one row per (run,
    specialization) that did not fail, the followed metric's value in `value` and its name in
    `metric`, with noise, temperatures and clock beside it. `metric`: a ``--metric`` name
    (`metric_of`); None: each specialization's default (`primbench.metrics.choose`). Different
    GPUs have different `gpu_key` values and different measurement settings different
    `config_key` values (`primbench.resultconfig`): keep their series apart
    (`history.trends.SERIES_KEYS`). `last`: only the runs of the newest `last` commits (by each
    commit's first run in `RUN_ORDER`) among the runs the selector's run filters select. `newest`: only each
    series' (algorithm, name, GPU and config) newest `newest` rows, chosen in SQL: the rows a
    window of recent runs needs, without reading the branch's whole history into memory (each
    specialization's default metric is still decided over every selected row, as without it).
    `names`: only the specializations of these names (with the selector's one algorithm, if any):
    the rows of one `series` call per name, in one query (one scan of the store, not one per name;
    each name's rows as its own call gives them, in the same order). `commits`: only the runs of
    these commits (give `metric` with it: a default decided over these rows alone may differ).
    `window`: the commits of `last` found already (`window_commits`; used where it is this selector's and `last`'s)."""
    chosen = metric_of(metric)
    if newest is not None and newest < 1:
        raise UsageError(f"newest must be at least 1, got {newest}")
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    where, params = _selected(selector, last, window)
    if names is not None:  # a filter the scan applies; the default metric is a name's own either way
        where += f" AND s.name IN ({', '.join('?' * len(names))})" if names else " AND false"
        params += list(names)
    if commits is not None:
        where += " AND list_contains(?, r.\"commit\")"
        params.append(list(commits))
    source = f"FROM specializations s JOIN runs r USING (run_id){where}"
    if chosen is not None and chosen.name in EXTRA_METRICS:  # a path into extra's JSON, from the fixed table
        value = f"TRY_CAST(json_extract_string(s.extra, '{EXTRA_METRICS[chosen.name]}') AS DOUBLE)"
        sql = (f"SELECT {_SERIES_RUN}, {value} AS value, '{chosen.name}' AS metric, {_SERIES_BESIDE} "
               f"{source} AND {value} IS NOT NULL ORDER BY {RUN_ORDER.format(a='r')}, s.idx")
        found = con.execute(sql, params).df()
        if newest is not None:  # each series' newest rows, as `_newest` keeps them for a column
            found = found.groupby(["algorithm", "name", "gpu_key", "config_key"], sort=False,
                                  dropna=False).tail(int(newest))
        return found
    if newest is not None:
        return _newest(con, source, params, chosen, int(newest), selector)
    if chosen is not None:
        sql = (f"SELECT {_SERIES_RUN}, s.{chosen.name} AS value, '{chosen.name}' AS metric, {_SERIES_BESIDE} "
               f"{source} ORDER BY {RUN_ORDER.format(a='r')}, s.idx")
    else:
        inner = (f"SELECT {_SERIES_RUN}, {_DEFAULT_METRIC} AS metric, {_SERIES_BESIDE}, s.idx {source} "
                 "WINDOW spec AS (PARTITION BY s.algorithm, s.name)")
        sql = (f"SELECT date, branch, \"commit\", run_id, gpu_key, gpu_name, config_key, host, algorithm, name, "
               f"ingested_at, {_DEFAULT_VALUE} AS value, metric, * EXCLUDE (date, branch, \"commit\", run_id, "
               f"gpu_key, gpu_name, config_key, host, algorithm, name, ingested_at, metric, idx) FROM ({inner}) "
               "ORDER BY ingested_at, date, run_id, idx")
    return con.execute(sql, params).df()


def _selected(selector: Selector, last: int | None, window: Window | None = None) -> tuple[str, list[object]]:
    """The ``WHERE …`` of `series`' rows from ``specializations s JOIN runs r`` (and its
    parameters): the selector's runs and specializations that did not fail, of the newest
    `last` commits where given: those of `window` where it holds them (`Window.holds`: the same
    commits, found once), else found by this query."""
    where = selector.where("r", "s")
    if last is not None and window is not None and window.holds(selector, last):
        where = where.and_(f"{_COMMIT.format(a='r')} IN (SELECT unnest(?::VARCHAR[]))", list(window.commits))
    elif last is not None:
        where = where.and_(f"{_COMMIT.format(a='r')} IN ({_newest_commits_sql(selector)})",
                           *selector.runs_only().where("r2").params, int(last))
    where = where.and_("s.error IS NULL")
    return where.sql(), list(where.params)


def _newest_commits_sql(selector: Selector) -> str:
    """The commits (a run without one a commit of its own) of the newest `last` (its last parameter, after
    those of `selector`'s run filters) among the runs `selector`'s run filters select, by each commit's
    first run in `RUN_ORDER`: the window of `series`' `last`."""
    recent = selector.runs_only().where("r2")
    return (f"SELECT {_COMMIT.format(a='r2')} FROM runs r2{recent.sql()} "
            f"GROUP BY 1 ORDER BY min(({RUN_ORDER.format(a='r2')})) DESC LIMIT ?")


@dataclass(frozen=True)
class Window:
    """The commits of a window (`series`' `last`) of a selector's runs, found once
    (`window_commits`), for a command that runs several queries of the same window (a report: its
    overview, change points, charts and energy): each query then tests each run's commit against
    them rather than find them again (a group-by of the selector's every run)."""

    runs: Selector  # the selector's run filters (`Selector.runs_only`)
    last: int
    commits: tuple[str, ...]

    def holds(self, selector: Selector, last: int) -> bool:
        """Whether these are the commits of `selector`'s newest `last`."""
        return last == self.last and selector.runs_only() == self.runs


def window_commits(con: duckdb.DuckDBPyConnection, selector: Selector, last: int) -> Window:
    """The commits of the newest `last` among `selector`'s runs (as `series`' `last` selects them), as a `Window`."""
    rows = con.execute(_newest_commits_sql(selector), [*selector.runs_only().where("r2").params, int(last)]).fetchall()
    return Window(selector.runs_only(), int(last), tuple(str(row[0]) for row in rows))


def specialization_sizes(con: duckdb.DuckDBPyConnection, selector: Selector = Selector(), *,
                         last: int | None = None, window: Window | None = None) -> list[tuple[str, str, int, str]]:
    """Each selected specialization (algorithm, name) with its number of `series` rows and its
    default metric over them (`primbench.metrics.choose`, as `series` decides it), sorted: what
    `commit_points` is given a batch at a time. `window`: as `series` takes it."""
    where, params = _selected(selector, last, window)
    rows = con.execute("SELECT s.algorithm, s.name, count(*), CASE WHEN max(s.bytes_per_second) > 0 THEN "
                       "'bytes_per_second' WHEN max(s.items_per_second) > 0 THEN 'items_per_second' "
                       "ELSE 'gpu_seconds_per_call' END "
                       f"FROM specializations s JOIN runs r USING (run_id){where} GROUP BY 1, 2", params).fetchall()
    return sorted((str(a), str(n), int(c), str(m)) for a, n, c, m in rows)


def series_overview(con: duckdb.DuckDBPyConnection, selector: Selector, *, metric: str | None = None,
                    last: int | None = None,
                    window: Window | None = None) -> tuple[tuple[int, int, Any, Any], list[tuple[Any, ...]]]:
    """What a `series` frame of the same arguments holds, without its rows: (runs, commits
    (a run without one a commit of its own), first date, last date; zeros and None for no row),
    and each distinct (algorithm, name, config_key (empty text where unknown), gpu_name, metric)
    of its rows, sorted (None last). `window`: as `series` takes it."""
    chosen = metric_of(metric)
    where, params = _selected(selector, last, window)
    source = f"FROM specializations s JOIN runs r USING (run_id){where}"
    if chosen is not None and chosen.name in EXTRA_METRICS:  # only the rows that have the value, as `series`
        source += (f" AND TRY_CAST(json_extract_string(s.extra, '{EXTRA_METRICS[chosen.name]}') AS DOUBLE) "
                   "IS NOT NULL")
    row = con.execute(f"SELECT count(DISTINCT r.run_id), count(DISTINCT {_COMMIT.format(a='r')}), min(r.date), "
                      f"max(r.date) {source}", params).fetchone()
    totals = (int(row[0]), int(row[1]), row[2], row[3]) if row else (0, 0, None, None)
    followed = (f"'{chosen.name}'" if chosen is not None else
                "CASE WHEN max(max(s.bytes_per_second)) OVER spec > 0 THEN 'bytes_per_second' "
                "WHEN max(max(s.items_per_second)) OVER spec > 0 THEN 'items_per_second' "
                "ELSE 'gpu_seconds_per_call' END")
    groups = con.execute(f"SELECT s.algorithm, s.name, coalesce(r.config_key, '') AS config_key, r.gpu_name, "
                         f"{followed} AS metric {source} GROUP BY 1, 2, 3, 4 "
                         "WINDOW spec AS (PARTITION BY s.algorithm, s.name) ORDER BY 1, 2, 3, 4", params).fetchall()
    return totals, groups


def _sorted_values(column: str) -> str:
    """An aggregate: `column`'s values over a group as a sorted list, NULL and NaN left out (`_middle` of it)."""
    return (f"list_sort(list({column}::DOUBLE) FILTER (WHERE {column} IS NOT NULL "
            f"AND NOT isnan({column}::DOUBLE)))")


def _middle(values: str) -> str:
    """The median of a sorted list (`_sorted_values`) as pandas computes it: the middle value,
    or half the sum of the two middle ones (the same float, bit for bit); NULL for none."""
    n = f"len({values})"
    return (f"CASE WHEN {n} = 0 THEN NULL WHEN {n} % 2 = 1 THEN {values}[{n} // 2 + 1] "
            f"ELSE ({values}[{n} // 2] + {values}[{n} // 2 + 1]) / 2 END")


def newest_commits(con: duckdb.DuckDBPyConnection, selector: Selector,
                   wanted: Sequence[tuple[str, str, str, str, Any]], model: Callable[[Any], str],
                   n: int) -> dict[int, list[str]]:
    """For each (algorithm, name, config_key (empty text where unknown), GPU model, latest date) of
    `wanted`, by its index: the `n` commits (a run without one never among them) of the selector's
    `series` rows of that specialization and config, of runs on a GPU of that model (`model` of
    the run's GPU name; of the empty text for none) dated `latest` or earlier, whose first row
    comes last in `RUN_ORDER`, oldest first: in one query, what a `series` frame of each
    specialization, filtered so, keeps of its newest `n` distinct commits."""
    where, params = _selected(selector, None)
    gpus = [str(row[0]) for row in con.execute("SELECT DISTINCT coalesce(gpu_name, '') FROM runs").fetchall()]
    models = {g: model(g or None) for g in gpus}
    charts = list(zip(*wanted, strict=True)) if wanted else [()] * 5
    sql = (
        "WITH w AS (SELECT unnest(?::BIGINT[]) AS chart, unnest(?::VARCHAR[]) AS algorithm, "
        "unnest(?::VARCHAR[]) AS name, unnest(?::VARCHAR[]) AS config_key, unnest(?::VARCHAR[]) AS model, "
        "unnest(?::TIMESTAMPTZ[]) AS latest), "
        "m AS (SELECT unnest(?::VARCHAR[]) AS gpu_name, unnest(?::VARCHAR[]) AS model) "
        f"SELECT chart, \"commit\" FROM (SELECT w.chart, r.\"commit\", min(({RUN_ORDER.format(a='r')})) AS first "
        "FROM specializations s JOIN runs r USING (run_id) JOIN w ON w.algorithm = s.algorithm AND w.name = s.name "
        f"JOIN m ON m.gpu_name = coalesce(r.gpu_name, ''){where} AND coalesce(r.config_key, '') = w.config_key "
        "AND m.model = w.model AND r.date <= w.latest AND r.\"commit\" IS NOT NULL GROUP BY w.chart, r.\"commit\") "
        "QUALIFY row_number() OVER (PARTITION BY chart ORDER BY first DESC) <= ? ORDER BY chart, first")
    out: dict[int, list[str]] = {}
    rows = con.execute(sql, [list(range(len(wanted))), *(list(c) for c in charts[:5]), list(models),
                             list(models.values()), *params, int(n)]).fetchall()
    for chart, commit in rows:
        out.setdefault(int(chart), []).append(str(commit))
    return out


def selected_commits(con: duckdb.DuckDBPyConnection, selector: Selector, *, last: int | None = None,
                     window: Window | None = None) -> list[str]:
    """Every commit of the runs `series` would read for `selector` (a run without one as
    ``run:RUN_ID``, a commit of its own), for git's order of them (`history.forkpoint.commit_order`).
    `window`: as `series` takes it."""
    where, params = _selected(selector, last, window)
    sql = (f"SELECT DISTINCT {_COMMIT.format(a='r')} FROM specializations s JOIN runs r USING (run_id){where}")
    return [row[0] for row in con.execute(sql, params).fetchall()]


def commit_points(con: duckdb.DuckDBPyConnection, selector: Selector, algorithm: str, names: Sequence[str], *,
                  metric: str, last: int | None = None, window: Window | None = None) -> pd.DataFrame:
    """The `series` rows of the `algorithm`'s specializations `names` reduced in SQL to one point
    per commit of each series, as `history.trends.per_commit` reduces them (a run without a
    commit is a commit of its own; the median of the commit's values and of its noise; its first
    run's date and GPU name; the number of runs), of the `metric` named (a ``--metric`` name;
    `specialization_sizes` says each one's default): the columns algorithm, name, gpu_key,
    config_key (empty text where unknown), commit, date, value, metric, noise_percent, runs,
    gpu_name; each series in ingest order (each commit at its first run's place in `RUN_ORDER`,
    never by the dates a runner's clock wrote), the series in key order. The rows of other
    specializations are not read: a caller goes through a large selection a batch at a time.
    `window`: as `series` takes it."""
    chosen = metric_of(metric)
    assert chosen is not None
    where, params = _selected(selector, last, window)
    where += f" AND s.algorithm = ? AND s.name IN ({', '.join('?' * len(names))})"  # a filter the scan applies
    params += [algorithm, *names]
    if chosen.name in EXTRA_METRICS:  # a path into extra's JSON, from the fixed table
        value = f"TRY_CAST(json_extract_string(s.extra, '{EXTRA_METRICS[chosen.name]}') AS DOUBLE)"
        where += f" AND {value} IS NOT NULL"
    else:
        value = f"s.{chosen.name}"
    rows = (f"SELECT s.algorithm, s.name, r.gpu_key, coalesce(r.config_key, '') AS config_key, "
            f"{_COMMIT.format(a='r')} AS \"commit\", r.date, ({RUN_ORDER.format(a='r')}) AS run_order, r.run_id, "
            f"r.gpu_name, {value} AS value, s.noise_percent FROM specializations s JOIN runs r USING (run_id){where}")
    # a (run, specialization) row per run of a commit (the key): a run's place is `RUN_ORDER`, as in `series`
    grouped = (f"SELECT algorithm, name, gpu_key, config_key, \"commit\", min(date) AS date, "
               f"min(run_order) AS run_order, {_sorted_values('value')} AS vs, {_sorted_values('noise_percent')} "
               "AS ns, count(run_id) AS runs, "
               "arg_min(gpu_name, run_order) FILTER (WHERE gpu_name IS NOT NULL) AS gpu_name "
               f"FROM ({rows}) GROUP BY algorithm, name, gpu_key, config_key, \"commit\"")
    sql = (f"SELECT algorithm, name, gpu_key, config_key, \"commit\", date, {_middle('vs')} AS value, "
           f"'{chosen.name}' AS metric, {_middle('ns')} AS noise_percent, runs, gpu_name FROM ({grouped}) "
           "ORDER BY algorithm, name, gpu_key NULLS LAST, config_key, run_order, \"commit\"")
    return con.execute(sql, params).df()


#: How many of the newest selected runs `_newest` looks among first, per row it keeps of a series.
NEWEST_RUNS_PER_ROW = 10


def _newest(con: duckdb.DuckDBPyConnection, source: str, params: list[object], chosen: Metric | None,
            newest: int, selector: Selector) -> pd.DataFrame:
    """`series` with `newest`: the selected rows (`source`), of each series only its newest
    `newest` (a top-N aggregate in `RUN_ORDER`: `max_by(…, n)`), with the value of the chosen
    metric, else of each specialization's default one decided over every selected row (as
    `_DEFAULT_METRIC`'s window). The top-N is taken among the newest `NEWEST_RUNS_PER_ROW` x
    `newest` runs the selector's run filters select (a run holds one row of a series at most,
    and every row outside them is older than every row inside): a series with fewer rows there
    than it needs (and than it has) is taken from all its rows; a plain aggregate over every row
    counts each series' rows and decides the default metrics. No query holds the selection's rows."""
    order = RUN_ORDER.format(a="r")
    keys = "s.algorithm, s.name, r.gpu_key, r.config_key"
    totals = con.execute(
        f"SELECT {keys}, count(*), CASE WHEN max(max(s.bytes_per_second)) OVER spec > 0 THEN 'bytes_per_second' "
        "WHEN max(max(s.items_per_second)) OVER spec > 0 THEN 'items_per_second' ELSE 'gpu_seconds_per_call' END "
        f"{source} GROUP BY {keys} WINDOW spec AS (PARTITION BY s.algorithm, s.name)", params).fetchall()
    recent = selector.runs_only().where("r2")
    suffix = (f" AND r.run_id IN (SELECT r2.run_id FROM runs r2{recent.sql()} "
              f"ORDER BY {RUN_ORDER_DESC.format(a='r2')} LIMIT ?)")
    top = f"SELECT {keys}, max_by(r.run_id, ({order}), ?), count(*) "
    kept = {tuple(row[:4]): (row[4], row[5]) for row in con.execute(
        f"{top}{source}{suffix} GROUP BY {keys}",
        [newest, *params, *recent.params, newest * NEWEST_RUNS_PER_ROW]).fetchall()}
    short = sorted({str(t[1]) for t in totals if kept.get(tuple(t[:4]), ((), 0))[1] < min(newest, t[4])})
    if short:  # too few rows among the newest runs: these series from all their rows
        older = f" AND s.name IN ({', '.join('?' * len(short))})"
        kept.update({tuple(row[:4]): (row[4], row[5]) for row in con.execute(
            f"{top}{source}{older} GROUP BY {keys}", [newest, *params, *short]).fetchall()})
    run_ids, names, metrics = [], [], []
    for algorithm, name, gpu_key, config_key, _, default in totals:
        for run_id in kept[(algorithm, name, gpu_key, config_key)][0]:
            run_ids.append(run_id)
            names.append(name)
            metrics.append(chosen.name if chosen is not None else default)
    value = (f"s.{chosen.name} AS value" if chosen is not None else
             _DEFAULT_VALUE.replace("CASE metric", "CASE k.metric") + " AS value")
    sql = (f"SELECT {_SERIES_RUN}, {value}, k.metric, {_SERIES_BESIDE} FROM (SELECT unnest(?::VARCHAR[]) AS run_id, "
           "unnest(?::VARCHAR[]) AS name, unnest(?::VARCHAR[]) AS metric) k "
           "JOIN specializations s ON s.run_id = k.run_id AND s.name = k.name JOIN runs r ON r.run_id = s.run_id"
           f" WHERE s.run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY {order}, s.idx")
    return con.execute(sql, [run_ids, names, metrics, sorted(set(run_ids))]).df()


_LATEST = RUN_ORDER.format(a="r")


def branches(con: duckdb.DuckDBPyConnection, selector: Selector = Selector()) -> pd.DataFrame:
    """Each branch (per algorithm, GPU and config) with its run count and its latest run (`RUN_ORDER`),
    the branches with the newest dates first."""
    where = selector.where("r")
    sql = (
        "SELECT branch, algorithm, gpu_name, gpu_key, config_key, count(*) AS runs, "
        'count(DISTINCT "commit") AS commits, min(date) AS first_date, max(date) AS latest_date, '
        f'arg_max("commit", ({_LATEST})) AS latest_commit, arg_max(run_id, ({_LATEST})) AS latest_run_id, '
        f"arg_max(host, ({_LATEST})) AS latest_host "
        f"FROM runs r{where.sql()} GROUP BY branch, algorithm, gpu_name, gpu_key, config_key "
        "ORDER BY latest_date DESC, branch, config_key"
    )
    return con.execute(sql, list(where.params)).df()


def newest_gpu_key(con: duckdb.DuckDBPyConnection, selector: Selector) -> str | None:
    """The full key of the GPU of the newest run the selector matches (None: no run): a short
    id (``5d6e1a0c-b``, as tables show it) or a model name made into one physical GPU."""
    sql, params = selector.source()
    row = con.execute(f"SELECT r.gpu_key{sql} ORDER BY {RUN_ORDER_DESC.format(a='r')} LIMIT 1", params).fetchone()
    return None if row is None else str(row[0])


def document(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[Any, str | None, str | None] | None:
    """A stored run's results document (as Python values), branch and commit; None if no such
    run. Both by the run's key: the document from ``documents`` where the store keeps it apart
    (a DuckDB file), else from ``runs.document``."""
    from primbench.history.storage.schema import load_document

    rows = con.execute('SELECT branch, "commit" FROM runs WHERE run_id = ?', [run_id]).fetchall()
    if not rows:
        return None
    found = load_document(con, run_id)
    return None if found is None else (found, rows[0][0], rows[0][1])


def selected_date_flags(con: duckdb.DuckDBPyConnection, selector: Selector, *,
                        last: int | None = None, window: Window | None = None) -> dict[str, str]:
    """`date_flags` of the runs `series` would read for `selector` (and `last`): the flagged runs
    among the selector's runs first (the runs table alone), then those of them with a selected
    row; no scan of the specializations where no run is flagged (the usual case). `window`: as `series` takes it."""
    runs_where = selector.runs_only().where("r").and_("json_extract_string(r.general, ?) IS NOT NULL",
                                                      f"$.{DATE_FLAG_KEY}")
    flagged = [row[0] for row in con.execute(f"SELECT r.run_id FROM runs r{runs_where.sql()}",
                                             list(runs_where.params)).fetchall()]
    if not flagged:
        return {}
    where, params = _selected(selector, last, window)
    rows = con.execute(f"SELECT DISTINCT s.run_id FROM specializations s JOIN runs r USING (run_id){where} "
                       "AND list_contains(?, s.run_id)", [*params, flagged]).fetchall()
    return date_flags(con, [row[0] for row in rows])


def date_flags(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, str]:
    """Why ingest flagged the date of each of `run_ids` that it flagged
    (`history.storage.ingest.flag_dates`: later than its ingest, or earlier than the branch's
    runs ingested before it), by run id; runs not flagged are absent. Many run ids (a whole
    branch's): the flagged runs read first and kept where asked for, in the same order (a list
    of 100,000 ids tested against every run took 0.6 s)."""
    if not len(run_ids):
        return {}
    path = f"$.{DATE_FLAG_KEY}"
    if len(run_ids) > _FEW_RUNS:
        wanted = set(run_ids)
        rows = con.execute("SELECT run_id, json_extract_string(general, ?) FROM runs "
                           "WHERE json_extract_string(general, ?) IS NOT NULL", [path, path]).fetchall()
        return {str(r): str(reason) for r, reason in rows if r in wanted}
    rows = con.execute("SELECT run_id, json_extract_string(general, ?) FROM runs WHERE list_contains(?, run_id) "
                       "AND json_extract_string(general, ?) IS NOT NULL",
                       [path, list(run_ids), path]).fetchall()
    return {str(r): str(reason) for r, reason in rows}


#: Up to this many run ids, `date_flags` tests each run against the list in SQL.
_FEW_RUNS = 1000
