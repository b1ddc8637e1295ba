"""``--devices`` (issue 27): a suite across 4 fake GPUs of one host (`tests/fake_gpus.py`), one
worker process each: sharding, replication, a worker that crashes, hangs or loses its device,
per-GPU identity in results.json, and a run on one GPU unchanged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from primbench.results import RESULTS_VERSION, load_results
from primbench.settings import Settings, device_list
from primbench.workers import placement, silence_limit

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "fake_gpus.py"
FAST = ("--rounds", "1", "--min-secs", "0.02", "--noise-timeout-secs", "5")
NAMES = [f"n: {i}" for i in range(1, 9)]


def run(tmp: Path, *args: str, faults: str = "", gpus: int = 4, model: str | None = None,
        out: str = "r.json", slower: str = "") -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": str(gpus), "PRIMBENCH_FAKE_FAULTS": faults, "PRIMBENCH_FAKE_SLOWER": slower}
    if model is not None:
        env["PRIMBENCH_FAKE_MODEL"] = model
    env.pop("PRIMBENCH_WORKER", None)
    done = subprocess.run([sys.executable, str(PROGRAM), *FAST, "--json-out", out, *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)
    path = tmp / out
    return done, (json.loads(path.read_text()) if path.is_file() else None)


def gpu_of(spec: dict[str, Any]) -> int:
    return int(spec["gpu"]["index"])


def test_the_placement_is_round_robin_in_the_programs_order_or_everything_everywhere() -> None:
    assert placement(8, [0, 1, 3], replicate=False) == {0: [0, 3, 6], 1: [1, 4, 7], 3: [2, 5]}
    assert placement(2, [0, 1, 2, 3], replicate=False) == {0: [0], 1: [1], 2: [], 3: []}
    assert placement(3, [2, 0], replicate=True) == {2: [0, 1, 2], 0: [0, 1, 2]}
    assert device_list("all", 4) == [0, 1, 2, 3] and device_list(" 3, 0 ", 4) == [3, 0]
    # the longest a healthy worker goes between two batches, plus the setup's grace; or as given
    assert silence_limit(Settings()) == 10 + 60 + 60 + 10 + 60
    assert silence_limit(Settings(worker_timeout_secs=2.5)) == 2.5


@pytest.mark.parametrize(("args", "message"), [
    (("--devices", "0,9"), "--devices '0,9': there is no GPU 9 (this host has 4: 0-3)"),
    (("--devices", "1,1"), "--devices '1,1': GPU 1 is given twice"),
    (("--devices", "a"), "--devices 'a': give 'all' or GPU indexes"),
    (("--replicate",), "--replicate needs --devices"),
    (("--devices", "all", "--device", "1"), "--device and --devices exclude each other"),
    (("--devices", "all", "--profile"), "--profile and --devices exclude each other"),
    (("--devices", "all", "--results-per-gpu", "--json-out", "-"), "--results-per-gpu needs a file for --json-out"),
])
def test_bad_devices_are_one_line_and_exit_2_before_anything_runs(tmp_path: Path, args: tuple[str, ...],
                                                                  message: str) -> None:
    done, doc = run(tmp_path, *args)
    assert done.returncode == 2 and doc is None
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_sharded_over_4_gpus_each_specialization_names_its_gpu_and_each_gpu_is_recorded_once(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None and doc["context"]["results_version"] == RESULTS_VERSION
    specs = doc["specializations"]
    assert [s["name"] for s in specs] == NAMES and [s["index"] for s in specs] == list(range(8))
    assert [gpu_of(s) for s in specs] == [0, 1, 2, 3, 0, 1, 2, 3]  # round-robin in the program's order
    assert all(s["gpu"] == {"index": gpu_of(s), "uuid": f"GPU-fake-{gpu_of(s)}",
                            "serial": f"fake-serial-{gpu_of(s)}"} for s in specs)
    assert all(s.get("error") is None and s["bytes_per_second"] is not None for s in specs)
    devices = doc["context"]["devices"]
    assert [d["index"] for d in devices] == [0, 1, 2, 3]
    assert [d["gpu"]["uuid"] for d in devices] == [f"GPU-fake-{i}" for i in range(4)]
    assert [d["gpu"]["pci_bus_id"] for d in devices] == [f"0000:{i:02x}:00.0" for i in range(4)]
    assert all(d["specializations"] == 2 and "error" not in d and "thermal" in d for d in devices)
    assert doc["context"]["general"]["gpu"]["uuid"] == "GPU-fake-0"  # the first GPU's, for older readers
    assert doc["context"]["general"]["specialization_count"] == 8
    assert doc["context"]["settings"]["devices"] == "all" and "replicate" not in doc["context"]["settings"]
    assert doc["context"]["settings"]["device"] is None and doc["context"]["settings"]["json_out"] == "r.json"
    assert doc["summary"]["failures"] == 0
    assert "GPU 3: its worker finished (2 specializations)" in done.stdout
    # the model reads it, and splits it into one document per physical GPU
    results = load_results(tmp_path / "r.json")
    parts = results.per_gpu()
    assert [p.gpu.uuid for p in parts] == [f"GPU-fake-{i}" for i in range(4)]
    assert [[s.name for s in p.specializations] for p in parts] == [NAMES[i::4] for i in range(4)]


def test_a_list_of_devices_shards_over_those_alone(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "3,0,1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None
    assert [gpu_of(s) for s in doc["specializations"]] == [3, 0, 1, 3, 0, 1, 3, 0]
    assert [d["index"] for d in doc["context"]["devices"]] == [3, 0, 1]


def test_an_aa_pair_of_runs_lands_every_specialization_on_the_same_gpu(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, a = run(tmp_path / "a", "--devices", "all")
    _, b = run(tmp_path / "b", "--devices", "all")
    assert a is not None and b is not None
    assert [s["gpu"] for s in a["specializations"]] == [s["gpu"] for s in b["specializations"]]


def test_replicated_every_specialization_runs_on_every_gpu(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "all", "--replicate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None
    specs = doc["specializations"]
    assert len(specs) == 32 and [s["index"] for s in specs] == list(range(32))
    assert [(s["name"], gpu_of(s)) for s in specs] == [(n, g) for n in NAMES for g in range(4)]
    assert doc["context"]["settings"]["replicate"] is True
    assert all(d["specializations"] == 8 for d in doc["context"]["devices"])
    parts = load_results(tmp_path / "r.json").per_gpu()
    assert len(parts) == 4 and all([s.name for s in p.specializations] == NAMES for p in parts)


def test_a_worker_that_crashes_fails_its_specializations_and_the_run_goes_on(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "all", faults="2:crash")
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc is not None
    by_gpu = {g: [s for s in doc["specializations"] if gpu_of(s) == g] for g in range(4)}
    assert [s["name"] for s in by_gpu[2]] == ["n: 3", "n: 7"]  # its places kept, failed with the reason
    assert all(s["error"] == "GPU 2: its worker exited with code 70" for s in by_gpu[2])
    assert all(s.get("error") is None for g in (0, 1, 3) for s in by_gpu[g])
    assert doc["context"]["devices"][2]["error"] == "its worker exited with code 70"
    assert "error" not in doc["context"]["devices"][0]
    assert doc["summary"]["failures"] == 2
    assert "GPU 2: its worker exited with code 70" in done.stdout + done.stderr
    # its output is kept beside the results (the workers' folder is removed), the others' not
    assert "GPU 2: its worker's output is in r.gpu2.log" in done.stdout
    assert (tmp_path / "r.gpu2.log").is_file() and not (tmp_path / "r.gpu0.log").exists()


def test_what_a_crashed_worker_finished_is_kept(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "all", faults="2:crash@1")  # in its second specialization
    assert done.returncode == 1
    assert doc is not None
    mine = {s["name"]: s for s in doc["specializations"] if gpu_of(s) == 2}
    assert mine["n: 3"].get("error") is None and mine["n: 3"]["items_per_second"] > 0  # its checkpoint
    assert mine["n: 7"]["error"] == "GPU 2: its worker exited with code 70"
    assert doc["context"]["devices"][2]["gpu"]["uuid"] == "GPU-fake-2"  # its identity, from the checkpoint


def test_a_worker_that_hangs_is_killed_after_the_silence_limit(tmp_path: Path) -> None:
    started = time.monotonic()
    done, doc = run(tmp_path, "--devices", "all", "--worker-timeout-secs", "1.5", faults="1:hang@1")
    assert time.monotonic() - started < 60  # not the fake kernel's hour
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc is not None
    mine = {s["name"]: s for s in doc["specializations"] if gpu_of(s) == 1}
    assert mine["n: 2"].get("error") is None  # finished before it hung
    assert mine["n: 6"]["error"].startswith("GPU 1: its worker made no progress for ")
    assert mine["n: 6"]["error"].endswith("(limit 1.5 s: it hangs); killed")
    assert all(s.get("error") is None for s in doc["specializations"] if gpu_of(s) != 1)
    assert doc["context"]["settings"]["worker_timeout_secs"] == 1.5


def test_a_device_that_disappears_fails_its_specializations(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "0,3", faults="3:gone")
    assert done.returncode == 1
    assert doc is not None
    for s in doc["specializations"]:
        if gpu_of(s) == 3:
            assert s["error"] == "GPU 3: cudaErrorDevicesUnavailable: the device is gone"
        else:
            assert s.get("error") is None
    assert "error" not in doc["context"]["devices"][1]  # its worker ran to the end and said so: exit 1


def test_a_run_on_one_gpu_writes_no_key_of_the_devices(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--device", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is not None
    assert "devices" not in doc["context"] and all("gpu" not in s for s in doc["specializations"])
    assert not {"devices", "replicate", "worker_timeout_secs", "results_per_gpu"} & set(doc["context"]["settings"])
    assert doc["context"]["general"]["gpu"]["uuid"] == "GPU-fake-2"
    assert load_results(tmp_path / "r.json").per_gpu()[0].specializations == \
        load_results(tmp_path / "r.json").specializations


# --------------------------------------------------------------------------- compare and history


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One suite run on one GPU, sharded and replicated over 4, and on 4 GPUs of another model."""
    out: dict[str, Path] = {}
    for name, args, model in (("one", ("--device", "0"), None), ("sharded", ("--devices", "all"), None),
                              ("sharded2", ("--devices", "all"), None),
                              ("replicated", ("--devices", "all", "--replicate"), None),
                              ("replicated2", ("--devices", "all", "--replicate"), None),
                              ("other", ("--devices", "all"), "Other GPU")):
        folder = tmp_path_factory.mktemp(name)
        done, _ = run(folder, *args, "--rounds", "3", model=model)
        assert done.returncode == 0, done.stdout + done.stderr
        out[name] = folder / "r.json"
    return out


