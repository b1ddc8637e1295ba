"""What a history command selects, checked against the store before it is used.

A filter that matches nothing must not pass silently: ``regressions -b nosuch`` printing "0
change points" and exiting 0 would let a misspelled CI gate never fire. `Selection` holds
the filters of one command (branch, specialization name, algorithm, GPU, config, dates);
`Selection.check` looks them up in the store and raises `NoMatchError` (exit 2) naming the
filter that matches nothing, with "did you mean …" from the values the store holds.

`run_selected` is what the CLI calls: one connection, the checks, then the query.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

from primbench.history.errors import HistoryError
from primbench.history.queries import _instant, _Where, connection

if TYPE_CHECKING:
    import duckdb

T = TypeVar("T")


class NoMatchError(HistoryError):
    """A filter (or a combination of filters) matches nothing in the store."""


#: How each filter is named in messages, and the SQL of the values it is checked against.
_LABELS = {"branch": "branch", "name": "specialization", "algorithm": "algorithm", "gpu": "GPU",
           "config": "config", "since": "since", "until": "until"}
_PLURAL = {"branch": "branches", "name": "specializations", "algorithm": "algorithms", "gpu": "GPUs",
           "config": "configs"}
_SHOWN = 8  # values listed when none is close


@dataclass(frozen=True)
class Selection:
    """The filters of one command; None: not filtered. `labels` renames filters in messages
    (e.g. ``(("branch", "base branch"),)``)."""

    branch: str | None = None
    name: str | None = None
    algorithm: str | None = None
    gpu: str | None = None
    config: str | None = None
    since: Any = None
    until: Any = None
    labels: tuple[tuple[str, str], ...] = ()

    def given(self) -> dict[str, Any]:
        """The filters that are set, by field name."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "labels" and getattr(self, f.name) is not None}

    def kwargs(self) -> dict[str, Any]:
        """The filters as keyword arguments of the query functions."""
        return self.given()

    def label(self, key: str) -> str:
        return dict(self.labels).get(key, _LABELS[key])

    def check(self, con: duckdb.DuckDBPyConnection) -> None:
        """Raise `NoMatchError` unless some stored run (and specialization, with a name or an
        algorithm) matches every filter together."""
        given = self.given()
        if not given or _count(con, given) > 0:
            return
        for key in ("branch", "algorithm", "name", "gpu", "config"):  # one that matches nothing on its own
            if key in given and _count(con, {key: given[key]}) == 0:
                raise NoMatchError(self._unknown(con, key, given[key], {}))
        dates = {k: v for k, v in given.items() if k in ("since", "until")}
        if dates and _count(con, dates) == 0:
            raise NoMatchError(self._no_dates(con, dates))
        for key in ("name", "config", "gpu", "algorithm", "branch"):  # each exists, not together
            if key in given:
                others = {k: v for k, v in given.items() if k != key}
                if _count(con, others) > 0:
                    raise NoMatchError(self._unknown(con, key, given[key], others))
        raise NoMatchError(f"no runs of {self._describe(given)}")  # pragma: no cover - one of the above

    def _describe(self, given: dict[str, Any]) -> str:
        return " ".join(f"{self.label(k)} {v!r}" for k, v in given.items())

    def _unknown(self, con: duckdb.DuckDBPyConnection, key: str, value: Any, others: dict[str, Any]) -> str:
        known = _values(con, key, others)
        where = f" with {self._describe(others)}" if others else ""
        text = f"no runs of {self.label(key)} {value!r}{where}"
        close = difflib.get_close_matches(str(value), known, n=3, cutoff=0.6)
        if not close and key == "gpu":
            close = [k for k in known if str(value).lower() in k.lower()][:3]
        if close:
            return f"{text}; did you mean {', '.join(repr(c) for c in close)}?"
        if not known:
            return text
        shown = ", ".join(repr(k) for k in known[:_SHOWN]) + (f" and {len(known) - _SHOWN} more"
                                                               if len(known) > _SHOWN else "")
        return f"{text}; {_PLURAL[key]} stored{where}: {shown}"

    def _no_dates(self, con: duckdb.DuckDBPyConnection, dates: dict[str, Any]) -> str:
        first, last = con.execute("SELECT min(date), max(date) FROM runs").fetchone() or (None, None)
        stored = (f"; the stored runs span {_day(first)} to {_day(last)}" if first is not None
                  else "; the store holds no runs")
        return f"no runs {self._describe(dates)}{stored}"


