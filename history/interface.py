"""The history store's interface: what every kind of store offers, and how it is read.

Two kinds of store implement `Store`:

* `history.stores.DuckDBStore`: one DuckDB file, one writer at a time (``--db FILE``;
  `history.store` holds the file's connections, locks and migrations);
* `history.stores.ParquetStore`: a folder of Parquet parts, one writer per part, for many
  CI runners (``ingest --shared DIR``, ``--db DIR``; `history.shared` writes and reads them).

Both store the same three tables (`history.schema`). A store is read through a `Reader`: one
read-only connection (to the file, or to the in-memory union of the parts) on which every
query runs, so a command that checks its filters and then queries (or the report, which runs
many queries) opens the store once. `history.stores.open_store` picks the kind from the path.

Every query takes a `history.selector.Selector`; the SQL is in `history.queries`, the
checks of the filters in `history.selection`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from primbench.history import queries, selection
from primbench.history.changepoints import DEFAULT_ALPHA, DEFAULT_MAX_POINTS, DEFAULT_MIN_SHIFT, DEFAULT_MIN_SIZE
from primbench.history.deps import require
from primbench.history.errors import HistoryError
from primbench.history.selector import Selector

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.history.ingest import IngestReport, Overrides, Progress
    from primbench.results import Results


class Reader:
    """Queries on one open, read-only connection to a store (a `Store.read` gives one)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        require("pandas")  # every query hands back a DataFrame
        self.con = con

    def check(self, *selectors: Selector) -> None:
        """Each selector must match some stored run (`history.selection.check`: a `NoMatchError`
        with "did you mean" names the filter that matches nothing)."""
        for s in selectors:
            selection.check(self.con, s)

    def runs(self, selector: Selector = Selector(), *, limit: int | None = None) -> pd.DataFrame:
        """Stored runs, newest first (`history.queries.runs`)."""
        return queries.runs(self.con, selector, limit=limit)

    def series(self, selector: Selector, *, metric: str | None = None, last: int | None = None) -> pd.DataFrame:
        """One row per selected (run, specialization), oldest first (`history.queries.series`).
        Give a branch: the series of two branches are one series here."""
        return queries.series(self.con, selector, metric=metric, last=last)

    def branches(self, selector: Selector = Selector()) -> pd.DataFrame:
        """Branches per algorithm, GPU and config with their latest run (`history.queries.branches`)."""
        return queries.branches(self.con, selector)

    def names(self, selector: Selector = Selector()) -> list[str]:
        """The specialization names stored."""
        return queries.names(self.con, selector)

    def regressions(self, selector: Selector, *, metric: str | None = None,
                    alpha: float = DEFAULT_ALPHA, min_size: int = DEFAULT_MIN_SIZE,
                    min_shift: float = DEFAULT_MIN_SHIFT, last: int | None = None,
                    max_points: int = DEFAULT_MAX_POINTS) -> pd.DataFrame:
        """Change points of every per-commit series the selector selects (`history.trends.regressions_of`);
        give a branch, as for `series`."""
        from primbench.history.trends import regressions_of

        frame = self.series(selector, metric=metric)
        return regressions_of(frame, metric=metric, alpha=alpha, min_size=min_size, min_shift=min_shift, last=last,
                              max_points=max_points)

    def gpu_key(self, selector: Selector) -> str | None:
        """The full key of the GPU of the newest run the selector matches (None: none does)."""
        return queries.newest_gpu_key(self.con, selector)

    def results(self, run_id: str) -> Results:
        """A stored run rebuilt as `primbench.results.Results` from its document."""
        import json

        from primbench.results import results_from_dict

        found = queries.document(self.con, run_id)
        if found is None:
            raise HistoryError(f"run {run_id} vanished from the store")
        text, branch, commit = found
        return results_from_dict(json.loads(text), f"{branch}@{(commit or '?')[:12]} (run {run_id[:12]})")

    def export_parquet(self, directory: str | os.PathLike[str]) -> dict[str, tuple[Path, int]]:
        """Every table as ``DIRECTORY/<table>.parquet`` (`history.export.export_tables`)."""
        from primbench.history.export import export_tables

        return export_tables(self.con, directory)


class Store(ABC):
    """A history store: where results files are kept, and a read-only view of them.

    `ingest`, `read`, `info` and `migrate` differ by kind; the queries (`runs`, `series`,
    `branches`, `regressions`, `export_parquet`) are the same SQL on the `Reader` of either,
    each on a connection of its own (use `read` to run several on one)."""

    kind: ClassVar[str]

    def __init__(self, path: str | os.PathLike[str], *, wait_secs: float | None = None) -> None:
        self.path = Path(path)
        self.wait_secs = wait_secs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    @abstractmethod
    def ingest(self, paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
               overrides: Overrides | None = None) -> IngestReport:
        """Store the results files (and those under directories); idempotent: a run already
        stored is a duplicate. `progress` is told of every file read; `overrides` give every
        file's branch and commit (``ingest --branch/--commit``)."""

    @abstractmethod
    def _connect(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection at this primbench's schema version (the caller closes it)."""

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Path, kind, schema version and row counts (and, by kind, migrations and size)."""

    @abstractmethod
    def migrate(self) -> list[int]:
        """Bring the store to this primbench's schema; the versions applied (empty: up to date)."""

    @contextmanager
    def read(self) -> Iterator[Reader]:
        """A `Reader` on one read-only connection, closed afterwards."""
        con = self._connect()
        try:
            yield Reader(con)
        finally:
            con.close()

    def runs(self, selector: Selector = Selector(), *, limit: int | None = None) -> pd.DataFrame:
        with self.read() as r:
            return r.runs(selector, limit=limit)

    def series(self, selector: Selector, *, metric: str | None = None, last: int | None = None) -> pd.DataFrame:
        with self.read() as r:
            return r.series(selector, metric=metric, last=last)

    def branches(self, selector: Selector = Selector()) -> pd.DataFrame:
        with self.read() as r:
            return r.branches(selector)

    def regressions(self, selector: Selector, **kwargs: Any) -> pd.DataFrame:
        with self.read() as r:
            return r.regressions(selector, **kwargs)

    def export_parquet(self, directory: str | os.PathLike[str]) -> dict[str, tuple[Path, int]]:
        with self.read() as r:
            return r.export_parquet(directory)