def compared(base: Path, head: Path, **kwargs: Any) -> Any:
    from primbench.compare.core import compare_runs, load_side

    return compare_runs(load_side(base), load_side(head), **kwargs)


def test_one_gpu_against_a_4_gpu_sharded_run_of_the_same_model_compares_and_says_so(suites: dict[str, Path]) -> None:
    result = compared(suites["one"], suites["sharded"])
    assert [r.name for r in result.rows] == NAMES and result.summary.compared == 8
    assert all(r.comparable for r in result.rows)
    assert any("head ran across 4 GPUs of one host (--devices, sharded)" in w for w in result.warnings)
    # the specializations measured on other physical GPUs of the model: the environment warning
    physical = [d for d in result.comparability.warnings if d.what == "physical GPU (same model)"]
    assert physical and physical[0].base == "GPU-fake-0"
    assert physical[0].head == "GPU-fake-0, GPU-fake-1, GPU-fake-2, GPU-fake-3"
    # two sharded runs of one host: the same GPUs, nothing to warn about
    again = compared(suites["sharded"], suites["sharded2"])
    assert not [d for d in again.comparability.warnings if d.what == "physical GPU (same model)"]


def test_another_gpu_model_on_the_sharded_side_is_not_comparable(suites: dict[str, Path]) -> None:
    from primbench.compare.comparability import NotComparableError

    with pytest.raises(NotComparableError, match="GPU model"):
        compared(suites["one"], suites["other"])


