"""A branch against its base: the branch's latest run against the base's run at or before the
fork point, with compare's statistics and the run-to-run variability of the base's history.

Each side is chosen by a named strategy:

* **Head** (`LatestOnBranch`): per algorithm, the branch's latest run (of the selector's
  config and algorithm, if it names them), on one physical GPU: the newest run's, or the one
  the selector's GPU names.
* **Fork point** (`history.forkpoint`): given (``--fork-point``, with its ancestors if known),
  else git's merge base when asked (`history.forkpoint.from_git`), else unknown.
* **Base**, per algorithm, on the head's GPU and with the head run's config
  (`primbench.resultconfig.config_key`: size, hot, cache size, sync, custom settings): the
  first of `BASE_STRATEGIES` that finds a run: `AtForkPoint` (the fork point's run, else
  its nearest measured ancestor's), `LatestOnBase` (for a branch against itself: of an
  earlier commit, what the newest commit changed), `EarlierRunOfHeadCommit` (a branch
  against itself with one commit measured: A/A), `LatestOnOtherGpu`; the result says which.
  A run with another config is never taken (it measures something else): when the base has
  none with the head's config, there is no comparable base, and the error says so. A base on
  another GPU model is refused the same way (`compare.comparability`).
* **Verdicts**: `compare.core.compare_runs` on Results rebuilt from the stored documents,
  with ``run_to_run_cv`` estimated per specialization from the base's runs up to the chosen
  one (`history.variability`).
"""

from __future__ import annotations

import datetime as _dt
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from primbench.errors import UsageError
from primbench.history.errors import HistoryError
from primbench.history.forkpoint import ForkPoint, given
from primbench.history.queries import RUN_ORDER, RUN_ORDER_DESC
from primbench.history.selector import Selector, Where
from primbench.history.variability import WINDOW, clock_responses, describe, newest_runs, run_to_run_cvs

if TYPE_CHECKING:
    import pandas as pd

    from primbench.compare.model import Comparison
    from primbench.history.reader import Reader


class RunRow(NamedTuple):
    """A stored run, as the strategies see it."""

    algorithm: str
    run_id: str
    commit: str | None
    date: _dt.datetime
    gpu_key: str
    config_key: str | None
    ingested_at: _dt.datetime

    @property
    def order(self) -> tuple[_dt.datetime, _dt.datetime, str]:
        """The run's place in ingest order (`history.queries.RUN_ORDER`), never its date alone."""
        return (self.ingested_at, self.date, self.run_id)

    def at(self, branch: str) -> str:
        """``main@1a2b3c4d5e6f``: the run's branch and commit, for notes."""
        return f"{branch}@{(self.commit or '?')[:12]}"


_RUN = 'SELECT r.algorithm, r.run_id, r."commit", r.date, r.gpu_key, r.config_key, r.ingested_at FROM runs r'
#: Newest first, in ingest order: a run a runner's clock dated a year ahead is not the latest for it.
_NEWEST = RUN_ORDER_DESC.format(a="r")


def _rows(reader: Reader, sql: str, params: Sequence[Any]) -> list[RunRow]:
    return [RunRow(*row) for row in reader.con.execute(sql, list(params)).fetchall()]


# --------------------------------------------------------------------------- head


class LatestOnBranch:
    """The head: per algorithm, the branch's latest run (in ingest order: `history.queries.RUN_ORDER`),
    on the GPU of the newest of them (or the one the selector's GPU names)."""

    def choose(self, reader: Reader, head: Selector) -> list[RunRow]:
        where = head.only("branch", "algorithm", "config").where("r")
        if head.gpu is not None:
            gpu_key = reader.gpu_key(head.only("branch", "gpu"))
            if gpu_key is None:
                raise HistoryError(f"no runs of branch {head.branch!r} on GPU {head.gpu!r}")
            where = where.and_("r.gpu_key = ?", gpu_key)
        runs = _rows(reader, f"{_RUN}{where.sql()} QUALIFY row_number() OVER (PARTITION BY r.algorithm "
                             f"ORDER BY {_NEWEST}) = 1 ORDER BY r.algorithm", where.params)
        if not runs:
            return []
        newest = max(runs, key=lambda r: r.order)
        return sorted((r for r in runs if r.gpu_key == newest.gpu_key), key=lambda r: r.order, reverse=True)


# --------------------------------------------------------------------------- base


@dataclass(frozen=True)
class BaseQuery:
    """What one algorithm's base run is sought for: the head run, the base branch, the fork
    point, and the config the base run must have (None: any)."""

    base: str
    branch: str
    head: RunRow
    fork: ForkPoint
    config: str | None

    @property
    def itself(self) -> bool:
        """A branch against itself (``compare main --base main``)."""
        return self.branch == self.base

    @property
    def exclude(self) -> str | None:
        """A commit the base run may not be of: the head's, when the branch is its own base."""
        return self.head.commit if self.itself else None


