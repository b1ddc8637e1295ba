"""`history compare`'s named strategies, one by one, on a real DuckDB store: the head
(`LatestOnBranch`) and the base (`AtForkPoint`, `LatestOnBase`, `EarlierRunOfHeadCommit`,
`LatestOnOtherGpu`), tried in order, with the head's config first."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from primbench.history.branch_compare import (
    BASE_STRATEGIES,
    AtForkPoint,
    BaseQuery,
    EarlierRunOfHeadCommit,
    LatestOnBase,
    LatestOnBranch,
    LatestOnOtherGpu,
    RunRow,
    branch_comparison,
    choose_base,
    choose_base_with_config,
)
from primbench.history.errors import HistoryError
from primbench.history.forkpoint import ForkPoint, given
from primbench.history.reader import Reader
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from tests import history_data as hd
from tests.history_data import ingest

SMALL = {"size": 1048576}
UNKNOWN = ForkPoint(None)


def _doc(directory: Path, tag: str, hour: float, *, branch: str = "main", algorithm: str = "copy",
         gpu: dict[str, Any] = hd.H200_A, commit: str | None = None, settings: dict[str, Any] | None = None) -> Path:
    doc = hd.document([1e12, 2e12], branch=branch, algorithm=algorithm, gpu=gpu, commit=hd.sha(commit or tag),
                      date=hd.START + dt.timedelta(hours=hour), settings=settings)
    return hd.write(directory / f"{tag}.json", doc)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main (GPU A, copy): m0..m4 at 128 MiB, then m5 at 1 MiB; main (GPU B, solo): s0;
    feat (GPU A): f0 (copy), f1 (copy and solo); feat (GPU B, copy): fb, older;
    one: a single commit measured three times."""
    d = tmp_path_factory.mktemp("strategies")
    files = [_doc(d, f"m{i}", i) for i in range(5)]
    files.append(_doc(d, "m5", 5, settings=SMALL))
    files.append(_doc(d, "s0", 1, algorithm="solo", gpu=hd.H200_B))
    files.append(_doc(d, "fb", 5.5, branch="feat", gpu=hd.H200_B))
    files += [_doc(d, "f0", 6, branch="feat"), _doc(d, "f1", 7, branch="feat"),
              _doc(d, "f1-solo", 7, branch="feat", algorithm="solo", commit="f1")]
    files += [_doc(d, f"one-{k}", 10 + k, branch="one", commit="one") for k in range(3)]
    db = d / "h.duckdb"
    assert not ingest(files, db).errors
    return db


@pytest.fixture
def reader(store: Path) -> Iterator[Reader]:
    with open_store(store).read() as r:
        yield r


def _head(reader: Reader, branch: str, algorithm: str = "copy", **filters: Any) -> RunRow:
    return next(h for h in LatestOnBranch().choose(reader, S(branch=branch, **filters)) if h.algorithm == algorithm)


def _query(reader: Reader, branch: str, fork: ForkPoint = UNKNOWN, *, base: str = "main", algorithm: str = "copy",
           config: str | None = "size=128MiB") -> BaseQuery:
    return BaseQuery(base, branch, _head(reader, branch, algorithm), fork, config)


def test_latest_on_branch_per_algorithm_on_the_newest_runs_gpu(reader: Reader) -> None:
    heads = LatestOnBranch().choose(reader, S(branch="feat"))
    assert [(h.algorithm, h.commit, h.gpu_key) for h in heads] == [
        ("copy", hd.sha("f1"), hd.H200_A["uuid"]), ("solo", hd.sha("f1"), hd.H200_A["uuid"])]
    on_b = LatestOnBranch().choose(reader, S(branch="feat", gpu="5d6e1a0c-b"))  # a short id
    assert [(h.algorithm, h.commit) for h in on_b] == [("copy", hd.sha("fb"))]
    assert [h.algorithm for h in LatestOnBranch().choose(reader, S(branch="feat", algorithm="solo"))] == ["solo"]
    assert LatestOnBranch().choose(reader, S(branch="nope")) == []
    with pytest.raises(HistoryError, match="no runs of branch 'one' on GPU"):
        LatestOnBranch().choose(reader, S(branch="one", gpu=hd.H200_B["uuid"]))


def test_at_fork_point_takes_the_fork_or_its_nearest_measured_ancestor(reader: Reader) -> None:
    fork = given(hd.sha("m2"))
    found = AtForkPoint().choose(reader, _query(reader, "feat", fork))
    assert found is not None and found.run.commit == hd.sha("m2") and found.how == "fork point"
    ancestry = given("unmeasured", ["unmeasured", hd.sha("m1"), hd.sha("m0")])
    found = AtForkPoint().choose(reader, _query(reader, "feat", ancestry))
    assert found is not None and found.run.commit == hd.sha("m1")
    assert found.how == "nearest measured ancestor of the fork point"
    assert AtForkPoint().choose(reader, _query(reader, "feat")) is None  # fork point unknown
    assert AtForkPoint().choose(reader, _query(reader, "feat", given("deadbeef"))) is None


