"""A series is one configuration: runs of one name measured with other settings (size, hot, cache
size, sync, custom settings) are other series, in queries, change points and `history compare`."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.history.branch_compare import branch_comparison
from primbench.history.changepoints import detect
from primbench.history.errors import HistoryError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from primbench.history.trends import SERIES_KEYS, per_commit
from tests import history_data as hd
from tests.history_data import ingest

SMALL = {"size": 1048576}  # --size 1MiB
CHAR = "type: char"
GPU = hd.H200_A["uuid"]


def _run(directory: Path, commit: str, hour: int, value: float, *, settings: Mapping[str, Any] | None = None,
         minute: int = 0, branch: str = "main", custom: Mapping[str, Any] | None = None) -> Path:
    doc = hd.document({CHAR: value}, branch=branch, commit=hd.sha(commit), settings=settings, custom_settings=custom,
                      date=hd.START + dt.timedelta(hours=hour, minutes=minute))
    return hd.write(directory / f"{branch.replace('/', '_')}-{commit}-{minute}.json", doc)


def _noise(n: int, seed: int) -> list[float]:
    return [row[0] for row in hd.noisy_levels(n, base=1.0, cv=0.002, seed=seed)]


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["history", *args])
    return result.exit_code, result.stdout, result.stderr


def test_two_sizes_of_one_name_on_one_gpu_and_branch_are_two_series(tmp_path: Path) -> None:
    big, small = _noise(6, 1), _noise(6, 2)
    files = []
    for i in range(6):
        files.append(_run(tmp_path / "in", f"c{i}", i, 1.1e12 * big[i]))
        files.append(_run(tmp_path / "in", f"c{i}", i, 3.7e11 * small[i], settings=SMALL, minute=30))
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    s = open_store(db).series(S(branch="main", name=CHAR))
    assert sorted(set(s["config_key"])) == ["size=128MiB", "size=1MiB"]
    assert sorted(set(s[SERIES_KEYS].itertuples(index=False, name=None))) == [
        ("copy", CHAR, GPU, "size=128MiB"), ("copy", CHAR, GPU, "size=1MiB")]
    points = per_commit(s)
    assert len(points) == 12  # 6 commits x 2 configs: no commit's median mixes the two sizes
    by_config = {k: g["value"].to_numpy() for k, g in points.groupby("config_key")}
    assert (by_config["size=1MiB"] < 4e11).all() and (by_config["size=128MiB"] > 1e12).all()
    assert list(points.groupby("config_key")["position"].max()) == [5, 5]
    b = open_store(db).branches()
    assert sorted(b["config_key"]) == ["size=128MiB", "size=1MiB"] and list(b["runs"]) == [6, 6]
    assert len(open_store(db).series(S(branch="main", name=CHAR, config="size=1MiB"))) == 6
    assert open_store(db).series(S(branch="main", name=CHAR, config="size=2MiB")).empty
    # the CLI: a config column, and --config selects
    code, out, _ = _cli("series", CHAR, "--db", str(db), "--config", "size=1MiB", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 6 and {r["config_key"] for r in rows} == {"size=1MiB"}
    code, out, _ = _cli("series", CHAR, "--db", str(db))
    assert code == 0 and "config" in out and "size=1MiB" in out and "size=128MiB" in out
    code, out, _ = _cli("branches", "--db", str(db))
    assert code == 0 and "size=1MiB" in out and "size=128MiB" in out
    code, out, err = _cli("series", CHAR, "--db", str(db), "--config", "size=2MiB")
    assert code == 2 and "no runs of config 'size=2MiB'; did you mean 'size=128MiB', 'size=1MiB'?" in err


def test_a_change_point_is_not_invented_by_a_second_size(tmp_path: Path) -> None:
    """CI measured 1 MiB from the start and added 128 MiB at commit 6: two flat series, no shift."""
    small, big = _noise(12, 3), _noise(12, 4)
    files = []
    for i in range(12):
        files.append(_run(tmp_path / "in", f"c{i}", i, 3.7e11 * small[i], settings=SMALL))
        if i >= 6:
            files.append(_run(tmp_path / "in", f"c{i}", i, 1.1e12 * big[i], minute=30))
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    assert open_store(db).regressions(S(branch="main")).empty
    # what the old key (without the config) made of it: a +100 % "improvement" at commit 6
    mixed = per_commit(open_store(db).series(S(branch="main", name=CHAR)).drop(columns=["config_key"]))
    assert [cp.index for cp in detect(mixed["value"].to_numpy())] == [6]


def test_alternating_sizes_keep_a_real_shift_at_its_commit(tmp_path: Path) -> None:
    """Even commits at 1 MiB (10 % faster from commit 8 on), odd commits at 128 MiB (flat)."""
    noise = _noise(16, 5)
    files = []
    for i in range(16):
        if i % 2 == 0:
            files.append(_run(tmp_path / "in", f"c{i}", i, 3.7e11 * noise[i] * (1.10 if i >= 8 else 1.0),
                              settings=SMALL))
        else:
            files.append(_run(tmp_path / "in", f"c{i}", i, 1.1e12 * noise[i]))
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    r = open_store(db).regressions(S(branch="main"))
    assert len(r) == 1
    row = r.iloc[0]
    assert row["config_key"] == "size=1MiB" and row["commit"] == hd.sha("c8") and row["previous_commit"] == hd.sha("c6")
    assert row["kind"] == "improvement" and row["shift"] == pytest.approx(0.10, abs=0.01)
    assert open_store(db).regressions(S(branch="main", config="size=128MiB")).empty
    code, out, _ = _cli("regressions", "--db", str(db), "--format", "json")
    assert code == 0 and [x["config_key"] for x in json.loads(out)] == ["size=1MiB"]


@pytest.fixture(scope="module")
def two_configs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: m0..m8 measured at 128 MiB (1.1 TB/s) and at 1 MiB (370 GB/s); m9 at 1 MiB only.
    feat (forked at m9) at 128 MiB, as fast as main; hot (forked at m9) at 128 MiB, cache-warm."""
    directory = tmp_path_factory.mktemp("configs")
    big, small = _noise(10, 6), _noise(10, 7)
    files = []
    for i in range(10):
        if i < 9:
            files.append(_run(directory, f"m{i}", i, 1.1e12 * big[i]))
        files.append(_run(directory, f"m{i}", i, 3.7e11 * small[i], settings=SMALL, minute=30))
    files.append(_run(directory, "f0", 12, 1.1e12 * 1.0003, branch="feat"))
    files.append(_run(directory, "h0", 13, 1.3e12, branch="hot", settings={"hot": True}))
    db = directory / "h.duckdb"
    assert not ingest(files, db).errors
    return db


