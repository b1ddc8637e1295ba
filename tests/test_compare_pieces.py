"""compare's pieces, each alone: pairing (`_pair`) pools the rounds of every run of a side, and
the noise model (`_noise`) moderates the variances across the suite and lets history's larger
run-to-run variance take over. `compare_runs` composes them with the decision rules (`_judge`),
which tests/test_compare_core.py tests through it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from primbench.compare import priors
from primbench.compare.core import _index, _noise, _pair, _Run, _Tested
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec

TB = 1.0e12


def res(*specs: dict[str, Any], source: str) -> Results:
    return results_from_dict(document(specs, version="4.4.0"), source)


def test_pairing_keeps_each_run_with_its_measured_rounds() -> None:
    base = [res(spec("type: char", TB, round_cv=0.01), source=f"b{i}.json") for i in range(2)]
    head = [res(spec("type: char", TB * 1.02, round_cv=0.01), source="h.json")]
    key = ("copy", "type: char")
    tested = _pair(key, _index(base)[key], _index(head)[key], None)
    assert isinstance(tested, _Tested)
    rounds = len(base[0].specializations[0].rounds)  # 3: fewer than WARMUP_FROM, so all measured
    assert [r.rounds for r in tested.base] == [rounds, rounds] and [r.rounds for r in tested.head] == [rounds]
    assert tested.fields["change"] == pytest.approx(0.02, rel=1e-6)
    assert tested.klass.name == "64 MiB"  # the files' --size, 128 MiB


def test_a_warm_up_round_is_left_out_from_four_rounds_on() -> None:
    record = spec("type: char", TB, round_cv=0.0)
    first = dict(record["rounds"][0], round=0, bytes_per_second=TB * 0.5, items_per_second=TB * 0.25)
    record["rounds"] = [first] + [dict(r, round=k + 1) for k, r in enumerate(record["rounds"])]
    run = _pair(("copy", "type: char"), _index([res(record, source="b.json")])[("copy", "type: char")],
                _index([res(spec("type: char", TB, round_cv=0.0), source="h.json")])[("copy", "type: char")], None)
    assert isinstance(run, _Tested)
    assert run.base[0].rounds == 3 and run.base[0].mean == pytest.approx(math.log(TB))  # the slow first left out
    assert run.fields["change"] == pytest.approx(0.0, abs=1e-12)


def make_tested(key: str, ss: float, n: int = 3, history: tuple[float, float] | None = None) -> _Tested:
    """A specialization of one run a side, n rounds each, each side's squared deviations `ss`."""
    return _Tested(("copy", key), {}, [_Run(0.0, ss, n)], [_Run(0.01, ss, n)], None, history,
                   priors.SIZE_CLASSES[-1])


def test_the_noise_model_keeps_a_lone_outlier_variance_its_own_and_moderates_the_rest() -> None:
    quiet = [make_tested(f"t{i}", 1e-6 * (1 + 0.2 * (i % 3))) for i in range(10)]
    suite = [*quiet, make_tested("loud", 1e-3)]
    noise = _noise(suite)
    raw_loud = 2 * (1e-3 / 2) / 3  # both sides' round variance over their rounds
    assert noise.own[-1] >= raw_loud  # robust: not shrunk toward the quiet ones ...
    assert noise.own[-1] > 50 * noise.own[0]  # ... and far the loudest
    assert all(d > 4 for d in noise.own_df[:-1])  # the prior lends the quiet ones degrees of freedom
    assert all("moderated" in s for s in noise.source)


def test_history_takes_the_place_of_the_process_prior() -> None:
    suite = [make_tested(f"t{i}", 1e-6) for i in range(5)] + [make_tested("known", 1e-6, history=(0.05, 7.0))]
    noise = _noise(suite)
    assert noise.own[-1] == pytest.approx(2 * (0.05**2 - priors.SIZE_CLASSES[-1].rounds.common), rel=0.01)
    assert noise.source[-1].startswith("history (7 df)")
    assert noise.own[0] < noise.own[-1]
    assert 7.0 <= noise.own_df[-1] < 20.0  # history's few df dominate
