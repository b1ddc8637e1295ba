"""The fast paths of compare's per-row code (issue 28) give what the plain code gives: a row made
from its attribute dict (`SpecComparison.from_state`), its reason written when first read, its
statistics set when one of them is first read. The whole
comparison's output: tests/benchmarks/compare_scale/same_verdicts.py."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from primbench.compare.model import (
    LATER_FIELDS,
    LATER_REASON,
    LATER_STATISTICS,
    ROW_DEFAULTS,
    ReasonKind,
    SpecComparison,
    Verdict,
)


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


class _Statistics:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def statistics(self, i: int) -> dict[str, object]:
        self.asked.append(i)
        return {**dict.fromkeys(LATER_FIELDS), "p_value": i / 10, "test": f"t-test {i}", "relative_change": -0.0}


def test_later_statistics_are_set_when_one_is_read_and_kept() -> None:
    fields = {"algorithm": "copy", "name": "size: 1", "verdict": Verdict.UNCHANGED, "reason": "within",
              "reason_kind": ReasonKind.EQUIVALENT, "base_value": 3.0, "not_comparable": ()}
    eager = {k: v for k, v in ROW_DEFAULTS.items() if k not in LATER_FIELDS}
    statistics = _Statistics()
    row = SpecComparison.from_state({**eager, **fields, LATER_STATISTICS: (statistics, 3)})
    plain = SpecComparison(**fields, p_value=0.3, test="t-test 3", relative_change=-0.0)  # type: ignore[arg-type]
    assert row.base_value == 3.0 and row.reason == "within" and row.verdict is Verdict.UNCHANGED
    assert statistics.asked == []  # the other fields are read without them
    assert row.test == "t-test 3"
    assert row.p_value == 0.3 and row.q_value is None and statistics.asked == [3]  # set once, then kept
    assert vars(row) == vars(plain) and LATER_STATISTICS not in vars(row)
    assert row == plain and hash(row) == hash(plain) and row.to_dict() == plain.to_dict()
    # read through a copy, a replace, equality and the JSON's dict before the row's own reading
    for read in (lambda r: copy.copy(r).p_value, lambda r: dataclasses.replace(r, name="n").p_value,
                 lambda r: 0.3 if r == plain else "unequal", lambda r: r.to_dict()["p_value"],
                 lambda r: dataclasses.asdict(r)["p_value"]):
        again = SpecComparison.from_state({**eager, **fields, LATER_STATISTICS: (_Statistics(), 3)})
        assert read(again) == 0.3
    # with the reason to come too, from one maker (as compare/core.py's `_write_rows` gives both)
    unwritten = {k: v for k, v in fields.items() if k != "reason"}
    both = SpecComparison.from_state({**eager, **unwritten, LATER_STATISTICS: (statistics, 3),
                                      LATER_REASON: (_Texts(), 3)})
    assert both.p_value == 0.3 and LATER_REASON in vars(both) and both.reason == "reason of row 3"


def test_the_later_fields_default_to_none_without_a_class_attribute() -> None:
    """The fields a row may leave to its statistics have no class attribute (a row's `__getattr__`
    reads them); made through `__init__` they default to None, and a state without them reads None."""
    assert all(not hasattr(SpecComparison, name) and ROW_DEFAULTS[name] is None for name in LATER_FIELDS)
    row = SpecComparison(algorithm="a", name="n", verdict=Verdict.ADDED, reason="only in head")
    assert all(getattr(row, name) is None for name in LATER_FIELDS) and set(LATER_FIELDS) <= set(vars(row))
    bare = SpecComparison.from_state({"algorithm": "a", "name": "n", "verdict": Verdict.ADDED, "reason": "r"})
    assert bare.p_value is None and bare.test is None
    with pytest.raises(AttributeError):
        bare.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_a_comparison_leaves_its_rows_statistics_to_come_and_they_are_the_eager_ones() -> None:
    """`compare_runs`' tested rows hold their statistics to come until one is read; read, they are the
    values the row's own dict would hold (every field set, nothing left to come)."""
    import numpy as np

    from primbench.compare.core import compare_runs
    from primbench.results import Results
    from tests.benchmarks.compare_speed import make_side

    base, head = (Results.from_dict(make_side(np.random.default_rng(k + 1), 200, 0, 0.02 * k)) for k in (0, 1))
    rows = compare_runs([base], [head]).rows
    tested = [r for r in rows if LATER_STATISTICS in vars(r)]
    assert len(tested) == len(rows) == 200
    for r in tested:
        values = {name: getattr(r, name) for name in sorted(LATER_FIELDS)}
        assert LATER_STATISTICS not in vars(r) and {k: vars(r)[k] for k in values} == values
        assert isinstance(r.p_value, float) and isinstance(r.test, str) and r.test.endswith(" df")


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


@pytest.mark.parametrize("algos", [["copy", "copy", "fill"], ["copy", "", "fill"], ["copy", 5, None],
                                   ["", ""], ["copy", "fill", "copy"]])
def test_the_index_names_each_specialization_s_algorithm_as_specialization_algorithm_does(algos: list[object]) -> None:
    """`_index`'s first file (its keys at once where no key repeats) and `comparability.by_algorithm` give
    the algorithm `Specialization.algorithm` and the file give."""
    from primbench.compare import comparability, core
    from primbench.results import Results
    from tests.compare_data import document, spec

    specs = [spec(f"size: {i}", 1e9, index=i) for i in range(len(algos))]
    for s, a in zip(specs, algos, strict=True):
        s["meta"]["algo"] = a
    results = Results.from_dict(document(specs, algorithm="scan"))
    want = [((s.meta.get("algo", "") if type(s.meta.get("algo", "")) is str else str(s.meta.get("algo", "")))
             or "scan", s.name) for s in results.specializations]
    assert list(core._index([results])) == want
    assert set(comparability.by_algorithm([results])) == {a for a, _ in want}