@dataclass(frozen=True)
class BaseChoice:
    """A base run, how it was chosen (``base_selection``), and a note for the output."""

    run: RunRow
    how: str
    note: str | None = None


def base_run(reader: Reader, q: BaseQuery, *, gpu_key: str | None, commits: Sequence[str] = (),
             exclude: str | None = None, before: RunRow | None = None, same_model: bool = False) -> RunRow | None:
    """The latest run (in ingest order) of `q.base` of `q.head`'s algorithm (and `q.config`, when given): on
    `gpu_key` (None: any GPU), not of the commit `exclude`, before the run `before`, and of
    the first of `commits` that has one (any commit when `commits` is empty)."""
    where: Where = Selector(branch=q.base, config=q.config).where("r").and_("r.algorithm = ?", q.head.algorithm)
    if gpu_key is not None:
        where = where.and_("r.gpu_key = ?", gpu_key)
    if same_model:  # another physical GPU, but of the head's model (another model measures something else)
        where = where.and_("r.gpu_name IS NOT DISTINCT FROM (SELECT h.gpu_name FROM runs h WHERE h.run_id = ?)",
                           q.head.run_id)
    if exclude is not None:
        where = where.and_('r."commit" IS DISTINCT FROM ?', exclude)
    if before is not None:
        where = where.and_(f"({RUN_ORDER.format(a='r')}) < (?, ?, ?)", *before.order)
    order, params = _NEWEST, list(where.params)
    if commits:
        where = where.and_('list_contains(?, r."commit")', list(commits))
        order, params = f'list_position(?, r."commit"), {order}', [*where.params, list(commits)]
    found = _rows(reader, f"{_RUN}{where.sql()} ORDER BY {order} LIMIT 1", params)
    return found[0] if found else None


class BaseStrategy(ABC):
    """One way of finding the base run; `choose` returns None when it finds none."""

    @abstractmethod
    def choose(self, reader: Reader, q: BaseQuery) -> BaseChoice | None: ...


class AtForkPoint(BaseStrategy):
    """The run of the fork point, else of its nearest measured ancestor (when the ancestry is known)."""


    def choose(self, reader: Reader, q: BaseQuery) -> BaseChoice | None:
        commits = q.fork.commits
        if not commits:
            return None
        run = base_run(reader, q, gpu_key=q.head.gpu_key, commits=commits, exclude=q.exclude)
        if run is None:
            return None
        at_fork = run.commit == (q.fork.commit or commits[0])
        return BaseChoice(run, "fork point" if at_fork else "nearest measured ancestor of the fork point")


class LatestOnBase(BaseStrategy):
    """The base's latest run on the head's GPU; for a branch against itself, of an earlier commit."""


    def choose(self, reader: Reader, q: BaseQuery) -> BaseChoice | None:
        run = base_run(reader, q, gpu_key=q.head.gpu_key, exclude=q.exclude)
        if run is None:
            return None
        why = (" (no run at or before the fork point)" if q.fork.commits else
               " before the head commit" if q.itself else " (fork point unknown)")
        return BaseChoice(run, "base's latest run" + why)


class EarlierRunOfHeadCommit(BaseStrategy):
    """A branch against itself with one commit measured: the run before the head run (A/A)."""


    def choose(self, reader: Reader, q: BaseQuery) -> BaseChoice | None:
        if not q.itself:
            return None
        run = base_run(reader, q, gpu_key=q.head.gpu_key, before=q.head)
        return None if run is None else BaseChoice(run, "an earlier run of the head commit (A/A)")


class LatestOnOtherGpu(BaseStrategy):
    """The base's latest run on another GPU, when it has none on the head's (said in a note):
    one of the head's GPU model first; else of any model, which `compare.comparability` then
    refuses (no comparable base, and why)."""


    def choose(self, reader: Reader, q: BaseQuery) -> BaseChoice | None:
        run = (base_run(reader, q, gpu_key=None, exclude=q.exclude, same_model=True)
               or base_run(reader, q, gpu_key=None, exclude=q.exclude))
        if run is None:
            return None
        note = f"{q.head.algorithm}: no {q.base} run on this GPU ({q.head.gpu_key}); using one on {run.gpu_key}"
        return BaseChoice(run, "base's latest run on another GPU", note)


#: The base strategies, tried in this order.
BASE_STRATEGIES: tuple[BaseStrategy, ...] = (AtForkPoint(), LatestOnBase(), EarlierRunOfHeadCommit(),
                                              LatestOnOtherGpu())


