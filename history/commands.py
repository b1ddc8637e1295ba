"""What each ``primbench history`` command does, as one function each.

The command line (`primbench.cli.history`) maps its options to the keyword arguments of one
of these and renders what it returns; Python callers use them the same way. Each opens the
store once (`history.storage.contract.open_store`: a DuckDB file, a folder of Parquet parts or a
database server), checks
every filter against it (`history.selection`: a filter that matches nothing is a
`NoMatchError` with "did you mean"), then runs its query on that one connection.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primbench.history.bounded import bounded
from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE
from primbench.history.selector import Selector
from primbench.history.storage.contract import open_store

if TYPE_CHECKING:
    import pandas as pd

    from primbench.history.branch_compare import BranchComparison
    from primbench.history.export import Written
    from primbench.history.reader import Reader
    from primbench.history.report import Report
    from primbench.history.storage.ingest import IngestReport, MergeReport, Progress
    from primbench.history.storage.parquet import QuarantineReport

#: A store's location (None: ``$PRIMBENCH_HISTORY_DB``, else ``.primbench/history.duckdb``).
Db = str | os.PathLike[str] | None


@contextmanager
def _checked(db: Db, *selectors: Selector) -> Iterator[Reader]:
    """A reader of the store `db`, once each selector is known to match some stored run."""
    with open_store(db).read(*selectors) as r:  # a server copies only what they can reach
        r.check(*selectors)
        yield r


def _base(branch: str) -> Selector:
    """The base branch of a comparison, named so in messages."""
    return Selector(branch=branch, labels=(("branch", "base branch"),))


def ingest(paths: Iterable[str | os.PathLike[str]], *, db: Db = None, shared: Db = None, runner: str | None = None,
           wait_secs: float | None = None, progress: Progress | None = None, branch: str | None = None,
           commit: str | None = None) -> IngestReport:
    """Store results files in the store `db` (`open_store`: a DuckDB file, a folder of Parquet
    parts, a server's URL), or as this runner's Parquet parts in the folder `shared` (made if
    need be); `branch` and `commit`, where given, are every file's."""
    from primbench.history.storage.ingest import Overrides
    from primbench.history.storage.parquet import ParquetStore

    overrides = Overrides(branch=branch, commit=commit)
    store = ParquetStore(shared, runner=runner) if shared is not None else open_store(db, wait_secs=wait_secs)
    if runner is not None and isinstance(store, ParquetStore):
        store.runner = runner
    return store.ingest(paths, progress=progress, overrides=overrides)


def runs(db: Db, selector: Selector, *, limit: int | None = None) -> pd.DataFrame:
    """The selected runs, newest first (at most `limit`), each with its ``date_flag``: why
    ingest flagged its date (`history.storage.ingest.flag_dates`), else None."""
    with _checked(db, selector) as r:
        frame = r.runs(selector, limit=limit)
        flags = r.date_flags(list(frame["run_id"]))
    frame["date_flag"] = [flags.get(run_id) for run_id in frame["run_id"]]
    return frame


def _warn_of_dates(flags: dict[str, str], order: str) -> None:
    """A `HistoryWarning` naming the runs whose dates ingest flagged (`flags`: run id -> why; a
    runner's clock that was wrong), and the order they are taken in instead."""
    import warnings

    from primbench.history.errors import HistoryWarning

    if not flags:
        return
    shown = "; ".join(f"run {run_id[:10]}: {reason}" for run_id, reason in list(flags.items())[:3])
    more = f" (and {len(flags) - 3} more)" if len(flags) > 3 else ""
    warnings.warn(HistoryWarning(f"{len(flags)} run(s) with a flagged date, ordered by {order}, not by their "
                                 f"dates: {shown}{more}"), stacklevel=3)


def series(db: Db, selector: Selector, *, metric: str | None = None, last: int | None = None,
           per_run: bool = False, use_git: bool = True) -> pd.DataFrame:
    """The selected series: one row per commit (the median of its runs), or per run; the
    commits in git's order where git here knows them all (`use_git`), else in ingest order
    (`history.trends.per_commit`). Runs whose dates ingest flagged are named in a warning."""
    from primbench.history.trends import git_order, per_commit

    with _checked(db, selector) as r, bounded(r.con):
        frame = r.series(selector, metric=metric, last=last)
        order = git_order(frame) if use_git and not per_run else None
        _warn_of_dates(r.date_flags(list(dict.fromkeys(frame["run_id"]))), "git" if order is not None else "ingest")
    return frame if per_run else per_commit(frame, order)


def branches(db: Db, selector: Selector) -> pd.DataFrame:
    """Branches per algorithm, GPU and config, with their latest run."""
    with _checked(db, selector) as r:
        return r.branches(selector)


def compare(db: Db, head: Selector, *, base: str = "main", fork_point: str | None = None, use_git: bool = True,
            threshold: float | None = None, alpha: float | None = None,
            metric: str | None = None) -> BranchComparison:
    """The head branch's latest run against `base` (`history.branch_compare`)."""
    from dataclasses import replace

    from primbench.history.branch_compare import branch_comparison

    with _checked(db, head, _base(base)) as r, bounded(r.con):
        if head.gpu is not None:  # a short id or a model: the full key of the GPU it names
            head = replace(head, gpu=r.gpu_key(head) or head.gpu)
        return branch_comparison(r, head, base, fork_point=fork_point, use_git=use_git, threshold=threshold,
                                 alpha=alpha, metric=metric)


def regressions(db: Db, selector: Selector, *, metric: str | None = None, alpha: float = DEFAULT_ALPHA,
                min_shift: float = DEFAULT_MIN_SHIFT, min_size: int = DEFAULT_MIN_SIZE, last: int | None = None,
                max_points: int = DEFAULT_MAX_POINTS, use_git: bool = True, window: int | None = None) -> pd.DataFrame:
    """Change points of every selected series (`history.trends.regressions_of`), of the newest
    `window` commits only (None: the whole history), their commits in git's order where git here
    knows them all (`use_git`), else in ingest order; `last` keeps the changes that reach the
    newest `last` commits. Read from the store a batch of specializations at a time, each
    reduced to one point per commit in SQL (`Reader.regressions`): never the whole selection in
    memory. Runs whose dates ingest flagged are named in a warning."""
    from primbench.errors import UsageError

    if window is not None and window < 1:
        raise UsageError(f"--window must be at least 1, got {window}")
    with _checked(db, selector) as r, r.pinned(selector, window):  # the window's commits found once
        order = r.commit_order(selector, last=window) if use_git else None
        _warn_of_dates(r.selected_date_flags(selector, last=window), "git" if order is not None else "ingest")
        return r.regressions(selector, metric=metric, alpha=alpha, min_size=min_size, min_shift=min_shift, last=last,
                             max_points=max_points, window=window, order=order)


def plot(db: Db, selector: Selector, *, out: str | os.PathLike[str], metric: str | None = None,
         last: int | None = None, progress: Progress | None = None) -> list[Path]:
    """Trend charts of the selected series (`history.plots.plot_series`)."""
    from primbench.history.plots import plot_series

    with _checked(db, selector) as r:
        return plot_series(r, selector, out, metric=metric, last=last, progress=progress)


def report(db: Db, selector: Selector, *, out: str | os.PathLike[str], base: str = "main",
           metric: str | None = None, use_git: bool = True, last: int | None = None, max_charts: int = 40,
           progress: Progress | None = None) -> Report:
    """The HTML report of the selector's branch (`history.report.write_report`)."""
    from primbench.history.report import write_report

    with _checked(db, selector, _base(base)) as r:
        return write_report(r, selector, out, base=base, metric=metric, use_git=use_git, last=last,
                            max_charts=max_charts, progress=progress)


def merge(source: str | os.PathLike[str], *, db: Db = None, wait_secs: float | None = None) -> MergeReport:
    """Add the runs of the Parquet dataset `source` (or any store) to the store `db` (idempotent)."""
    return open_store(db, wait_secs=wait_secs).merge(source)


def quarantine(source: str | os.PathLike[str], *, max_age_secs: float | None = None,
               dry_run: bool = False) -> QuarantineReport:
    """Move the unreadable and orphan parts of a Parquet dataset aside."""
    from primbench.history.storage.parquet import ParquetStore

    return ParquetStore(source).quarantine(max_age_secs=max_age_secs, dry_run=dry_run)


def migrate(db: Db = None, *, wait_secs: float | None = None) -> list[int]:
    """Bring the store to this primbench's schema; the versions applied."""
    return open_store(db, wait_secs=wait_secs).migrate()


def info(db: Db = None) -> dict[str, Any]:
    """The store's path, kind, schema version, migrations and row counts."""
    return open_store(db).info()


def export(db: Db, directory: str | os.PathLike[str], *, documents: bool = False) -> Written:
    """Every table of the store as ``DIRECTORY/<table>.parquet``: table -> (path, rows) of each
    file written; where DIRECTORY holds an export of this store, only the runs added since, as
    new parts ``<table>.<sequence>.parquet`` (`Written.incremental`). The results documents
    (``documents.parquet``, or a server's or a folder's ``runs.document``) only with `documents`
    (`history.export.export_tables`)."""
    return open_store(db).export_parquet(directory, documents=documents)


__all__ = ["branches", "compare", "export", "info", "ingest", "merge", "migrate", "plot",
                          "quarantine", "regressions", "report", "runs", "series"]
