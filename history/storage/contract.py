"""The history store's contract, and how a ``--db`` location becomes a store.

A location is a string: a DuckDB file's path, a folder of Parquet parts, or a server's URL.
A backend is a module of `history.storage` that declares its `Store` class (``BACKEND =
TheStore``): `backends` finds them, and `open_store` asks each whether the location is its own
(`Store.claims`); the one that is the `fallback` (the DuckDB file) takes whatever no other
backend claims. Nothing is opened until a store is used.

Every backend implements the same few methods (`writer`, `connect`, `info`, `migrate`,
`migrations`: each keeps its own table of applied migrations);
ingest and merge are written once, above them (`history.storage.ingest.ingest_files`), and so
are the queries: `connect` gives a read-only DuckDB connection holding the tables of
`history.storage.schema`, on which `history.reader.Reader` runs them.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import os
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from primbench.history.errors import HistoryError
from primbench.history.selector import Selector

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.history.export import Written
    from primbench.history.reader import Reader
    from primbench.history.storage.ingest import IngestReport, MergeReport, Overrides, Progress, Writer

DEFAULT_DB = Path(".primbench") / "history.duckdb"
ENV_DB = "PRIMBENCH_HISTORY_DB"

@dataclass(frozen=True)
class AppliedMigration:
    """One row of a store's table of applied migrations (every backend keeps one: a DuckDB
    file's and a server's ``schema_migrations`` table, a Parquet folder's
    ``schema_migrations/`` parts)."""

    version: int
    description: str
    applied_at: dt.datetime

    def __str__(self) -> str:  # as `history info` lists it
        return f"{self.version}: {self.description} ({self.applied_at})"


#: What names a store: a location (None: the default), a `Store`, a `Reader` or an open connection.
Source = Any


def resolve_db(db: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> str:
    """The store's location: the argument, else ``$PRIMBENCH_HISTORY_DB``, else
    ``.primbench/history.duckdb``. A string, as given: a path or a URL."""
    env = os.environ if env is None else env
    if db is not None and str(db) != "":
        return os.fspath(db)
    if env.get(ENV_DB):
        return env[ENV_DB]
    return str(DEFAULT_DB)


class Store(ABC):
    """A history store: where results files are kept, and a read-only view of them.

    A backend implements `claims`, `writer`, `connect`, `info` and `migrate`. Ingest and merge
    go through `writer` (`history.storage.ingest`), the queries (`runs`, `series`,
    `branches`, `regressions`, `export_parquet`) through `connect`, each on a connection of
    its own (use `read` to run several on one)."""

    kind: ClassVar[str]
    #: Whether this backend takes any location no other claims (asked last; one backend is).
    fallback: ClassVar[bool] = False

    def __init__(self, location: str | os.PathLike[str], *, wait_secs: float | None = None) -> None:
        self.location = os.fspath(location)
        self.wait_secs = wait_secs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display!r})"

    @property
    def display(self) -> str:
        """The location as messages and reports show it (a URL without its password)."""
        return self.location

    @classmethod
    @abstractmethod
    def claims(cls, location: str) -> bool:
        """Whether `location` is a store of this kind (`open_store` asks)."""

    @abstractmethod
    def writer(self) -> AbstractContextManager[Writer]:
        """A writer for one ingest or merge: the store opened for writing at this primbench's
        schema (created and migrated if need be), closed when the block ends."""

    @abstractmethod
    def connect(self, *scope: Selector) -> duckdb.DuckDBPyConnection:
        """A read-only DuckDB connection holding the store's tables at this primbench's schema
        (the caller closes it). With a `scope`, a backend that copies rows may copy only those
        the scope's selectors can reach: every run, and the specializations and batches of
        the runs of their branches (and names), where every selector names one (a database
        server does; a file or folder holds everything anyway)."""

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Location, kind, schema version and row counts (and, by kind, migrations and size)."""

    @abstractmethod
    def migrate(self) -> list[int]:
        """Bring the store to this primbench's schema; the versions applied (empty: up to date)."""

    @abstractmethod
    def migrations(self) -> list[AppliedMigration]:
        """The migrations applied to the store, by version (empty: none yet, or no store)."""

    def ingest(self, paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
               overrides: Overrides | None = None) -> IngestReport:
        """Store the results files (and those under directories); idempotent: a run already
        stored is a duplicate. `progress` is told of every file read; `overrides` give every
        file's branch and commit (``ingest --branch/--commit``)."""
        from primbench.history.storage.ingest import Overrides, ingest_files

        return ingest_files(self.writer, self.display, paths, progress=progress, overrides=overrides or Overrides())

    def merge(self, source: str | os.PathLike[str] | Store) -> MergeReport:
        """Add the runs of the store `source` (a folder of Parquet parts, or any location
        `open_store` takes) that this store lacks; idempotent."""
        from primbench.history.storage.ingest import merge_from

        origin = source if isinstance(source, Store) else open_store(source)
        con = origin.connect()
        try:
            return merge_from(con, self.writer, origin.display, self.display)
        finally:
            con.close()

    @contextmanager
    def read(self, *scope: Selector) -> Iterator[Reader]:
        """A `history.reader.Reader` on one read-only connection, closed afterwards; `scope`:
        the selectors its queries will take (see `connect`), none: everything."""
        from primbench.history.reader import Reader

        con = self.connect(*scope)
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

    def export_parquet(self, directory: str | os.PathLike[str], *, documents: bool = True) -> Written:
        """`Reader.export_parquet`, incremental where `directory` holds an export of this store."""
        from primbench.history.export import store_identity

        with self.read() as r:
            return r.export_parquet(directory, documents=documents, store=store_identity(self.location))


@functools.cache
def backends() -> tuple[type[Store], ...]:
    """The backends: the `Store` class each module of `history.storage` declares as its
    ``BACKEND`` (every module imported once), by module name, the `fallback` last. A new
    backend is one module here: no list to extend."""
    import primbench.history.storage as package

    found = []
    for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
        cls = getattr(importlib.import_module(f"{package.__name__}.{module}"), "BACKEND", None)
        if isinstance(cls, type) and issubclass(cls, Store):
            found.append(cls)
    return tuple(sorted(found, key=lambda c: c.fallback))


def open_store(db: str | os.PathLike[str] | None = None, *, wait_secs: float | None = None) -> Store:
    """The store at `db` (None: ``$PRIMBENCH_HISTORY_DB``, else ``.primbench/history.duckdb``):
    the first of `backends` that claims it (a server's URL, a directory: a `ParquetStore`),
    else the fallback, a `DuckDBStore`. Nothing is opened yet."""
    location = resolve_db(db)
    for cls in backends():
        if cls.claims(location):
            return cls(location, wait_secs=wait_secs)
    raise HistoryError(f"{location}: no history backend takes this location")  # pragma: no cover


@contextmanager
def reading(db: Source = None) -> Iterator[Reader]:
    """A `history.reader.Reader` on `db`: a `Reader` as it is, a `Store` read once, an open
    DuckDB connection (not closed here), or a location for `open_store` (None: the default)."""
    from primbench.history.reader import Reader

    if isinstance(db, Reader):
        yield db
    elif isinstance(db, Store):
        with db.read() as r:
            yield r
    elif db is not None and hasattr(db, "execute") and not isinstance(db, (str, os.PathLike)):
        yield Reader(db)
    else:
        with open_store(db).read() as r:
            yield r
