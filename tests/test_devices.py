"""``--devices`` (issue 27): a suite across 4 fake GPUs of one host (`tests/fake_gpus.py`), one
worker process each: sharding, replication, a worker that crashes, hangs or loses its device,
per-GPU identity in results.json, and a run on one GPU unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from primbench.results import load_results
from primbench.settings import Settings, device_list
from primbench.workers import placement, silence_limit

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "fake_gpus.py"
FAST = ("--rounds", "1", "--min-secs", "0.02", "--noise-timeout-secs", "5")
NAMES = [f"n: {i}" for i in range(1, 9)]


def run(tmp: Path, *args: str, faults: str = "", gpus: int = 4, model: str | None = None,
        out: str = "r.json") -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRIMBENCH_FAKE_DEVICES": str(gpus), "PRIMBENCH_FAKE_FAULTS": faults}
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
    assert doc is not None and doc["context"]["results_version"] == "4.8.0"
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
    assert not {"devices", "replicate", "worker_timeout_secs"} & set(doc["context"]["settings"])
    assert doc["context"]["general"]["gpu"]["uuid"] == "GPU-fake-2"
    assert load_results(tmp_path / "r.json").per_gpu()[0].specializations == \
        load_results(tmp_path / "r.json").specializations
