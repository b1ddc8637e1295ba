"""Rounds: every specialization measured R times from a fresh run(state), interleaved, on a
split budget (primbench.rounds), against the fake device."""

from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

import primbench as pb
from primbench.results import RESULTS_VERSION, Elapsed, ResultsFileError, load_results, results_from_dict
from primbench.rounds import MIN_ROUND_WINDOW, log_sd, round_budget, round_windows
from tests.compare_data import document, spec
from tests.fakes import FakeDevice
from tests.test_executor import Copy, executor


class Recording(Copy):
    """A copy benchmark that logs each setup into a shared list and can slow down per round."""

    def __init__(self, dtype, log: list[tuple[str, int]], round_ms: list[float] | None = None) -> None:
        super().__init__(dtype)
        self.log = log
        self.round_ms = round_ms

    def run(self, state: pb.State) -> None:
        self.log.append((pb.type_name(self.dtype), state.round_index))
        items = state.size // self.dtype.itemsize
        state.set_items(items)
        state.add_reads(self.dtype, items)
        state.add_writes(self.dtype, items)
        state.test(lambda: self.log.append(("test", state.round_index)))
        dev = state.device
        ms = None if self.round_ms is None else self.round_ms[state.round_index]
        state.run(lambda: dev.launch(ms))


def test_round_budget_splits_min_secs_timeout_and_window():
    one = round_budget(1.0, 10.0, 10, 1)
    assert (one.min_secs, one.noise_timeout_secs, one.batch_window_size) == (1.0, 10.0, 10)
    assert (one.fill_secs, one.fill_batches) == (1.0, 10)  # one round: the seed's rule
    three = round_budget(1.0, 10.0, 10, 3)
    assert three.min_secs == pytest.approx(1 / 3)
    assert three.noise_timeout_secs == pytest.approx(10 / 3)
    assert three.batch_window_size == 4  # the first round takes the batch that 3 does not divide
    # the first round sizes the batches for the whole window and the whole --min-secs
    assert (three.fill_secs, three.fill_batches) == (1.0, 10)
    assert [round_budget(1.0, 10.0, 10, 3, i).batch_window_size for i in range(3)] == [4, 3, 3]
    assert round_budget(1.0, 10.0, 10, 50).batch_window_size == MIN_ROUND_WINDOW
    assert round_budget(1.0, 10.0, 2, 5).batch_window_size == 2  # never above the user's window


def test_round_windows_share_out_the_window():
    assert round_windows(10, 1) == [10]
    assert round_windows(10, 3) == [4, 3, 3]
    assert round_windows(12, 3) == [4, 4, 4]
    assert round_windows(11, 2) == [6, 5]
    assert round_windows(10, 5) == [MIN_ROUND_WINDOW] * 5  # 2 each would be below the floor
    assert round_windows(2, 3) == [2, 2, 2]


def test_min_secs_counts_over_the_rounds_together():
    # round r stops once the rounds so far ran (r + 1) / R of --min-secs
    assert round_budget(1.0, 10.0, 10, 3, 1, spent_secs=0.5).min_secs == pytest.approx(2 / 3 - 0.5)
    assert round_budget(1.0, 10.0, 10, 3, 2, spent_secs=0.6).min_secs == pytest.approx(0.4)
    # earlier rounds that overran leave nothing: the round runs its window only
    assert round_budget(1.0, 10.0, 10, 3, 2, spent_secs=1.4).min_secs == 0.0
    assert round_budget(1.0, 10.0, 10, 3, 2, spent_secs=1.4).batch_window_size == 3


