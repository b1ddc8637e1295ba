"""Whether a `Selector` matches anything in a store, checked before a command uses it.

A filter that matches nothing must not pass silently: ``regressions -b nosuch`` printing "0
change points" and exiting 0 would let a misspelled CI gate never fire. `check` looks the
filters of a `history.selector.Selector` up in an open store and raises `NoMatchError`
(exit 2) naming the filter that matches nothing, with "did you mean …" from the values the
store holds. `history.reader.Reader.check` calls it before every command's query. Dates
are the exception: a range without runs (``--since`` tomorrow) is an empty answer, an empty
table with exit 0, not an error.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from primbench.history.errors import HistoryError
from primbench.history.selector import Selector

if TYPE_CHECKING:
    import duckdb


class NoMatchError(HistoryError):
    """A filter (or a combination of filters) matches nothing in the store."""


_PLURAL = {"branch": "branches", "name": "specializations", "algorithm": "algorithms", "gpu": "GPUs",
           "config": "configs"}
_SHOWN = 8  # values listed when none is close


def check(con: duckdb.DuckDBPyConnection, selector: Selector) -> None:
    """Raise `NoMatchError` unless some stored run (and specialization, with a name or an
    algorithm) matches every filter of `selector` together."""
    given = selector.given()
    if not given or _count(con, selector) > 0:
        return
    for key in ("branch", "algorithm", "name", "gpu", "config"):  # one that matches nothing on its own
        if key in given and _count(con, selector.only(key)) == 0:
            raise NoMatchError(_unknown(con, selector, key, Selector()))
    dates = selector.only("since", "until")
    if dates.given() and _count(con, dates) == 0:
        return  # a date range with no runs in it is an empty selection, not a misspelled filter: an empty table
    for key in ("name", "config", "gpu", "algorithm", "branch"):  # each exists, not together
        if key in given:
            others = selector.only(*(k for k in given if k != key))
            if _count(con, others) > 0:
                raise NoMatchError(_unknown(con, selector, key, others))
    raise NoMatchError(f"no runs of {selector.describe()}")  # pragma: no cover - one of the above


def _unknown(con: duckdb.DuckDBPyConnection, selector: Selector, key: str, others: Selector) -> str:
    value = selector.given()[key]
    known = _values(con, key, others)
    described = selector.describe(others.given())
    where = f" with {described}" if described else ""
    text = f"no runs of {selector.label(key)} {value!r}{where}"
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


def _count(con: duckdb.DuckDBPyConnection, selector: Selector) -> int:
    sql, params = selector.source()
    row = con.execute(f"SELECT count(*) FROM (SELECT 1{sql} LIMIT 1)", params).fetchone()
    return int(row[0]) if row else 0


_COLUMNS = {"branch": "coalesce(r.branch, '')", "name": "s.name", "algorithm": "s.algorithm",
            "config": "r.config_key"}


def _values(con: duckdb.DuckDBPyConnection, key: str, others: Selector) -> list[str]:
    """The values of filter `key` among the rows that match `others`, most frequent first."""
    sql, params = others.source(spec=key in ("name", "algorithm"))
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
