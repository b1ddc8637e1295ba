"""The executor against the fake device: options, queue, outputs, failures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from primbench.results import load_results
from tests.fakes import FakeDevice

SEED_EXAMPLE_KEYS = {
    "context": ["results_version", "general", "settings", "flags"],
    "general": [
        "algorithm", "specialization_count", "library_build_type", "gpu", "backend",
        "host_name", "date",
    ],
    "settings": [
        "size", "hot", "seed", "json_out", "csv_out", "filter", "dry", "min_gpu_ms_per_batch",
        "min_secs", "noise_timeout_secs", "batch_window_size", "noise_tolerance_percent",
        "min_gpu_temp", "max_gpu_temp", "max_warming_secs", "max_cooling_secs", "output_batches",
        "spaces_per_indent", "stream_blocking_timeout_secs",
    ],
    "specialization": [
        "index", "name", "bytes_per_second", "items_per_second", "bytes_per_item", "items",
        "noise_timeout", "noise_percent", "meta", "elapsed_secs", "gpu_temp_celsius", "calls",
    ],
    "calls": ["kernel_calls_per_batch", "ms_per_batch", "batches", "kernel_calls"],
    "summary": ["noise_timeouts", "elapsed_secs"],
}
SEED_DEFAULTS = {
    "size": 134217728, "hot": False, "seed": 42, "json_out": "results.json", "csv_out": "",
    "filter": "", "dry": False, "min_secs": 1, "noise_timeout_secs": 10,
    "batch_window_size": 10, "noise_tolerance_percent": 1, "max_warming_secs": 60,
    "max_cooling_secs": 60, "output_batches": False, "spaces_per_indent": 4,
    "stream_blocking_timeout_secs": 10,
}

pb.register_type(np.int8, "char")
pb.register_type(np.int64, "long long")


class Copy(pb.Benchmark):
    """The seed's copy benchmark, on the fake device."""

    def __init__(self, dtype, algo: str = "copy", fail: bool = False) -> None:
        self.dtype = np.dtype(dtype)
        self.algo = algo
        self.fail = fail
        self.tests = 0

    def meta(self):
        return {"algo": self.algo, "type": pb.type_name(self.dtype)}

    def run(self, state: pb.State) -> None:
        if self.fail:
            raise RuntimeError("kernel exploded")
        items = state.size // self.dtype.itemsize
        state.set_items(items)
        state.add_reads(self.dtype, items)
        state.add_writes(self.dtype, items)

        def check() -> None:
            self.tests += 1

        state.test(check)
        dev = state.device
        state.run(dev.launch)


def executor(tmp_path: Path, *args: str, device: FakeDevice | None = None, **kw) -> pb.Executor:
    argv = ["--json-out", str(tmp_path / "results.json"), "--min-secs", "0", *args]
    return pb.Executor(argv, device=device or FakeDevice(0.25), reporter=Reporter(make_console()), **kw)


def queued(ex: pb.Executor, *benches: pb.Benchmark) -> pb.Executor:
    """`ex` with `benches` queued (default: the copy of char and of long long)."""
    for b in benches or (Copy(np.int8), Copy(np.int64)):
        ex.queue(b)
    return ex


def first_error(ex: pb.Executor, tmp_path: Path) -> tuple[object, str]:
    """Run `ex`, which exits; its exit code and the first specialization's error."""
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    spec = json.loads((tmp_path / "results.json").read_text())["specializations"][0]
    return exit_info.value.code, spec["error"]


def run_copy(tmp_path: Path, *args: str, **kw) -> dict:
    ex = executor(tmp_path, *args, **kw)
    ex.queue(Copy(np.int8))
    ex.queue(Copy, np.int64)
    return ex.run()


# ----------------------------------------------------------------- outputs


def test_results_json_has_the_seed_schema_key_for_key(tmp_path):
    run_copy(tmp_path)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert list(doc) == ["context", "specializations", "summary"]
    ctx = doc["context"]
    assert list(ctx)[:4] == SEED_EXAMPLE_KEYS["context"]
    assert ctx["results_version"] == pb.RESULTS_VERSION
    for key in SEED_EXAMPLE_KEYS["general"]:
        assert key in ctx["general"], key
    assert list(ctx["settings"])[: len(SEED_EXAMPLE_KEYS["settings"])] == SEED_EXAMPLE_KEYS["settings"]
    assert ctx["flags"] == {"sync": False}
    assert "custom_settings" not in ctx
    for i, spec in enumerate(doc["specializations"]):
        keys = SEED_EXAMPLE_KEYS["specialization"]
        assert list(spec)[: len(keys)] == keys
        # additions come after the seed's keys
        assert set(list(spec)[len(keys):]) <= {"batches", "sm_clock", "rounds", "between_rounds",
                                               "gpu_seconds_per_call", "time_per_call",
                                               "throttled_batches"}  # 4.5.0
        assert list(spec["calls"]) == SEED_EXAMPLE_KEYS["calls"]
        assert list(spec["elapsed_secs"]) == ["host", "gpu"]
        assert list(spec["gpu_temp_celsius"]) == ["start", "end"]
        assert spec["index"] == i
    assert list(doc["summary"])[:1] == ["noise_timeouts"]
    assert "elapsed_secs" in doc["summary"]


