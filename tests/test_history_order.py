"""Issue 29: the history orders runs by commit (git, or the order of ingest), not by the
runner's clock. Each reproducer ingests one run per call, as a CI job does after each run,
into a real store of each backend (tests/backends/: every one); one run's
date comes from a clock that was wrong. On main (ordering by that date) each fails."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history import commands
from primbench.history.errors import HistoryWarning
from primbench.history.selector import Selector
from primbench.history.storage.contract import Store
from primbench.history.storage.duckdb_file import DuckDBStore
from tests import backends
from tests import history_data as hd

pytestmark = pytest.mark.filterwarnings("ignore::primbench.history.errors.HistoryWarning")
KINDS = list(backends.cases())  # every backend (tests/backends/)
runner = CliRunner()
HOUR = dt.timedelta(hours=1)


def _store(kind: str, where: Path, request: pytest.FixtureRequest) -> Store:
    return backends.cases()[kind].make(where, request)


def _one_by_one(store: Store, directory: Path, levels: Sequence[float], *, branch: str = "main",
                dates: dict[int, dt.datetime] | None = None, commits: Sequence[str] | None = None) -> None:
    """Commit i of `branch` measures levels[i], each run ingested by a call of its own, in
    order; `dates` replaces the dates a runner's clock wrote for some of them."""
    now = dt.datetime.now(dt.UTC)
    for i, level in enumerate(levels):
        when = (dates or {}).get(i, now - dt.timedelta(days=30) + HOUR * i)
        commit = commits[i] if commits is not None else hd.sha(f"{branch}-{i}")
        path = hd.write(directory / f"{branch}-{i:03d}.json", hd.document([level], branch=branch, commit=commit,
                                                                          date=when))
        store.ingest([path])


def _levels(n: int, shift_at: int, shift: float, seed: int = 3) -> list[float]:
    return [row[0] for row in hd.noisy_levels(n, cv=0.003, shifts={shift_at: shift}, seed=seed)]


def _history(store: Store, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["history", *args, "--db", store.location])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_dated_a_year_ahead_does_not_hide_a_change_point(kind: str, tmp_path: Path,
                                                               request: pytest.FixtureRequest) -> None:
    """main fell 10 % at its commit 6 (of 10); commit 3's run was dated a year ahead. Ordered by
    that date, its pre-fall value came last, and the fall was found nowhere (0 against 1)."""
    levels = _levels(10, 6, -0.10)
    control = _store(kind, tmp_path / "control", request)
    _one_by_one(control, tmp_path / "control-in", levels)
    found = commands.regressions(control.location, Selector(branch="main"), use_git=False)
    assert list(found["kind"]) == ["regression"] and found["commit"].iloc[0] == hd.sha("main-6")
    ahead = _store(kind, tmp_path / "ahead", request)
    _one_by_one(ahead, tmp_path / "ahead-in", levels, dates={3: dt.datetime.now(dt.UTC) + dt.timedelta(days=365)})
    with pytest.warns(HistoryWarning, match=r"1 run\(s\) with a flagged date, ordered by ingest.*later than its "
                                            "ingest"):
        found = commands.regressions(ahead.location, Selector(branch="main"), use_git=False)
    assert list(found["kind"]) == ["regression"] and found["commit"].iloc[0] == hd.sha("main-6")
    series = commands.series(ahead.location, Selector(branch="main", name=hd.spec_name(0)), use_git=False)
    assert list(series["commit"]) == [hd.sha(f"main-{i}") for i in range(10)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_dated_a_year_ahead_is_not_the_base_of_compare_no_git(kind: str, tmp_path: Path,
                                                                    request: pytest.FixtureRequest) -> None:
    """main fell 20 % at its commit 2 and stayed there; the feature branch, forked from main's
    newest commit, measures what main does. Commit 1's run was dated a year ahead: taken as
    main's latest run, it made the feature branch a false regression."""
    store = _store(kind, tmp_path, request)
    _one_by_one(store, tmp_path / "in", [1.0e12, 1.0e12, 0.8e12, 0.8e12, 0.8e12, 0.8e12],
                dates={1: dt.datetime.now(dt.UTC) + dt.timedelta(days=365)})
    _one_by_one(store, tmp_path / "in", [0.8e12], branch="feat", dates={0: dt.datetime.now(dt.UTC) - HOUR})
    code, out, err = _history(store, "compare", "feat", "--base", "main", "--no-git", "-f", "json")
    assert code == 0, out + err
    answer = json.loads(out)
    assert answer["history"]["base_commit"] == hd.sha("main-5")
    assert all(row["verdict"] != "regression" for row in answer["specializations"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_dated_1970_ingested_last_is_the_head_and_flagged(kind: str, tmp_path: Path,
                                                                request: pytest.FixtureRequest) -> None:
    store = _store(kind, tmp_path, request)
    old = dt.datetime(1970, 1, 2, tzinfo=dt.UTC)
    _one_by_one(store, tmp_path / "in", [1.0e12] * 5 + [0.8e12], dates={5: old})
    code, out, err = _history(store, "compare", "main", "--base", "main", "--no-git", "-f", "json")
    assert code == 1, out + err  # the -20 % run is main's newest: a regression against the commit before it
    answer = json.loads(out)
    assert answer["history"]["head_commit"] == hd.sha("main-5")
    assert answer["history"]["base_commit"] == hd.sha("main-4")
    assert any(row["verdict"] == "regression" for row in answer["specializations"])
    flagged = [n for n in answer["history"]["notes"] if "flagged" in n]
    assert len(flagged) == 1 and "earlier than" in flagged[0] and "chosen by ingest order" in flagged[0]
    assert any(line.startswith("primbench history: warning:") and "flagged" in line for line in err.splitlines())
    code, out, _ = _history(store, "compare", "main", "--base", "main", "--no-git")
    assert code == 1 and "flagged" in out
    code, out, _ = _history(store, "runs", "-f", "json")
    assert code == 0 and json.loads(out)[0]["commit"] == hd.sha("main-5")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_with_git_a_series_follows_the_commits_history_not_the_ingest(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs ingested out of order (a re-run of an old commit last) take their commit's place
    in git's history; with --no-git, or where git does not know a commit, the ingest order."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    commits = []
    for i in range(4):
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", f"c{i}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    store = DuckDBStore(tmp_path / "h.duckdb")
    order = [0, 1, 3, 2]  # commit 2's run is ingested after commit 3's
    _one_by_one(store, tmp_path / "in", [1.0e12] * 4, commits=[commits[i] for i in order])
    monkeypatch.chdir(repo)
    sel = Selector(branch="main", name=hd.spec_name(0))
    assert list(commands.series(store.location, sel)["commit"]) == commits
    assert list(commands.series(store.location, sel, use_git=False)["commit"]) == [commits[i] for i in order]
    code, out, _ = _history(store, "series", hd.spec_name(0), "--no-git", "-f", "json")
    assert code == 0 and [row["commit"] for row in json.loads(out)] == [commits[i] for i in order]
    monkeypatch.chdir(tmp_path)  # no repository here: the ingest order
    assert list(commands.series(store.location, sel)["commit"]) == [commits[i] for i in order]
