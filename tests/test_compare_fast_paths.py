"""The fast paths of compare's per-row code (issue 28) give what the plain code gives: a row made
from its attribute dict (`SpecComparison.from_state`), percentages formatted column by column
(`_pcts`). The whole comparison's output: tests/benchmarks/compare_scale/same_verdicts.py."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from primbench.compare.core import _pct, _pcts
from primbench.compare.model import ROW_DEFAULTS, ReasonKind, SpecComparison, Verdict


def test_from_state_is_the_row_init_makes() -> None:
    fields = {"algorithm": "copy", "name": "size: 1", "verdict": Verdict.UNCHANGED, "reason": "within",
              "reason_kind": ReasonKind.EQUIVALENT, "p_value": 0.25, "base_value": 3.0, "not_comparable": ()}
    row = SpecComparison.from_state({**ROW_DEFAULTS, **fields})
    plain = SpecComparison(**fields)  # type: ignore[arg-type]
    assert row == plain
    assert vars(row) == vars(plain)
    assert row.to_dict() == plain.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.reason = "changed"  # type: ignore[misc]


def test_pcts_is_pct_of_each() -> None:
    rng = np.random.default_rng(7)
    xs = [*rng.normal(0, 0.05, 500).tolist(), *np.expm1(rng.normal(0, 3, 500)).tolist(), 0.0, -0.0, 5e-5, -5e-5,
          0.000049999999999999996, 1e300, math.inf, -math.inf, math.nan, -1.0]
    assert _pcts(xs) == [_pct(x) for x in xs]
