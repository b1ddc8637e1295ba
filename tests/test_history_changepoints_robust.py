"""Change points (issue 24): the optimal search, bursts of bad runs, steps that return, each
point's own noise, correlated noise, and the search's cost."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from primbench.history.changepoints import analyse, detect
from primbench.history.segmentation import classify, pelt
from tests.history_data import noisy_levels


def _series(n: int, shifts: dict[int, float] | None = None, cv: float = 0.005, seed: int = 0) -> np.ndarray:
    return np.array([row[0] for row in noisy_levels(n, shifts=shifts, cv=cv, seed=seed)])


def _brute_force(y: np.ndarray, w: np.ndarray, penalty: float) -> float:
    """The least penalized weighted squared error over every segmentation (small n only)."""
    n = len(y)

    def cost(a: int, b: int) -> float:
        ww, yy = w[a:b], y[a:b]
        level = float(np.sum(ww * yy) / np.sum(ww))
        return float(np.sum(ww * (yy - level) ** 2))

    best = math.inf
    for k in range(n):
        for cuts in itertools.combinations(range(1, n), k):
            bounds = [0, *cuts, n]
            best = min(best, sum(cost(a, b) for a, b in itertools.pairwise(bounds)) + penalty * k)
    return best


def _penalized(y: np.ndarray, w: np.ndarray, penalty: float, points: list[int]) -> float:
    bounds = [0, *points, len(y)]
    total = 0.0
    for a, b in itertools.pairwise(bounds):
        level = float(np.sum(w[a:b] * y[a:b]) / np.sum(w[a:b]))
        total += float(np.sum(w[a:b] * (y[a:b] - level) ** 2))
    return total + penalty * len(points)


@pytest.mark.parametrize("seed", range(6))
def test_pelt_finds_the_optimal_weighted_segmentation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 1, 11) + np.repeat([0.0, 3.0, -1.0], [4, 3, 4])
    w = rng.uniform(0.2, 2.0, 11)
    points = pelt(y, w, 2.0)
    assert _penalized(y, w, 2.0, points) == pytest.approx(_brute_force(y, w, 2.0), abs=1e-9)


def test_pelt_work_grows_linearly_when_steps_keep_coming() -> None:
    """Candidate starts evaluated: about proportional to n where the level moves every 100 points
    (PELT's pruning); at most n (n + 1) / 2 on a series that never moves."""
    rng = np.random.default_rng(1)
    work: dict[int, int] = {}
    for n in (1000, 8000):
        y = rng.normal(0, 1, n) + np.repeat(rng.choice([-3.0, 0.0, 3.0], n // 100), 100)
        out: list[int] = []
        pelt(y, np.ones(n), 3 * math.log(n), out)
        work[n] = out[0]
    assert work[8000] / work[1000] < 8 * 1.5  # linear is 8, quadratic 64
    flat: list[int] = []
    pelt(rng.normal(0, 1, 500), np.ones(500), 3 * math.log(500), flat)
    assert flat[0] <= 500 * 501 // 2


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("length", [2, 3])
def test_a_burst_of_bad_runs_is_a_burst_not_a_regression_and_its_fix(seed: int, length: int) -> None:
    values = _series(40, None, 0.005, seed)
    at = 8 + seed % 24
    values[at:at + length] *= 0.9  # a throttled GPU for two or three runs
    changes = analyse(values)
    assert changes.points == [] and changes.drifts == []
    assert [(b.start, b.stop) for b in changes.bursts] == [(at, at + length)]
    assert changes.bursts[0].shift == pytest.approx(-0.1, abs=0.01)
    assert changes.bursts[0].level == pytest.approx(1e12, rel=0.01)


@pytest.mark.parametrize("seed", range(10))
def test_a_burst_beside_a_real_step_leaves_the_step(seed: int) -> None:
    values = _series(60, {30: -0.04}, 0.003, seed)
    values[12:14] *= 0.9
    changes = analyse(values)
    assert [cp.index for cp in changes.points] == [30]
    assert changes.points[0].shift == pytest.approx(-0.04, abs=0.01)
    assert [(b.start, b.stop) for b in changes.bursts] == [(12, 14)]


@pytest.mark.parametrize("seed", range(10))
def test_a_regression_fixed_four_commits_later_is_two_change_points(seed: int) -> None:
    """Longer than a burst (at most 3 commits): a regression and its fix."""
    values = _series(40, {15: -0.05, 19: 0.05 / 0.95}, 0.003, seed)
    changes = analyse(values)
    assert [cp.index for cp in changes.points] == [15, 19] and changes.bursts == []


@pytest.mark.parametrize("seed", range(20))
def test_steps_that_return_are_found(seed: int) -> None:
    """Levels 0, +3 %, 0, +3 % five commits apart, in 0.3 % noise: no single split separates
    them, which left greedy binary segmentation without a first cut."""
    values = _series(20, {5: 0.03, 10: -0.03 / 1.03, 15: 0.03}, 0.003, seed)
    assert [cp.index for cp in detect(values)] == [5, 10, 15]


@pytest.mark.parametrize("seed", range(10))
def test_alternating_steps_in_a_long_series_are_found(seed: int) -> None:
    shifts = {100 * k: (0.03 if k % 2 else -0.03 / 1.03) for k in range(1, 10)}
    values = _series(1000, shifts, 0.005, seed)
    assert [cp.index for cp in detect(values)] == list(range(100, 1000, 100))


@pytest.mark.parametrize("seed", range(10))
def test_points_with_a_large_own_noise_do_not_make_a_step(seed: int) -> None:
    """Four commits 4 % high: a regression and its fix when they are as precise as the others;
    nothing when each of them says its own runs spread by 5 %."""
    values = _series(40, None, 0.003, seed)
    values[20:24] *= 1.04
    assert [cp.index for cp in detect(values)] == [20, 24]
    own = np.full(40, 0.001)
    own[20:24] = 0.05
    assert detect(values, uncertainty=list(own)) == []
    assert [cp.index for cp in detect(values, uncertainty=[0.001] * 40)] == [20, 24]  # the same for all: no effect


def test_uncertainty_must_match_the_points() -> None:
    with pytest.raises(ValueError, match="one value per point"):
        analyse([1.0] * 10, uncertainty=[0.01] * 9)


@pytest.mark.slow
def test_correlated_noise_makes_fewer_false_steps() -> None:
    """AR(1) noise (coefficient 0.5) wanders like small level shifts; allowing for the
    correlation keeps false change points rare (measured: 2 in 200 series of 200 commits)."""
    hits = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        e = np.empty(200)
        e[0] = rng.standard_normal()
        for i in range(1, 200):
            e[i] = 0.5 * e[i - 1] + math.sqrt(0.75) * rng.standard_normal()
        hits += bool(analyse(1e12 * (1 + 0.005 * e)).points)
    assert hits <= 6


def test_classify_settles_short_segments() -> None:
    y = np.array([0.0] * 10 + [10.0] * 2 + [0.0] * 10 + [1.0] + [3.0] * 10)
    segs = classify(y, np.ones(len(y)), [10, 12, 22, 23], min_size=3)
    assert segs.bursts == [(10, 12)]  # away and back, 10 noise units
    assert segs.points == [23]  # the lone transition point (1.0) joins the nearer level, 0


def test_a_short_excursion_within_a_few_noise_units_is_no_burst() -> None:
    """3 units away (the worst commits of a small regression that lasted longer, say): not bad
    runs; the segment is merged and its points stay in the series."""
    y = np.array([0.0] * 10 + [3.0] * 3 + [0.0] * 10)
    segs = classify(y, np.ones(len(y)), [10, 13], min_size=4)
    assert segs.bursts == [] and segs.points == [13]  # merged into the left level (equally near)
    assert classify(y * 2, np.ones(len(y)), [10, 13], min_size=4).bursts == [(10, 13)]  # 6 units: a burst
    # as long as min_size, but away and back: merged all the same (a few commits are bad runs
    # or nothing, never a regression and its fix)
    segs = classify(y, np.ones(len(y)), [10, 13], min_size=3)
    assert segs.bursts == [] and len(segs.points) <= 1


def test_bursts_in_to_dict() -> None:
    values = _series(30, None, 0.003, 2)
    values[10:12] *= 0.9
    d = analyse(values).to_dict()
    assert [(b["start"], b["stop"]) for b in d["bursts"]] == [(10, 12)]