def _day(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if hasattr(value, "strftime") else str(value)


def _where(given: dict[str, Any], spec: bool = False) -> tuple[str, list[Any]]:
    """FROM … WHERE … of the stored rows that match `given` (specializations joined when a
    name or an algorithm is asked for, or with `spec`: a specialization's own algorithm is
    `meta.algo`)."""
    spec = spec or "name" in given or "algorithm" in given
    where = _Where().runs(branch=given.get("branch"), gpu=given.get("gpu"), config=given.get("config"),
                          since=given.get("since"), until=given.get("until"))
    if "name" in given:
        where.add("s.name = ?", given["name"])
    if "algorithm" in given:
        where.add("s.algorithm = ?", given["algorithm"])
    source = "specializations s JOIN runs r USING (run_id)" if spec else "runs r"
    return f" FROM {source}{where.sql()}", where.params


def _count(con: duckdb.DuckDBPyConnection, given: dict[str, Any]) -> int:
    sql, params = _where(given)
    row = con.execute(f"SELECT count(*) FROM (SELECT 1{sql} LIMIT 1)", params).fetchone()
    return int(row[0]) if row else 0


_COLUMNS = {"branch": "coalesce(r.branch, '')", "name": "s.name", "algorithm": "s.algorithm",
            "config": "r.config_key"}


def _values(con: duckdb.DuckDBPyConnection, key: str, others: dict[str, Any]) -> list[str]:
    """The values of filter `key` among the rows that match `others`, most frequent first."""
    sql, params = _where(others, spec=key in ("name", "algorithm"))
    if key == "gpu":
        rows = con.execute(f"SELECT r.gpu_name, r.gpu_key, count(*) AS n{sql} GROUP BY ALL ORDER BY n DESC, 1, 2",
                           params).fetchall()
        out: list[str] = []
        for name, gpu_key, _ in rows:
            out += [v for v in (name, gpu_key) if v and v not in out]
        return out
    rows = con.execute(f"SELECT {_COLUMNS[key]} AS v, count(*) AS n{sql} GROUP BY 1 ORDER BY n DESC, 1",
                       params).fetchall()
    return [str(r[0]) for r in rows if r[0] is not None]


def check(db: Any, selections: Sequence[Selection]) -> str | None:
    """Check every selection against the store `db` (see `Selection.check`). Returns the full
    gpu_key of the newest run the first selection's GPU filter matches (None without one), so
    that a short id (``5d6e1a0c-b``, as tables show it) can be handed to code that wants a key."""
    with connection(db) as con:
        for s in selections:
            s.check(con)
        first = selections[0] if selections else None
        if first is None or first.gpu is None:
            return None
        sql, params = _where(first.given())
        row = con.execute(f"SELECT r.gpu_key{sql} ORDER BY r.date DESC LIMIT 1", params).fetchone()
        return str(row[0]) if row else None


def run_selected(fn: Callable[..., T], db: Any, selection: Selection, /, *, also: Sequence[Selection] = (),
                 **kwargs: Any) -> T:
    """Open the store once, check `selection` (and `also`), then return
    ``fn(con, **selection.kwargs(), **kwargs)``."""
    _instant(selection.since, selection.label("since"))  # a date that cannot be read is said so first
    _instant(selection.until, selection.label("until"))
    with connection(db) as con:
        selection.check(con)
        for s in also:
            s.check(con)
        return fn(con, **selection.kwargs(), **kwargs)