def test_specializations_are_named_sorted_and_measured(tmp_path):
    doc = run_copy(tmp_path)
    char, ll = doc["specializations"]
    assert (char["name"], ll["name"]) == ("type: char", "type: long long")
    assert char["meta"] == {"algo": "copy", "type": "char"}
    assert char["items"] == 134217728 and ll["items"] == 16777216
    assert char["bytes_per_item"] == 2 and ll["bytes_per_item"] == 16
    calls = char["calls"]
    assert calls["kernel_calls"] == calls["kernel_calls_per_batch"] * calls["batches"]
    # bytes per second = bytes per call x calls / GPU seconds
    expected = 2 * 134217728 * calls["kernel_calls"] / char["elapsed_secs"]["gpu"]
    assert char["bytes_per_second"] == pytest.approx(expected)
    assert char["bytes_per_second"] == pytest.approx(2 * 134217728 / 0.25e-3)
    assert doc["context"]["general"]["specialization_count"] == 2
    assert doc["summary"]["elapsed_secs"]["gpu"] == pytest.approx(
        char["elapsed_secs"]["gpu"] + ll["elapsed_secs"]["gpu"]
    )


def test_default_settings_are_the_seeds(tmp_path):
    ex = pb.Executor([], device=FakeDevice())
    written = ex.settings.to_json()
    for key, value in SEED_DEFAULTS.items():
        assert written[key] == value, key
    assert json.dumps(written["min_secs"]) == "1"
    # deliberately not the seed's 10 ms: 10 rounds of at least 3 batches each must fit the budget
    # (primbench/rounds.py; tests/benchmarks/variance/README.md)
    assert written["min_gpu_ms_per_batch"] == 2


def test_csv_matches_the_seeds_format(tmp_path):
    run_copy(tmp_path, "--csv-out", str(tmp_path / "r.csv"))
    lines = (tmp_path / "r.csv").read_text().splitlines()
    # the C++ primbench's columns in its order, then (results 4.4.0) the mean GPU seconds per call
    assert lines[0] == ("index,name,bytes_per_second,gib_per_second,items_per_second,noise_timeout,noise_percent,"
                        "gpu_seconds_per_call")
    fields = lines[1].split(",")
    assert fields[:2] == ["0", '"type: char"']
    assert fields[2] == f"{2 * 134217728 / 0.25e-3:g}"  # 1.07374e+12
    assert fields[3] == f"{2 * 134217728 / 0.25e-3 / 2**30:g}"  # 6 significant digits, as the C++ stream
    assert fields[5] == "0"
    assert fields[7] == f"{0.25e-3:g}"  # the fake kernel's 0.25 ms
    assert lines[2].startswith('1,"type: long long",')


def test_json_out_dev_null_writes_only_csv(tmp_path):
    ex = pb.Executor(["--json-out", "/dev/null", "--csv-out", str(tmp_path / "r.csv"), "--min-secs", "0"],
                     device=FakeDevice())
    ex.queue(Copy(np.int8))
    ex.run()
    assert (tmp_path / "r.csv").exists()
    assert not (tmp_path / "results.json").exists()


def test_output_batches_adds_per_batch_detail(tmp_path):
    doc = run_copy(tmp_path, "--output-batches")
    spec = doc["specializations"][0]
    assert len(spec["batches"]) == spec["calls"]["batches"]
    batch = spec["batches"][0]
    assert batch["kernel_calls"] == spec["calls"]["kernel_calls_per_batch"]
    assert len(batch["iterations_ms"]) == batch["kernel_calls"]
    assert batch["batch_ms"] == pytest.approx(sum(batch["iterations_ms"]))
    loaded = load_results(tmp_path / "results.json")
    assert loaded.specializations[0].batches[0].batch_ms == pytest.approx(batch["batch_ms"])


