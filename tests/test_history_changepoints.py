"""Change points: planted shifts are found at the right commit; flat noisy series give nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history.changepoints import detect
from tests.history_data import noisy_levels


def _series(n: int, shifts: dict[int, float] | None = None, cv: float = 0.005, seed: int = 0) -> list[float]:
    return [row[0] for row in noisy_levels(n, shifts=shifts, cv=cv, seed=seed)]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(("n", "at", "shift", "cv"), [
    (40, 25, -0.05, 0.005),   # a 5 % regression in 0.5 % noise
    (30, 10, +0.03, 0.002),   # a 3 % improvement in 0.2 % noise (H200-like)
    (12, 6, -0.10, 0.01),     # a short series
    (60, 57, -0.04, 0.002),   # three commits after the shift: the newest ones
    (20, 3, -0.08, 0.01),     # three commits before it
])
def test_a_planted_shift_is_found_at_its_commit(seed: int, n: int, at: int, shift: float, cv: float) -> None:
    cps = detect(_series(n, {at: shift}, cv, seed))
    assert [cp.index for cp in cps] == [at]
    cp = cps[0]
    assert cp.shift == pytest.approx(shift, abs=3 * cv + 0.002)
    assert cp.confidence > 0.999
    assert (cp.after < cp.before) == (shift < 0)


@pytest.mark.parametrize("seed", range(10))
def test_two_shifts_are_both_found(seed: int) -> None:
    cps = detect(_series(50, {15: -0.04, 35: +0.06}, 0.005, seed))
    assert [cp.index for cp in cps] == [15, 35]
    assert cps[0].shift == pytest.approx(-0.04, abs=0.01)
    assert cps[1].shift == pytest.approx(+0.06 * 1, abs=0.01)
    assert cps[0].segment == (0, 35) and cps[1].segment == (15, 50)


@pytest.mark.parametrize("seed", range(50))
@pytest.mark.parametrize(("n", "cv"), [(10, 0.01), (30, 0.002), (100, 0.01)])
def test_a_flat_noisy_series_gives_nothing(seed: int, n: int, cv: float) -> None:
    assert detect(_series(n, None, cv, seed)) == []


@pytest.mark.parametrize("seed", range(20))
def test_single_outliers_are_not_change_points(seed: int) -> None:
    values = _series(30, None, 0.003, seed)
    rng = np.random.default_rng(seed)
    values[int(rng.integers(0, 26))] *= 0.9  # a bad run (a throttled GPU) somewhere
    values[-1] *= 0.9  # and the newest run too
    assert detect(values) == []


def test_false_alarm_rate_stays_below_alpha() -> None:
    alpha = 0.01  # Bonferroni over the candidate splits makes the test conservative: about 0.5 % here
    runs = 2000
    hits = sum(bool(detect(_series(30, None, 0.01, seed), alpha=alpha, min_shift=0)) for seed in range(runs))
    assert hits / runs <= alpha


def test_small_but_real_shifts_are_below_min_shift() -> None:
    values = _series(40, {20: -0.004}, 0.0002, 1)
    assert detect(values) == []  # 0.4 % is significant here, but under the 1 % default
    assert [cp.index for cp in detect(values, min_shift=0.002)] == [20]


def test_too_short_or_constant_series() -> None:
    assert detect([]) == []
    assert detect([1.0] * 5) == []
    assert detect([1.0] * 20) == []
    assert [cp.index for cp in detect([1.0] * 10 + [2.0] * 10)] == [10]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="finite"):
        detect([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="alpha"):
        detect([1.0] * 10, alpha=0)
    with pytest.raises(ValueError, match="min_size"):
        detect([1.0] * 10, min_size=0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 80), frac=st.floats(0.25, 0.75),
       shift=st.sampled_from([-0.2, -0.08, -0.05, 0.05, 0.08, 0.2]), scale=st.floats(1e-3, 1e13))
def test_large_shifts_are_found_exactly_at_any_scale(seed: int, n: int, frac: float, shift: float,
                                                     scale: float) -> None:
    at = int(n * frac)
    values = [v / 1e12 * scale for v in _series(n, {at: shift}, 0.003, seed)]
    cps = detect(values)
    assert [cp.index for cp in cps] == [at]
    assert cps[0].shift == pytest.approx(shift, abs=0.01)


def test_confidence_text_never_rounds_up_to_certainty():
    from history.changepoints import confidence_text

    assert confidence_text(0.9999974) == "99.9997 %"
    assert confidence_text(0.9999995) == "> 99.9999 %"
    assert confidence_text(0.95) == "95 %"
