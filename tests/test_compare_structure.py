"""compare's variance model against a generator that is not its own (issue 30): the structure
the H200 data showed (tests/benchmarks/variance/README.md), drawn per process, per kernel and per
round, then written as results files with rounds.

* a round-order pattern every kernel of a process shares (one shape over the rounds, its sign
  drawn per process), the rounds' own scatter on top;
* a per-process component: each kernel's process mean moved by its own normal draw;
* placement states: each kernel of a process lands in one of two states `states` apart.

The model takes a kernel's rounds and a measured prior (64 MiB class here: tiny); what it cannot see
it must either absorb (the relative test, the empirical null) or say it could not."""

from __future__ import annotations

import math

import numpy as np

from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec

TB = 1e12
ROUNDS = 10
#: The round-order pattern's shape (fixed, as measured: the same in every process), unit SD.
_SHAPE = np.random.default_rng(12345).standard_normal(ROUNDS)
SHAPE = (_SHAPE - _SHAPE.mean()) / _SHAPE.std()


def process(rng: np.random.Generator, source: str, *, kernels: int = 10, order: float = 0.0,
            within: float = 0.001, process_sd: float = 0.0, states: float = 0.0,
            changes: dict[int, float] | None = None) -> list[Results]:
    """One process's results file: `kernels` specializations of `ROUNDS` rounds each."""
    sign = rng.choice([-1.0, 1.0])
    offsets = rng.normal(0.0, process_sd, kernels) + states * (rng.random(kernels) < 0.5)
    specs = []
    for k in range(kernels):
        change = math.log1p((changes or {}).get(k, 0.0))
        ln = sign * order * SHAPE + rng.normal(0.0, within, ROUNDS) + offsets[k] + change
        s = spec(f"k: {k:02d}", TB, round_cv=None)
        s["rounds"] = [{"round": r, "gpu_ms_per_call": 1.0 / f, "bytes_per_second": TB * f,
                        "items_per_second": TB / 2 * f, "noise_timeout": False, "noise_percent": 0.05}
                       for r, f in enumerate(np.exp(ln).tolist())]
        specs.append(s)
    return [results_from_dict(document(specs), source)]


def _pairs(n: int, changes: dict[int, float] | None = None, **model: float) -> list[tuple[bool, dict[int, Verdict],
                                                                                         list[str]]]:
    out = []
    for s in range(n):
        rng = np.random.default_rng(7000 + s)
        c = compare_runs(process(rng, "base.json", **model), process(rng, "head.json", changes=changes, **model))
        out.append((c.failed(), {int(r.name[3:]): r.verdict for r in c.rows}, c.warnings))
    return out


def test_a_round_order_pattern_shared_by_every_kernel_raises_no_false_alarm_and_hides_no_change() -> None:
    """1 % SD over the rounds, ten times the rounds' own scatter, the same shape in every process:
    it cancels between kernels and between processes of one sign; the rounds' spread it inflates
    makes the verdicts conservative, never wrong."""
    aa = _pairs(100, order=0.01)
    assert sum(failed for failed, _, _ in aa) <= 5 + 4  # alpha, with binomial slack
    planted = _pairs(60, changes={3: -0.03}, order=0.01)
    assert sum(v[3] is Verdict.REGRESSION for _, v, _ in planted) >= 54
    assert sum(v[k] is Verdict.REGRESSION for _, v, _ in planted for k in v if k != 3) <= 3


def test_a_per_process_component_the_size_of_the_rounds_scatter_is_absorbed() -> None:
    """0.1 % a kernel a process, against rounds that scatter 0.1 %: about twice the 64 MiB prior
    (five times the prior before fd6fb8c); the empirical null widens the standard errors for it."""
    aa = _pairs(150, process_sd=0.001)
    assert sum(failed for failed, _, _ in aa) <= 0.05 * 150 + 4


def test_a_per_process_component_beyond_the_model_is_said_where_it_fails() -> None:
    """0.4 % a kernel a process, about 5x the 64 MiB prior (0.086 %): the changes spread 2-6x wider
    than the model predicts, often beyond the empirical null's cap (3x), and A/A pairs fail. Every
    failing pair says how much wider the changes spread than the model predicts, and where that
    was beyond the cap, that the verdicts may be noise."""
    aa = _pairs(40, process_sd=0.004)
    failing = [w for failed, _, w in aa if failed]
    assert len(failing) >= 5  # the model's limit, not a target: the test pins what it says then
    assert all(any("spread" in line and "wider than the" in line for line in w) for w in failing)
    assert any(any("widened only" in line and "may be noise" in line for line in w) for w in failing)
    assert not any("widened only" in line for _, _, w in _pairs(20) for line in w)


def test_placement_states_smaller_than_the_rounds_scatter_raise_no_false_alarm() -> None:
    aa = _pairs(100, states=0.0005)
    assert sum(failed for failed, _, _ in aa) <= 5 + 4