def test_compact_json_with_zero_indent(tmp_path):
    run_copy(tmp_path, "--spaces-per-indent", "0")
    assert len((tmp_path / "results.json").read_text().splitlines()) == 1


def test_written_file_loads_back(tmp_path):
    run_copy(tmp_path)
    res = load_results(tmp_path / "results.json")
    assert res.algorithm == "copy"
    assert [s.name for s in res.specializations] == ["type: char", "type: long long"]


# ----------------------------------------------------------------- options


def test_command_line_overrides_programmatic_settings(tmp_path):
    base = pb.Settings(min_gpu_ms_per_batch=100, noise_tolerance_percent=2, size=pb.MiB)
    ex = executor(tmp_path, "--noise-tolerance-percent", "0.5", "--size", "64KiB", settings=base)
    assert ex.settings.min_gpu_ms_per_batch == 100
    assert ex.settings.noise_tolerance_percent == 0.5
    assert ex.settings.size == 64 * 1024


@pytest.mark.parametrize(("text", "size"), [("128MiB", 128 << 20), ("64 KiB", 65536), ("1GiB", 1 << 30),
                                             ("4096", 4096), ("2gib", 2 << 30)])
def test_size_suffixes(text, size):
    assert pb.parse_size(text) == size


def test_custom_options_are_read_shown_and_written(tmp_path, capsys):
    ex = executor(tmp_path, "--dimensions", "5")
    assert ex.get("dimensions", 3, "The number of dimensions") == 5
    assert ex.get("scale", 1.5, "A factor") == 1.5
    ex.queue(Copy(np.int8))
    doc = ex.run()
    assert doc["context"]["custom_settings"] == {"dimensions": 5, "scale": 1.5}
    assert "--dimensions" in ex.help_text() and "The number of dimensions" in ex.help_text()


def test_help_lists_every_option_and_exits_zero(tmp_path, capsys):
    ex = executor(tmp_path, "--help")
    ex.get("dimensions", 3, "The number of dimensions")
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for key in SEED_DEFAULTS:
        assert "--" + key.replace("_", "-") in out
    assert "--dimensions" in out
    assert not (tmp_path / "results.json").exists()


def test_filter_selects_by_regex_and_reindexes(tmp_path):
    doc = run_copy(tmp_path, "--filter", "l.*g")
    assert [s["name"] for s in doc["specializations"]] == ["type: long long"]
    assert doc["specializations"][0]["index"] == 0
    assert doc["context"]["general"]["specialization_count"] == 1


def test_dry_run_writes_zeros_and_runs_nothing(tmp_path):
    dev = FakeDevice()
    doc = run_copy(tmp_path, "--dry", device=dev)
    assert dev.calls == 0
    assert [s["bytes_per_second"] for s in doc["specializations"]] == [0, 0]
    assert (tmp_path / "results.json").exists()


def test_no_test_skips_the_check(tmp_path):
    bench = Copy(np.int8)
    ex = executor(tmp_path, "--no-test")
    ex.queue(bench)
    ex.run()
    assert bench.tests == 0


def test_test_runs_once_after_the_unblocked_warmup(tmp_path):
    dev = FakeDevice(0.25)
    order: list[str] = []

    class Checked(Copy):
        def run(self, state):
            state.test(lambda: order.append(f"test after {dev.calls} calls, blocked={dev.blocked}"))
            state.run(dev.launch)

    ex = executor(tmp_path, device=dev)
    ex.queue(Checked(np.int8))
    ex.run()
    assert order == ["test after 1 calls, blocked=False"]
    # Setup is waited for; the warmup call is the first kernel, with no block and no
    # cache clear before it.
    assert dev.ops[:3] == ["device_sync", "kernel", "sync"]


def test_before_every_iteration_runs_before_each_call_including_warmup(tmp_path):
    dev = FakeDevice(0.25, log_ops=False)
    restores = 0

    class Inplace(Copy):
        def run(self, state):
            def restore():
                nonlocal restores
                restores += 1

            state.run_before_every_iteration(restore)
            state.run(dev.launch)

    ex = executor(tmp_path, device=dev)
    ex.queue(Inplace(np.int8))
    ex.run()
    assert restores == dev.calls


def test_sync_flag_runs_a_synchronizing_kernel(tmp_path):
    dev = FakeDevice(0.25)

    class SyncBench(Copy):
        def run(self, state):
            state.run(dev.synchronous_kernel)

    ex = executor(tmp_path, device=dev, flags=pb.flags.sync)
    ex.queue(SyncBench(np.int8))
    doc = ex.run()
    assert doc["context"]["flags"] == {"sync": True}
    assert "block" not in dev.ops


