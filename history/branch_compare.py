"""A branch against its base: the branch's latest run against the base's run at or before the
fork point, with compare's statistics and the run-to-run variability of the base's history.

* **Head**: per algorithm, the branch's latest run (on one physical GPU: the latest run's,
  or the one `gpu` names).
* **Base**, per algorithm, on the same GPU and with the same config as the head run
  (`primbench.resultconfig.config_key`: size, hot, cache size, sync, custom settings): the
  run of the fork point if it was measured; else of its nearest measured ancestor (when the
  ancestry is known, from git); else the base's latest run, and the result says so. With
  ``branch == base`` the base side is the latest run of an earlier commit (what the newest
  commit changed). A run with another config is taken only when the base has none with the
  head's, and the notes say so.
* **Verdicts**: `compare.core.compare_runs` on Results rebuilt from the stored documents,
  with ``run_to_run_cv`` estimated per specialization from the base's runs up to the chosen
  one (`history.variability`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from primbench.history.errors import HistoryError
from primbench.history.queries import connection, series
from primbench.history.variability import WINDOW, describe, run_to_run_cvs
from primbench.results import Results, results_from_dict

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from primbench.compare.model import Comparison


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


def _latest_per_algorithm(con: duckdb.DuckDBPyConnection, branch: str, gpu: str | None,
                          config: str | None = None) -> list[tuple[Any, ...]]:
    """(algorithm, run id, commit, date, gpu key, config key) of the branch's latest run per algorithm."""
    sql = ('SELECT algorithm, run_id, "commit", date, gpu_key, config_key FROM runs WHERE coalesce(branch, \'\') = ?'
           " AND (? IS NULL OR gpu_key = ?) AND (? IS NULL OR config_key = ?)"
           " QUALIFY row_number() OVER (PARTITION BY algorithm ORDER BY date DESC, run_id) = 1 ORDER BY algorithm")
    return con.execute(sql, [branch, gpu, gpu, config, config]).fetchall()


def _base_run(con: duckdb.DuckDBPyConnection, base: str, algorithm: str, gpu_key: str | None,
              commits: Sequence[str], exclude_commit: str | None,
              before_run: tuple[Any, str] | None = None, config: str | None = None) -> tuple[Any, ...] | None:
    """(run id, commit, date, gpu key, config key) of the latest base run of one of `commits`
    (the first commit in that order that has one), or of any commit when `commits` is empty;
    `before_run` (date, run id): only runs before it; `config`: only runs of that config key."""
    params: list[Any] = [base, algorithm, gpu_key, gpu_key, exclude_commit, exclude_commit, config, config]
    sql = ('SELECT run_id, "commit", date, gpu_key, config_key FROM runs '
           "WHERE coalesce(branch, '') = ? AND algorithm = ? "
           'AND (? IS NULL OR gpu_key = ?) AND (? IS NULL OR "commit" IS DISTINCT FROM ?) '
           "AND (? IS NULL OR config_key = ?)")
    if before_run is not None:
        sql += " AND (date, run_id) < (?, ?)"
        params += list(before_run)
    if commits:
        sql += ' AND list_contains(?, "commit") ORDER BY list_position(?, "commit"), date DESC, run_id LIMIT 1'
        params += [list(commits), list(commits)]
    else:
        sql += " ORDER BY date DESC, run_id LIMIT 1"
    return con.execute(sql, params).fetchone()


def _choose_base(con: duckdb.DuckDBPyConnection, *, base: str, branch: str, algorithm: str, gpu_key: str,
                 commits: Sequence[str], fork_point: str | None, head: tuple[Any, str], exclude: str | None,
                 config: str | None) -> tuple[tuple[Any, ...] | None, str, str | None]:
    """The base run for one algorithm, how it was chosen, and a note (or None), trying in turn:
    the fork point or its nearest measured ancestor, the base's latest run, (base against
    itself) an earlier run of the head commit, the base's latest run on another GPU.
    `head`: the head run's (date, run id); `exclude`: a commit not to take (the head's, when
    the base is compared with itself); `config`: only runs of that config key (None: any)."""
    if commits:
        found = _base_run(con, base, algorithm, gpu_key, commits, exclude, config=config)
        if found is not None:
            how = ("fork point" if found[1] == (fork_point or commits[0]) else
                   "nearest measured ancestor of the fork point")
            return found, how, None
    found = _base_run(con, base, algorithm, gpu_key, [], exclude, config=config)
    if found is not None:
        return found, "base's latest run" + (" (no run at or before the fork point)" if commits else
                                             " (fork point unknown)" if branch != base else
                                             " before the head commit"), None
    if branch == base:  # no earlier commit: an earlier run of the same one (A/A)
        found = _base_run(con, base, algorithm, gpu_key, [], None, head, config=config)
        if found is not None:
            return found, "an earlier run of the head commit (A/A)", None
    other = _base_run(con, base, algorithm, None, [], exclude, config=config)
    if other is not None:
        return other, "base's latest run on another GPU", (
            f"{algorithm}: no {base} run on this GPU ({gpu_key}); using one on {other[3]}")
    return None, "", None


def _results(con: duckdb.DuckDBPyConnection, run_id: str) -> Results:
    row = con.execute('SELECT document, branch, "commit" FROM runs WHERE run_id = ?', [run_id]).fetchone()
    if row is None:
        raise HistoryError(f"run {run_id} vanished from the store")
    document, branch, commit = row
    label = f"{branch}@{(commit or '?')[:12]} (run {run_id[:12]})"
    return results_from_dict(json.loads(document), label)


