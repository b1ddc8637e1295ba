"""`Reader`: every query of the history on one open, read-only DuckDB connection to a store.

Every backend (`history.storage`) gives such a connection (`Store.connect`): to the DuckDB
file, or to an in-memory copy of a Parquet folder's or a database server's tables. A command
that checks its filters and then queries (or the report, which runs many queries) opens the
store once. Every query takes a `history.selector.Selector`; the SQL is in `history.queries`,
the checks of the filters in `history.selection`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from primbench.history import queries, selection
from primbench.history.bounded import bounded
from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE
from primbench.history.deps import require
from primbench.history.errors import HistoryError
from primbench.history.selector import Selector

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.history.export import Written
    from primbench.results import Results


#: About how many `series` rows (a run's specialization each) `Reader.commit_points` reduces in one query:
#: the default window of 1,000 commits of 100 specializations (a run a commit) in one query; a whole
#: history of 100,000 runs a specialization a query (two a query: 125 MB more and no less CPU, measured).
BATCH_ROWS = 110_000


class Reader:
    """Queries on one open, read-only connection to a store (`history.storage.contract.Store.read` gives one)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        require("pandas")  # every query hands back a DataFrame
        self.con = con
        self._window: queries.Window | None = None

    @contextmanager
    def pinned(self, selector: Selector, last: int | None) -> Iterator[None]:
        """The commits of `selector`'s newest `last` (a window of `series`, `overview` and
        `commit_points`) found once, in one query, and used by each of those queries of that
        selector's runs and `last` until the block ends (`history.queries.Window`): the same rows,
        without each query finding the window again. No window (`last` None): nothing to pin; the
        window pinned already: kept as it is."""
        if last is None or last < 1 or (self._window is not None and self._window.holds(selector, last)):
            yield
            return
        was, self._window = self._window, queries.window_commits(self.con, selector, last)
        try:
            yield
        finally:
            self._window = was

    def check(self, *selectors: Selector) -> None:
        """Each selector must match some stored run (`history.selection.check`: a `NoMatchError`
        with "did you mean" names the filter that matches nothing)."""
        for s in selectors:
            selection.check(self.con, s)

    def runs(self, selector: Selector = Selector(), *, limit: int | None = None) -> pd.DataFrame:
        """Stored runs, newest first (`history.queries.runs`)."""
        return queries.runs(self.con, selector, limit=limit)

    def series(self, selector: Selector, *, metric: str | None = None, last: int | None = None,
               names: Sequence[str] | None = None, commits: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per selected (run, specialization), oldest first (`history.queries.series`;
        `names`: of these specializations only, read in one query; `commits`: of these commits'
        runs only). Give a branch: the series of two branches are one series here."""
        return queries.series(self.con, selector, metric=metric, last=last, names=names, commits=commits,
                              window=self._window)

    def overview(self, selector: Selector, *, metric: str | None = None,
                 last: int | None = None) -> tuple[tuple[int, int, Any, Any], list[tuple[Any, ...]]]:
        """(runs, commits, first and last date) of what `series` selects, and its distinct
        (algorithm, name, config_key, gpu_name, metric) (`history.queries.series_overview`)."""
        return queries.series_overview(self.con, selector, metric=metric, last=last, window=self._window)

    def branches(self, selector: Selector = Selector()) -> pd.DataFrame:
        """Branches per algorithm, GPU and config with their latest run (`history.queries.branches`)."""
        return queries.branches(self.con, selector)

    def names(self, selector: Selector = Selector()) -> list[str]:
        """The specialization names stored."""
        return queries.names(self.con, selector)

    def regressions(self, selector: Selector, *, metric: str | None = None,
                    alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                    min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                    max_points: int = DEFAULT_MAX_POINTS, use_git: bool = False, window: int | None = None,
                    order: Mapping[str, int] | None = None) -> pd.DataFrame:
        """Change points of every per-commit series the selector selects (`history.trends.regressions_of`);
        give a branch, as for `series`. `window`: only the newest `window` commits are analysed
        (`series`' `last`; None: the whole history); `last` keeps the changes that reach the
        newest `last` commits of each series. The commits in ingest order, or in `order`, or
        with `use_git` in git's order where git here knows them all (`commit_order`)."""
        from primbench.history.trends import regressions_in

        with bounded(self.con), self.pinned(selector, window):
            if order is None and use_git:
                order = self.commit_order(selector, last=window)
            # the series' pooled noise takes three passes: read once where the points are few (`trends.regressions_in`)
            return regressions_in(lambda: self.commit_points(selector, metric=metric, last=window), metric=metric,
                                  alpha=alpha, min_size=min_size, min_shift=min_shift, last=last,
                                  max_points=max_points, order=order)

    def commit_order(self, selector: Selector, *, last: int | None = None) -> dict[str, int] | None:
        """The place in git's history here of every commit `series` would read
        (`history.forkpoint.commit_order`); None where a run has no commit or git does not know
        one of them (the ingest order stands)."""
        from primbench.history.forkpoint import commit_order

        commits = queries.selected_commits(self.con, selector, last=last, window=self._window)
        return commit_order(commits) if commits and not any(c.startswith("run:") for c in commits) else None

    def selected_date_flags(self, selector: Selector, *, last: int | None = None) -> dict[str, str]:
        """Why ingest flagged the date of each run `series` would read that it flagged
        (`history.queries.selected_date_flags`)."""
        return queries.selected_date_flags(self.con, selector, last=last, window=self._window)

    def date_flags(self, run_ids: Sequence[str]) -> dict[str, str]:
        """Why ingest flagged the date of each of `run_ids` it flagged (`history.queries.date_flags`)."""
        return queries.date_flags(self.con, run_ids)

    def commit_points(self, selector: Selector, *, metric: str | None = None, last: int | None = None,
                      rows: int = BATCH_ROWS) -> Iterator[pd.DataFrame]:
        """The selected series reduced to one point per commit in SQL (`history.queries.commit_points`),
        a batch of specializations at a time, each batch of about `rows` `series` rows at most (one
        specialization more, where one alone has more; one algorithm's), the specializations in key order: a
        whole branch's history is never in memory at once."""
        batch: list[str] = []
        size, of = 0, ("", "")
        window = self._window
        for algorithm, name, count, default in queries.specialization_sizes(self.con, selector, last=last,
                                                                            window=window):
            # a batch: one algorithm's specializations of one metric (each one's default, decided once here)
            if batch and (size + count > rows or (algorithm, metric or default) != of):
                yield queries.commit_points(self.con, selector, of[0], batch, metric=of[1], last=last, window=window)
                batch, size = [], 0
            batch.append(name)
            size += count
            of = (algorithm, metric or default)
        if batch:
            yield queries.commit_points(self.con, selector, of[0], batch, metric=of[1], last=last, window=window)

    def gpu_key(self, selector: Selector) -> str | None:
        """The full key of the GPU of the newest run the selector matches (None: none does)."""
        return queries.newest_gpu_key(self.con, selector)

    def results(self, run_id: str) -> Results:
        """A stored run rebuilt as `primbench.results.Results` from its document."""
        from primbench.results import results_from_dict

        found = queries.document(self.con, run_id)
        if found is None:
            raise HistoryError(f"run {run_id} vanished from the store")
        document, branch, commit = found
        return results_from_dict(document, f"{branch}@{(commit or '?')[:12]} (run {run_id[:12]})")

    def export_parquet(self, directory: str | os.PathLike[str], *, documents: bool = True,
                       store: str | None = None) -> Written:
        """Every table as ``DIRECTORY/<table>.parquet``, the results documents only with `documents`;
        with `store` (`history.export.store_identity`), only the runs added since where the folder
        holds an export of that store (`history.export.export_tables`)."""
        from primbench.history.export import export_tables

        return export_tables(self.con, directory, documents=documents, store=store)