ANCESTORS = [hd.sha(f"m{i}") for i in range(9, -1, -1)]


def test_history_compare_takes_a_base_run_of_the_heads_config(two_configs: Path) -> None:
    bc = branch_comparison(two_configs, S(branch="feat"), "main", fork_point=hd.sha("m9"), ancestors=ANCESTORS)
    # the fork point m9 was measured at 1 MiB only: its nearest ancestor with a 128 MiB run is m8
    assert bc.base_commit == hd.sha("m8") and bc.base_selection == "nearest measured ancestor of the fork point"
    assert bc.config_key == bc.base_config_key == "size=128MiB"
    assert any("another config (size=1MiB)" in n for n in bc.notes)
    assert str(bc.comparison.row("copy", CHAR).verdict) in ("unchanged", "inconclusive")  # not a +197 % change
    assert bc.comparison.warnings == []
    # run-to-run variability from main's 128 MiB runs only (mixed with 1 MiB it would be ~100 %)
    assert bc.run_to_run_cv[("copy", CHAR)][0] < 0.01
    # without the ancestry: main's latest run of the head's config
    bc = branch_comparison(two_configs, S(branch="feat"), "main", fork_point=hd.sha("m9"))
    assert bc.base_commit == hd.sha("m8") and "no run at or before the fork point" in bc.base_selection


