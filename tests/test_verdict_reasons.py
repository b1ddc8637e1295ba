"""Verdict reasons as data: every row compare builds carries a `ReasonKind` beside its text, the
renderers read the kind (and the one table of verdicts, `VERDICTS`) instead of the text, and the
short clause they show is the one the text says."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import msgspec
import pytest

from primbench.compare.core import compare_runs
from primbench.compare.model import (
    STATISTICS_SEPARATOR,
    VERDICTS,
    ReasonKind,
    SpecComparison,
    Verdict,
    look,
)
from primbench.compare.render import PRIORITY, json_chunks, render_json, why
from primbench.results import load_results

DATA = Path(__file__).resolve().parent / "benchmarks" / "rounds" / "data"
PAIRS = [("128MiB", "aa-1", "planted-2"), ("128MiB", "aa-1", "aa-2"), ("1MiB", "aa-1", "planted-1"),
         ("64KiB", "aa-2", "planted-1"), ("64KiB", "aa-1", "aa-3")]


def _rows() -> list[tuple[SpecComparison, object]]:
    out = []
    for size, base, head in PAIRS:
        c = compare_runs([load_results(DATA / size / f"{base}.json")], [load_results(DATA / size / f"{head}.json")])
        out.extend((row, c) for row in c.rows)
    return out


def test_every_verdict_is_in_the_one_table_with_its_own_rank() -> None:
    assert set(VERDICTS) == set(Verdict)
    assert sorted(v.rank for v in VERDICTS.values()) == list(range(len(Verdict)))
    assert all(VERDICTS[v].word == v.value for v in Verdict)
    assert PRIORITY[0] is Verdict.REGRESSION and PRIORITY[-1] is Verdict.SKIPPED
    assert look("regression") is VERDICTS[Verdict.REGRESSION] and look("up") is None


def test_every_row_has_a_kind_and_the_clause_is_the_text_before_its_statistics() -> None:
    rows = _rows()
    kinds = {row.reason_kind for row, _ in rows}
    assert None not in kinds and len(kinds) >= 3
    for row, c in rows:
        assert row.reason_kind is not None
        if row.reason_kind.has_statistics:
            assert STATISTICS_SEPARATOR in row.reason
            assert row.reason == f"{row.clause}{STATISTICS_SEPARATOR}{row.reason.split(STATISTICS_SEPARATOR, 1)[1]}"
        else:
            assert row.clause == row.reason
        if row.verdict is Verdict.INCONCLUSIVE:  # what the table's "Why" showed when it cut the text itself
            assert why(row, c) == row.reason.split("; t-test", 1)[0][:160] or why(row, c).endswith("…")
        if row.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            assert row.reason_kind is ReasonKind.SIGNIFICANT
        if row.verdict is Verdict.UNCHANGED:
            assert row.reason_kind is ReasonKind.EQUIVALENT


def test_the_json_rows_carry_the_kind() -> None:
    c = compare_runs([load_results(DATA / "128MiB" / "aa-1.json")], [load_results(DATA / "128MiB" / "planted-2.json")])
    rows = json.loads(render_json(c))["specializations"]
    assert [r["reason_kind"] for r in rows] == [str(r.reason_kind) for r in c.rows]


def test_the_json_in_pieces_is_the_json_of_the_whole_document() -> None:
    """`json_chunks` streams the rows a few at a time: the same characters as one document."""
    c = compare_runs([load_results(DATA / "128MiB" / "aa-1.json")], [load_results(DATA / "128MiB" / "planted-2.json")])
    whole = msgspec.json.encode(c.to_dict()).decode() + "\n"
    for rows in (1, 3, 1000):
        assert "".join(json_chunks(c, rows)) == whole
    assert render_json(c) == whole
    # the standard library's text of the same document reads back as the same values
    assert json.loads(whole) == json.loads(json.dumps(c.to_dict(), allow_nan=False))
    empty = dataclasses.replace(c, rows=())
    assert json.loads(render_json(empty))["specializations"] == []


@pytest.mark.parametrize("failed", [False, True])
def test_a_one_sided_row_says_its_failure_from_the_kind(failed: bool) -> None:
    reason = "only in head" + (" (failed: out of memory)" if failed else "")
    row = SpecComparison("copy", "n", Verdict.ADDED, reason,
                         reason_kind=ReasonKind.FAILED if failed else ReasonKind.ONE_SIDED)
    assert row.failure == ("out of memory" if failed else None)
