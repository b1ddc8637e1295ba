"""Work a history command did more than once, now done once with the same answers (issue 28, s17:
`history report` at 100,000 runs with a margin under 5 s of CPU): each series made ready once for the
three passes of the pooled noise (`changepoints.prepare`), a window's commits found once for all its
queries (`Reader.pinned`), each base series' newest runs split once for both of their estimates
(`variability.newest_runs`), and scipy.special's functions without its package's array-API layer."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from primbench.history import changepoints, trends
from primbench.history import queries as q
from primbench.history.changepoints import analyse, clear_cache, noise_fit_and_segments, pool_noise, prepare
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import Store, open_store
from primbench.history.variability import clock_responses, newest_runs, run_to_run_cvs
from tests import history_data as hd


def _batch(seed: int, count: int = 24) -> list[tuple[np.ndarray, list[float]]]:
    """Series of 40-160 commits: flat, a step, a short regression, a drift, a burst of bad runs,
    normal and heavy-tailed noise; each with its commits' own noise (`uncertainty`)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        n = 40 + 5 * k
        level = np.ones(n)
        if k % 3 == 0:
            level[n // 2:] *= 1.04
        if k % 5 == 1:
            level[12:19] *= 0.95
        if k % 4 == 2:
            level[20:30] *= np.linspace(1, 1.05, 10)
            level[30:] *= 1.05
        noise = (rng.standard_t(4, n) if k % 2 else rng.standard_normal(n)) * 0.004 * (1 + k % 3)
        values = 1e11 * level * (1 + noise)
        if k % 7 == 3:
            values[n - 9:n - 7] *= 1.5
        out.append((values, [abs(float(v)) for v in rng.normal(0.005, 0.003, n)]))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_a_prepared_series_gives_the_fits_and_changes_it_gives_unprepared(seed: int) -> None:
    """The three passes of `trends.regressions_in`, each series prepared once, against each pass from
    the values: the same noise fits, segmentations, pooled priors and changes, bit for bit."""
    batch = _batch(seed)
    ready = [prepare(v, uncertainty=u) for v, u in batch]
    first = [noise_fit_and_segments(v, uncertainty=u) for v, u in batch]
    assert [noise_fit_and_segments(v, prepared=p) for (v, _), p in zip(batch, ready, strict=True)] == first
    prior = pool_noise([fit for fit, _ in first])
    assert prior is not None
    second = [noise_fit_and_segments(v, uncertainty=u, prior=prior, segments=segs)
              for (v, u), (_, segs) in zip(batch, first, strict=True)]
    assert [noise_fit_and_segments(v, prior=prior, prepared=p)
            for (v, _), p in zip(batch, ready, strict=True)] == second
    prior = pool_noise([fit for fit, _ in second])
    clear_cache()
    alone = [analyse(v, uncertainty=u, prior=prior).to_dict() for v, u in batch]
    clear_cache()
    got = [analyse(v, uncertainty=p.uncertainty, prior=prior, prepared=p).to_dict()
           for (v, _), p in zip(batch, ready, strict=True)]
    assert got == alone
    assert any(c["points"] for c in alone)  # the batch holds changes to find


def test_the_excursions_gate_runs_once_per_inflation(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_clean` keeps what the gate found for each variance inflation: asked again with a prior that
    leaves the inflation as it was, it does not search the series for excursions again."""
    calls = []
    real = changepoints._with_excursions
    monkeypatch.setattr(changepoints, "_with_excursions", lambda *a: calls.append(1) or real(*a))
    values, u = _batch(3, count=1)[0]
    ready = prepare(values, uncertainty=u)
    once = noise_fit_and_segments(values, prepared=ready)
    assert noise_fit_and_segments(values, prepared=ready) == once
    assert len(calls) == 1


def test_a_series_prepared_for_other_values_is_refused() -> None:
    values, _ = _batch(4, count=1)[0]
    ready = prepare(values, min_size=5)
    with pytest.raises(ValueError, match="prepared for other values"):
        noise_fit_and_segments(values[:-1], prepared=ready)
    with pytest.raises(ValueError, match="prepared for other values"):
        analyse(values, min_size=4, prepared=ready)


def _points(batch: list[tuple[np.ndarray, list[float]]]) -> pd.DataFrame:
    rows = []
    start = pd.Timestamp("2026-01-01", tz="UTC")
    for k, (values, u) in enumerate(batch):
        for i, (v, n) in enumerate(zip(values, u, strict=True)):
            rows.append({"algorithm": "copy", "name": f"s{k:02d}", "gpu_key": "g", "gpu_name": "G", "config_key": "",
                         "commit": f"c{i:04d}", "date": start + pd.Timedelta(hours=i), "value": float(v),
                         "metric": "bytes_per_second", "noise_percent": 100 * n, "runs": 1, "position": i})
    return pd.DataFrame(rows)


def test_regressions_are_the_same_whichever_series_were_kept_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `CACHED_POINT_ROWS` points a series keeps its segmentation only (memory stays bounded):
    every mix of prepared and unprepared series gives the same rows."""
    points = _points(_batch(5))
    whole = trends.regressions_in(lambda: [points])
    assert not whole.empty
    for limit in (0, 700, 10**9):
        monkeypatch.setattr(trends, "CACHED_POINT_ROWS", limit)
        pd.testing.assert_frame_equal(trends.regressions_in(lambda: [points]), whole, check_exact=True)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """`history_data.mixed_history`: the standard story, and a branch measured two and three times a
    commit with runs of no commit beside it."""
    path = hd.mixed_history(tmp_path_factory.mktemp("passes"))
    return open_store(path)


SELECTORS = [S(branch="main"), S(branch="twice"), S(), S(branch="main", algorithm="copy2"),
             S(branch="twice", since="2026-01-07T00:00:00+00:00")]


def _answers(reader: object, selector: S, metric: str | None, last: int) -> list[object]:
    from primbench.history.reader import Reader

    assert isinstance(reader, Reader)
    names = sorted(reader.names(selector))[:2]
    return [reader.overview(selector, metric=metric, last=last),
            reader.series(selector, metric=metric, last=last),
            reader.series(selector, metric=metric, last=last, names=names),
            list(reader.commit_points(selector, metric=metric, last=last, rows=1)),
            sorted(reader.commit_order(selector, last=last) or {}),
            sorted(q.selected_commits(reader.con, selector, last=last, window=reader._window)),  # DISTINCT: no order
            reader.regressions(selector, metric=metric, min_size=1, window=last)]


def _same(a: list[object], b: list[object]) -> None:
    for x, y in zip(a, b, strict=True):
        if isinstance(x, pd.DataFrame):
            assert isinstance(y, pd.DataFrame)
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        elif isinstance(x, list) and x and isinstance(x[0], pd.DataFrame):
            assert isinstance(y, list) and len(x) == len(y)
            for fx, fy in zip(x, y, strict=True):
                pd.testing.assert_frame_equal(fx, fy, check_exact=True)
        else:
            assert x == y


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("metric", [None, "time", "energy"])
@pytest.mark.parametrize("last", [1, 4, 10**6])
def test_a_pinned_window_reads_the_rows_each_query_finds_alone(db: Store, selector: S, metric: str | None,
                                                              last: int) -> None:
    with db.read() as reader:
        alone = _answers(reader, selector, metric, last)
        with reader.pinned(selector, last):
            assert reader._window is not None and reader._window.holds(selector, last)
            pinned = _answers(reader, selector, metric, last)
        assert reader._window is None
    _same(pinned, alone)


def test_a_window_is_used_only_for_its_own_runs_and_length(db: Store) -> None:
    """A window pinned for one selector's runs and `last` is not another's: their queries find their own."""
    with db.read() as reader:
        alone = [_answers(reader, S(branch="twice"), None, 4), _answers(reader, S(branch="main"), None, 3)]
        with reader.pinned(S(branch="main"), 4):
            assert not reader._window.holds(S(branch="twice"), 4)  # type: ignore[union-attr]
            assert reader._window.holds(S(branch="main", algorithm="copy1"), 4)  # type: ignore[union-attr]
            got = [_answers(reader, S(branch="twice"), None, 4), _answers(reader, S(branch="main"), None, 3)]
            with reader.pinned(S(branch="main"), 4):  # pinned already: kept, not found again
                assert reader._window.holds(S(branch="main"), 4)  # type: ignore[union-attr]
    for x, y in zip(got, alone, strict=True):
        _same(x, y)


def test_no_window_is_pinned_without_a_last(db: Store) -> None:
    with db.read() as reader, reader.pinned(S(branch="main"), None):
        assert reader._window is None


def test_the_base_series_split_once_gives_both_estimates(db: Store) -> None:
    with db.read() as reader:
        history = q.series(reader.con, S(branch="main"), newest=30)
    runs = newest_runs(history, 30)
    assert runs and [k for k, _ in runs] == list(run_to_run_cvs(history, 30))
    assert run_to_run_cvs(history, 30, runs=runs) == run_to_run_cvs(history, 30)
    assert clock_responses(history, 30, runs=runs) == clock_responses(history, 30)


_LIGHT = """
import sys
import numpy as np
from primbench.history import changepoints
import scipy
changepoints.analyse(1e12 * (1 + 0.01 * np.random.default_rng(1).standard_normal(60)))
print("scipy.special" not in sys.modules)
import scipy.special as real
sp = changepoints._special()
print(sp.ndtr is real.ndtr and sp.stdtr is real.stdtr and sp.digamma is real.psi)
"""


def test_change_points_use_scipys_own_functions_without_its_package_layer() -> None:
    out = subprocess.run([sys.executable, "-c", _LIGHT], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