def test_base_against_itself_compares_runs_of_one_config(two_configs: Path) -> None:
    bc = branch_comparison(two_configs, S(branch="main"), "main")
    assert (bc.head_commit, bc.base_commit, bc.config_key) == (hd.sha("m9"), hd.sha("m8"), "size=1MiB")
    bc = branch_comparison(two_configs, S(branch="main", config="size=128MiB"), "main")
    assert (bc.head_commit, bc.base_commit, bc.base_config_key) == (hd.sha("m8"), hd.sha("m7"), "size=128MiB")
    assert bc.comparison.warnings == []


def test_no_base_run_of_the_heads_config_means_no_comparable_base(two_configs: Path) -> None:
    """A base of another config measures something else: never compared, said plainly (exit 2)."""
    with pytest.raises(HistoryError, match=r"no comparable base on 'main' for 'hot'.*no main run has the head's "
                       r"config \(size=128MiB hot\).*has config size=1MiB"):
        branch_comparison(two_configs, S(branch="hot"), "main", fork_point=hd.sha("m9"), ancestors=ANCESTORS)
    code, out, err = _cli("compare", "hot", "--db", str(two_configs), "--no-git", "--fork-point", hd.sha("m9"))
    assert code == 2 and "no comparable base" in out + err and "improvement" not in out


def test_history_compare_cli_names_the_config(two_configs: Path) -> None:
    code, out, _ = _cli("compare", "feat", "--db", str(two_configs), "--no-git", "--fork-point", hd.sha("m9"))
    assert code == 0 and "config size=128MiB;" in out
    code, out, _ = _cli("compare", "main", "--db", str(two_configs), "--no-git", "--config", "size=128MiB",
                        "--format", "json")
    history = json.loads(out)["history"]
    assert history["config_key"] == history["base_config_key"] == "size=128MiB"


def test_charts_draw_one_line_per_config(two_configs: Path, tmp_path: Path) -> None:
    from primbench.history.plots import plot_series, trend_figure
    from primbench.history.report import write_report

    fig = trend_figure(open_store(two_configs).series(S(branch="main", name=CHAR)))
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert sorted(labels) == ["main on NVIDIA H200, size=128MiB: median per commit",
                              "main on NVIDIA H200, size=1MiB: median per commit"]
    written = plot_series(two_configs, S(branch="main", name=CHAR, config="size=1MiB"), tmp_path / "char.png")
    assert written == [tmp_path / "char.png"] and written[0].stat().st_size > 0
    report = write_report(two_configs, S(branch="feat"), tmp_path / "r.html", base="main")
    assert report.charts == 1 and "size=128MiB" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_the_chart_axis_keeps_each_series_in_its_own_order() -> None:
    """c2 and c5 were measured at 128 MiB before the 1 MiB series c0..c6 was run: ordering every
    commit by its first run would put c2 and c5 first and send the 1 MiB line backwards."""
    import pandas as pd

    from primbench.history.plots import commit_axis

    t = pd.Timestamp("2026-11-30T04:00Z")
    small = [(f"c{i}", t + pd.Timedelta(minutes=40 + i)) for i in range(7)]
    big = [("c2", t), ("c5", t + pd.Timedelta(minutes=10)), ("x", t + pd.Timedelta(minutes=20))]
    rows = [{"commit": c, "date": d, "gpu_key": "A", "config_key": "size=1MiB"} for c, d in small]
    rows += [{"commit": c, "date": d, "gpu_key": "B", "config_key": "size=128MiB"} for c, d in big]
    assert commit_axis(pd.DataFrame(rows)) == ["c0", "c1", "c2", "c3", "c4", "c5", "x", "c6"]