def test_rounds_together_run_min_secs_overshooting_by_less_than_a_batch(tmp_path):
    # 1 ms calls, no host time: sizing runs 1, 8, then 11 calls (20 ms), and the batches are
    # lengthened so that the specialization's 10 batches fill what is left of its 1 s, 3 % over:
    # 101 calls. Round 1 runs its 4 (0.43 s, past its third of a second), round 2 its 3 (0.73 s
    # in all, past two thirds), round 3 its 3 (1.03 s): 10 batches, not 3 rounds of 4.
    dev = FakeDevice(1.0, host_op_secs=0.0, clear_ms=0.0)
    ex = executor(tmp_path, "--rounds", "3", "--min-secs", "1", "--min-gpu-ms-per-batch", "10", device=dev)
    ex.queue(Copy(np.int8))
    spec = ex.run()["specializations"][0]
    assert [r["batches"] for r in spec["rounds"]] == [4, 3, 3]
    assert {r["kernel_calls_per_batch"] for r in spec["rounds"]} == {101}
    warmups = 3 / 1000  # one call per round, before its clock starts; sizing counts
    assert 1.0 <= dev.now() - warmups < 1.0 + 0.101


def test_log_sd_is_the_sample_sd_of_logs():
    assert log_sd([1.0]) is None
    assert log_sd([2.0, 2.0, 2.0]) == 0.0
    values = [1.0, 1.01, 0.99, 1.02]
    logs = np.log(values)
    assert log_sd(values) == pytest.approx(float(np.std(logs, ddof=1)))
    assert log_sd([0.0, -1.0, 1.0]) is None  # non-positive values are skipped


def test_rounds_are_interleaved_and_each_calls_run_afresh(tmp_path):
    log: list[tuple[str, int]] = []
    ex = executor(tmp_path, "--rounds", "3")
    ex.queue(Recording(np.int8, log))
    ex.queue(Recording(np.int64, log))
    ex.run()
    setups = [entry for entry in log if entry[0] != "test"]
    assert setups == [("char", 0), ("long long", 0), ("char", 1), ("long long", 1), ("char", 2), ("long long", 2)]
    # the test check runs once per specialization, in its first round
    assert [e for e in log if e[0] == "test"] == [("test", 0), ("test", 0)]


def test_each_round_is_recorded_with_its_own_time_and_the_spread_between_them(tmp_path):
    log: list[tuple[str, int]] = []
    ex = executor(tmp_path, "--rounds", "3")
    ex.queue(Recording(np.int8, log, round_ms=[0.25, 0.26, 0.24]))
    doc = ex.run()
    spec = doc["specializations"][0]
    per_call = [r["gpu_ms_per_call"] for r in spec["rounds"]]
    assert per_call == pytest.approx([0.25, 0.26, 0.24])
    assert [r["round"] for r in spec["rounds"]] == [0, 1, 2]
    assert spec["between_rounds"]["count"] == 3
    assert spec["between_rounds"]["cv_percent"] == pytest.approx(log_sd([0.25, 0.26, 0.24]) * 100)
    # the seed's fields cover every call of every round
    calls = sum(r["kernel_calls"] for r in spec["rounds"])
    gpu = sum(r["elapsed_secs"]["gpu"] for r in spec["rounds"])
    assert spec["calls"]["kernel_calls"] == calls
    assert spec["calls"]["batches"] == sum(r["batches"] for r in spec["rounds"])
    assert spec["bytes_per_second"] == pytest.approx(2 * (128 << 20) * calls / gpu)
    for r in spec["rounds"]:
        assert r["bytes_per_second"] == pytest.approx(2 * (128 << 20) / (r["gpu_ms_per_call"] / 1000))
    loaded = load_results(tmp_path / "results.json").specializations[0]
    assert [r.gpu_ms_per_call for r in loaded.rounds] == pytest.approx([0.25, 0.26, 0.24])
    assert doc["context"]["settings"]["rounds"] == 3
    version = tuple(int(p) for p in doc["context"]["results_version"].split("."))
    assert version >= (4, 3, 0)  # rounds came with 4.3.0


def test_later_rounds_keep_the_first_rounds_batch_size(tmp_path):
    dev = FakeDevice(0.25)
    ex = executor(tmp_path, "--rounds", "3", "--min-gpu-ms-per-batch", "10", device=dev)
    ex.queue(Copy(np.int8))
    doc = ex.run()
    sizes = {r["kernel_calls_per_batch"] for r in doc["specializations"][0]["rounds"]}
    assert sizes == {44}  # 44 x 0.25 ms > 10 ms (40 predicted, 10 % over), found once
    # sizing batches (1 call, 32 just below the 40 it predicts) ran once; the third, 44 calls,
    # is round 1's first measured batch: count the launches
    measured = doc["specializations"][0]["calls"]["kernel_calls"]
    warmups = 3
    assert dev.calls == measured + warmups + (1 + 32)


