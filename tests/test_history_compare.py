"""`history compare`: a branch against its base, with compare's statistics and history's variability."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from primbench.history.branch_compare import branch_comparison, compare_branch
from primbench.history.errors import HistoryError
from primbench.history.forkpoint import from_git
from primbench.history.selector import Selector as S
from primbench.history.variability import robust_cv
from tests import history_data as hd
from tests.history_data import ingest


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hd.standard_history(tmp_path_factory.mktemp("history"))


def test_branch_against_the_base_at_the_fork_point(db: Path) -> None:
    bc = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("main-24"))
    assert bc.base_commit == hd.sha("main-24") and bc.head_commit == hd.sha("feat-1")
    assert bc.base_selection == "fork point"
    assert bc.gpu_key == hd.H200_A["uuid"]
    verdicts = {(r.algorithm, r.name): str(r.verdict) for r in bc.comparison.rows}
    assert verdicts[("copy", "type: t1")] == "regression"  # 4 % slower than main
    assert verdicts[("copy", "type: t0")] in ("unchanged", "inconclusive")  # main dropped 5 % at main-20 too
    assert verdicts[("copy", "type: new")] == "added"
    assert bc.comparison.failed("regression")
    # the run-to-run CV came from main's history (0.2 % planted), not the prior
    row = bc.comparison.row("copy", "type: t1")
    assert row.run_to_run_source.startswith("history")
    cv, df = bc.run_to_run_cv[("copy", "type: t1")]
    assert 0.001 < cv < 0.004 and df >= 1  # a few runs: worth a few degrees of freedom, not known exactly


def test_the_metric_reaches_the_verdicts_with_its_direction(db: Path) -> None:
    by_time = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("main-24"), metric="time")
    row = by_time.comparison.row("copy", "type: t1")
    assert row.metric == "gpu_seconds_per_call"
    assert str(row.verdict) == "regression"  # 4 % slower: the time went up
    assert row.change is not None and row.change > 0  # in the metric's own direction
    by_bytes = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("main-24"), metric="bytes")
    assert by_bytes.comparison.row("copy", "type: t1").change < 0


def test_fork_point_before_the_shift_shows_the_shift(db: Path) -> None:
    bc = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("main-10"))
    assert str(bc.comparison.row("copy", "type: t0").verdict) == "regression"  # main-10 was before the drop


def test_nearest_measured_ancestor_of_the_fork_point(db: Path) -> None:
    ancestors = ["unmeasured-1", "unmeasured-2", hd.sha("main-22"), hd.sha("main-21")]
    bc = branch_comparison(db, S(branch="feat"), "main", fork_point="unmeasured-1", ancestors=ancestors)
    assert bc.base_commit == hd.sha("main-22")
    assert bc.base_selection == "nearest measured ancestor of the fork point"


def test_unknown_fork_point_falls_back_to_the_base_latest(db: Path) -> None:
    bc = branch_comparison(db, S(branch="feat"), "main")
    assert bc.base_commit == hd.sha("main-29")
    assert "fork point unknown" in bc.base_selection
    bc = branch_comparison(db, S(branch="feat"), "main", fork_point="deadbeef")
    assert bc.base_commit == hd.sha("main-29") and "no run at or before the fork point" in bc.base_selection


def test_base_against_itself_compares_the_newest_commit_with_the_one_before(db: Path) -> None:
    bc = branch_comparison(db, S(branch="main", gpu=hd.H200_A["uuid"], algorithm="copy"), "main")
    assert bc.head_commit == hd.sha("main-29") and bc.base_commit == hd.sha("main-28")


def test_physical_gpus_are_kept_apart(db: Path) -> None:
    bc = branch_comparison(db, S(branch="main", gpu=hd.H200_B["uuid"]), "main")
    assert bc.gpu_key == hd.H200_B["uuid"]
    assert bc.head_commit == hd.sha("mainB-7") and bc.base_commit == hd.sha("mainB-6")
    # GPU B is 3 % slower than A: comparing across GPUs would call that a regression
    assert not bc.comparison.failed("regression")


def test_several_algorithms_each_get_their_base(db: Path) -> None:
    bc = branch_comparison(db, S(branch="main", gpu=hd.H200_A["uuid"]), "main")
    assert {r.algorithm for r in bc.comparison.rows} == {"copy", "copy2"}
    assert len(bc.head_runs) == len(bc.base_runs) == 2  # copy at main-29 and main-28, copy2 at main-5 and main-4
    assert bc.base_commit is not None and set(bc.base_commit.split(", ")) == {hd.sha("main-28"), hd.sha("main-4")}


def test_frame_and_dict(db: Path) -> None:
    df = compare_branch(db, S(branch="feat"), "main", fork_point=hd.sha("main-24"))
    expected = {"algorithm", "name", "verdict", "base_value", "head_value", "change", "p_value", "reason"}
    assert expected <= set(df.columns)
    assert df.attrs["base_commit"] == hd.sha("main-24")
    d = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("main-24")).to_dict()
    assert d["history"]["fork_point"] == hd.sha("main-24") and d["summary"]["counts"]["regression"] == 1


def test_unknown_branches_are_clear_errors(db: Path) -> None:
    with pytest.raises(HistoryError, match=r"no runs of branch 'nope'.*branches stored: feat, main"):
        branch_comparison(db, S(branch="nope"), "main")
    with pytest.raises(HistoryError, match="no runs of base branch 'nope'"):
        branch_comparison(db, S(branch="feat"), "nope")


def test_robust_cv_is_unbiased_and_ignores_level_shifts_and_outliers() -> None:
    plain, disturbed = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        values = list(1e12 * (1 + 0.002 * rng.standard_normal(30)))
        plain.append(robust_cv(values))
        values = [v * (0.9 if i >= 15 else 1.0) for i, v in enumerate(values)]  # a 10 % regression
        values[7] *= 0.8  # and one bad run
        disturbed.append(robust_cv(values))
    assert np.mean(plain) == pytest.approx(0.002, rel=0.05)
    assert np.mean(disturbed) == pytest.approx(0.002, rel=0.15)  # a plain SD would be about 0.05
    assert robust_cv([1e12] * 5) is None  # too few runs
    assert robust_cv([1e12] * 10) is None  # no spread at all: leave it to compare's prior


def test_fork_point_from_git(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    for i in range(3):
        git("commit", "-q", "--allow-empty", "-m", f"m{i}")
    fork = git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", "feat")
    git("commit", "-q", "--allow-empty", "-m", "f1")
    git("checkout", "-q", "main")
    git("commit", "-q", "--allow-empty", "-m", "m3")
    fp = from_git("main", "feat", cwd=str(tmp_path))
    assert fp.commit == fork and fp.ancestors[0] == fork and len(fp.ancestors) == 3
    assert from_git("main", "nope", cwd=str(tmp_path)).commit is None
    assert from_git("--help", "feat", cwd=str(tmp_path)).commit is None


def test_results_rebuilt_from_the_store_match_the_files(tmp_path: Path) -> None:
    from primbench.history.storage.contract import open_store
    from primbench.results import load_results

    f = hd.write(tmp_path / "r.json", hd.document([1e12, 2e12], commit=hd.sha("c"), batches=2))
    report = ingest([f], tmp_path / "s.duckdb")
    with open_store(tmp_path / "s.duckdb").read() as r:
        rebuilt = r.results(report.stored[0].run_id or "")
    original = load_results(f)
    assert rebuilt.specializations == original.specializations
    assert rebuilt.context == original.context


def test_repeated_runs_of_one_commit_compare_as_a_and_a(tmp_path: Path) -> None:
    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(1, specs=2), runs_per_commit=3)
    # three runs of one commit (the same values, other dates): the newest against the one before it
    ingest(files, tmp_path / "s.duckdb")
    bc = branch_comparison(tmp_path / "s.duckdb", S(branch="main"), "main")
    assert bc.base_selection == "an earlier run of the head commit (A/A)"
    assert bc.head_commit == bc.base_commit == hd.sha("main-0")
    assert bc.head_runs != bc.base_runs
    assert not bc.comparison.failed("regression")


def test_history_variability_carries_degrees_of_freedom_from_its_run_count() -> None:
    import pandas as pd

    from primbench.history.variability import MAD_EFFICIENCY, run_to_run_cvs

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"algorithm": "copy", "name": "x", "config_key": "size=1MiB",
                          "value": 1e12 * np.exp(rng.normal(0, 0.01, 11))})
    cv, df = run_to_run_cvs(frame)[("copy", "x")]
    assert 0.004 < cv < 0.02
    assert df == pytest.approx(MAD_EFFICIENCY * 10)


def test_a_kernels_answer_to_the_clock_is_measured_from_successive_runs() -> None:
    """`clock_response`: the slope of ln time on ln clock from successive differences, with its
    variance: a level shift between runs (a real change) does not bend it; too few runs, a clock that
    never moved or moved only within one regime (less than `MIN_CLOCK_RANGE`: a slope read there would be
    extrapolated to pairs across regimes) give none."""
    from primbench.history.variability import MIN_CLOCK_RANGE, MIN_RUNS, clock_response

    rng = np.random.default_rng(5)
    clocks = np.where(np.arange(20) % 5 < 2, 1977.0, 1991.0) * np.exp(rng.normal(0, 2e-5, 20))
    times = np.exp(-0.8 * np.log(clocks) + rng.normal(0, 3e-4, 20))
    times[12:] *= 1.03  # a 3 % regression from run 12 on
    found = clock_response(times.tolist(), clocks.tolist())
    assert found is not None
    beta, var = found
    assert abs(beta + 0.8) < 4 * math.sqrt(var) and var < 0.01
    assert clock_response(times[: MIN_RUNS - 1].tolist(), clocks[: MIN_RUNS - 1].tolist()) is None
    assert clock_response(times.tolist(), [1980.0] * 20) is None  # the clock never moved
    still = np.full(20, 1980.0) * np.exp(rng.normal(0, 1e-6, 20))  # it moved, but too little to tell
    assert clock_response(times.tolist(), still.tolist()) is None
    # one regime, its clock jittering 0.01 %: a precise-looking slope over a range a pair across
    # regimes would extrapolate 70-fold is not measured
    within = np.full(20, 1978.6) * np.exp(rng.normal(0, 1e-4, 20))
    assert float(np.log(within).max() - np.log(within).min()) < MIN_CLOCK_RANGE
    assert clock_response((np.exp(-5.0 * np.log(within) + rng.normal(0, 1e-5, 20))).tolist(), within.tolist()) is None
    two = np.where(np.arange(20) % 2, 1978.6, 1978.6 * math.exp(MIN_CLOCK_RANGE))  # just wide enough
    assert clock_response(np.exp(-0.5 * np.log(two) + rng.normal(0, 3e-4, 20)).tolist(), two.tolist()) is not None


def test_slopes_are_shrunk_toward_the_suites() -> None:
    """`shrunk_clock_responses`: a precise slope keeps its value; an imprecise one moves toward the
    suite's mean; one that says nothing gets the suite's mean and spread; a suite of too few kernels
    leaves such a one to compare's prior term."""
    from primbench.compare.priors import CLOCK_RESPONSE_SD
    from primbench.history.variability import shrunk_clock_responses

    raw = {("a", f"k{i}"): (b, 1e-4) for i, b in enumerate([-1.0, -0.8, -0.1, 0.0, 0.1, -0.5, -0.6, -0.2])}
    raw[("a", "vague")] = (-3.0, 0.04)
    raw[("a", "lost")] = (2.0, 100.0)
    out = shrunk_clock_responses(raw)
    assert out[("a", "k0")][0] == pytest.approx(-1.0, abs=0.01)  # precise: its own
    m = float(np.mean([b for b, v in raw.values() if v < CLOCK_RESPONSE_SD**2]))
    assert -3.0 < out[("a", "vague")][0] < m  # pulled toward the mean, part of the way
    assert out[("a", "vague")][1] < 0.04
    lost_beta, lost_var = out[("a", "lost")]
    assert lost_beta == pytest.approx(m, abs=0.01) and lost_var < CLOCK_RESPONSE_SD**2
    assert all(v < CLOCK_RESPONSE_SD**2 for _, v in out.values())
    few = shrunk_clock_responses({("a", "x"): (-0.5, 1e-4), ("a", "lost"): (2.0, 100.0)})
    assert ("a", "lost") not in few and few[("a", "x")][0] == pytest.approx(-0.5, abs=0.01)


