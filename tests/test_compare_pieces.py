"""compare's pieces, each alone: pairing (`_pair`) pools the rounds of every run of a side, and
the noise model (`_noise`) moderates the variances across the suite and lets history's larger
run-to-run variance take over. `compare_runs` composes them with the decision rules (`_judge`),
which tests/test_compare_core.py tests through it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from primbench.compare.core import _index, _noise, _pair, _Tested
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec

TB = 1.0e12


def res(*specs: dict[str, Any], source: str) -> Results:
    return results_from_dict(document(specs, version="4.4.0"), source)


def test_pairing_pools_every_round_of_every_run_of_a_side() -> None:
    base = [res(spec("type: char", TB, round_cv=0.01), source=f"b{i}.json") for i in range(2)]
    head = [res(spec("type: char", TB * 1.02, round_cv=0.01), source="h.json")]
    key = ("copy", "type: char")
    tested = _pair(key, _index(base)[key], _index(head)[key], None)
    assert isinstance(tested, _Tested)
    rounds = len(base[0].specializations[0].rounds)
    assert (tested.base.n, tested.head.n) == (2 * rounds, rounds)
    assert (tested.base_runs, tested.head_runs) == (2, 1)
    assert tested.fields["change"] == pytest.approx(0.02, rel=1e-6)


def make_tested(key: str, ss: float, n: int = 3, history: tuple[float, float] | None = None) -> _Tested:
    """A specialization with n observations a side, each side's squared deviations `ss`."""
    return _Tested(("copy", key), {}, _Sample(n, 0.0, ss), _Sample(n, 0.01, ss), 1, 1, None, history)


def test_the_noise_model_pulls_a_lone_outlier_variance_toward_the_suite() -> None:
    suite = [make_tested(f"t{i}", 1e-6) for i in range(10)] + [make_tested("loud", 1e-3)]
    noise = _noise(suite)
    raw = [math.sqrt(t.sample_variance()[0] * t.n_factor) for t in suite]
    assert noise.se[-1] < raw[-1]  # moderated down toward the suite ...
    assert noise.se[-1] > noise.se[0]  # ... but still the loudest
    assert all(d > 4 for d in noise.df)  # the prior lends degrees of freedom
    assert all("moderated" in s for s in noise.source)


def test_history_takes_over_where_its_variance_is_larger() -> None:
    suite = [make_tested(f"t{i}", 1e-6) for i in range(5)] + [make_tested("known", 1e-6, history=(0.05, 7.0))]
    noise = _noise(suite)
    assert noise.se[-1] == pytest.approx(0.05 * math.sqrt(2))
    assert noise.df[-1] == 7.0 and noise.source[-1] == "history (7 df)"
    assert noise.se[0] < noise.se[-1]
