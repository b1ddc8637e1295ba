"""Change points (issue 24, eighth pass): the short-regression scan's false-alarm budget weighted
by excursion length (`changepoints.length_prior`, `_length_factors`, `segmentation.scan`'s
``factors``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from primbench.history import changepoints
from primbench.history.changepoints import analyse
from primbench.history.segmentation import log_tail, scan
from tests.history_data import noisy_levels


def _series(n: int, shifts: dict[int, float] | None = None, cv: float = 0.01, seed: int = 0) -> np.ndarray:
    return np.array([row[0] for row in noisy_levels(n, shifts=shifts, cv=cv, seed=seed)])


@pytest.mark.parametrize("z", [0.0, 0.5, 2.0, 5.0, 12.0, 29.9, 30.0, 45.0, 200.0])
def test_log_tail_is_the_normal_tail(z: float) -> None:
    assert log_tail(z) == pytest.approx(float(special.log_ndtr(-z)), rel=1e-6, abs=1e-12)


def test_the_length_prior_gives_the_named_lengths_the_budget() -> None:
    prior = changepoints.length_prior(4)
    assert sorted(prior) == list(range(4, changepoints._EXCURSION_MAX + 1))
    assert sum(prior.values()) == pytest.approx(1.0)
    lo, hi = changepoints._PRIOR_LENGTHS
    inside = {prior[n] for n in range(lo, hi + 1)}
    assert len(inside) == 1
    assert all(prior[n] == pytest.approx(changepoints._PRIOR_OTHER * prior[lo]) for n in prior if not lo <= n <= hi)


def test_length_factors_are_the_intervals_over_the_share() -> None:
    """Each length's multiplier: its intervals in every segment (each keeping a margin of 3 at
    both ends) over its share of the budget."""
    sizes = [30, 12, 100]
    factors = changepoints._length_factors(sizes, 4, 3)
    prior = changepoints.length_prior(4)
    for n, weight in prior.items():
        count = sum(max(m - 6 - n + 1, 0) for m in sizes)
        assert factors[n] == pytest.approx(max(count, 1) / weight)


def test_equal_factors_pick_the_largest_z() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        y = rng.normal(0, 1, 60)
        y[20:27] -= 2.0
        plain = scan(y, np.ones(60), 0, 60, lengths=range(4, 17), margin=3)
        equal = scan(y, np.ones(60), 0, 60, lengths=range(4, 17), margin=3, factors=dict.fromkeys(range(4, 17), 50.0))
        assert plain == equal


def test_factors_rank_the_lengths_by_their_weighted_p_value() -> None:
    """An interval of 7 points 3 sds off in a segment otherwise flat: its own length wins at equal
    factors; where length 7's multiplier is made 1e12 times the others', the best z of another
    length wins, and it is the one whose weighted p-value is smallest."""
    y = np.zeros(60)
    y[20:27] = -3.0
    factors = dict.fromkeys(range(4, 17), 10.0)
    ex = scan(y, np.ones(60), 0, 60, lengths=range(4, 17), margin=3, factors=factors)
    assert ex is not None and (ex.start, ex.stop) == (20, 27)
    factors[7] = 1e13
    ex = scan(y, np.ones(60), 0, 60, lengths=range(4, 17), margin=3, factors=factors)
    assert ex is not None and ex.stop - ex.start != 7
    best = {}
    for n in range(4, 17):
        one = scan(y, np.ones(60), 0, 60, lengths=range(n, n + 1), margin=3)
        assert one is not None
        best[n] = log_tail(one.z) + math.log(factors[n])
    assert ex.stop - ex.start == min(best, key=best.__getitem__)


def _found(series: list[np.ndarray], truth: list[tuple[int, int]]) -> int:
    changepoints.clear_cache()
    hits = 0
    for values, (a, b) in zip(series, truth, strict=True):
        points = [cp.index for cp in analyse(values).points]
        hits += sum(any(abs(p - t) <= 2 for p in points) for t in (a, b))
    changepoints.clear_cache()
    return hits


def test_the_prior_finds_regressions_of_the_named_lengths_no_worse(monkeypatch: pytest.MonkeyPatch) -> None:
    """60 series of 30 commits at 1 % Gaussian noise, each with a -2 % regression fixed 5 to 10
    commits later, each analysed alone: the scan with the budget by length finds at least as
    many of their change points as with every interval an equal share (61 and 55 of 120 when
    written)."""
    rng = np.random.default_rng(24)
    series, truth = [], []
    for seed in range(60):
        length = int(rng.integers(5, 11))
        at = int(rng.integers(5, 30 - length - 5 + 1))
        series.append(_series(30, {at: -0.02, at + length: 0.02 / 0.98}, 0.01, 500 + seed))
        truth.append((at, at + length))
    monkeypatch.setattr(changepoints, "_LENGTH_PRIOR", False)
    flat = _found(series, truth)
    monkeypatch.setattr(changepoints, "_LENGTH_PRIOR", True)
    weighted = _found(series, truth)
    assert weighted >= flat and weighted >= 50  # of 120 change points


def test_flat_series_give_no_short_regression_with_the_prior(monkeypatch: pytest.MonkeyPatch) -> None:
    """90 flat series at 1 % noise (30 each at n = 30, 100 and 300), the scan's budget by length
    (off by default since the merge: `length_cost.txt`): at most one of them shows a change point."""
    monkeypatch.setattr(changepoints, "_LENGTH_PRIOR", True)
    shown = 0
    for seed in range(30):
        for n in (30, 100, 300):
            c = analyse(_series(n, None, 0.01, 2000 + seed))
            shown += bool(c.points or c.drifts)
    assert shown <= 1


def test_the_length_prior_is_off_by_default() -> None:
    """It gains 5-10 commit regressions what it takes from 4 and 11-16 (`length_cost.txt`)."""
    assert changepoints._LENGTH_PRIOR is False