def test_synchronizing_kernel_without_sync_flag_fails_with_clear_error(tmp_path):
    dev = FakeDevice(0.25)

    class SyncBench(Copy):
        def run(self, state):
            state.run(dev.synchronous_kernel)

    ex = executor(tmp_path, "--stream-blocking-timeout-secs", "3", "--no-monitoring", device=dev)
    ex.queue(SyncBench(np.int8))
    code, error = first_error(ex, tmp_path)
    assert code == 1
    assert "flags.sync" in error
    assert dev.t < 3 + 1  # ended at the timeout, no hang


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-such-option"], "unrecognized arguments"),
        (["--size", "12XB"], "invalid size"),
        (["--filter", "("], "not a valid regular expression"),
        (["--min-secs", "soon"], "invalid float value"),
        (["--batch-window-size", "1"], "at least 2"),
    ],
)
def test_bad_options_exit_2_with_one_line_and_touch_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "results.json"
    out.write_text("previous")
    with pytest.raises(SystemExit) as exit_info:
        ex = executor(tmp_path, *args)
        ex.queue(Copy(np.int8))
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert out.read_text() == "previous"


class NoAlgo(pb.Benchmark):
    def meta(self):
        return {"type": "char"}

    def run(self, state):
        pass


@pytest.mark.parametrize(
    ("benches", "message"),
    [
        (lambda: [NoAlgo()], "no 'algo' key"),
        (lambda: [Copy(np.int8), Copy(np.int64, algo="reduce")], "same 'algo'"),
        (lambda: [Copy(np.int8), Copy(np.int8)], "two specializations are named 'type: char'"),
        (lambda: [], "no benchmarks queued"),
    ],
)
def test_bad_benchmark_definitions_exit_2(tmp_path, capsys, benches, message):
    out = tmp_path / "results.json"
    out.write_text("previous")
    with pytest.raises(SystemExit) as exit_info:
        ex = executor(tmp_path)
        for b in benches():
            ex.queue(b)
        ex.main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert out.read_text() == "previous"


def test_filter_matching_nothing_is_a_usage_error(tmp_path):
    with pytest.raises(pb.UsageError, match="matches none of") as raised:
        run_copy(tmp_path, "--filter", "float")
    assert raised.value.exit_code == 2


def test_a_failing_benchmark_is_reported_and_the_others_still_run(tmp_path):
    ex = executor(tmp_path)
    ex.queue(Copy(np.int8, fail=True))
    ex.queue(Copy(np.int64))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    failed, ok = doc["specializations"]
    assert failed["error"] == "RuntimeError: kernel exploded"
    assert failed["bytes_per_second"] is None
    assert ok["bytes_per_second"] > 0
    assert doc["summary"]["failures"] == 1
    assert load_results(tmp_path / "results.json").specializations[0].failed


def test_ctrl_c_writes_the_finished_specializations(tmp_path):
    class Interrupted(Copy):
        def run(self, state):
            raise KeyboardInterrupt

    ex = executor(tmp_path)
    ex.queue(Copy(np.int8))
    ex.queue(Interrupted(np.int64))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 130
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [s["name"] for s in doc["specializations"]] == ["type: char"]


def test_run_that_never_calls_state_run_fails(tmp_path):
    class Lazy(Copy):
        def run(self, state):
            pass

    ex = executor(tmp_path)
    ex.queue(Lazy(np.int8))
    assert "never called state.run" in first_error(ex, tmp_path)[1]


def test_failed_test_check_shows_actual_values(tmp_path):
    class Wrong(Copy):
        def run(self, state):
            state.test(lambda: pb.assert_equal(np.array([0, 1, 3]), [0, 0, 0]))
            state.run(state.device.launch)

    ex = executor(tmp_path)
    ex.queue(Wrong(np.int8))
    assert "actual values: [0, 1, 3]" in first_error(ex, tmp_path)[1]


# ----------------------------------------------------------------- names, context


def test_names_sort_keys_skip_algo_and_nest():
    meta = {"algo": "x", "type": "char", "cfg": {"b": 2, "a": True}, "n": 1.5}
    assert pb.specialization_name(meta) == "cfg: { a: true, b: 2 }, n: 1.5, type: char"


def test_type_names_fall_back_to_numpy():
    assert pb.type_name(np.float32) == "float32"
    assert pb.type_name("int64") == "long long"