def branch_comparison(db: Any, branch: str, base: str = "main", *, fork_point: str | None = None,
                      ancestors: Sequence[str] | None = None, use_git: bool = False, gpu: str | None = None,
                      algorithm: str | None = None, threshold: float | None = None, alpha: float | None = None,
                      window: int = WINDOW, config: str | None = None) -> BranchComparison:
    """Compare `branch`'s latest run with `base` (see the module's description). `config`:
    the head is the branch's latest run of that config key."""
    from primbench.compare.core import compare_runs

    notes: list[str] = []
    if fork_point is None and ancestors is None and use_git and branch != base:
        from primbench.history.forkpoint import from_git

        fp = from_git(base, branch)
        fork_point, ancestors = fp.commit, fp.ancestors or None
        if fp.commit is None:
            notes.append(f"fork point unknown ({fp.note})")
    with connection(db) as con:
        head = _latest_per_algorithm(con, branch, None if gpu is None else _gpu_key(con, branch, gpu), config)
        if algorithm is not None:
            head = [h for h in head if h[0] == algorithm]
        if not head:
            known = [r[0] for r in con.execute("SELECT DISTINCT branch FROM runs ORDER BY 1").fetchall()]
            on_gpu = ((f" on GPU {gpu!r}" if gpu else "") + (f" of algorithm {algorithm!r}" if algorithm else "")
                      + (f" with config {config!r}" if config else ""))
            raise HistoryError(f"no runs of branch {branch!r}{on_gpu}; branches stored: {', '.join(map(str, known))}")
        head.sort(key=lambda r: r[3], reverse=True)
        gpu_key = head[0][4]
        head = [h for h in head if h[4] == gpu_key]
        head_commit = head[0][2]
        commits: list[str] = []
        if ancestors:
            commits = list(ancestors)
        elif fork_point:
            commits = [fork_point]
        base_rows, selections = [], set()
        for algorithm, h_run, h_commit, h_date, _, h_config in head:
            choose = {"base": base, "branch": branch, "algorithm": algorithm, "gpu_key": gpu_key, "commits": commits,
                      "fork_point": fork_point, "head": (h_date, h_run),
                      "exclude": h_commit if branch == base else None}
            found, how, note = _choose_base(con, **choose, config=h_config)
            anywhere, how_anywhere, note_anywhere = _choose_base(con, **choose, config=None)
            if found is None and anywhere is not None:  # none of the head's config: the next best, said loudly
                found, how, note = anywhere, how_anywhere + " with another config", note_anywhere
                notes.append(f"{algorithm}: no {base} run has the head's config ({h_config}); comparing with "
                             f"{base}@{(found[1] or '?')[:12]}, config {found[4]}: other settings measure something "
                             "else, so this comparison is not meaningful")
            elif found is not None and anywhere is not None and anywhere[0] != found[0] and anywhere[4] != h_config:
                notes.append(f"{algorithm}: {base}@{(anywhere[1] or '?')[:12]} was measured with another config "
                             f"({anywhere[4]}); using {base}@{(found[1] or '?')[:12]}, config {h_config}")
            if found is not None:
                selections.add(how)
                if note:
                    notes.append(note)
                base_rows.append((algorithm, *found))
        if not base_rows:
            raise HistoryError(f"no runs of base branch {base!r} to compare {branch!r} with"
                               + (" (other than the head commit)" if branch == base else ""))
        head_results = [_results(con, h[1]) for h in head if any(b[0] == h[0] for b in base_rows)]
        base_results = [_results(con, b[1]) for b in base_rows]
        latest_base_date = max(b[3] for b in base_rows)
        history = series(con, None, branch=base, gpu=gpu_key, until=latest_base_date)
    if not history.empty:  # the base's series: this GPU, and per algorithm the chosen base run's config
        base_config = {b[0]: b[5] for b in base_rows}
        history = history[(history["gpu_key"] == gpu_key)
                          & (history["algorithm"].map(base_config) == history["config_key"])]
    cvs = run_to_run_cvs(history, window)
    kwargs: dict[str, Any] = {"run_to_run_cv": cvs}
    if threshold is not None:
        kwargs["threshold"] = threshold
    if alpha is not None:
        kwargs["alpha"] = alpha
    comparison = compare_runs(base_results, head_results, **kwargs)
    base_commits = sorted({b[2] for b in base_rows if b[2]})
    used = {b[0] for b in base_rows}
    head_configs = sorted({str(h[5]) for h in head if h[0] in used})
    base_configs = sorted({str(b[5]) for b in base_rows})
    return BranchComparison(
        branch=branch, base=base, gpu_key=gpu_key, config_key="; ".join(head_configs) or None,
        base_config_key="; ".join(base_configs) or None, head_commit=head_commit,
        base_commit=base_commits[0] if len(base_commits) == 1 else (", ".join(base_commits) or None),
        fork_point=fork_point, base_selection="; ".join(sorted(selections)),
        head_runs=[h[1] for h in head], base_runs=[b[1] for b in base_rows], run_to_run_cv=cvs,
        comparison=comparison, notes=notes,
    )


def _gpu_key(con: duckdb.DuckDBPyConnection, branch: str, gpu: str) -> str:
    row = con.execute(
        "SELECT gpu_key FROM runs WHERE coalesce(branch, '') = ? AND (? IN (gpu_key, gpu_uuid, gpu_serial, gpu_name) "
        "OR starts_with(gpu_key, ?)) ORDER BY date DESC LIMIT 1", [branch, gpu, gpu]).fetchone()
    if row is None:
        raise HistoryError(f"no runs of branch {branch!r} on GPU {gpu!r}")
    return str(row[0])


def compare_branch(db: Any, branch: str, base: str = "main", **kwargs: Any) -> pd.DataFrame:
    """`branch_comparison` as a DataFrame (one row per specialization; the header in ``.attrs``)."""
    return branch_comparison(db, branch, base, **kwargs).frame()
