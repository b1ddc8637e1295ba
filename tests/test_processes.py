"""``--processes K`` (issue 30): a suite measured in K worker processes on one fake GPU
(`tests/fake_gpus.py`), started side by side and measuring in turn: one results.json whose rounds
name their process, each process's share of the budget, a worker that crashes, and compare taking
each process as a run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from primbench import executor as executor_module
from primbench import workers as workers_module
from primbench.compare.core import compare_runs, load_side
from primbench.errors import UsageError
from primbench.processes import (
    PROCESS_CHECKPOINT_SECS,
    PROCESS_MIN_GPU_MS_PER_BATCH,
    PROCESS_ROUNDS,
    START_STEPS,
    Turns,
    start_split,
    time_to_go,
    worker_settings,
)
from primbench.results import load_results
from primbench.settings import Settings, default_design
from primbench.workers import CheckpointPace, Worker, WorkerRole, Workers, start_processes

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "fake_gpus.py"
FAST = ("--min-secs", "0.6", "--noise-timeout-secs", "5")
NAMES = [f"n: {i}" for i in range(1, 9)]


def run(tmp: Path, *args: str, out: str = "r.json", process_faults: str = "", process_sd: float = 0.0,
        slower: str = "", trace: str = "", exit_secs: float = 0.0, syncing: str = "", process_slower: str = ""
        ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_PROCESS_FAULTS": process_faults,
           "PRIMBENCH_FAKE_PROCESS_SD": str(process_sd), "PRIMBENCH_FAKE_SLOWER": slower,
           "PRIMBENCH_FAKE_TRACE": trace, "PRIMBENCH_FAKE_ROUND_SD": "0.01",  # rounds 1 % apart: no precision stop
           "PRIMBENCH_FAKE_EXIT_SECS": str(exit_secs), "PRIMBENCH_FAKE_SYNCING": syncing,
           "PRIMBENCH_FAKE_PROCESS_SLOWER": process_slower}
    env.pop("PRIMBENCH_WORKER", None)
    done = subprocess.run([sys.executable, str(PROGRAM), *FAST, "--json-out", out, *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)
    path = tmp / out
    return done, (json.loads(path.read_text()) if path.is_file() else None)


@pytest.mark.parametrize(("args", "message"), [
    (("--processes", "0"), "--processes must be at least 1, got 0"),
    (("--processes", "65"), "--processes 65: at most 64"),
    (("--processes", "2", "--devices", "all"), "--processes and --devices exclude each other"),
    (("--processes", "2", "--graph"), "--processes and --graph exclude each other"),
    (("--processes", "2", "--energy-baseline"), "--processes and --energy-baseline exclude each other"),
    (("--processes", "2", "--profile"), "--profile and --processes exclude each other"),
    (("--runs", "2"), "--runs 2 needs --processes 2 or more"),
    (("--processes", "2", "--runs", "0"), "--runs must be at least 1, got 0"),
    (("--processes", "2", "--runs", "17"), "--runs 17: at most 16"),
])
def test_bad_processes_are_one_line_and_exit_2_before_anything_runs(tmp_path: Path, args: tuple[str, ...],
                                                                    message: str) -> None:
    done, doc = run(tmp_path, *args)
    assert done.returncode == 2 and doc is None
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_a_worker_gets_its_share_of_the_budget_and_its_own_rounds() -> None:
    s = Settings(processes=4, min_secs=1.0, rounds=10, csv_out="x.csv")
    own = worker_settings(s, frozenset())
    assert (own.processes, own.min_secs, own.rounds, own.output_batches, own.csv_out) == (1, 0.25, PROCESS_ROUNDS,
                                                                                          True, "")
    assert worker_settings(Settings(processes=4, runs=3), frozenset()).runs == 1  # the runs are the parent's
    assert own.spaces_per_indent == 0  # the file only the parent reads: compact, a third of the indented's time
    assert worker_settings(s, frozenset({"rounds"})).rounds == 10  # --rounds given: each process's


def test_a_worker_batch_floor_fits_a_round_window_into_its_share() -> None:
    """Up to 8 workers of the default 1 s keep 0.5 ms batches; more workers (shorter rounds) get a floor
    that lets a round's window of 3 batches fit its share with the host at 10x the GPU time, so that the
    budget stop does not end every specialization after the fewest rounds; a given floor is kept."""
    from primbench.processes import process_batch_floor
    from primbench.rounds import MIN_ROUND_WINDOW

    floors = {k: worker_settings(Settings(processes=k), frozenset()).min_gpu_ms_per_batch for k in (2, 4, 8, 16, 32)}
    assert floors[2] == floors[4] == floors[8] == PROCESS_MIN_GPU_MS_PER_BATCH
    assert floors[16] == pytest.approx(1000 / 16 / PROCESS_ROUNDS / (MIN_ROUND_WINDOW * 10))  # 0.26 ms
    assert floors[32] == pytest.approx(floors[16] / 2)
    assert process_batch_floor(0.125, 8, Settings().batch_window_size) == PROCESS_MIN_GPU_MS_PER_BATCH
    given = worker_settings(Settings(processes=16, min_gpu_ms_per_batch=0.4), frozenset({"min_gpu_ms_per_batch"}))
    assert given.min_gpu_ms_per_batch == 0.4
    rounds16 = worker_settings(Settings(processes=8, rounds=16), frozenset({"rounds"}))  # more rounds: shorter ones
    assert rounds16.min_gpu_ms_per_batch == pytest.approx(floors[16])
    # few rounds: a round's window is the larger share of the batches (10 over 2: 5), and the floor fits it
    p8r2 = worker_settings(Settings(processes=8, rounds=2, min_secs=0.25), frozenset({"rounds", "min_secs"}))
    assert p8r2.min_gpu_ms_per_batch == pytest.approx(250 / 8 / 2 / (5 * 10))  # 0.31 ms, not 0.5
    wide = worker_settings(Settings(processes=8, rounds=2, min_secs=0.25, batch_window_size=20),
                           frozenset({"rounds", "min_secs", "batch_window_size"}))
    assert wide.min_gpu_ms_per_batch == pytest.approx(p8r2.min_gpu_ms_per_batch / 2)
    # p8r4: windows of 3, as before
    assert process_batch_floor(0.03125, 4, Settings().batch_window_size) == pytest.approx(floors[16])


def test_three_processes_write_one_document_whose_rounds_name_their_process(tmp_path: Path) -> None:
    began = time.perf_counter()
    done, doc = run(tmp_path, "--processes", "3")
    done_secs = time.perf_counter() - began
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and doc["context"]["results_version"] == "4.11.0"
    assert "runs" not in doc["context"]["settings"]  # one run: written only above 1
    settings = doc["context"]["settings"]
    assert settings["processes"] == 3 and settings["rounds"] == PROCESS_ROUNDS and settings["min_secs"] == 0.6
    specs = doc["specializations"]
    assert [s["name"] for s in specs] == NAMES and [s["index"] for s in specs] == list(range(8))
    for s in specs:
        rounds = s["rounds"]
        assert [r["process"] for r in rounds] == [k for k in range(3) for _ in range(PROCESS_ROUNDS)]
        assert [r["round"] for r in rounds] == list(range(3 * PROCESS_ROUNDS))
        assert s["calls"]["kernel_calls"] == sum(r["kernel_calls"] for r in rounds)
        assert s["elapsed_secs"]["gpu"] == pytest.approx(sum(r["elapsed_secs"]["gpu"] for r in rounds))
        assert s["gpu_seconds_per_call"] == pytest.approx(s["elapsed_secs"]["gpu"] / s["calls"]["kernel_calls"])
        assert s["between_rounds"]["count"] == 3 * PROCESS_ROUNDS
        assert "batches" not in s  # the workers keep theirs for the median; written only with --output-batches
        assert s["time_per_call"]["min"] <= s["time_per_call"]["median"] <= s["time_per_call"]["q3"]
    # each worker had a third of --min-secs: every specialization's host time is about the whole budget
    assert all(0.6 <= s["elapsed_secs"]["host"] < 0.6 * 3 for s in specs)
    out = done.stdout
    assert out.index("process 0: measuring (1 of 3)") < out.index("process 0: finished") \
        < out.index("process 1: measuring (2 of 3)") < out.index("process 2: measuring (3 of 3)")
    # each turn's start and end say when, since the executor started: where the run's wall time went
    times = [float(t) for t in re.findall(r"process \d: (?:measuring \(\d of 3\)|finished) at (\d+\.\d) s", out)]
    assert len(times) == 6 and times == sorted(times) and times[-1] <= done_secs
    parts = load_results(tmp_path / "r.json").per_process()
    assert len(parts) == 3
    for k, part in enumerate(parts):
        assert all([r.process for r in s.rounds] == [k] * PROCESS_ROUNDS for s in part.specializations)
        assert all([r.round for r in s.rounds] == list(range(PROCESS_ROUNDS)) for s in part.specializations)


def test_the_log_says_how_long_the_workers_took_to_start(tmp_path: Path) -> None:
    """Before the first turn, one line: the fastest and slowest worker's seconds, from the parent starting
    it, to the program imported, the device open and every specialization primed (where a run's wall goes
    before anything is measured); each step ends after the one before, and before the first turn."""
    done, _ = run(tmp_path, "--processes", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    line = re.search(r"3 workers ready, from their start: program imported after (\d+\.\d)-(\d+\.\d) s, device "
                     r"open after (\d+\.\d)-(\d+\.\d) s, every specialization primed after (\d+\.\d)-(\d+\.\d) s",
                     done.stdout)
    assert line is not None, done.stdout
    low = [float(line.group(k)) for k in (1, 3, 5)]
    high = [float(line.group(k)) for k in (2, 4, 6)]
    assert low == sorted(low) and high == sorted(high) and all(a <= b for a, b in zip(low, high, strict=True))
    first = float(re.search(r"process 0: measuring \(1 of 3\) at (\d+\.\d) s", done.stdout).group(1))  # type: ignore[union-attr]
    assert done.stdout.index("workers ready") < done.stdout.index("process 0: measuring (1 of 3)")
    assert high[-1] <= first + 0.1  # from each worker's start, which comes after the executor's
    dry, _ = run(tmp_path, "--processes", "2", "--dry", out="dry.json")  # nothing primed: no line
    assert dry.returncode == 0 and "workers ready" not in dry.stdout


def test_the_start_split_reads_each_workers_ready_file(tmp_path: Path) -> None:
    ws = [_worker(tmp_path, k) for k in range(4)]
    for k, w in enumerate(ws):
        w.spawned = 100.0
        assert w.ready is not None
        stamps = {"program": 100.5 + k, "device": 101.0 + k, "primed": 103.0 + k}
        w.ready.write_text(json.dumps(stamps) if k < 2 else "" if k == 2 else json.dumps({"program": 101.0}))
    split = start_split(Workers(ws))  # worker 2's file is an older worker's (empty), 3's lacks two steps
    assert split is not None and split.workers == 2
    assert split.steps == (("program", 0.5, 1.5), ("device", 1.0, 2.0), ("primed", 3.0, 4.0))
    assert [step for step, *_ in split.steps] == list(START_STEPS)
    assert start_split(Workers(ws[2:])) is None


def test_every_worker_pays_each_first_call_before_its_turn(tmp_path: Path) -> None:
    """What a first call costs (module loading, JIT compilation) is paid while the workers start side
    by side: each worker calls every specialization once before it says it is ready, not in its turn
    while the others wait."""
    trace = tmp_path / "first-calls.txt"
    done, doc = run(tmp_path, "--processes", "3", trace=str(trace))
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and len(doc["specializations"]) == 8
    lines = _exits(trace, 3)  # the run does not wait for its workers' exits: their last lines may come after it
    firsts = [x for x in lines if x[1] not in ("freed", "exit")]
    assert sorted(firsts) == sorted((str(k), str(n), "before") for k in range(3) for n in range(1, 9))
    for k in map(str, range(3)):  # then, still before its turn, it gives its cached memory back (and after it)
        own = [x[1] for x in lines if x[0] == k]
        assert own[-3:] == ["freed", "freed", "exit"] and own.count("freed") == 2, own
        assert lines.index((k, "freed", "before")) < lines.index((k, "freed", "turn"))


def _exits(trace: Path, count: int) -> list[tuple[str, ...]]:
    """The trace's lines once `count` workers have written their ``exit`` line (the run does not wait
    for their exits; 60 s at most)."""
    for _ in range(600):
        lines = [tuple(line.split()) for line in trace.read_text().splitlines()]
        if sum(x[1] == "exit" for x in lines) >= count:
            return lines
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} workers exited: {trace.read_text()}")


def test_workers_exit_together_after_the_last_turn_not_each_after_its_own(tmp_path: Path) -> None:
    """A worker's turn ends once its results are written: the next worker measures while it waits, and
    every worker exits after the last turn (a process's exit, its context torn down, is neither paid in
    the turns nor run beside a measurement)."""
    trace = tmp_path / "trace.txt"
    done, doc = run(tmp_path, "--processes", "3", trace=str(trace))
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and all(len(s["rounds"]) == 3 * PROCESS_ROUNDS for s in doc["specializations"])
    lines = _exits(trace, 3)
    after_turns = [i for i, x in enumerate(lines) if x[1] == "freed" and x[2] == "turn"]  # each worker's turn done
    exits = [i for i, x in enumerate(lines) if x[1] == "exit"]
    assert len(after_turns) == 3 and len(exits) == 3
    assert max(after_turns) < min(exits), lines
    out = done.stdout
    for k in range(3):  # each reported finished once, at the end of its turn
        assert out.count(f"process {k}: finished") == 1, out
    assert out.index("process 0: finished") < out.index("process 1: measuring (2 of 3)")


def test_the_run_ends_without_waiting_for_its_released_workers_to_exit(tmp_path: Path) -> None:
    """Once every worker has written its results, the parent merges and ends: a worker's exit (here
    made 5 s long, as 16 CUDA contexts' teardown takes 1.7-1.8 s on an H100) is not in the run's wall.
    The workers still exit, on their own, after the release: none is left waiting on a folder the
    parent removed."""
    trace = tmp_path / "trace.txt"
    done, doc = run(tmp_path, "--processes", "3", trace=str(trace), exit_secs=5.0)
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and [s["name"] for s in doc["specializations"]] == NAMES
    assert all(len(s["rounds"]) == 3 * PROCESS_ROUNDS and s.get("error") is None for s in doc["specializations"])
    assert "exit" not in trace.read_text()  # every worker was still in its exit when the run ended
    lines = _exits(trace, 3)
    assert sorted(x[0] for x in lines if x[1] == "exit") == ["0", "1", "2"]


def test_profile_gives_each_specialization_its_axes(tmp_path: Path) -> None:
    """--profile builds each specialization's state as a round does (its axes, its size), as the
    workers' priming does: the fake suite reads its axis ``n`` in every call."""
    done, doc = run(tmp_path, "--profile")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is None and done.stdout.count(" once") == 8, done.stdout