def test_latest_on_base_says_why_it_was_taken(reader: Reader) -> None:
    found = LatestOnBase().choose(reader, _query(reader, "feat"))
    assert found is not None and found.run.commit == hd.sha("m4")  # the latest of the head's config
    assert found.how == "base's latest run (fork point unknown)"
    found = LatestOnBase().choose(reader, _query(reader, "feat", given("deadbeef")))
    assert found is not None and found.how == "base's latest run (no run at or before the fork point)"
    itself = BaseQuery("main", "main", _head(reader, "main", config="size=128MiB"), UNKNOWN, "size=128MiB")
    found = LatestOnBase().choose(reader, itself)
    assert found is not None and found.run.commit == hd.sha("m3")  # not the head's own commit
    assert found.how == "base's latest run before the head commit"


def test_an_earlier_run_of_the_head_commit_only_for_a_branch_against_itself(reader: Reader) -> None:
    q = _query(reader, "one", base="one")
    assert q.head.date == hd.START + dt.timedelta(hours=12)
    assert LatestOnBase().choose(reader, q) is None  # one commit only, and it is the head's
    found = EarlierRunOfHeadCommit().choose(reader, q)
    assert found is not None and found.run.date == hd.START + dt.timedelta(hours=11)
    assert found.how == "an earlier run of the head commit (A/A)"
    assert EarlierRunOfHeadCommit().choose(reader, _query(reader, "feat")) is None


def test_latest_on_other_gpu_with_a_note(reader: Reader) -> None:
    q = _query(reader, "feat", given(hd.sha("m2")), algorithm="solo")
    assert [s.choose(reader, q) for s in BASE_STRATEGIES[:3]] == [None, None, None]
    found = LatestOnOtherGpu().choose(reader, q)
    assert found is not None and found.run.gpu_key == hd.H200_B["uuid"]
    assert found.note == f"solo: no main run on this GPU ({hd.H200_A['uuid']}); using one on {hd.H200_B['uuid']}"
    assert choose_base(reader, q) == found


def test_strategies_are_tried_in_order_and_can_be_replaced(reader: Reader) -> None:
    q = _query(reader, "feat", given(hd.sha("m2")))
    assert [type(s) for s in BASE_STRATEGIES] == [AtForkPoint, LatestOnBase, EarlierRunOfHeadCommit,
                                                  LatestOnOtherGpu]
    first = choose_base(reader, q)
    assert first is not None and first.how == "fork point"
    latest = choose_base(reader, q, [LatestOnBase()])
    assert latest is not None and latest.run.commit == hd.sha("m4")
    assert choose_base(reader, q, []) is None


def test_the_heads_config_first_another_never(reader: Reader) -> None:
    notes: list[str] = []
    found = choose_base_with_config(reader, _query(reader, "feat"), notes)
    assert found is not None and found.run.commit == hd.sha("m4") and found.run.config_key == "size=128MiB"
    assert notes == [f"copy: main@{hd.sha('m5')[:12]} was measured with another config (size=1MiB); using "
                     f"main@{hd.sha('m4')[:12]}, config size=128MiB"]
    notes = []
    found = choose_base_with_config(reader, _query(reader, "feat", config="size=2MiB"), notes)
    assert found is None  # another config measures something else: no comparable base
    assert notes[0].startswith("copy: no comparable base: no main run has the head's config (size=2MiB)")


def test_branch_comparison_uses_the_strategies_it_is_given(store: Path) -> None:
    bc = branch_comparison(store, S(branch="feat", algorithm="copy"), "main", fork_point=hd.sha("m2"))
    assert bc.base_selection == "fork point" and bc.base_commit == hd.sha("m2")
    bc = branch_comparison(store, S(branch="feat", algorithm="copy"), "main", fork_point=hd.sha("m2"),
                           strategies=(LatestOnBase(),))
    assert bc.base_selection == "base's latest run (no run at or before the fork point)"
    assert bc.base_commit == hd.sha("m4") and bc.fork_point == hd.sha("m2")


def test_another_gpu_of_the_heads_model_first_another_model_is_not_comparable(tmp_path: Path) -> None:
    """Issue 22: with no base run on the head's GPU, a run on another H200 is taken before a newer
    one on an H100; with only the H100 there is no comparable base, said as such (exit 2)."""
    h100 = {**hd.H200_A, "name": "NVIDIA H100", "uuid": "GPU-h100"}
    files = [_doc(tmp_path, "b-h200", 1, algorithm="solo", gpu=hd.H200_B),
             _doc(tmp_path, "b-h100", 2, algorithm="solo", gpu=h100),
             _doc(tmp_path, "head", 3, branch="feat", algorithm="solo")]
    db = tmp_path / "h.duckdb"
    assert not ingest(files, db).errors
    bc = branch_comparison(db, S(branch="feat"), "main", fork_point=hd.sha("b-h100"))
    assert bc.base_runs and bc.base_commit == hd.sha("b-h200")
    assert bc.comparison.comparable and any("physical GPU (same model)" in w for w in bc.comparison.warnings)
    only = tmp_path / "only"
    only.mkdir()
    files = [_doc(only, "b-h100", 2, algorithm="solo", gpu=h100), _doc(only, "head", 3, branch="feat",
                                                                         algorithm="solo")]
    assert not ingest(files, only / "h.duckdb").errors
    with pytest.raises(HistoryError, match=r"no comparable base on 'main' for 'feat'.*GPU model differs"):
        branch_comparison(only / "h.duckdb", S(branch="feat"), "main")
