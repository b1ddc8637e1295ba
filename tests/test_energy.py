"""Energy per call (issue 26, the CPU part), through fakes: the energy counter read around each
round's measured batches (the fake device's, NVML's and AMD SMI's), joules per call and watts
per round and per specialization with their spread, the too-short flag, and ``--metric
energy`` in compare (lower is better)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import primbench as pb
from primbench.compare.core import compare_runs
from primbench.compare.model import Verdict
from primbench.console import Reporter, make_console
from primbench.energy import MIN_WINDOW_SECS, EnergyWindow, over_rounds, window
from primbench.metrics import CHOICES, by_name
from primbench.monitoring import NvmlMonitor
from primbench.monitoring_amd import AmdSmiMonitor
from primbench.results import load_results, results_from_dict
from tests.fakes import FakeDevice
from tests.test_monitoring_amd import FakeAmdSmi
from tests.test_monitoring_amd import two_gpus as amd_gpus
from tests.test_monitoring_nvml import FakeNvml, NVMLError, three_gpus


class Kernel(pb.Benchmark):
    def __init__(self, ms: float = 1.0) -> None:
        self.ms = ms

    def meta(self) -> dict[str, Any]:
        return {"algo": "k"}

    def run(self, state: pb.State) -> None:
        state.run(lambda: state.device.launch(self.ms))


def run(tmp_path: Path, device: FakeDevice, *args: str, name: str = "r.json", ms: float = 1.0,
        out: io.StringIO | None = None) -> dict[str, Any]:
    argv = ["--json-out", str(tmp_path / name), "--rounds", "1", *args]
    ex = pb.Executor(argv, device=device, reporter=Reporter(make_console(out or io.StringIO())), prog="bench")
    ex.queue(Kernel(ms))
    assert ex.run().exit_code == 0
    doc: dict[str, Any] = json.loads((tmp_path / name).read_text())
    return doc


class CountingLimit(FakeDevice):
    """A fake device that counts its power-limit reads (an NVML call each on a real GPU)."""

    reads = 0

    def power_limit_watts(self) -> float | None:
        self.reads += 1
        return super().power_limit_watts()


def test_the_power_limit_is_read_once_a_specialization_not_every_round(tmp_path: Path) -> None:
    device = CountingLimit(1.0, power_watts=300.0)
    doc = run(tmp_path, device, "--rounds", "4", "--min-secs", "1")
    assert len(doc["specializations"][0]["rounds"]) == 4
    assert device.reads == 1  # 4 rounds, one read: the first round's
    assert doc["specializations"][0]["energy"]["power_limit_watts"] == 700.0


def test_a_window_reads_joules_per_call_and_watts() -> None:
    w = EnergyWindow(joules=300.0, secs=1.5, calls=1000)
    assert w.joules_per_call == pytest.approx(0.3) and w.watts == pytest.approx(200.0) and not w.too_short
    assert EnergyWindow(30.0, 0.5, 100).too_short  # shorter than the counter allows
    still = EnergyWindow(0.0, 2.0, 100)
    assert still.too_short and still.joules_per_call is None and still.watts is None
    assert window(None, 5.0, 1.0, 10) is None and window(5.0, None, 1.0, 10) is None
    assert window(10.0, 4.0, 1.0, 10) == EnergyWindow(0.0, 1.0, 10)  # a counter that went back: not moved


def test_over_rounds_sums_the_windows_and_gives_their_spread() -> None:
    rec = over_rounds([EnergyWindow(100.0, 1.0, 1000), EnergyWindow(110.0, 1.0, 1000),
                       EnergyWindow(5.0, 0.05, 50)], 700.0)
    assert rec["joules_per_call"] == pytest.approx(215.0 / 2050)
    assert rec["watts"] == pytest.approx(215.0 / 2.05)
    assert rec["rounds_too_short"] == 1 and rec["power_limit_watts"] == 700.0
    assert rec["cv_between_rounds_percent"] > 0
    assert over_rounds([EnergyWindow(100.0, 1.0, 1000)], None)["cv_between_rounds_percent"] is None


def test_a_long_enough_round_records_joules_per_call_and_watts(tmp_path: Path) -> None:
    device = FakeDevice(1.0, power_watts=300.0)
    out = io.StringIO()
    doc = run(tmp_path, device, "--min-secs", "2", out=out)
    spec = doc["specializations"][0]
    energy, rnd = spec["energy"], spec["rounds"][0]["energy"]
    assert rnd["too_short"] is False and rnd["window_secs"] >= MIN_WINDOW_SECS
    assert rnd["joules"] == pytest.approx(300.0 * rnd["window_secs"], rel=0.1)  # within one 100 ms step
    assert rnd["joules_per_call"] == pytest.approx(rnd["joules"] / spec["calls"]["kernel_calls"])
    assert energy["watts"] == pytest.approx(300.0, rel=0.1)
    # a 1 ms kernel at 300 W: about 0.3 J a call (the board's whole energy, host gaps included)
    assert energy["joules_per_call"] == pytest.approx(0.3, rel=0.1)
    assert energy["power_limit_watts"] == 700.0 and energy["rounds_too_short"] == 0
    samples = rnd["power_samples_watts"]  # the power draw after each measured batch (the fake's: constant)
    # one a measured batch (a last sizing batch kept as the first measured one is not sampled)
    assert samples["count"] in (spec["calls"]["batches"], spec["calls"]["batches"] - 1)
    assert samples["mean"] == samples["min"] == samples["max"] == 300.0
    assert "J/call" in out.getvalue() and " W" in out.getvalue()
    s = load_results(tmp_path / "r.json").specializations[0]
    assert s.joules_per_call == energy["joules_per_call"] and s.rounds[0].joules_per_call == rnd["joules_per_call"]


def test_twice_the_work_reads_twice_the_joules_on_the_fake(tmp_path: Path) -> None:
    one = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2", ms=1.0)
    two = run(tmp_path, FakeDevice(2.0, power_watts=300.0), "--min-secs", "2", ms=2.0)
    ratio = two["specializations"][0]["energy"]["joules_per_call"] / one["specializations"][0]["energy"][
        "joules_per_call"]
    assert ratio == pytest.approx(2.0, rel=0.1)


def test_a_round_too_short_for_the_counter_is_flagged(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "0.2", "--rounds", "1")
    spec = doc["specializations"][0]
    assert spec["rounds"][0]["energy"]["too_short"] is True
    assert spec["energy"]["rounds_too_short"] == 1


class _CountedReads(FakeDevice):
    """A fake whose energy counter and power draw count their reads."""

    reads = 0
    power_reads = 0

    def energy_joules(self) -> float | None:
        type(self).reads += 1
        return super().energy_joules()

    def power_watts(self) -> float | None:
        type(self).power_reads += 1
        return super().power_watts()


@pytest.mark.parametrize(("min_secs", "rounds", "reads"), [("0.3", "4", False), ("0", "1", False),
                                                          ("0.4", "4", True), ("1", "10", True)])
def test_rounds_planned_shorter_than_one_counter_update_do_not_read_it(tmp_path: Path, min_secs: str,
                                                                        rounds: str, reads: bool) -> None:
    """A round planned under `COUNTER_UPDATE_SECS` (0.1 s: a --processes worker's 31 ms rounds) leaves
    the counter alone: each read costs 4 ms on an H100 and such a window mostly sees no step. Nor is the power
    draw read after each batch: its samples serve only the energy window (`power_samples_watts`)."""
    _CountedReads.reads = _CountedReads.power_reads = 0
    doc = run(tmp_path, _CountedReads(1.0, power_watts=300.0), "--min-secs", min_secs, "--rounds", rounds)
    spec = doc["specializations"][0]
    assert (_CountedReads.reads > 0) is reads
    assert (_CountedReads.power_reads > 0) is reads
    assert ("energy" in spec) is reads
    assert all(("energy" in r) is reads for r in spec["rounds"])


def test_rounds_have_their_spread(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "3", "--rounds", "3")
    energy = doc["specializations"][0]["energy"]
    assert len([r["energy"] for r in doc["specializations"][0]["rounds"]]) == 3
    assert energy["cv_between_rounds_percent"] is not None


def test_without_a_counter_or_monitoring_there_is_no_energy(tmp_path: Path) -> None:
    assert "energy" not in run(tmp_path, FakeDevice(1.0), "--min-secs", "1")["specializations"][0]
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "1", "--no-monitoring")
    assert "energy" not in doc["specializations"][0]


def test_energy_is_a_metric_lower_is_better() -> None:
    assert CHOICES["energy"] == "joules_per_call"
    metric = by_name("energy")
    assert metric.higher_is_better is False and metric.format(0.0557) == "55.70 mJ"


def _pair(tmp_path: Path, head_ms: float) -> Any:
    for name, ms in (("base.json", 1.0), ("head.json", head_ms)):
        # 8 s over 4 rounds: each round's measured window passes the counter's 1 s
        run(tmp_path, FakeDevice(ms, power_watts=300.0), "--min-secs", "8", "--rounds", "4", name=name, ms=ms)
    return compare_runs([load_results(tmp_path / "base.json")], [load_results(tmp_path / "head.json")],
                        metric="energy")


def test_compare_on_energy_flags_ten_percent_more_work(tmp_path: Path) -> None:
    c = _pair(tmp_path, 1.1)
    row = c.rows[0]
    assert row.metric == "joules_per_call" and row.verdict is Verdict.REGRESSION
    assert row.change is not None and row.change == pytest.approx(0.1, abs=0.03)


def test_compare_on_energy_of_an_a_a_pair_finds_nothing(tmp_path: Path) -> None:
    c = _pair(tmp_path, 1.0)
    assert c.rows[0].verdict is not Verdict.REGRESSION and not c.failed("regression")


def test_rounds_too_short_for_the_counter_make_an_energy_row_inconclusive(tmp_path: Path) -> None:
    run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "8", "--rounds", "4", name="base.json")
    run(tmp_path, FakeDevice(1.3, power_watts=300.0), "--min-secs", "0.4", "--rounds", "4", name="head.json",
        ms=1.3)
    c = compare_runs([load_results(tmp_path / "base.json")], [load_results(tmp_path / "head.json")],
                     metric="energy")
    assert c.rows[0].verdict is Verdict.INCONCLUSIVE
    assert "rounds too short for the energy counter in head" in (c.rows[0].reason or "")


def test_history_keeps_the_energy_in_the_stored_document(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from tests.history_data import ingest, open_for_query

    run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2")
    db = tmp_path / "h.duckdb"
    assert [o.status for o in ingest([tmp_path / "r.json"], db).outcomes] == ["stored"]
    with open_for_query(db) as con:
        extra = json.loads(con.execute("SELECT extra FROM specializations").fetchone()[0])
    assert extra["energy"]["joules_per_call"] == pytest.approx(0.3, rel=0.1)


def test_the_cli_compares_on_energy(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from primbench.cli import app

    _pair(tmp_path, 1.0)
    done = CliRunner().invoke(app, ["compare", str(tmp_path / "base.json"), str(tmp_path / "head.json"),
                                    "--metric", "energy"])
    assert done.exit_code == 0, done.output
    assert "geometric mean of head/base energy per call" in done.output and " mJ " in done.output


def test_an_older_file_has_no_energy_and_compares_inconclusive_on_it(tmp_path: Path) -> None:
    run(tmp_path, FakeDevice(1.0), "--min-secs", "0", name="old.json")
    doc = json.loads((tmp_path / "old.json").read_text())
    doc["context"]["results_version"] = "4.4.0"
    for spec in doc["specializations"]:
        spec.pop("throttled_batches", None)
    old = results_from_dict(doc)
    assert old.specializations[0].joules_per_call is None
    c = compare_runs([old], [old], metric="energy")
    assert c.rows[0].verdict is Verdict.INCONCLUSIVE


# --------------------------------------------------------------------------- the monitors


class EnergyNvml(FakeNvml):
    def __init__(self, *args: Any, energy_mj: Any = 123_456_789, limit_mw: Any = 700_000, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.energy_mj, self.limit_mw = energy_mj, limit_mw

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        if self.energy_mj is None:
            raise NVMLError(3)  # NVML_ERROR_NOT_SUPPORTED
        return int(self.energy_mj)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> int:
        if self.limit_mw is None:
            raise NVMLError(3)
        return int(self.limit_mw)

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        if self.limit_mw is None:
            raise NVMLError(3)
        return 346_000


def test_nvml_reads_the_energy_counter_in_joules_and_the_power_limit() -> None:
    mon = NvmlMonitor("0000:06:00.0", nvml=EnergyNvml(three_gpus()))
    assert mon.energy_joules() == pytest.approx(123_456.789) and mon.power_limit_watts() == 700.0
    assert mon.power_watts() == 346.0
    unsupported = NvmlMonitor("0000:06:00.0", nvml=EnergyNvml(three_gpus(), energy_mj=None, limit_mw=None))
    assert unsupported.energy_joules() is None and unsupported.power_limit_watts() is None
    assert unsupported.power_watts() is None


class EnergyAmdSmi(FakeAmdSmi):
    def __init__(self, *args: Any, count: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.count = count

    def amdsmi_get_energy_count(self, h: Any) -> Any:
        self._handle(h)
        if self.count is None:
            raise self.AmdSmiLibraryException(2)
        return self.count


@pytest.mark.parametrize(("count", "joules"), [
    ({"energy_accumulator": 2_000_000, "counter_resolution": 15.3, "timestamp": 1}, 30.6),  # AMD SMI 6.1 on
    ({"power": 1_000_000, "counter_resolution": 15.3, "timestamp": 1}, 15.3),  # older AMD SMI
    ({"counter_resolution": 15.3}, None),
    ("not a dict", None),
    (None, None),
])
def test_amd_smi_reads_the_energy_count_times_its_resolution(count: Any, joules: float | None) -> None:
    mon = AmdSmiMonitor("0000:83:00.0", amdsmi=EnergyAmdSmi(amd_gpus(), count=count))
    got = mon.energy_joules()
    assert got == (pytest.approx(joules) if joules is not None else None)


def test_history_compare_on_energy_reads_the_stored_documents(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from primbench.history.branch_compare import branch_comparison
    from primbench.history.selector import Selector
    from tests.history_data import ingest

    for name, ms, commit in (("base.json", 1.0, "a" * 40), ("head.json", 1.1, "b" * 40)):
        run(tmp_path, FakeDevice(ms, power_watts=300.0), "--min-secs", "8", "--rounds", "4", "--branch", "main",
            "--commit", commit, name=name, ms=ms)
    for name, date in (("base.json", "2026-01-01T08:00:00+00:00"), ("head.json", "2026-01-02T08:00:00+00:00")):
        doc = json.loads((tmp_path / name).read_text())  # one second apart at most: give them distinct days
        doc["context"]["general"]["date"] = date
        (tmp_path / name).write_text(json.dumps(doc))
    ingest([tmp_path / "base.json"], tmp_path / "h.duckdb")
    ingest([tmp_path / "head.json"], tmp_path / "h.duckdb")
    bc = branch_comparison(tmp_path / "h.duckdb", Selector(branch="main"), "main", metric="energy")
    assert bc.head_commit == "b" * 40 and bc.base_commit == "a" * 40
    row = bc.comparison.rows[0]
    assert row.metric == "joules_per_call" and row.verdict is Verdict.REGRESSION


def test_the_energy_baseline_subtracts_the_fixed_part_so_twice_the_work_reads_twice_net(tmp_path: Path) -> None:
    """A cold call pays a cache clear (here 0.5 ms, as long as the kernel) besides its kernel:
    the board's joules per call of twice the work are well under twice, the net ones are twice."""
    args = ("--min-secs", "2", "--energy-baseline")
    one = run(tmp_path, FakeDevice(0.5, power_watts=300.0, clear_ms=0.5), *args, ms=0.5, name="one.json")
    two = run(tmp_path, FakeDevice(1.0, power_watts=300.0, clear_ms=0.5), *args, ms=1.0, name="two.json")
    s1, s2 = one["specializations"][0], two["specializations"][0]
    gross = s2["energy"]["joules_per_call"] / s1["energy"]["joules_per_call"]
    net = s2["energy_baseline"]["net_joules_per_call"] / s1["energy_baseline"]["net_joules_per_call"]
    assert gross < 1.6  # (1.0 + 0.5) / (0.5 + 0.5) with the host's part: the clear is in the gross
    assert net == pytest.approx(2.0, rel=0.05)
    base = s1["energy_baseline"]
    # the empty calls' joules: the clear (0.5 ms at 300 W, 0.15 J) and the host's part
    assert base["joules_per_call"] == pytest.approx(0.15, rel=0.15)
    assert base["share_percent"] == pytest.approx(100 * base["joules_per_call"] / s1["energy"]["joules_per_call"])
    assert base["rounds_too_short"] == 0 and base["window_secs"] >= 2.0
    rnd = s1["rounds"][0]["energy_baseline"]
    assert rnd["calls"] >= s1["calls"]["kernel_calls_per_batch"] and rnd["window_secs"] >= 2.0
    assert rnd["joules_per_call"] == pytest.approx(rnd["joules"] / rnd["calls"])
    assert one["context"]["settings"]["energy_baseline"] is True
    loaded = load_results(tmp_path / "one.json").specializations[0]
    assert loaded.energy_baseline is not None
    assert loaded.energy_baseline.net_joules_per_call == base["net_joules_per_call"]


def test_the_energy_baseline_of_a_hot_run_has_no_clears(tmp_path: Path) -> None:
    device = FakeDevice(1.0, power_watts=300.0, clear_ms=0.5)
    doc = run(tmp_path, device, "--min-secs", "2", "--energy-baseline", "--hot")
    base = doc["specializations"][0]["energy_baseline"]
    assert base["joules_per_call"] < 0.05  # events and host operations only: no 0.15 J clear
    assert base["net_joules_per_call"] == pytest.approx(0.3, rel=0.1)  # the 1 ms kernel at 300 W


def test_the_energy_baseline_takes_a_round_each_and_is_absent_without_the_flag(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "3", "--rounds", "3", "--energy-baseline")
    spec = doc["specializations"][0]
    assert [("energy_baseline" in r) for r in spec["rounds"]] == [True, True, True]
    assert spec["energy_baseline"]["net_cv_between_rounds_percent"] is not None
    plain = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2", name="plain.json")
    assert "energy_baseline" not in plain["specializations"][0]
    assert "energy_baseline" not in plain["specializations"][0]["rounds"][0]
    # no counter: nothing to subtract from, and no empty calls are run
    device = FakeDevice(1.0)
    none = run(tmp_path, device, "--min-secs", "0", "--energy-baseline", name="none.json")
    assert "energy_baseline" not in none["specializations"][0]


def test_a_4_6_0_file_reads_with_no_energy_baseline(tmp_path: Path) -> None:
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2", "--energy-baseline")
    doc["context"]["results_version"] = "4.6.0"
    del doc["context"]["settings"]["energy_baseline"]
    for spec in doc["specializations"]:
        spec.pop("energy_baseline")
        for r in spec["rounds"]:
            r.pop("energy_baseline")
    old = results_from_dict(doc)
    assert old.version == "4.6.0" and old.specializations[0].energy_baseline is None
    assert old.specializations[0].joules_per_call == doc["specializations"][0]["energy"]["joules_per_call"]


def test_the_terminal_line_shows_the_net_energy(tmp_path: Path) -> None:
    out = io.StringIO()
    run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2", "--energy-baseline", out=out)
    assert "J/call" in out.getvalue() and "(net " in out.getvalue()
    plain = io.StringIO()
    run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "2", name="p.json", out=plain)
    assert "(net " not in plain.getvalue()


