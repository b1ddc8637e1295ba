"""Throughputs at the ends of the float range through compare (issue 16, item 3).

The change between base and head must be computed in log space, and a non-finite change is
inconclusive, never a crash nor a row dropped from the geometric mean: it is
judged in log space with its range checked (`compare.core.MAX_LOG_CHANGE`)."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from tests import compare_data as cd


@pytest.mark.parametrize(("base", "head"), [(1e12, 5e-324), (5e-324, 1e12), (1e-300, 1e300), (1e300, 1e-300)])
def test_extreme_throughputs_give_a_verdict_and_a_finite_geometric_mean(tmp_path, base, head):
    b = cd.write(tmp_path / "b.json", cd.document([cd.spec("x", base), cd.spec("y", 1e12)]))
    h = cd.write(tmp_path / "h.json", cd.document([cd.spec("x", head), cd.spec("y", 1e12)]))
    result = CliRunner().invoke(app, ["compare", str(b), str(h), "-f", "json", "--fail-on", "never"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0
    doc = json.loads(result.output)
    rows = {r["name"]: r for r in doc["specializations"]}
    change = rows["x"]["change"]
    assert change is None or math.isfinite(change)
    if change is None:
        assert rows["x"]["verdict"] == "inconclusive"
    assert doc["summary"]["compared"] == 2 or rows["x"]["verdict"] == "inconclusive"
    assert math.isfinite(doc["summary"]["geomean_change"])
    markdown = CliRunner().invoke(app, ["compare", str(b), str(h), "-f", "markdown", "--fail-on", "never"]).output
    assert "inf %" not in markdown