def test_history_compare_takes_out_what_the_clocks_apart_owe(tmp_path: Path) -> None:
    """A store whose main ran in two clock regimes 0.7 % apart, one kernel of eight bound by its SMs
    (its throughput follows the clock), the others by memory. The branch's run, unchanged, ran at
    the other regime than its base: history measures the SM-bound kernel's answer to the clock from
    main's runs and takes out the change the clocks owe (before it, the row read as a 0.7 %
    regression), and says so."""
    import datetime as dt

    rng = np.random.default_rng(8)
    names = [hd.spec_name(i) for i in range(8)]

    def run(i: int, clock: float, branch: str) -> Path:
        values = {n: 1e12 * (clock / 1977.0 if k == 0 else 1.0) * float(np.exp(rng.normal(0, 5e-4)))
                  for k, n in enumerate(names)}
        doc = hd.document(values, branch=branch, commit=hd.sha(f"{branch}-{i}"), clock_mhz=clock,
                          date=hd.START + dt.timedelta(hours=i))
        return hd.write(tmp_path / "in" / f"{branch}-{i:03d}.json", doc)

    files = [run(i, 1977.0 if (i // 3) % 2 == 0 else 1991.0, "main") for i in range(18)]  # ends at 1991
    files.append(run(20, 1977.0, "feat"))
    ingest(files, tmp_path / "s.duckdb")
    bc = branch_comparison(tmp_path / "s.duckdb", S(branch="feat"), "main", fork_point=hd.sha("main-17"))
    row = bc.comparison.row("copy", names[0])
    assert row.change is not None and row.change < -0.005  # 0.7 % lower throughput at the lower clock
    assert str(row.verdict) != "regression"
    assert any("answer to the SM clock" in n for n in bc.notes)
    said = [w for w in bc.comparison.warnings if "SM clock" in w]
    assert len(said) == 1 and "corrected by its answer to the clock measured in history" in said[0]