def choose_base(reader: Reader, q: BaseQuery,
                strategies: Sequence[BaseStrategy] = BASE_STRATEGIES) -> BaseChoice | None:
    """The first base run a strategy finds, in order."""
    for strategy in strategies:
        found = strategy.choose(reader, q)
        if found is not None:
            return found
    return None


def choose_base_with_config(reader: Reader, q: BaseQuery, notes: list[str],
                            strategies: Sequence[BaseStrategy] = BASE_STRATEGIES) -> BaseChoice | None:
    """The base run with the head run's config, never one of another config (it measures
    something else): None then, with a note in `notes` naming the config the base does have;
    a nearer candidate passed over for its config is noted too."""
    found = choose_base(reader, q, strategies)
    anywhere = found if q.config is None else choose_base(reader, replace(q, config=None), strategies)
    algorithm = q.head.algorithm
    if found is None and anywhere is not None:
        notes.append(f"{algorithm}: no comparable base: no {q.base} run has the head's config ({q.config}); "
                     f"the nearest, {anywhere.run.at(q.base)}, has config {anywhere.run.config_key}, "
                     "another measurement")
        return None
    if found is not None and anywhere is not None and anywhere.run.run_id != found.run.run_id \
            and anywhere.run.config_key != q.config:
        notes.append(f"{algorithm}: {anywhere.run.at(q.base)} was measured with another config "
                     f"({anywhere.run.config_key}); using {found.run.at(q.base)}, config {q.config}")
    return found


# --------------------------------------------------------------------------- the comparison


@dataclass
class BranchComparison:
    branch: str
    base: str
    gpu_key: str
    config_key: str | None  # the head's config (per algorithm, joined with "; " where they differ)
    base_config_key: str | None
    head_commit: str | None
    base_commit: str | None
    fork_point: str | None
    base_selection: str
    head_runs: list[str]
    base_runs: list[str]
    run_to_run_cv: dict[tuple[str, str], tuple[float, float]]  # (CV, degrees of freedom)
    comparison: Comparison
    notes: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """One row per specialization: values, change, verdict, p-value, reason."""
        import pandas as pd

        rows = [{
            "algorithm": r.algorithm, "name": r.name, "verdict": str(r.verdict), "base_value": r.base_value,
            "head_value": r.head_value, "change": r.change, "p_value": r.p_value, "q_value": r.q_value,
            "run_to_run_cv": r.run_to_run_cv, "run_to_run_source": r.run_to_run_source, "reason": r.reason,
        } for r in self.comparison.rows]
        df = pd.DataFrame(rows, columns=["algorithm", "name", "verdict", "base_value", "head_value", "change",
                                         "p_value", "q_value", "run_to_run_cv", "run_to_run_source", "reason"])
        df.attrs.update(self.header())
        return df

    def header(self) -> dict[str, Any]:
        return {
            "branch": self.branch, "base": self.base, "gpu_key": self.gpu_key, "config_key": self.config_key,
            "base_config_key": self.base_config_key, "head_commit": self.head_commit,
            "base_commit": self.base_commit, "fork_point": self.fork_point, "base_selection": self.base_selection,
            "head_runs": self.head_runs, "base_runs": self.base_runs,
            "run_to_run": describe(self.run_to_run_cv), "notes": list(self.notes),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"history": self.header(), **self.comparison.to_dict()}