def test_with_the_baseline_every_window_is_aligned_to_the_counters_updates(tmp_path: Path) -> None:
    """The fake's counter moves every 100 ms: a plain window between two readings errs by up to a
    step at each end (10 % of a 2 s round); one that starts as the counter moves and takes out the
    idle tail after its end reads the board's 300 W to within the polling interval."""
    doc = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "3", "--rounds", "3", "--energy-baseline")
    for r in doc["specializations"][0]["rounds"]:
        energy, base = r["energy"], r["energy_baseline"]
        assert energy["aligned"] is True and base["aligned"] is True
        assert energy["joules"] == pytest.approx(300.0 * energy["window_secs"], rel=0.002)
        assert base["joules"] == pytest.approx(300.0 * base["window_secs"], rel=0.002)
    plain = run(tmp_path, FakeDevice(1.0, power_watts=300.0), "--min-secs", "3", "--rounds", "3", name="p.json")
    assert all("aligned" not in r["energy"] for r in plain["specializations"][0]["rounds"])


def test_wait_for_tick_gives_up_on_a_counter_that_never_moves() -> None:
    from primbench.energy import Tick, aligned_window, wait_for_tick

    clock = [0.0]

    def sleep(secs: float) -> None:
        clock[0] += secs

    assert wait_for_tick(lambda: 5.0, lambda: clock[0], sleep, timeout_secs=0.1) is None
    assert clock[0] == pytest.approx(0.1, abs=0.001)
    assert wait_for_tick(lambda: None, lambda: clock[0], sleep) is None
    steps = iter([1.0, 1.0, 1.0, 2.0])
    assert wait_for_tick(lambda: next(steps), lambda: clock[0], sleep) == Tick(pytest.approx(0.1015), 2.0)
    # from a tick at 0 s (10 J) to work ending at 1.05 s; the counter moved at 1.1 s (330 J) and
    # 1.2 s (340 J: idle 100 W): 320 J less the 0.05 s tail at 100 W
    w = aligned_window(Tick(0.0, 10.0), 1.05, Tick(1.1, 330.0), Tick(1.2, 340.0), 100)
    assert w is not None and w.joules == pytest.approx(315.0) and w.aligned and w.secs == pytest.approx(1.05)
    assert aligned_window(Tick(0.0, 10.0), 1.05, None, None, 100) is None
