"""Change points (issue 24, third pass): many series analysed together, their noise pooled
(`analyse_many`, `NoisePrior`): the noise's correlation and spread estimated from all of them,
each series' own shrunk toward it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primbench.history.changepoints import MIN_POOLED, NoiseFit, NoisePrior, analyse, analyse_many, clear_cache


def _ar1(rng: np.random.Generator, n: int, phi: float, cv: float = 0.005) -> np.ndarray:
    e = np.empty(n)
    e[0] = rng.standard_normal()
    for i in range(1, n):
        e[i] = phi * e[i - 1] + math.sqrt(1 - phi**2) * rng.standard_normal()
    return 1e12 * (1 + cv * e)


def _fixed(rng: np.random.Generator, n: int, at: int, length: int, size: float, cv: float) -> np.ndarray:
    level = np.zeros(n)
    level[at:at + length] = -size
    return 1e12 * (1 + level) * (1 + cv * rng.standard_normal(n))


def test_too_few_series_are_each_analysed_alone() -> None:
    rng = np.random.default_rng(1)
    batch = [_fixed(rng, 40, 15, 6, 0.03, 0.01) for _ in range(MIN_POOLED - 1)]
    clear_cache()
    assert [c.to_dict() for c in analyse_many(batch)] == [analyse(v).to_dict() for v in batch]


def test_correlated_noise_pooled_over_short_series_makes_fewer_false_points() -> None:
    """Flat AR(1) 0.3 series of 30 commits: the correlation that 30 points estimate with a
    standard error of about 0.18 is estimated from all 200 together."""
    rng = np.random.default_rng(24)
    batch = [_ar1(rng, 30, 0.3) for _ in range(200)]
    alone = sum(len(analyse(v).points) for v in batch)
    pooled = sum(len(c.points) for c in analyse_many(batch))
    assert pooled <= 2 < alone


def test_a_short_regression_is_found_as_often_pooled_as_alone() -> None:
    rng = np.random.default_rng(7)
    batch = [_fixed(rng, 30, 10, 7, 0.03, 0.01) for _ in range(60)]

    def found(changes: list[list[int]]) -> int:
        return sum(any(abs(i - 10) <= 2 for i in c) and any(abs(i - 17) <= 2 for i in c) for c in changes)

    alone = found([[p.index for p in analyse(v).points] for v in batch])
    pooled = found([[p.index for p in c.points] for c in analyse_many(batch)])
    assert pooled >= alone and pooled >= 50


def test_the_prior_moderates_a_series_noise_toward_the_pooled_one() -> None:
    prior = NoisePrior(variance=0.01**2, dof=50.0, rho=0.3, rho_points=300.0, series=100)
    fit = NoiseFit(sigma=0.02, dof=25.0, rho=0.0, points=30)
    sigma, dof, rho, se = prior.moderate(fit)
    assert dof == 75.0
    assert sigma == pytest.approx(math.sqrt((50 * 0.01**2 + 25 * 0.02**2) / 75))
    assert rho == pytest.approx(0.3 * 300 / 330)
    assert se == pytest.approx(1 / math.sqrt(330))


def test_uncertainties_must_match_the_series() -> None:
    with pytest.raises(ValueError, match="one entry per series"):
        analyse_many([np.ones(10)], uncertainties=[])


def test_a_series_with_values_at_or_below_zero_keeps_its_own_noise() -> None:
    """Its noise is in its own units, not relative: it takes no part in the pooling."""
    rng = np.random.default_rng(3)
    batch = [_ar1(rng, 30, 0.3) for _ in range(20)]
    odd = -_fixed(rng, 30, 10, 7, 0.03, 0.01)
    clear_cache()
    assert analyse_many([*batch, odd])[-1].to_dict() == analyse(odd).to_dict()
    assert [c.to_dict() for c in analyse_many([*batch, odd])[:-1]] == [c.to_dict() for c in analyse_many(batch)]


def test_analyse_with_the_pooled_noise_of_the_series_is_analyse_many() -> None:
    """The form the history commands use (`noise_fit`, `pool_noise`, twice, then `analyse` with
    the prior: the series come from a store a batch at a time) gives `analyse_many`'s results."""
    from primbench.history.changepoints import noise_fit, pool_noise

    rng = np.random.default_rng(7)
    batch = [_ar1(rng, 40, 0.3) for _ in range(12)] + [_fixed(rng, 40, 15, 6, 0.03, 0.005) for _ in range(4)]
    clear_cache()
    first = pool_noise([noise_fit(v) for v in batch])
    prior = pool_noise([noise_fit(v, prior=first) for v in batch])  # pooled again, gated by the first
    assert prior is not None and prior.series == len(batch)
    two_pass = [analyse(v, prior=prior).to_dict() for v in batch]
    assert two_pass == [c.to_dict() for c in analyse_many(batch)]
    assert any(c["points"] for c in two_pass[12:])  # the planted regressions are found