def test_a_replicated_run_is_compared_one_row_per_physical_gpu_never_a_mix(suites: dict[str, Path]) -> None:
    result = compared(suites["replicated"], suites["replicated2"])
    assert [r.name for r in result.rows] == [f"{n} @ GPU-fake-{g}" for n in NAMES for g in range(4)]
    assert result.summary.compared == 32
    # against one GPU: the rows of that GPU pair, the other GPUs' are only in base
    against_one = compared(suites["replicated"], suites["one"])
    paired = [r.name for r in against_one.rows if r.verdict.value not in ("removed", "added")]
    assert paired == [f"{n} @ GPU-fake-0" for n in NAMES]


def test_history_keeps_one_series_per_physical_gpu(suites: dict[str, Path], tmp_path: Path) -> None:
    from primbench.history import commands
    from primbench.history.selector import Selector

    db = tmp_path / "h.duckdb"
    report = commands.ingest([suites["sharded"], suites["replicated"], suites["one"]], db=str(db))
    stored = [o for o in report.outcomes if o.status == "stored"]
    assert len(stored) == 4 + 4 + 1  # a --devices run is one run per physical GPU
    runs = commands.runs(str(db), Selector())
    assert sorted(runs["gpu_key"]) == sorted([f"GPU-fake-{g}" for g in range(4)] * 2 + ["GPU-fake-0"])
    series = commands.series(str(db), Selector(name="n: 1"), per_run=True)
    assert sorted(set(series["gpu_key"])) == [f"GPU-fake-{g}" for g in range(4)]
    per_gpu = series.groupby("gpu_key").size().to_dict()
    # n: 1 runs on GPU 0 when sharded, on every GPU replicated, and on GPU 0 alone: 3, 1, 1, 1 points
    assert per_gpu == {"GPU-fake-0": 3, "GPU-fake-1": 1, "GPU-fake-2": 1, "GPU-fake-3": 1}
    again = commands.ingest([suites["sharded"]], db=str(db))
    assert {o.status for o in again.outcomes} == {"duplicate"}


