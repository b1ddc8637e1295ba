"""The HTML report in a real browser (Playwright driving Debian's Chromium, `tests.report_browser`):
the headline answers, every chart is drawn and not empty, hover shows values, zoom works, the
page logs no console error and needs no network; a branch report draws main's level. Skips,
saying what to install, only where Playwright or Chromium is missing (.ci/run installs both)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import report_browser as rb

pytestmark = [pytest.mark.slow, pytest.mark.skipif(rb.unavailable() is not None,
                                                   reason=f"browser tests: {rb.unavailable()}")]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("duckdb")
    return rb.h200_store(tmp_path_factory.mktemp("browser"), branch_runs=3)


@pytest.fixture(scope="module")
def chromium() -> object:
    with rb.browser() as b:
        yield b


def test_main_report_answers_first_and_every_chart_is_drawn(store: Path, chromium: object, tmp_path: Path) -> None:
    page, errors = rb.open_page(chromium, rb.report(store, tmp_path / "main.html"))
    assert page.inner_text("#headline") == (
        "main: no regression found in the last 7 commits; against main: 2 of 2 specializations could not be "
        "judged (inconclusive), the largest change -2.2 % (type: char)")
    first = page.evaluate("() => document.body.innerText.trim().split('\\n').slice(0, 3).join(' | ')")
    assert "no regression" in first  # the answer before anything else
    drawn = page.eval_on_selector_all(".chart", "els => els.map(e => e.getAttribute('data-drawn'))")
    assert drawn == ["1", "1"]  # the two series of the 1 MiB copy, each drawn
    assert all(n > 2000 for n in page.evaluate(rb.INKED)), "a chart drew nothing but its frame"
    box = page.locator(".chart .u-over").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)  # hover: a commit's values
    values = page.locator(".chart").first.locator(".u-legend .u-value").all_inner_texts()
    assert values[0] and any("GB/s" not in v and v not in ("", "--") for v in values[1:2])
    page.mouse.move(box["x"] + 10, box["y"] + 20)  # drag to zoom into the first commits
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + 20)
    page.mouse.up()
    assert page.evaluate("() => document.querySelector('.chart').uplot.scales.x.max") < 6
    assert errors == []


def test_the_page_is_self_contained(store: Path, tmp_path: Path) -> None:
    text = rb.report(store, tmp_path / "main.html").read_text()
    assert "uPlot" in text and "<script src" not in text and "http://" not in text.split("<script>")[0]
    assert "<img" not in text  # charts are drawn by the inlined library, at the screen's resolution


def test_branch_report_draws_mains_level(store: Path, chromium: object, tmp_path: Path) -> None:
    page, errors = rb.open_page(chromium, rb.report(store, tmp_path / "branch.html", "feature/slower"))
    headline = page.inner_text("#headline")
    assert headline.startswith("feature/slower: ") and "-3.0 %" in headline  # 3 % slower: said, even unjudged
    labels = page.locator(".chart").first.locator(".u-legend .u-label").all_inner_texts()
    assert any(label.startswith("main: median of its last") for label in labels), labels
    assert all(n > 2000 for n in page.evaluate(rb.INKED))
    assert errors == []