def branch_comparison(db: Any, head: Selector, base: str = "main", *, fork_point: str | None = None,
                      ancestors: Sequence[str] | None = None, use_git: bool = False, threshold: float | None = None,
                      alpha: float | None = None, metric: str | None = None, window: int = WINDOW,
                      strategies: Sequence[BaseStrategy] = BASE_STRATEGIES) -> BranchComparison:
    """Compare the latest run of `head`'s branch (of its algorithm, GPU and config, where it
    names them) with `base` (see the module's description). `db`: a store, a reader, an open
    connection or a path (`history.storage.contract.reading`). `metric`: a ``--metric`` choice, as
    `compare.core.compare_runs` takes it."""
    from primbench.compare.core import compare_runs
    from primbench.history.storage.contract import reading

    if head.branch is None:
        raise UsageError("a branch comparison needs the head's branch")
    branch = head.branch
    notes: list[str] = []
    if fork_point is None and ancestors is None and use_git and branch != base:
        from primbench.history.forkpoint import from_git

        fork = from_git(base, branch)
        if fork.commit is None:
            notes.append(f"fork point unknown ({fork.note})")
    else:
        fork = given(fork_point, ancestors)
    with reading(db) as reader:
        heads = LatestOnBranch().choose(reader, head)
        if not heads:
            known = [r[0] for r in reader.con.execute("SELECT DISTINCT branch FROM runs ORDER BY 1").fetchall()]
            on = ((f" on GPU {head.gpu!r}" if head.gpu else "") + (f" of algorithm {head.algorithm!r}"
                                                                   if head.algorithm else "")
                  + (f" with config {head.config!r}" if head.config else ""))
            raise HistoryError(f"no runs of branch {branch!r}{on}; branches stored: {', '.join(map(str, known))}")
        gpu_key = heads[0].gpu_key
        bases: list[BaseChoice] = []
        for h in heads:
            found = choose_base_with_config(reader, BaseQuery(base, branch, h, fork, h.config_key), notes, strategies)
            if found is not None:
                if found.note:
                    notes.append(found.note)
                bases.append(found)
        if not bases:
            if notes:
                raise HistoryError(f"no comparable base on {base!r} for {branch!r}: " + "; ".join(notes))
            raise HistoryError(f"no runs of base branch {base!r} to compare {branch!r} with"
                               + (" (other than the head commit)" if branch == base else ""))
        used = {b.run.algorithm for b in bases}
        notes.extend(_date_notes(reader, [(h, branch) for h in heads if h.algorithm in used]
                                 + [(b.run, base) for b in bases]))
        head_results = [reader.results(h.run_id) for h in heads if h.algorithm in used]
        base_results = [reader.results(b.run.run_id) for b in bases]
        latest = max(b.run.date for b in bases)
        # only the window `run_to_run_cvs` uses: each series' newest `window` runs, chosen in SQL
        from primbench.history import queries

        history = queries.series(reader.con, Selector(branch=base, gpu=gpu_key, until=latest), newest=window)
    if not history.empty:  # the base's series: this GPU, and per algorithm the chosen base run's config
        base_config = {b.run.algorithm: b.run.config_key for b in bases}
        history = history[(history["gpu_key"] == gpu_key)
                          & (history["algorithm"].map(base_config) == history["config_key"])]
    runs = newest_runs(history, window)  # each series' newest runs, split out once for both
    cvs = run_to_run_cvs(history, window, runs=runs)
    clocks = clock_responses(history, window, runs=runs)
    if clocks:
        notes.append(f"{len(clocks)} specialization{'s' if len(clocks) != 1 else ''}' answer to the SM clock measured "
                     f"on {base!r}'s runs: a change owed to base and head running at other clocks is taken out")
    kwargs: dict[str, Any] = {"run_to_run_cv": cvs, "metric": metric, "clock_response": clocks}
    if threshold is not None:
        kwargs["threshold"] = threshold
    if alpha is not None:
        kwargs["alpha"] = alpha
    from primbench.compare.comparability import NotComparableError

    try:
        comparison = compare_runs(base_results, head_results, **kwargs)
    except NotComparableError as exc:
        at = ", ".join(sorted({b.run.at(base) for b in bases}))
        raise HistoryError(f"no comparable base on {base!r} for {branch!r}: {at} "
                           f"({'; '.join(b.how for b in bases)}) measures something else: "
                           + "; ".join(exc.comparability.lines())) from None
    base_commits = sorted({b.run.commit for b in bases if b.run.commit})
    head_configs = sorted({str(h.config_key) for h in heads if h.algorithm in used})
    base_configs = sorted({str(b.run.config_key) for b in bases})
    return BranchComparison(
        branch=branch, base=base, gpu_key=gpu_key, config_key="; ".join(head_configs) or None,
        base_config_key="; ".join(base_configs) or None, head_commit=heads[0].commit,
        base_commit=base_commits[0] if len(base_commits) == 1 else (", ".join(base_commits) or None),
        fork_point=fork.commit, base_selection="; ".join(sorted({b.how for b in bases})),
        head_runs=[h.run_id for h in heads], base_runs=[b.run.run_id for b in bases], run_to_run_cv=cvs,
        comparison=comparison, notes=notes,
    )


def _date_notes(reader: Reader, runs: Sequence[tuple[RunRow, str]]) -> list[str]:
    """A note for each chosen run whose date ingest flagged (a runner's clock that was wrong):
    it was chosen by ingest order, never by that date."""
    flags = reader.date_flags([run.run_id for run, _ in runs])
    return [f"{run.at(branch)} (run {run.run_id[:10]}): its date is flagged ({flags[run.run_id]}); "
            "chosen by ingest order, not by its date" for run, branch in runs if run.run_id in flags]


def compare_branch(db: Any, head: Selector, base: str = "main", **kwargs: Any) -> pd.DataFrame:
    """`branch_comparison` as a DataFrame (one row per specialization; the header in ``.attrs``)."""
    return branch_comparison(db, head, base, **kwargs).frame()