def test_each_round_stops_on_its_share_of_the_budget(tmp_path):
    ex = executor(tmp_path, "--rounds", "2", "--min-secs", "0", "--batch-window-size", "10")
    ex.queue(Copy(np.int8))
    doc = ex.run()
    # a noiseless kernel stops as soon as its window (ceil(10 / 2) = 5 batches) is full
    assert [r["batches"] for r in doc["specializations"][0]["rounds"]] == [5, 5]


def test_one_round_is_the_seeds_protocol(tmp_path):
    ex = executor(tmp_path, "--rounds", "1")
    ex.queue(Copy(np.int8))
    spec = ex.run()["specializations"][0]
    assert spec["calls"]["batches"] == 10
    assert spec["between_rounds"] == {"count": 1, "cv_percent": None}


def test_a_round_that_fails_fails_the_specialization_and_skips_its_later_rounds(tmp_path):
    class FailsLater(Copy):
        calls = 0

        def run(self, state):
            FailsLater.calls += 1
            if state.round_index == 1:
                raise RuntimeError("out of memory in round 2")
            super().run(state)

    ex = executor(tmp_path, "--rounds", "3")
    ex.queue(FailsLater(np.int8))
    ex.queue(Copy(np.int64))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 1
    assert FailsLater.calls == 2
    doc = json.loads((tmp_path / "results.json").read_text())
    failed, ok = doc["specializations"]
    assert "out of memory in round 2" in failed["error"]
    assert len(ok["rounds"]) == 3


def test_ctrl_c_in_a_later_round_keeps_the_rounds_that_finished(tmp_path):
    class StopsInRound2(Copy):
        def run(self, state):
            if state.round_index == 1:
                raise KeyboardInterrupt
            super().run(state)

    ex = executor(tmp_path, "--rounds", "3")
    ex.queue(Copy(np.int8))
    ex.queue(StopsInRound2(np.int64))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 130
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [len(s["rounds"]) for s in doc["specializations"]] == [2, 1]


def test_rounds_must_be_positive(tmp_path, capsys):
    ex = executor(tmp_path, "--rounds", "0")
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err
    assert not Path(tmp_path / "results.json").exists()


def test_output_batches_tags_each_batch_with_its_round(tmp_path):
    ex = executor(tmp_path, "--rounds", "2", "--output-batches")
    ex.queue(Copy(np.int8))
    spec = ex.run()["specializations"][0]
    rounds = [b["round"] for b in spec["batches"]]
    assert rounds == sorted(rounds) and set(rounds) == {0, 1}
    assert len(spec["batches"]) == spec["calls"]["batches"]


def test_sm_clock_is_the_average_over_all_rounds(tmp_path):
    dev = FakeDevice(0.25, sm_clock_mhz=1900.0)
    ex = executor(tmp_path, "--rounds", "3", device=dev)
    ex.queue(Copy(np.int8))
    spec = ex.run()["specializations"][0]
    assert spec["sm_clock"]["average_mhz"] == pytest.approx(1900.0, rel=1e-6)
    assert all(math.isclose(r["sm_clock_mhz"], 1900.0, rel_tol=1e-6) for r in spec["rounds"])


def test_every_round_but_the_first_measures_on_a_renewed_stream(tmp_path):
    dev = FakeDevice(0.25)
    ex = executor(tmp_path, "--rounds", "3", device=dev)
    ex.queue(Copy(np.int8))
    ex.queue(Copy(np.int64))
    ex.run()
    # 2 specializations x 3 rounds = 6 measurements; the first uses the device as prepared
    assert dev.renewals == 5
    kernels_before_first_renew = dev.ops[: dev.ops.index("renew")].count("kernel")
    assert kernels_before_first_renew > 0  # the first round ran before any renewal