def test_branch_and_commit_from_option_env_ci_and_git(tmp_path, monkeypatch):
    from primbench.provenance import provenance

    assert provenance("feature", "abc", str(tmp_path), env={})["branch_source"] == "option"
    env = {"GITHUB_REF_NAME": "main", "GITHUB_SHA": "f00", "PRIMBENCH_COMMIT": "c0ffee"}
    got = provenance("", "", str(tmp_path), env=env)
    assert got["branch_name"] == "main" and got["branch_source"] == "env:GITHUB_REF_NAME"
    assert got["commit_hash"] == "c0ffee" and got["commit_source"] == "env:PRIMBENCH_COMMIT"
    none = provenance("", "", str(tmp_path), env={})
    assert none["branch_source"] == "none" and "branch_name" not in none
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "work"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    got = provenance("", "", str(repo), env={})
    assert got["branch_name"] == "work" and got["branch_source"] == "git"
    assert len(got["commit_hash"]) == 40
    subprocess.run([*git, "checkout", "-q", "--detach"], check=True)
    assert provenance("", "", str(repo), env={})["branch_name"] == "DETACHED"


def test_results_record_provenance_sources(tmp_path):
    doc = run_copy(tmp_path, "--branch", "feature-x", "--commit", "1234abc")
    general = doc["context"]["general"]
    assert general["branch_name"] == "feature-x" and general["branch_source"] == "option"
    assert general["commit_hash"] == "1234abc"


def test_json_write_is_atomic_and_leaves_no_temp_files(tmp_path):
    run_copy(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_average_sm_clock_is_recorded_and_checked(tmp_path):
    doc = run_copy(tmp_path, device=FakeDevice(0.25, sm_clock_mhz=1978.0, default_clock_mhz=1980.0))
    clock = doc["specializations"][0]["sm_clock"]
    assert clock["average_mhz"] == pytest.approx(1978.0, rel=1e-6)
    assert clock["default_mhz"] == 1980.0
    assert not clock["below_expected"]


def test_a_throttled_clock_is_flagged(tmp_path):
    dev = FakeDevice(0.25, sm_clock_mhz=1500.0, default_clock_mhz=1980.0)
    dev.reasons = ["sw_thermal_slowdown"]
    doc = run_copy(tmp_path, device=dev)
    clock = doc["specializations"][0]["sm_clock"]
    assert clock["below_expected"]
    assert clock["throttle_reasons"] == ["sw_thermal_slowdown"]
    assert clock["clock_event_reasons"] == {"start": ["sw_thermal_slowdown"], "end": ["sw_thermal_slowdown"]}
    # Not below a looser threshold.
    doc = run_copy(tmp_path, "--min-clock-fraction", "0.7", device=FakeDevice(0.25, sm_clock_mhz=1500.0))
    assert not doc["specializations"][0]["sm_clock"]["below_expected"]


def test_a_device_that_cannot_be_prepared_is_a_one_line_error(tmp_path, capsys):
    class Broken(FakeDevice):
        def prepare(self, **kw):
            raise MemoryError("out of memory allocating 268435456 bytes")

    ex = executor(tmp_path, device=Broken())
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "preparing the GPU failed: MemoryError" in err and len(err.splitlines()) == 1


def test_a_bool_custom_option_is_a_bare_flag_and_a_list_takes_several_values(tmp_path):
    ex = executor(tmp_path, "--verbose", "--sizes", "1", "2", "4", "--no-check")
    assert ex.get("verbose", False, "Say more") is True
    assert ex.get("check", True, "Check the output") is False
    assert ex.get("sizes", [256], "Sizes to run") == [1, 2, 4]
    assert ex.get("names", ["a"], "Names") == ["a"]
    ex.queue(Copy(np.int8))
    doc = ex.run()
    assert doc["context"]["custom_settings"] == {"verbose": True, "check": False, "sizes": [1, 2, 4], "names": ["a"]}


@pytest.mark.parametrize(("args", "message"), [
    (["--size", "0"], "--size must be greater than 0"),
    (["--min-secs", "5", "--noise-timeout-secs", "2"], "--min-secs (5) is above --noise-timeout-secs (2)"),
])
def test_sizes_and_the_time_budget_are_checked(tmp_path, capsys, args, message):
    ex = executor(tmp_path, *args)
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_programs_help_prints_every_percent_sign_as_written() -> None:
    """argparse formats help text with %: a bare "%" in a setting's help (the --processes text has
    "2-3 % apart") once printed argparse's own dict of parameters in its place."""
    from primbench.settings import build_parser

    text = " ".join(build_parser("bench.py", []).format_help().split())
    assert "states up to 2-3 % apart" in text and "about 0.5-0.8 % (0.3 % at 64 MiB; about 1.3 % where" in text
    assert "'metavar'" not in text and "%%" not in text
