"""Change points (issue 24, fifth pass): where the noise is heavy-tailed, the short-regression
scan also tests an excursion by Huber M-estimates of its two levels, each about its own level
(`_m_level`), their variance from the residuals' Huber moments (`NoiseFit.huber`, pooled), where
the clipped means' own p is under `_SCAN_HUBER_GATE` times alpha; and a block of series whose
pooled kurtosis says heavy tails counts as heavy-tailed in each series."""

from __future__ import annotations

import numpy as np
import pytest

from primbench.history import changepoints
from primbench.history.changepoints import analyse_many, clear_cache, noise_fit, pool_noise


def test_the_huber_level_follows_the_bulk_not_a_pair_of_wild_points() -> None:
    sd = np.ones(8)
    wild = np.array([0.0, 0.1, -0.1, 0.05, -0.05, 0.0, 6.0, 6.0])
    assert float(np.mean(wild)) > 1.4
    assert abs(changepoints._m_level(wild, sd)) < 0.8  # each wild point pulls by at most 1.5 sd / 6
    assert changepoints._m_level(np.array([-1.0, -0.2, 0.2, 1.0]), np.ones(4)) == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(3)
    normal = rng.standard_normal(4000)
    assert changepoints._m_level(normal, np.ones(4000)) == pytest.approx(float(np.mean(normal)), abs=0.01)


def test_the_huber_variance_ratio_by_tails() -> None:
    """``E psi**2 / (E psi')**2`` at 1.5 sd: 1.04 for normal noise (an M-estimate's variance a
    little over a mean's); under 1 for t(5) noise of the same sd, where the M-estimate is the
    better one. 0 turns the test off (ratio 1)."""
    rng = np.random.default_rng(5)
    assert changepoints._huber_ratio(rng.standard_normal(200_000)) == pytest.approx(1.037, abs=0.01)
    t5 = rng.standard_t(5, 200_000) / np.sqrt(5 / 3)
    assert changepoints._huber_ratio(t5 / 0.936) < 0.97  # in units of the trimmed noise, as `_segment_fit`'s
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(changepoints, "_SCAN_HUBER", 0.0)
        assert changepoints._huber_ratio(t5) == 1.0


def _block(seed: int, tails: str, n: int = 30, m: int = 60, size: float = 0.02) -> list[np.ndarray]:
    """`m` series of `n` commits at 1 % noise with a regression of `size` on commits 12-19."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(m):
        e = rng.standard_t(5, n) / np.sqrt(5 / 3) if tails == "t5" else rng.standard_normal(n)
        level = np.zeros(n)
        level[12:20] = -size
        out.append(1e12 * (1 + level) * (1 + 0.01 * e))
    return out


def test_a_block_of_heavy_tailed_series_is_heavy_tailed_as_a_whole() -> None:
    """30 points of t(5) noise seldom show their tails alone (their sample kurtosis is biased
    low); 100 series of them together do, and normal ones do not."""
    for tails, heavy in (("t5", True), ("normal", False)):
        prior = pool_noise([noise_fit(v) for v in _block(11, tails, m=100, size=0.0)])
        assert prior is not None
        assert (prior.corrected_kurtosis > changepoints._HEAVY_POOLED_KURTOSIS) is heavy
        assert prior.huber < 1.0 if heavy else prior.huber > 1.0


def test_the_m_estimate_test_finds_more_short_regressions_in_heavy_tailed_noise() -> None:
    """-2 % for 8 commits in 30 at 1 % t(5) noise: every regression the clipped means find
    (both edges exact) is still found, and more (the rule before: 0 at `_SCAN_HUBER`)."""
    found = {"new": 0, "old": 0}
    for seed in (0, 1, 2):
        block = _block(seed, "t5")
        clear_cache()
        new = [[p.index for p in c.points] for c in analyse_many(block)]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(changepoints, "_SCAN_HUBER", 0.0)
            old = [[p.index for p in c.points] for c in analyse_many(block)]
        for a, b in zip(new, old, strict=True):
            if b == [12, 20]:
                assert a == [12, 20]
        found["new"] += sum(a == [12, 20] for a in new)
        found["old"] += sum(b == [12, 20] for b in old)
    assert found["new"] > found["old"]