def test_rounds_load_as_round_records_and_a_bad_one_is_named():
    raw = [{"round": k, "gpu_ms_per_call": 0.25 + k / 100, "bytes_per_second": 1e12 - k, "items_per_second": 5e11,
            "noise_timeout": k == 1, "noise_percent": 0.1, "batches": 4, "kernel_calls": 256,
            "kernel_calls_per_batch": 64, "elapsed_secs": {"host": 0.3, "gpu": 0.1}} for k in range(3)]
    doc = document([{**spec("type: char", 1e12), "rounds": raw}], version=RESULTS_VERSION)
    loaded = results_from_dict(doc).specializations[0]
    assert [r.gpu_ms_per_call for r in loaded.rounds] == [0.25, 0.26, 0.27]
    assert [r.noise_timeout for r in loaded.rounds] == [False, True, False]
    assert loaded.rounds[2].batch_count == 4 and loaded.rounds[2].elapsed_secs == Elapsed(host=0.3, gpu=0.1)
    assert results_from_dict(doc).to_dict()["specializations"][0]["rounds"] == raw
    bad = copy.deepcopy(doc)
    bad["specializations"][0]["rounds"][1]["noise_percent"] = -1.0
    with pytest.raises(ResultsFileError, match=r"specializations\[0\]\.rounds\[1\]\.noise_percent: must not be"):
        results_from_dict(bad)
    bad["specializations"][0]["rounds"][1] = {**raw[1], "batches": 4.0}
    with pytest.raises(ResultsFileError, match=r"rounds\[1\]\.batches: must be a whole number"):
        results_from_dict(bad)



# --------------------------------------------------------------------------- the estimate and the precision stop


def test_the_estimate_leaves_out_a_warm_up_from_four_rounds_on() -> None:
    from primbench.rounds import WARMUP_FROM, estimate, measured_rounds

    assert measured_rounds(WARMUP_FROM - 1) == slice(0, None)
    assert measured_rounds(WARMUP_FROM) == slice(1, None)
    three = estimate([2.0, 1.0, 1.0])
    assert three is not None and three.rounds == 3 and three.log_mean == pytest.approx(math.log(2) / 3)
    four = estimate([2.0, 1.0, 1.0, 1.0])
    assert four is not None and four.rounds == 3 and four.log_mean == 0.0 and four.standard_error == 0.0
    one = estimate([1.5])
    assert one is not None and one.standard_error is None


def test_the_precision_stop_needs_a_warm_up_three_measured_rounds_and_a_small_standard_error() -> None:
    from primbench.rounds import PRECISION_STOP, precise_enough

    steady = [1.0, 1.0, 1.0, 1.0]
    assert precise_enough(steady, 10)
    assert not precise_enough(steady[:3], 10)  # warm-up and two measured
    assert not precise_enough(steady, 4)  # the last planned round ends it anyway
    assert not precise_enough(steady, 3)  # too few planned rounds for a warm-up
    sd = 3 * PRECISION_STOP * math.sqrt(3)  # a standard error of 3x the stop
    wobbly = [1.0, *np.exp(np.array([-1.0, 0.0, 1.0]) * sd)]
    assert not precise_enough(wobbly, 10)


def test_a_specialization_stops_early_once_precise_and_a_noisy_one_runs_every_round(tmp_path: Path) -> None:
    """On the fake device: a steady kernel ends after its warm-up and 3 measured rounds; one whose
    rounds move 1 % runs all 10; both are interleaved, and the early one is not measured again."""
    log: list[tuple[str, int]] = []
    noisy = [0.25 * (1 + 0.01 * (-1) ** r) for r in range(10)]
    ex = executor(tmp_path, "--rounds", "10", "--min-secs", "0", device=FakeDevice(0.25))
    ex.queue(Recording(np.int8, log))
    ex.queue(Recording(np.int64, log, noisy))
    doc = ex.run()
    rounds = {s["name"]: len(s["rounds"]) for s in doc["specializations"]}
    assert rounds == {"type: char": 4, "type: long long": 10}
    char_setups = [r for t, r in log if t == "char"]
    assert char_setups == [0, 1, 2, 3]


