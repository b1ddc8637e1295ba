"""Comparability is decided before anything is judged (`compare.comparability`): sides that
measure different things exit 2 with one line per difference, or, with --allow-mismatch, every
affected row is marked and left without a verdict; environment differences are warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.compare.comparability import NotComparableError
from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec, write

TB = 1e12


def side(*, specs: list[dict[str, Any]] | None = None, **kw: Any) -> list[Results]:
    return [results_from_dict(document(specs or [spec("a", TB), spec("b", TB)], **kw))]


@pytest.mark.parametrize(("base_kw", "head_kw", "line"), [
    ({}, {"settings": {"size": 1024 * 1024}}, "setting size differs: base 128MiB, head 1MiB"),
    ({}, {"settings": {"hot": True}}, "setting hot differs: base false, head true"),
    ({}, {"settings": {"cache_size": 62914560}}, "setting cache_size differs"),
    ({"custom_settings": {"dims": 3}}, {"custom_settings": {"dims": 2}}, "custom setting dims differs: base 3, head 2"),
    ({}, {"gpu": {"name": "NVIDIA H100"}}, 'GPU model differs: base "NVIDIA H200", head "NVIDIA H100"'),
])
def test_what_is_measured_differs_not_comparable(base_kw: dict[str, Any], head_kw: dict[str, Any],
                                                 line: str) -> None:
    with pytest.raises(NotComparableError) as err:
        compare_runs(side(**base_kw), side(**head_kw))
    assert line in str(err.value)
    assert err.value.exit_code == 2
    assert line in err.value.comparability.lines()[0]


def test_several_differences_one_line_each() -> None:
    with pytest.raises(NotComparableError) as err:
        compare_runs(side(), side(settings={"size": 1024, "hot": True}, gpu={"name": "NVIDIA H100"}))
    assert len(err.value.comparability.lines()) == 3
    assert len([ln for ln in str(err.value).splitlines() if " differs" in ln]) == 3


def test_allow_mismatch_marks_every_row_and_judges_none() -> None:
    # a -80 % shift would otherwise be a regression of every row
    c = compare_runs(side(), side(specs=[spec("a", TB * 0.2), spec("b", TB * 0.2)], settings={"size": 1024}),
                     allow_mismatch=True)
    assert all(not r.comparable and r.verdict is Verdict.INCONCLUSIVE for r in c.rows)
    assert all(r.not_comparable == ("setting size differs: base 128MiB, head 1KiB",) for r in c.rows)
    assert all(r.change is not None and r.change < -0.7 for r in c.rows)  # the values are still shown
    assert c.summary.regressions == 0 and c.summary.not_comparable == 2
    assert not c.failed()
    assert any(w.startswith("not comparable") for w in c.warnings)
    assert c.to_dict()["comparability"]["comparable"] is False


def test_timer_differs_per_specialization() -> None:
    host = {**spec("a", TB), "timer": "host"}
    with pytest.raises(NotComparableError) as err:
        compare_runs(side(), side(specs=[host, spec("b", TB)]))
    assert "timer differs ('a'): base GPU events, head host timer" in str(err.value)
    c = compare_runs(side(), side(specs=[host, spec("b", TB)]), allow_mismatch=True)
    assert not c.row("copy", "a").comparable and c.row("copy", "b").comparable
    assert c.row("copy", "b").verdict is Verdict.UNCHANGED


def test_declared_metric_differs_unless_a_metric_is_chosen() -> None:
    no_bytes = {**spec("a", TB), "bytes_per_second": 0.0, "bytes_per_item": 0}
    with pytest.raises(NotComparableError, match="declared metric differs"):
        compare_runs(side(specs=[spec("a", TB)]), side(specs=[no_bytes]))
    c = compare_runs(side(specs=[spec("a", TB)]), side(specs=[no_bytes]), metric="items")
    assert c.comparable


def test_same_model_other_gpu_is_a_warning_strict_refuses() -> None:
    other = {"name": "NVIDIA H200", "uuid": "GPU-other"}
    c = compare_runs(side(), side(gpu=other))
    assert c.comparable and c.summary.counts[Verdict.UNCHANGED] == 2
    assert any("physical GPU (same model) differs" in w for w in c.warnings)
    with pytest.raises(NotComparableError, match="physical GPU"):
        compare_runs(side(), side(gpu=other), strict_environment=True)


def test_other_driver_is_a_warning() -> None:
    b = document([spec("a", TB)])
    h = document([spec("a", TB)])
    h["context"]["general"]["backend"]["driver_version"] = "590.1"
    c = compare_runs([results_from_dict(b)], [results_from_dict(h)])
    assert c.comparable
    assert any("driver version differs: base 580.159.04, head 590.1" in w for w in c.warnings)


def test_cli_exits_2_with_one_line_per_difference(tmp_path: Path) -> None:
    base = write(tmp_path / "base.json", document([spec("a", TB)]))
    head = write(tmp_path / "head.json", document([spec("a", TB * 0.2)], settings={"size": 1024 * 1024}))
    r = CliRunner().invoke(app, ["compare", str(base), str(head)])
    assert r.exit_code == 2, r.output
    assert "setting size differs: base 128MiB, head 1MiB" in r.output
    assert "regression" not in r.output
    r = CliRunner().invoke(app, ["compare", "--allow-mismatch", "--format", "json", str(base), str(head)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["specializations"][0]["not_comparable"] == ["setting size differs: base 128MiB, head 1MiB"]
    assert out["summary"]["counts"]["regression"] == 0


def test_cli_strict_environment(tmp_path: Path) -> None:
    base = write(tmp_path / "base.json", document([spec("a", TB)]))
    head = write(tmp_path / "head.json", document([spec("a", TB)], gpu={"name": "NVIDIA H200", "uuid": "GPU-x"}))
    assert CliRunner().invoke(app, ["compare", str(base), str(head)]).exit_code == 0
    r = CliRunner().invoke(app, ["compare", "--strict-environment", str(base), str(head)])
    assert r.exit_code == 2 and "physical GPU (same model) differs" in r.output