def test_given_rounds_are_each_processes_and_batches_are_written_when_asked(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--processes", "2", "--rounds", "2", "--output-batches")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None
    for s in doc["specializations"]:
        assert [r["process"] for r in s["rounds"]] == [0, 0, 1, 1]
        assert sorted({b["round"] for b in s["batches"]}) == [0, 1, 2, 3]
        assert len(s["batches"]) == s["calls"]["batches"]


def test_a_run_of_one_process_writes_no_key_of_the_processes(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--rounds", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and "processes" not in doc["context"]["settings"]
    assert all("process" not in r for s in doc["specializations"] for r in s["rounds"])
    assert len(load_results(tmp_path / "r.json").per_process()) == 1


def test_a_process_that_crashes_fails_the_specializations_and_the_others_go_on(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--processes", "3", process_faults="1:crash")
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc is not None
    specs = doc["specializations"]
    assert [s["name"] for s in specs] == NAMES
    assert all(s["error"].startswith("process 1: its worker exited with code 70") for s in specs)
    assert "process 2: finished" in done.stdout  # the third process still measured
    assert (tmp_path / "r.process1.log").is_file()
    assert doc["summary"]["failures"] == 8


@pytest.mark.parametrize("syncing", ["3", "1,2,3,4,5,6,7,8"])
def test_a_specialization_one_worker_failed_is_left_out_by_the_later_workers(tmp_path: Path, syncing: str) -> None:
    """A function that waits on the host fails with the stream-blocking timeout (10 s on a GPU) in the first
    worker's turn; the run's record is that failure whatever the others measure, so they do not call it in
    their turns (on an H100, 16 workers meeting three such functions wrote nothing in 480 s)."""
    trace = tmp_path / "trace.txt"
    done, doc = run(tmp_path, "--processes", "3", trace=str(trace), syncing=syncing)
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc is not None
    bad = {f"n: {v}" for v in syncing.split(",")}
    specs = {s["name"]: s for s in doc["specializations"]}
    assert list(specs) == NAMES
    for name, s in specs.items():
        if name in bad:
            assert s["error"].startswith("process 0: stream blocking timed out"), s
        else:
            assert s.get("error") is None and {r["process"] for r in s["rounds"]} == {0, 1, 2}
    calls = [line.split() for line in trace.read_text().splitlines() if " sync " in line]
    in_turn = {(p, n) for p, _, n, when in calls if when == "turn"}
    assert in_turn == {("0", v) for v in syncing.split(",")}  # only the first worker called them measuring
    assert {p for p, _, _, when in calls if when == "before"} == {"0", "1", "2"}  # every worker primed them
    assert "process 2: finished" in done.stdout
    assert doc["summary"]["failures"] == len(bad)


def test_a_process_worker_checkpoints_at_most_every_quarter_second_a_devices_worker_at_every_settled_one() -> None:
    paced = CheckpointPace(PROCESS_CHECKPOINT_SECS)
    # specializations settling 0.1 s apart: the first written at once, then one write a quarter second
    assert [paced.due(k, 10.0 + 0.1 * k) for k in range(1, 8)] == [True, False, False, True, False, False, True]
    assert not paced.due(7, 99.0)  # nothing new settled: nothing to write however late
    every = CheckpointPace(0.0)
    assert [every.due(k, 10.0) for k in (0, 1, 1, 2, 3)] == [False, True, False, True, True]


def _worker(tmp: Path, rank: int) -> Worker:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return Worker(None, [0], proc, tmp / f"p{rank}.json", tmp / f"p{rank}.beat", tmp / f"p{rank}.log", rank,
                  tmp / f"p{rank}.ready", tmp / f"p{rank}.turn")


def test_turns_wait_for_every_worker_to_be_ready_then_go_one_at_a_time(tmp_path: Path) -> None:
    ws = [_worker(tmp_path, k) for k in range(3)]
    turns = Turns(Workers(ws))
    ws[0].ready.touch()  # type: ignore[union-attr]
    ws[1].ready.touch()  # type: ignore[union-attr]
    assert turns() is None and not any(w.turn.exists() for w in ws)  # type: ignore[union-attr]
    ws[2].ready.touch()  # type: ignore[union-attr]
    assert turns() is ws[0] and ws[0].turn.exists()  # type: ignore[union-attr]
    assert turns() is None  # process 0 is still measuring
    ws[0].done = True
    assert turns() is ws[1] and not ws[2].turn.exists()  # type: ignore[union-attr]
    ws[1].done = True
    ws[2].done = True
    assert turns() is None and turns.given == 2  # nobody left


def test_a_turn_ends_when_the_worker_has_written_its_results_and_the_last_releases_all(tmp_path: Path) -> None:
    ws = [_worker(tmp_path, k) for k in range(3)]
    for w in ws:
        w.measured = tmp_path / f"p{w.rank}.measured"
        w.ready.touch()  # type: ignore[union-attr]
    release = tmp_path / "release"
    turns = Turns(Workers(ws, release))
    assert turns() is ws[0]
    assert turns() is None and turns.ended == []  # still measuring: its process lives on, nothing written
    ws[0].measured.touch()  # type: ignore[union-attr]
    assert turns() is ws[1] and turns.ended == [ws[0]] and not ws[0].done
    ws[1].done = True  # a worker that ended (crashed) in its turn: its turn is over too
    assert turns() is ws[2] and turns.ended == [ws[0], ws[1]]
    assert json.loads(ws[2].turn.read_text()) == []  # type: ignore[union-attr]  # nobody wrote a failure
    assert not release.exists()  # worker 2 measures: nobody may exit yet
    ws[2].measured.touch()  # type: ignore[union-attr]
    assert turns() is None and release.exists() and turns.given == 3 and turns.ended == ws


def _waiting(tmp: Path, said: str, until: str, after: int, **files: str) -> tuple[WorkerRole, list[float], Any]:
    """A --processes worker's role in `tmp` (its heartbeat old), and a nap that checks the worker has said
    `said` (created that file) and creates `until` at its `after`-th call."""
    paths = {k: str(tmp / k) for k in ("ready", "turn", *files)}
    role = WorkerRole(None, (0,), str(tmp / "o.json"), str(tmp / "b"), 0, 1, **paths)
    assert WorkerRole.from_env({"PRIMBENCH_WORKER": role.to_env()}) == role
    (tmp / "b").touch()
    os.utime(tmp / "b", (0, 0))
    naps: list[float] = []

    def nap(secs: float) -> None:
        naps.append(secs)
        assert (tmp / said).exists()
        if len(naps) == after:
            (tmp / until).touch()

    return role, naps, nap


def test_a_worker_whose_turn_is_over_waits_beating_until_the_release(tmp_path: Path) -> None:
    role, naps, nap = _waiting(tmp_path, "measured", "release", 2, measured="", release="")
    role.end_turn(nap)
    assert len(naps) == 2 and (tmp_path / "b").stat().st_mtime > 0
    gone = tmp_path / "gone"  # the parent ended and removed its folder before the worker saw the release
    gone.mkdir()
    left = WorkerRole(None, (0,), str(gone / "o.json"), str(gone / "b"), 0, 1, measured=str(gone / "measured"),
                      release=str(gone / "release"))
    waits: list[float] = []
    left.end_turn(lambda secs: (waits.append(secs), shutil.rmtree(gone)))
    assert len(waits) == 1
    plain = WorkerRole(None, (0,), str(tmp_path / "o2.json"), str(tmp_path / "b2"))  # --devices: exits at once
    plain.end_turn(lambda secs: pytest.fail("a --devices worker waited"))


def test_a_waiting_worker_says_it_is_ready_and_beats_until_its_turn(tmp_path: Path) -> None:
    role, naps, nap = _waiting(tmp_path, "ready", "turn", 3)
    assert role.wait_turn(nap, start={"program": 1.5, "device": 2.0}) == frozenset()  # an empty turn file: none
    assert len(naps) == 3 and (tmp_path / "b").stat().st_mtime > 0
    assert json.loads((tmp_path / "ready").read_text()) == {"program": 1.5, "device": 2.0}  # what it says of its start
    assert not (tmp_path / "ready.partial").exists()
    (tmp_path / "turn").write_text('["n: 3", "n: 5"]')  # what Turns writes: the earlier workers' failures
    assert role.wait_turn(nap) == {"n: 3", "n: 5"}


def test_compare_takes_each_process_as_a_run_and_finds_a_planted_change(tmp_path: Path) -> None:
    for side in ("base", "head", "aa"):
        (tmp_path / side).mkdir()
    run(tmp_path / "base", "--processes", "4")
    run(tmp_path / "aa", "--processes", "4")
    run(tmp_path / "head", "--processes", "4", slower="0:0.05")  # every kernel 5 % slower
    base = load_side(tmp_path / "base" / "r.json")
    assert len(base) == 4 and all(r.source.endswith("r.json") for r in base)
    found = compare_runs(base, load_side(tmp_path / "head" / "r.json"))
    assert found.summary.regressions == 8 and found.failed()
    same = compare_runs(base, load_side(tmp_path / "aa" / "r.json"))
    assert same.summary.regressions == 0 and not same.failed()
    assert same.context["base"]["files"] == [str(tmp_path / "base" / "r.json") + " [4 processes]"]


def test_runs_are_fresh_sets_of_workers_one_after_another_in_one_file(tmp_path: Path) -> None:
    """``--processes 2 --runs 2``: two sets of two workers, the second started once the first has measured,
    numbered on (processes 2 and 3), in one document that says ``runs``; compare's parts name their run."""
    done, doc = run(tmp_path, "--processes", "2", "--runs", "2", "--rounds", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None
    settings = doc["context"]["settings"]
    assert (settings["processes"], settings["runs"], settings["rounds"]) == (2, 2, 2)
    for s in doc["specializations"]:
        assert [r["process"] for r in s["rounds"]] == [0, 0, 1, 1, 2, 2, 3, 3]
    out = done.stdout
    assert out.index("run 1 of 2: 2 new worker processes") < out.index("process 0: measuring (1 of 2)") \
        < out.index("process 1: finished") < out.index("run 2 of 2: 2 new worker processes") \
        < out.index("process 2: measuring (1 of 2)") < out.index("process 3: measuring (2 of 2)")
    assert out.count("workers ready, from their start") == 2  # each set's start, before its first turn
    parts = load_side(tmp_path / "r.json")
    path = str(tmp_path / "r.json")
    assert [p.source for p in parts] == [f"{path}#run1", f"{path}#run1", f"{path}#run2", f"{path}#run2"]


def test_compare_takes_each_run_of_a_file_as_a_run_of_its_own(tmp_path: Path) -> None:
    """Each run of a ``--runs 2`` file is a file of its own to compare (its context lists both); two runs a
    side whose states are the same two (the fake's: one run 3 % slower, every worker of it) do not fail,
    while one run a side whose workers all share a 3 % state is a change."""
    for side in ("base", "head", "one-base", "one-head"):
        (tmp_path / side).mkdir()
    args = ("--processes", "3", "--rounds", "2")
    run(tmp_path / "base", *args, "--runs", "2", process_slower="3-5:0.03")  # its second run slower
    run(tmp_path / "head", *args, "--runs", "2", process_slower="0-2:0.03")  # its first run slower
    two = compare_runs(load_side(tmp_path / "base" / "r.json"), load_side(tmp_path / "head" / "r.json"))
    assert two.summary.regressions == two.summary.improvements == 0 and not two.failed()
    assert not [w for w in two.warnings if "one run of several worker processes" in w]  # two runs a side
    assert two.context["base"]["files"] == [str(tmp_path / "base" / "r.json") + f"#run{k} [3 processes]"
                                            for k in (1, 2)]
    run(tmp_path / "one-base", *args)
    run(tmp_path / "one-head", *args, process_slower="0-2:0.03")
    one = compare_runs(load_side(tmp_path / "one-base" / "r.json"), load_side(tmp_path / "one-head" / "r.json"))
    assert one.summary.regressions == 8 and one.failed()
    assert [w for w in one.warnings if "one run of several worker processes" in w]


@pytest.mark.parametrize("floor, shrink, fits", [(None, None, True), (PROCESS_MIN_GPU_MS_PER_BATCH, None, True),
                                                 (PROCESS_MIN_GPU_MS_PER_BATCH, 1, False)])
def test_a_p8r2_workers_rounds_of_a_launch_bound_kernel_fit_their_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, floor: float | None, shrink: int | None, fits: bool) -> None:
    """On the fake device, a 7 us kernel whose per-call protocol takes more than 10x that on the host (as
    the thirteenth evaluation's Triton and STFT kernels at 64 KiB on an H100,
    `tests/benchmarks/verdicts/round_wall13.txt`): a `--processes 8 --rounds 2 --min-secs 0.25` worker's
    rounds (windows of 5 batches) stay within a fifth of their 15.6 ms share, at the worker's floor and at the
    old 0.5 ms one, since the window's batches are shortened to fit; as before that (no shrinking, the old
    floor) each window ran 1.5x its share."""
    import numpy as np

    import primbench.measure
    from tests.fakes import FakeDevice
    from tests.test_executor import Copy, executor

    if shrink is not None:
        monkeypatch.setattr(primbench.measure, "MAX_SHRINK_FACTOR", shrink)
    settings = worker_settings(Settings(processes=8, rounds=2, min_secs=0.25), frozenset({"rounds", "min_secs"}))
    dev = FakeDevice(0.007, host_op_secs=12e-6, clear_ms=0.0)
    ms = settings.min_gpu_ms_per_batch if floor is None else floor
    ex = executor(tmp_path, "--rounds", "2", "--min-secs", str(settings.min_secs),
                  "--min-gpu-ms-per-batch", str(ms), device=dev)
    ex.queue(Copy(np.int8))
    rounds = ex.run()["specializations"][0]["rounds"]
    share = settings.min_secs / 2
    per_call = [r["elapsed_secs"]["host"] / (r["batches"] * r["kernel_calls_per_batch"]) for r in rounds]
    assert all(p / 7e-6 > 10 for p in per_call)  # launch-bound, as on the GPU
    over = max(r["elapsed_secs"]["host"] for r in rounds) / share  # the fake device's time: the window's
    assert (over < 1.2) is fits, over
    assert fits or over > 1.4


@pytest.mark.parametrize("long_window, calls", [(None, 2), (5, 5)])
def test_a_p8r2_workers_rounds_of_a_call_longer_than_their_share_take_two_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, long_window: int | None, calls: int) -> None:
    """On the fake device, a 19 ms kernel (cuBLAS sbmv of half-bandwidth 1 at 4 MiB on an H100,
    `tests/benchmarks/verdicts/kernel_rounds14.txt`) in a `--processes 8 --rounds 2 --min-secs 0.25` worker,
    whose rounds have a 15.6 ms share: each round measures 2 single-call batches (`measure.LONG_CALL_WINDOW`),
    not its whole window of 5 (as before that change, which this test also runs)."""
    import numpy as np

    import primbench.measure
    from tests.fakes import FakeDevice
    from tests.test_executor import Copy, executor

    if long_window is not None:
        monkeypatch.setattr(primbench.measure, "LONG_CALL_WINDOW", long_window)
    settings = worker_settings(Settings(processes=8, rounds=2, min_secs=0.25), frozenset({"rounds", "min_secs"}))
    dev = FakeDevice(19.0, host_op_secs=0.0, clear_ms=0.0)
    ex = executor(tmp_path, "--rounds", "2", "--min-secs", str(settings.min_secs),
                  "--min-gpu-ms-per-batch", str(settings.min_gpu_ms_per_batch), device=dev)
    ex.queue(Copy(np.int8))
    rounds = ex.run()["specializations"][0]["rounds"]
    assert len(rounds) == 2
    assert [(r["kernel_calls_per_batch"], r["batches"]) for r in rounds] == [(1, calls)] * 2
    assert all(r["elapsed_secs"]["host"] == pytest.approx(0.019 * calls) for r in rounds)


@pytest.mark.parametrize(("given", "environ", "base", "applied"), [
    (frozenset(), {}, Settings(), True),
    (frozenset({"size", "json_out"}), {"PRIMBENCH_DESIGN": "processes"}, Settings(), True),
    (frozenset({"min_secs"}), {}, Settings(), False),
    (frozenset({"rounds"}), {}, Settings(), False),
    (frozenset({"graph"}), {}, Settings(), False),
    (frozenset({"devices"}), {}, Settings(), False),
    (frozenset({"dry"}), {}, Settings(), False),
    (frozenset(), {"PRIMBENCH_DESIGN": "single"}, Settings(), False),
    (frozenset(), {}, Settings(min_secs=2.0), False),  # the program's own base settings chose a protocol
])
def test_the_default_protocol_applies_only_where_no_option_of_the_protocol_is_given(
        given: frozenset[str], environ: dict[str, str], base: Settings, applied: bool) -> None:
    settings, now = default_design(base, given, base, environ)
    design = (settings.processes, settings.runs, settings.rounds, settings.min_secs)
    if applied:
        assert design == (8, 2, 2, 0.25) and now == given | {"processes", "runs", "rounds", "min_secs"}
        settings.validate()
    else:
        assert design == (base.processes, base.runs, base.rounds, base.min_secs) and now == given


def test_an_unknown_default_protocol_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="PRIMBENCH_DESIGN='fast': give 'processes'"):
        default_design(Settings(), frozenset(), Settings(), {"PRIMBENCH_DESIGN": "fast"})


@pytest.mark.slow
def test_a_program_given_no_option_of_the_protocol_measures_two_runs_of_eight_workers(tmp_path: Path) -> None:
    """Without ``PRIMBENCH_DESIGN=single`` (the tests' own setting) a program's command line that gives no option of
    the protocol measures as ``--processes 8 --runs 2 --rounds 2 --min-secs 0.25``: 16 workers of 2 rounds, each
    run's workers in turn, one document; ``--min-secs 1`` alone keeps one process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_SPECS": "2"}
    env.pop("PRIMBENCH_WORKER", None)
    env.pop("PRIMBENCH_DESIGN", None)
    done = subprocess.run([sys.executable, str(PROGRAM), "--json-out", "d.json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "d.json").read_text())
    settings = doc["context"]["settings"]
    assert (settings["processes"], settings["runs"], settings["rounds"], settings["min_secs"]) == (8, 2, 2, 0.25)
    for s in doc["specializations"]:
        assert sorted({r["process"] for r in s["rounds"]}) == list(range(16))
        assert len(s["rounds"]) == 32
    assert "run 2 of 2: 8 new worker processes" in done.stdout
    done = subprocess.run([sys.executable, str(PROGRAM), "--json-out", "one.json", "--min-secs", "0.2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "processes" not in json.loads((tmp_path / "one.json").read_text())["context"]["settings"]


def test_workers_sharing_a_gpu_do_not_let_jax_take_most_of_its_memory(tmp_path: Path) -> None:
    """Every ``--processes`` worker starts with ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` unless the environment says
    otherwise (`primbench.workers.SHARED_GPU_ENV`)."""
    show = [sys.executable, "-c", "import os; print(os.environ.get('XLA_PYTHON_CLIENT_PREALLOCATE'))"]
    for environ, want in (({}, "false"), ({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}, "true")):
        folder = tmp_path / (want or "none")
        folder.mkdir()
        started = start_processes(show, 2, None, [0], folder, environ={**os.environ, **environ})
        for w in started.workers:
            assert w.process.wait(timeout=60) == 0
            assert w.log.read_text().strip() == want


def test_workers_that_all_fail_to_open_the_gpu_end_the_run_with_one_error_and_no_file(tmp_path: Path) -> None:
    """A GPU no worker can open (the fake's "absent": the runtime's error as the worker opens it) is what one
    process gives: one line, exit 2, no results file, no second run started, no worker's log left."""
    (tmp_path / "r.json").write_text('{"kept": true}')
    done, doc = run(tmp_path, "--processes", "3", "--runs", "2", process_faults="0:absent,1:absent,2:absent")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == ["fake_gpus.py: error: none of the 3 worker processes could start; process 0: its worker "
                      "exited with code 2: no usable GPU: cudaErrorNoDevice: GPU 0 cannot be opened"], done.stderr
    assert "error" not in done.stdout and "run 2 of 2" not in done.stdout, done.stdout
    assert doc == {"kept": True}  # the file that was there is untouched
    assert not list(tmp_path.glob("*.log"))


def test_a_worker_that_fails_to_start_beside_others_is_said_once_they_measure(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--processes", "3", process_faults="1:absent")
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc is not None and all(s["error"].startswith("process 1: its worker exited with code 2")
                                   for s in doc["specializations"])
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("error: process 1:")]
    assert len(said) == 1 and said[0].endswith("the other processes go on"), said
    out = done.stdout
    assert out.index("process 0: measuring") < out.index("error: process 1:"), out  # held until one measured


def test_a_program_read_from_standard_input_measures_in_one_process_or_says_why_it_cannot_start_workers(
        tmp_path: Path) -> None:
    """A worker starts the program's command line again, which a program read from standard input (``python -
    < bench.py``) is not in: the default protocol measures it in one process, and --processes is a usage error."""
    assert workers_module.not_restartable("-") == "was read from standard input"
    assert workers_module.not_restartable("") == "runs in an interactive interpreter"
    assert workers_module.not_restartable("-c") is None and workers_module.not_restartable("bench.py") is None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_ROUND_SD": "0.01"}
    env.pop("PRIMBENCH_DESIGN", None)
    env.pop("PRIMBENCH_WORKER", None)
    source = PROGRAM.read_text()
    done = subprocess.run([sys.executable, "-", "--json-out", "one.json", "--noise-timeout-secs", "5"], input=source,
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "one.json").read_text())
    assert "processes" not in doc["context"]["settings"] and "worker processes" not in done.stdout
    assert len(doc["specializations"]) == 8 and not list(tmp_path.glob("*.log"))
    done = subprocess.run([sys.executable, "-", "--json-out", "two.json", "--processes", "2"], input=source,
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.strip() == ("-: error: --processes: this program was read from standard input, which a "
                                   "worker process cannot start again; save it to a file and run that")
    assert not (tmp_path / "two.json").exists()


def test_a_workers_progress_is_said_only_where_its_turn_runs_long() -> None:
    """`_Paced`: a turn of a few seconds says only that it began and ended; a long one says its progress every
    `PROGRESS_SECS`, counted from its turn (else from its start, as a --devices worker's)."""
    clock = [100.0]
    said: list[int] = []
    paced = executor_module._Paced(lambda w: said.append(w.finished), every=5.0, now=lambda: clock[0])
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    w = Worker(0, [0], proc, Path("o.json"), Path("o.beat"), Path("o.log"), rank=0, spawned=90.0)
    clock[0] = 94.0
    w.finished = 1
    paced(w)  # 4 s after its start: quiet
    paced.began(w)  # its turn, at 94 s
    for t, finished in ((96.0, 2), (98.9, 3), (99.0, 4), (101.0, 5), (104.0, 6)):
        clock[0], w.finished = t, finished
        paced(w)
    assert said == [4, 6]
    other = Worker(0, [0], proc, Path("p.json"), Path("p.beat"), Path("p.log"), spawned=90.0)
    clock[0], other.finished = 95.0, 7
    paced(other)  # no turn (--devices): 5 s from its start
    assert said == [4, 6, 7]
    assert executor_module.PROGRESS_SECS == 5.0


def test_a_short_turn_says_it_began_and_ended_and_nothing_between(tmp_path: Path) -> None:
    done, _ = run(tmp_path, "--processes", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "process 1: measuring (2 of 2)" in done.stdout and "process 1: finished" in done.stdout
    assert "specializations finished" not in done.stdout, done.stdout


def test_the_time_to_go_after_the_first_turn_counts_every_other_turn_and_later_start() -> None:
    togo = time_to_go(turn_secs=1.5, start_secs=4.0, workers=8, runs=2)
    assert (togo.turns_left, togo.starts_left) == (15, 1)
    assert togo.secs == pytest.approx(15 * 1.5 + 4.0)
    assert time_to_go(2.0, 3.0, workers=4, runs=1).secs == pytest.approx(6.0)  # one set: its other turns only


@pytest.mark.slow
def test_a_long_run_says_its_time_to_go_once_after_its_first_turn(tmp_path: Path) -> None:
    """A run whose time to go is at least `TIME_TO_GO_SECS` says it once, when its first turn ends (here 7 more
    turns of 2 rounds whose setup takes 0.8 s each, and a second set's start); a short one never does
    (`test_a_short_turn_says_it_began_and_ended_and_nothing_between`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_SPECS": "1", "PRIMBENCH_FAKE_ROUND_SD": "0.01",
           "PRIMBENCH_FAKE_SETUP_SECS": "0.8"}
    env.pop("PRIMBENCH_WORKER", None)
    done = subprocess.run([sys.executable, str(PROGRAM), "--json-out", "r.json", "--processes", "4", "--runs", "2",
                           "--rounds", "2", "--min-secs", "0.2"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line.strip() for line in done.stdout.splitlines() if "to go" in line]
    assert len(said) == 1, done.stdout
    match = re.fullmatch(r"about (\d+) s to go: 7 more turn\(s\) of about ([\d.]+) s and 1 more start\(s\) of about "
                         r"([\d.]+) s", said[0])
    assert match is not None, said
    assert 1.2 <= float(match[2]) <= 3.0
    lines = done.stdout.splitlines()
    first_end = next(i for i, line in enumerate(lines) if "process 0: finished" in line)
    assert lines.index(next(line for line in lines if "to go" in line)) == first_end + 1


@pytest.mark.slow
def test_an_interrupted_run_of_workers_keeps_the_turns_that_ended_and_says_which_were_cut(tmp_path: Path) -> None:
    """Ctrl-C in a run's second turn: exit 130, no later set started, the file holds the first worker's rounds
    (the second's part where it wrote one), and the log says the workers cut off were interrupted, not finished."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "1", "PRIMBENCH_FAKE_SPECS": "2", "PRIMBENCH_FAKE_ROUND_SD": "0.01",
           "PRIMBENCH_FAKE_SETUP_SECS": "0.4"}
    env.pop("PRIMBENCH_WORKER", None)
    proc = subprocess.Popen([sys.executable, str(PROGRAM), "--json-out", "r.json", "--processes", "4", "--runs",
                             "2", "--rounds", "2", "--min-secs", "0.2"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line.rstrip())
        if "process 1: measuring (2 of 4)" in line:
            time.sleep(0.2)
            proc.send_signal(signal.SIGINT)
            break
    lines += [line.rstrip() for line in proc.stdout]
    assert proc.wait(timeout=120) == 130, "\n".join(lines)
    out = "\n".join(lines)
    assert "process 0: finished" in out and "run 2 of 2" not in out, out
    assert "process 2: interrupted" in out and "process 3: interrupted" in out, out
    assert re.search(r"^error: interrupted: writing the turns that ended \([12] of 8 workers measured every "
                     r"specialization\)$", out, re.M), out
    doc = json.loads((tmp_path / "r.json").read_text())
    processes = {r["process"] for s in doc["specializations"] for r in s["rounds"]}
    assert 0 in processes and processes <= {0, 1}, processes