def test_the_budget_stop_needs_a_warm_up_three_measured_rounds_and_the_budget_spent() -> None:
    from primbench.rounds import budget_spent

    assert budget_spent([0.3, 0.3, 0.3, 0.3], 10, 1.0)  # 1.2 s of a 1 s budget after 4 of 10 rounds
    assert not budget_spent([0.5, 0.5, 0.5], 10, 1.0)  # spent, but a warm-up and two measured
    assert not budget_spent([0.2, 0.2, 0.2, 0.2], 10, 1.0)  # not yet spent
    assert not budget_spent([0.3, 0.3, 0.3, 0.3], 4, 1.0)  # the last planned round ends it anyway
    assert not budget_spent([0.5, 0.5, 0.5], 3, 1.0)  # too few planned rounds for a warm-up
    assert not budget_spent([0.3, 0.3, 0.3, 0.3], 10, 0.0)  # --min-secs 0: no budget to spend


@pytest.mark.parametrize(("min_secs", "expected"), [("0.001", 4), ("5", 10)])
def test_rounds_that_overrun_the_budget_end_the_specialization_after_three_measured(
        tmp_path: Path, min_secs: str, expected: int) -> None:
    """On the fake device: a kernel whose rounds move 1 % (no precision stop) and whose shortest
    round (its window of batches of 2 ms of GPU time) outlasts its share of --min-secs stops after its
    warm-up and 3 measured rounds; with a budget its 10 rounds fit, it runs all of them."""
    log: list[tuple[str, int]] = []
    noisy = [0.25 * (1 + 0.01 * (-1) ** r) for r in range(10)]
    ex = executor(tmp_path, "--rounds", "10", "--min-secs", min_secs, device=FakeDevice(0.25))
    ex.queue(Recording(np.int64, log, noisy))
    doc = ex.run()
    (s,) = doc["specializations"]
    assert len(s["rounds"]) == expected and not s.get("error")
    assert [r for t, r in log if t != "test"] == list(range(expected))


class SlowSetup(Copy):
    """A copy benchmark whose setup takes `setup_secs` of host time, and whose test `test_secs`."""

    def __init__(self, dtype, setup_secs: float, test_secs: float) -> None:
        super().__init__(dtype)
        self.setup_secs, self.test_secs = setup_secs, test_secs

    def run(self, state: pb.State) -> None:
        time.sleep(self.setup_secs)
        items = state.size // self.dtype.itemsize
        state.set_items(items)
        state.add_reads(self.dtype, items)
        state.add_writes(self.dtype, items)
        state.test(lambda: time.sleep(self.test_secs))
        dev = state.device
        state.run(lambda: dev.launch(None))


def test_each_round_records_its_host_time_setup_and_warmup_apart(tmp_path):
    # results 4.10.0: where a run's wall goes beyond its measured batches. The setup sleeps 30 ms
    # in every round, the test (run in round 0 only, before the measuring) 40 ms.
    ex = executor(tmp_path, "--rounds", "3", "--min-secs", "0.03", device=FakeDevice(0.05))
    ex.queue(SlowSetup(np.int8, 0.03, 0.04))
    doc = ex.run()
    rounds = doc["specializations"][0]["rounds"]
    assert len(rounds) == 3
    for r in rounds:
        wall = r["wall_secs"]
        assert set(wall) == {"setup", "warmup", "total"}
        assert wall["setup"] >= 0.03 and wall["total"] >= wall["setup"] + wall["warmup"]
    assert rounds[0]["wall_secs"]["warmup"] >= 0.04  # the test runs before round 0 measures
    assert all(r["wall_secs"]["warmup"] < 0.04 for r in rounds[1:])
    # the model reads it back; a 4.9.0 file did not time it and reads without it
    read = results_from_dict(doc).specializations[0].rounds
    assert read[0].wall_secs is not None and read[0].wall_secs.setup == rounds[0]["wall_secs"]["setup"]
    older = copy.deepcopy(doc)
    older["context"]["results_version"] = "4.9.0"
    for r in older["specializations"][0]["rounds"]:
        del r["wall_secs"]
    assert all(r.wall_secs is None for r in results_from_dict(older).specializations[0].rounds)