def test_ctrl_c_reaches_every_worker_and_what_finished_is_written(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": "4", "PRIMBENCH_FAKE_FAULTS": "0:hang@1,1:hang@1,2:hang@1,3:hang@1",
           "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    parent = subprocess.Popen([sys.executable, str(PROGRAM), *FAST, "--devices", "all", "--json-out", "r.json"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    # every worker is in its second specialization (hanging) once each has checkpointed its first
    while time.monotonic() < deadline and len(list((tmp_path / "tmp").glob("*/gpu*.partial.json"))) < 4:
        time.sleep(0.1)
    parent.send_signal(signal.SIGINT)
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == 130, out + err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [(s["name"], gpu_of(s)) for s in doc["specializations"]] == [(NAMES[g], g) for g in range(4)]
    assert all(s.get("error") is None for s in doc["specializations"])
    assert all("error" not in d for d in doc["context"]["devices"])


def test_results_per_gpu_writes_one_file_per_gpu_beside_json_out(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "0,2", "--results-per-gpu", "--csv-out", "r.csv")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc is None  # no whole-run file: one per GPU
    for g, names in ((0, NAMES[0::2]), (2, NAMES[1::2])):
        part = load_results(tmp_path / f"r.gpu{g}.json")
        assert [s.name for s in part.specializations] == names and part.gpu.uuid == f"GPU-fake-{g}"
        assert all(s.gpu is not None and s.gpu.index == g for s in part.specializations)
        assert [d.index for d in part.devices] == [g]
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 1 + 8  # the CSV stays the whole run's


def test_a_worker_whose_parent_is_gone_stops_at_its_next_heartbeat(tmp_path: Path) -> None:
    from primbench.workers import WorkerRole

    beat = tmp_path / "beat"
    beat.touch()
    mine = WorkerRole(0, (0,), str(tmp_path / "r.json"), str(beat), os.getppid())
    mine.beat()  # its parent is there: a heartbeat
    orphan = WorkerRole(0, (0,), str(tmp_path / "r.json"), str(beat), os.getppid() + 100000)
    with pytest.raises(KeyboardInterrupt, match=r"the parent process \d+ of this --devices worker is gone"):
        orphan.beat()
    assert WorkerRole.from_env({"PRIMBENCH_WORKER": orphan.to_env()}) == orphan


def test_a_slower_gpu_is_the_shift_of_its_own_suite_not_a_mix_with_the_others(tmp_path: Path) -> None:
    """Base on GPU 0; head sharded over GPUs 0 and 2, GPU 2's kernels 3 % slower: each pair of
    GPUs (a worker process each) is judged as a suite of its own."""
    twelve = ("--rounds", "3", "--axis", "n=[1:12:+1]")
    (tmp_path / "b").mkdir()
    (tmp_path / "h").mkdir()
    done, _ = run(tmp_path / "b", "--device", "0", *twelve, slower="2:0.03")
    assert done.returncode == 0, done.stdout + done.stderr
    done, _ = run(tmp_path / "h", "--devices", "0,2", *twelve, slower="2:0.03")
    assert done.returncode == 0, done.stdout + done.stderr
    result = compared(tmp_path / "b" / "r.json", tmp_path / "h" / "r.json")
    shift = result.suite_shift
    assert shift is not None and shift.detected and shift.specializations == 6  # GPU 2's six, alone
    assert -0.034 < shift.change < -0.026  # throughput 1/1.03 - 1 = -2.9 %
    assert any("the suite-wide shift is that of GPU GPU-fake-0 (base) against GPU GPU-fake-2 (head)" in w
               for w in result.warnings)
    on_gpu0 = {f"n: {i}" for i in range(1, 13, 2)}
    for row in result.rows:
        if row.name in on_gpu0:  # the same GPU on both sides: unchanged, whatever GPU 2 did
            assert row.verdict.value == "unchanged", (row.name, row.reason)
        else:
            assert row.verdict.value == "regression" and -0.034 < row.change < -0.026, (row.name, row.reason)


def test_a_program_that_gives_one_device_is_refused_devices(tmp_path: Path) -> None:
    import primbench as pb
    from primbench.console import Reporter
    from primbench.errors import UsageError
    from tests.fake_gpus import Copy
    from tests.fakes import FakeDevice

    ex = pb.Executor(["--devices", "0,1", "--json-out", str(tmp_path / "r.json")], device=FakeDevice(),
                     reporter=Reporter.quiet())
    ex.queue(Copy())
    with pytest.raises(UsageError, match=r"--devices: this program gives the executor one device"):
        ex.run()
    assert not (tmp_path / "r.json").exists()


def test_a_gpu_that_cannot_be_opened_fails_its_specializations_with_the_runtimes_line(tmp_path: Path) -> None:
    done, doc = run(tmp_path, "--devices", "all", faults="1:absent")
    assert done.returncode == 1
    assert doc is not None
    reason = "its worker exited with code 2: no usable GPU: cudaErrorNoDevice: GPU 1 cannot be opened"
    assert doc["context"]["devices"][1] == {"index": 1, "specializations": 2, "error": reason}
    assert [s["error"] for s in doc["specializations"] if gpu_of(s) == 1] == [f"GPU 1: {reason}"] * 2
    assert doc["specializations"][1]["gpu"] == {"index": 1}  # no identity: it never opened
    assert all(s.get("error") is None for s in doc["specializations"] if gpu_of(s) != 1)