def test_regressions_report_a_drift_and_the_cap(tmp_path: Path) -> None:
    """30 commits: -0.2 % per commit (a slow regression) is one drift row, not a staircase;
    with --max-points 1 a series of three steps reaches the cap and the table says so."""
    noise = _noise(30, 7)
    files = [_run(tmp_path / "in", f"c{i}", i, 3.7e11 * 0.998**i * noise[i], settings=SMALL) for i in range(30)]
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    r = open_store(db).regressions(S(branch="main"))
    assert list(r["shape"]) == ["drift"] and list(r["kind"]) == ["regression"] and not r["capped"].any()
    row = r.iloc[0]
    assert row["slope"] == pytest.approx(-0.002, abs=0.0006) and row["shift"] == pytest.approx(0.998**29 - 1, abs=0.01)
    assert row["position"] < row["end_position"] and row["end_commit"] == hd.sha(f"c{row['end_position']}")
    code, out, _ = _cli("regressions", "--db", str(db), "--format", "json")
    assert code == 0 and [(x["shape"], x["capped"]) for x in json.loads(out)] == [("drift", False)]
    code, out, _ = _cli("regressions", "--db", str(db), "--format", "csv")
    assert code == 0 and "shape" in out.splitlines()[0] and ",drift," in out
    from primbench.history.report import write_report

    text = write_report(db, S(branch="main"), tmp_path / "r.html").path.read_text()
    assert "<td>drift</td>" in text and "stopped at the cap" not in text
    steps = [0.95 if 10 <= i < 20 else 1.03 if i >= 30 else 1.0 for i in range(40)]  # -5 %, +5 %, +3 %
    noise = _noise(40, 8)
    files = [_run(tmp_path / "steps", f"s{i}", i, 3.7e11 * steps[i] * noise[i], settings=SMALL) for i in range(40)]
    db = tmp_path / "steps.duckdb"
    assert not ingest(files, db).errors
    code, out, _ = _cli("regressions", "--db", str(db), "--format", "json")
    assert code == 0 and [(x["position"], x["capped"]) for x in json.loads(out)] == [(10, False), (20, False),
                                                                                      (30, False)]
    code, out, _ = _cli("regressions", "--db", str(db), "--max-points", "1", "--format", "json")
    capped = json.loads(out)
    assert code == 0 and len(capped) == 1 and all(x["capped"] for x in capped)
    code, out, _ = _cli("regressions", "--db", str(db), "--max-points", "1")
    assert code == 0 and "stopped at the cap of 1 change points" in out
    text = write_report(db, S(branch="main"), tmp_path / "r1.html", max_points=1).path.read_text()
    assert "stopped at the cap of 1 change points" in text


def test_a_burst_of_bad_runs_is_listed_as_such_and_fails_nothing(tmp_path: Path) -> None:
    """Two runs 10 % slow in 30 commits: one row of kind outlier and shape burst, not a
    regression and its fix; --fail-on change does not fail on it; the report shows it."""
    noise = _noise(30, 9)
    values = [3.7e11 * noise[i] * (0.9 if i in (12, 13) else 1.0) for i in range(30)]
    files = [_run(tmp_path / "in", f"b{i}", i, values[i], settings=SMALL) for i in range(30)]
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    r = open_store(db).regressions(S(branch="main"))
    assert list(zip(r["kind"], r["shape"], r["position"], r["end_position"], strict=True)) == [
        ("outlier", "burst", 12, 13)]
    assert r.iloc[0]["shift"] == pytest.approx(-0.1, abs=0.01) and r.iloc[0]["commit"] == hd.sha("b12")
    code, out, _ = _cli("regressions", "--db", str(db), "--fail-on", "change")
    assert code == 0 and "0 change point(s) on main, 1 outlier burst(s)" in out
    from primbench.history.report import write_report

    text = write_report(db, S(branch="main"), tmp_path / "r.html").path.read_text()
    assert "<td>burst</td>" in text and "a burst of bad runs, no change of level" in text
def test_the_report_says_when_no_comparable_base_exists(two_configs: Path, tmp_path: Path) -> None:
    """Issue 22: the report never shows verdicts against a base of another config; it says none exists."""
    from primbench.history.report import write_report

    report = write_report(two_configs, S(branch="hot"), tmp_path / "hot.html", base="main")
    text = report.path.read_text()
    assert "no verdicts against main: no comparable base" in text
    assert "no comparable base on &#x27;main&#x27; for &#x27;hot&#x27;" in text
    assert report.verdicts == {}
