"""The fast paths of compare's per-row code (issue 28) give what the plain code gives: a row made
from its attribute dict (`SpecComparison.from_state`), its reason written when first read. The whole
comparison's output: tests/benchmarks/compare_scale/same_verdicts.py."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from primbench.compare.model import LATER_REASON, ROW_DEFAULTS, ReasonKind, SpecComparison, Verdict


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


class _Texts:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def reason(self, i: int) -> str:
        self.asked.append(i)
        return f"reason of row {i}"


def test_later_reason_is_written_when_read_and_kept() -> None:
    fields = {"algorithm": "copy", "name": "size: 1", "verdict": Verdict.UNCHANGED,
              "reason_kind": ReasonKind.EQUIVALENT, "p_value": 0.25, "not_comparable": ()}
    texts = _Texts()
    row = SpecComparison.from_state({**ROW_DEFAULTS, **fields, LATER_REASON: (texts, 3)})
    plain = SpecComparison(**fields, reason="reason of row 3")  # type: ignore[arg-type]
    assert texts.asked == []
    assert row.reason == "reason of row 3"
    assert row.reason == "reason of row 3" and texts.asked == [3]  # written once, then kept
    assert vars(row) == vars(plain)
    assert row == plain and hash(row) == hash(plain) and row.to_dict() == plain.to_dict()
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        row.nothing  # type: ignore[attr-defined]  # noqa: B018
    # read through a copy, a replace and equality before the row's own reading
    for read in (lambda r: copy.copy(r).reason, lambda r: dataclasses.replace(r, p_value=0.5).reason,
                 lambda r: "reason of row 3" if r == plain else "unequal"):
        again = SpecComparison.from_state({**ROW_DEFAULTS, **fields, LATER_REASON: (_Texts(), 3)})
        assert read(again) == "reason of row 3"


def test_a_reason_read_while_it_is_being_written_is_written_again() -> None:
    """Two threads reading one row's reason at once: the second, reading while the first writes it,
    writes the same text (here the maker itself reads the row's reason, as such a thread would)."""
    fields = {"algorithm": "copy", "name": "size: 1", "verdict": Verdict.UNCHANGED, "not_comparable": ()}
    rows: list[SpecComparison] = []

    class Interleaved:
        def __init__(self) -> None:
            self.depth = 0

        def reason(self, i: int) -> str:
            self.depth += 1
            if self.depth == 1:
                assert rows[0].reason == f"row {i}"  # the other reader, in the middle of this one's writing
            return f"row {i}"

    rows.append(SpecComparison.from_state({**ROW_DEFAULTS, **fields, LATER_REASON: (Interleaved(), 7)}))
    assert rows[0].reason == "row 7" and LATER_REASON not in vars(rows[0])


@pytest.mark.parametrize("value", [1.5, -0.0, 0.0, 5e-324, 1e308, float("nan"), float("inf"), float("-inf"), 3, None,
                                   True])
def test_to_dict_writes_each_number_as_num_does(value: object) -> None:
    """`to_dict` tests each float field inline (a finite float as it is) instead of calling `_num`:
    the same values, of the same types, for finite and non-finite floats, ints, bools, NumPy
    floats and None."""
    import math

    import msgspec
    import numpy as np

    from primbench.compare import model

    floats = ("base_value", "base_noise", "head_value", "head_noise", "change", "change_low", "change_high",
              "p_value", "q_value", "p_equivalence", "standard_error", "run_to_run_cv", "degrees_of_freedom",
              "min_detectable_change", "relative_change", "absolute_p_value", "absolute_q_value")
    for v in (value, np.float64(value) if isinstance(value, float) else value):
        row = SpecComparison.from_state({**ROW_DEFAULTS, "algorithm": "a", "name": "n", "verdict": Verdict.UNCHANGED,
                                         "reason": "r", **dict.fromkeys(floats, v)})
        out = row.to_dict()
        expected = model._num(v)  # type: ignore[arg-type]
        got = [out["base"]["value"], out["base"]["noise"], out["head"]["value"], out["head"]["noise"], out["change"],
               *(out["change_interval"] or [expected, expected]),
               *(out[k] for k in floats[7:])]
        assert len(got) == len(floats)
        for g in got:
            assert type(g) is type(expected) and (g == expected or (math.isnan(g) and math.isnan(expected)))
        assert msgspec.json.encode(got) == msgspec.json.encode([expected] * len(floats))
