"""Change points (issue 24, fourth pass): the noise is measured with a short excursion PELT
missed as a level of its own (`_with_excursions`), and the pooled prior's degrees of freedom come
from robust moments and the noise's kurtosis (`pool_noise`), so that a regression fixed a few
commits later does not hide in the noise it inflates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primbench.compare.stats import log_variance_moments, trigamma_inverse
from primbench.history import changepoints
from primbench.history.changepoints import NoiseFit, noise_fit, pool_noise


def _excursion(seed: int, cv: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """30 commits at `cv` noise with an 8-commit regression of 2.2 noise units, and the noise alone."""
    rng = np.random.default_rng(seed)
    e = cv * rng.standard_normal(30)
    level = np.zeros(30)
    level[12:20] = -0.022
    return 1e12 * (1 + level) * (1 + e), np.log1p(e)


@pytest.mark.parametrize("seed", [4, 13])
def test_the_noise_leaves_out_an_excursion_pelt_missed(seed: int) -> None:
    values, noise = _excursion(seed)
    start = changepoints._start(values, changepoints.DEFAULT_MIN_SIZE, None)
    assert start.segs.points == []  # PELT's penalty is more than the excursion pays
    about_levels = changepoints._segment_fit(start.s.y, start.segs)
    assert about_levels is not None
    true = float(np.std(noise, ddof=1))
    assert about_levels.sigma > 1.25 * true  # the rule before: the excursion counted as noise
    fit = noise_fit(values)
    assert fit is not None
    assert fit.sigma < 1.05 * true
    assert fit.dof == about_levels.dof - 2  # the excursion is a level of its own


def test_a_flat_series_keeps_its_noise_about_its_levels_almost_always() -> None:
    """The gate is loose (`_CLEAN_ALPHA`): a flat series seldom loses an interval to it."""
    rng = np.random.default_rng(7)
    changed = 0
    for _ in range(100):
        values = 1e12 * (1 + 0.01 * rng.standard_normal(30))
        start = changepoints._start(values, changepoints.DEFAULT_MIN_SIZE, None)
        fit = changepoints._segment_fit(start.s.y, start.segs)
        changed += fit != noise_fit(values)
    assert changed <= 12


def test_effective_degrees_of_freedom_by_kurtosis() -> None:
    assert changepoints._effective_dof(20.0, 3.0) == 20.0
    assert changepoints._effective_dof(20.0, 2.5) == 20.0  # lighter tails: never more than the residuals
    assert changepoints._effective_dof(20.0, 5.0) == pytest.approx(10.0)


def test_the_pooled_degrees_of_freedom_survive_a_minority_of_inflated_variances() -> None:
    """90 alike series and 10 whose variance a missed change doubled: limma's moments (the rule
    before) see unlike series and give a weak prior; the median and MAD do not."""
    rng = np.random.default_rng(0)
    d = 27.0
    s_sq = 1e-4 * rng.chisquare(d, 100) / d * np.where(np.arange(100) < 10, 2.0, 1.0)
    fits = [NoiseFit(float(math.sqrt(v)), d, 0.0, 30) for v in s_sq]
    prior = pool_noise(fits)
    assert prior is not None
    _, excess = log_variance_moments(s_sq, np.full(100, d))
    limma = 2 * trigamma_inverse(excess)
    assert limma < 100
    assert prior.dof > 2 * limma
    assert prior.variance == pytest.approx(1e-4, rel=0.1)


def test_heavy_tails_count_as_fewer_degrees_of_freedom() -> None:
    """The same variances with a kurtosis of 5: each series' variance is as uncertain as one on
    half its residuals, so their scatter is sampling's, and the prior is the stronger."""
    rng = np.random.default_rng(1)
    d = 28.0
    s_sq = 1e-4 * rng.chisquare(d / 2, 200) / (d / 2)  # the scatter of a variance on d / 2
    normal = pool_noise([NoiseFit(float(math.sqrt(v)), d, 0.0, 30, 3.0) for v in s_sq])
    heavy = pool_noise([NoiseFit(float(math.sqrt(v)), d, 0.0, 30, 5.0) for v in s_sq])
    assert normal is not None and heavy is not None
    assert heavy.kurtosis == 5.0
    assert heavy.dof > 3 * normal.dof
    _, dof, _, _ = heavy.moderate(NoiseFit(0.01, d, 0.0, 30, 5.0))
    assert dof == pytest.approx(heavy.dof + d / 2)
