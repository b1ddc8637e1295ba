"""Errors of the history layer. Each is a `PrimbenchError`: the CLI prints its message and exits 2."""

from __future__ import annotations

from primbench.errors import PrimbenchError


class HistoryError(PrimbenchError):
    """A problem with the history store that the user can fix; the message says what and how."""


class StoreMissingError(HistoryError):
    """A query was asked of a store that does not exist yet."""


class StoreLockedError(HistoryError):
    """Another process held the store's file for longer than we were willing to wait."""


class SchemaError(HistoryError):
    """The store's schema is newer than this primbench, older than it (read-only), or a migration failed."""


class HistoryWarning(UserWarning):
    """Something was skipped (e.g. an unreadable Parquet part); the CLI prints it as a warning line."""


def one_line(exc: BaseException) -> str:
    """An error message on one line (DuckDB's span several, with the SQL and a caret)."""
    first = str(exc).strip().split("\n\nLINE ", 1)[0]
    return " ".join(first.split()) or type(exc).__name__