def test_history_regressions_pool_the_noise_of_their_series() -> None:
    """`trends.regressions_in` over batches it can read again (a sequence, or a function that
    returns them anew, as the commands pass) pools; a one-pass iterable analyses each series
    alone. 200 flat AR(1) 0.3 series of 30 commits in two batches: alone, 6 false change points;
    pooled, 1 (each series' noise is fitted once more, so the result is `analyse` with the pooled
    prior, series by series; pooled twice, as the history commands do)."""
    import pandas as pd

    from primbench.history.changepoints import noise_fit, pool_noise
    from primbench.history.trends import regressions_in

    rng = np.random.default_rng(30)
    series = [_ar1(rng, 30, 0.3) for _ in range(200)]
    frames = [pd.DataFrame({"algorithm": "a", "name": f"k{i:03d}", "gpu_key": "g", "config_key": "c",
                            "gpu_name": "H200", "commit": [f"c{j}" for j in range(30)],
                            "date": pd.Timestamp("2026-01-01"), "value": v, "metric": "bytes_per_second",
                            "noise_percent": 0.1}) for i, v in enumerate(series)]
    batches = [pd.concat(frames[:100]), pd.concat(frames[100:])]
    pooled = regressions_in(batches)
    pd.testing.assert_frame_equal(pooled, regressions_in(lambda: iter(batches)))
    alone = regressions_in(iter(batches))
    u = np.full(30, 0.001)
    first = pool_noise([noise_fit(v, uncertainty=u) for v in series])
    prior = pool_noise([noise_fit(v, uncertainty=u, prior=first) for v in series])
    assert len(pooled) == sum(len(analyse(v, prior=prior, uncertainty=u).points) for v in series) == 1
    assert len(alone) == sum(len(analyse(v, uncertainty=u).points) for v in series) == 6


def test_history_regressions_read_the_store_once_where_the_points_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pooled noise needs the batches three times: a function's batches are read once and kept while they
    hold `CACHED_POINT_ROWS` rows or fewer (the store is not queried again), else read anew each pass; the rows
    are the same either way."""
    import pandas as pd

    from primbench.history import trends

    rng = np.random.default_rng(31)
    frames = [pd.DataFrame({"algorithm": "a", "name": f"k{i:03d}", "gpu_key": "g", "config_key": "c",
                            "gpu_name": "H200", "commit": [f"c{j}" for j in range(30)],
                            "date": pd.Timestamp("2026-01-01"), "value": _ar1(rng, 30, 0.3),
                            "metric": "bytes_per_second", "noise_percent": 0.1}) for i in range(40)]
    frames[3].loc[20:, "value"] *= 0.9  # one regression to find
    batches = [pd.concat(frames[:20]), pd.concat(frames[20:])]
    reads: list[int] = []

    def source() -> list[pd.DataFrame]:
        reads.append(1)
        return batches

    kept = trends.regressions_in(source)
    assert len(reads) == 1 and (kept["name"] == "k003").any()
    monkeypatch.setattr(trends, "CACHED_POINT_ROWS", 600)  # the first batch fits, the second does not
    reads.clear()
    again = trends.regressions_in(source)
    assert len(reads) == 3
    pd.testing.assert_frame_equal(kept, again)
    pd.testing.assert_frame_equal(kept, trends.regressions_in(batches))


def test_history_regressions_search_each_series_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`trends.regressions_in` pools the noise twice and then analyses each series: the first
    segmentation (PELT's search) is found once per series and reused by the second pooling and
    by the analysis (`analyse(..., segments=)`), its rows those of `analyse` searching again."""
    import pandas as pd

    from primbench.history import changepoints
    from primbench.history.changepoints import noise_fit, pool_noise
    from primbench.history.trends import regressions_in

    rng = np.random.default_rng(31)
    series = [_ar1(rng, 40, 0.0) for _ in range(20)]
    series[3][20:27] *= 0.97  # a regression fixed 7 commits later
    frames = [pd.DataFrame({"algorithm": "a", "name": f"k{i:03d}", "gpu_key": "g", "config_key": "c",
                            "gpu_name": "H200", "commit": [f"c{j}" for j in range(40)],
                            "date": pd.Timestamp("2026-01-01"), "value": v, "metric": "bytes_per_second",
                            "noise_percent": 0.1}) for i, v in enumerate(series)]
    calls = []
    search = changepoints.search
    monkeypatch.setattr(changepoints, "search", lambda *a, **k: calls.append(1) or search(*a, **k))
    changepoints.clear_cache()
    rows = regressions_in([pd.concat(frames)])
    searched = len(calls)
    u = np.full(40, 0.001)
    calls.clear()
    many = analyse_many(series, uncertainties=[u] * len(series))
    # as many searches as `analyse_many` of the same series (once each, and again where `_finish`
    # segments anew with the noise it settled on); it was one more per series
    assert searched == len(calls)
    monkeypatch.setattr(changepoints, "search", search)
    first = pool_noise([noise_fit(v, uncertainty=u) for v in series])
    prior = pool_noise([noise_fit(v, uncertainty=u, prior=first) for v in series])
    changepoints.clear_cache()
    again = [analyse(v, prior=prior, uncertainty=u) for v in series]
    assert list(rows["position"]) == [cp.index for c in again for cp in c.points]
    assert [c.to_dict() for c in again] == [c.to_dict() for c in many]
    assert len(rows) >= 2
