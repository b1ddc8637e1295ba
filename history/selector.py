"""What a history query selects: one `Selector` for every command and query, and the SQL it
becomes.

A `Selector` holds the filters (branch, specialization name, algorithm, GPU, config, dates);
None leaves a filter off. It checks its dates when it is made (`UsageError`, exit 2, naming
the option), and `Selector.where` turns it into the one WHERE clause every query uses, so
that a GPU, a branch or a date means the same thing in `runs`, `series`, `branches`,
`regressions`, the charts, the report and `compare`. Every value reaches SQL as a parameter.

Whether a filter matches anything in a store is checked by `history.selection`.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, fields, replace
from typing import Any

from primbench.errors import UsageError

#: What a date filter accepts: ISO 8601 text, a date or a datetime (no zone: UTC).
DateLike = str | _dt.datetime | _dt.date | None

#: The filters, in the order messages name them.
FILTERS = ("branch", "name", "algorithm", "gpu", "config", "since", "until")


def instant(value: DateLike, option: str) -> _dt.datetime | None:
    """`value` as an aware datetime (no zone given: UTC); None for no value. Text that is not
    ISO 8601 is a `UsageError` naming `option`."""
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


@dataclass(frozen=True)
class Where:
    """WHERE clauses joined by AND, with their parameters in order."""

    clauses: tuple[str, ...] = ()
    params: tuple[Any, ...] = ()

    def and_(self, clause: str, *params: Any) -> Where:
        """This clause added (a new `Where`)."""
        return Where((*self.clauses, clause), (*self.params, *params))

    def sql(self) -> str:
        """`` WHERE a AND b``, or nothing."""
        return (" WHERE " + " AND ".join(self.clauses)) if self.clauses else ""


def gpu_clause(alias: str = "r") -> str:
    """The one SQL test of a GPU filter (three parameters, the filter each time): the GPU's key,
    uuid, serial or name, or the start of its key, with or without ``GPU-`` (tables show a
    uuid's start without it)."""
    return (f"(? IN ({alias}.gpu_key, {alias}.gpu_uuid, {alias}.gpu_serial, {alias}.gpu_name) "
            f"OR starts_with({alias}.gpu_key, ?) OR starts_with({alias}.gpu_key, 'GPU-' || ?))")


@dataclass(frozen=True)
class Selector:
    """The filters of one query; None: not filtered.

    * `branch`: ``''`` selects the runs stored without a branch;
    * `name`, `algorithm`: a specialization's name and algorithm (``meta.algo``, else the run's);
    * `gpu`: a GPU's uuid (or its start), serial or name;
    * `config`: a config key (`primbench.resultconfig.config_key`), e.g. ``size=1MiB``;
    * `since`, `until`: dates, both ends included.

    `labels` renames filters in messages (``(("branch", "base branch"),)``)."""

    branch: str | None = None
    name: str | None = None
    algorithm: str | None = None
    gpu: str | None = None
    config: str | None = None
    since: DateLike = None
    until: DateLike = None
    labels: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        self.start  # noqa: B018 - a date that cannot be read is said so when the selector is made
        self.stop  # noqa: B018

    @property
    def start(self) -> _dt.datetime | None:
        """`since` as an instant."""
        return instant(self.since, "--since")

    @property
    def stop(self) -> _dt.datetime | None:
        """`until` as an instant."""
        return instant(self.until, "--until")

    def given(self) -> dict[str, Any]:
        """The filters that are set, by field name, in the order of `FILTERS`."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name in FILTERS and getattr(self, f.name) is not None}

    def only(self, *keys: str) -> Selector:
        """This selector with only the filters `keys` (the others off)."""
        unknown = set(keys) - set(FILTERS)
        if unknown:
            raise ValueError(f"unknown filters: {', '.join(sorted(unknown))}")
        off: dict[str, Any] = {k: None for k in FILTERS if k not in keys}
        return replace(self, **off)

    def runs_only(self) -> Selector:
        """This selector without the specialization's filters (name, algorithm): what selects runs."""
        return self.only("branch", "gpu", "config", "since", "until")

    def where(self, runs: str = "r", specs: str | None = None) -> Where:
        """The filters as SQL over ``runs`` (alias `runs`) and, where given, ``specializations``
        (alias `specs`). Without `specs`, `algorithm` is the run's and `name` selects the runs
        that hold a specialization of that name."""
        w = Where()
        if self.branch is not None:
            w = w.and_(f"coalesce({runs}.branch, '') = ?", self.branch)  # '': runs with no branch
        if self.config is not None:
            w = w.and_(f"{runs}.config_key = ?", self.config)
        if self.gpu is not None:
            w = w.and_(gpu_clause(runs), self.gpu, self.gpu, self.gpu)
        if self.algorithm is not None:
            w = w.and_(f"{specs or runs}.algorithm = ?", self.algorithm)
        if self.name is not None:
            w = (w.and_(f"{specs}.name = ?", self.name) if specs else
                 w.and_(f"EXISTS (SELECT 1 FROM specializations n WHERE n.run_id = {runs}.run_id AND n.name = ?)",
                        self.name))
        if self.start is not None:
            w = w.and_(f"{runs}.date >= ?", self.start)
        if self.stop is not None:
            w = w.and_(f"{runs}.date <= ?", self.stop)
        return w

    def source(self, spec: bool = False) -> tuple[str, list[Any]]:
        """`` FROM … WHERE …`` of the stored rows this selector matches, with its parameters:
        runs (alias ``r``), joined to their specializations (alias ``s``) when a name or an
        algorithm is asked for, or with `spec` (a specialization's own algorithm is `meta.algo`)."""
        spec = spec or self.name is not None or self.algorithm is not None
        where = self.where("r", "s" if spec else None)
        rows = "specializations s JOIN runs r USING (run_id)" if spec else "runs r"
        return f" FROM {rows}{where.sql()}", list(where.params)

    def label(self, key: str) -> str:
        """How filter `key` is named in messages."""
        return dict(self.labels).get(key, _LABELS[key])

    def describe(self, given: dict[str, Any] | None = None) -> str:
        """``branch 'main' GPU 'A100'``: the filters (`given`, else those set) for a message."""
        given = self.given() if given is None else given
        return " ".join(f"{self.label(k)} {v!r}" for k, v in given.items())


_LABELS = {"branch": "branch", "name": "specialization", "algorithm": "algorithm", "gpu": "GPU",
           "config": "config", "since": "since", "until": "until"}
