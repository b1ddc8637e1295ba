"""The executor as a library, against the fake device: `Executor.run` returns a report and never
exits, `Executor.main` exits with the documented code; the modes --list and --profile; NVTX ranges."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import primbench as pb
from primbench.cli import app
from primbench.console import Reporter, make_console
from primbench.results import load_results
from tests.fakes import FakeDevice
from tests.test_executor import Copy, executor, queued

ROOT = Path(__file__).resolve().parents[1]




# ----------------------------------------------------------------- Executor.run: the library form


def test_run_returns_a_report_that_reads_as_the_document(tmp_path):
    report = queued(executor(tmp_path)).run()
    assert isinstance(report, pb.Report) and report.ok and report.mode == "run" and report.exit_code == 0
    written = json.loads((tmp_path / "results.json").read_text())
    assert dict(report) == written and report["specializations"] == written["specializations"]
    assert report.names == ("type: char", "type: long long")
    assert report.outputs == (str(tmp_path / "results.json"),) and report.json_path == str(tmp_path / "results.json")
    char = report.result("type: char")
    assert char.seconds_per_call == pytest.approx(0.25e-3)
    assert char.bytes_per_second == pytest.approx(2 * 134217728 / 0.25e-3)
    assert char.items_per_second == pytest.approx(134217728 / 0.25e-3)
    # a noiseless fake: the precision stop ends it after the warm-up and 3 measured rounds (of 10)
    assert char.rounds == 4 and len(char.seconds_per_call_by_round) == 4
    assert char.record is report["specializations"][0] and char.json_path == report.json_path
    with pytest.raises(KeyError, match="'type: float' was not measured"):
        report.result("type: float")


@pytest.mark.parametrize(("args", "error"), [
    (["--size", "12XB"], "invalid size"),
    (["--no-such-option"], "unrecognized arguments"),
    (["--filter", "float"], "matches none of"),
])
def test_run_raises_a_usage_error_instead_of_exiting_and_writes_nothing(tmp_path, args, error):
    ex = queued(executor(tmp_path, *args))  # the constructor and queue() defer what is wrong to run()
    with pytest.raises(pb.UsageError, match=error) as raised:
        ex.run()
    assert raised.value.exit_code == 2
    assert not (tmp_path / "results.json").exists()


def test_a_bad_definition_is_raised_by_run_not_by_queue(tmp_path):
    class NoAlgo(Copy):
        def meta(self):
            return {"type": "char"}

    ex = executor(tmp_path)
    ex.queue(NoAlgo(np.int8))
    ex.queue("not a benchmark")  # type: ignore[arg-type]
    with pytest.raises(pb.UsageError, match="no 'algo' key"):
        ex.run()


def test_a_device_that_cannot_be_prepared_is_raised_and_released(tmp_path):
    class Broken(FakeDevice):
        def prepare(self, **kw):
            raise MemoryError("out of memory allocating 268435456 bytes")

    dev = Broken()
    with pytest.raises(pb.DeviceError, match="preparing the GPU failed: MemoryError"):
        queued(executor(tmp_path, device=dev)).run()
    assert dev.releases == 1 and not dev.closed  # given, not opened: released, left open for its owner
    assert not (tmp_path / "results.json").exists()


def test_a_failed_specialization_is_in_the_report_and_check_raises_it(tmp_path):
    ex = executor(tmp_path)
    ex.queue(Copy(np.int8, fail=True))
    ex.queue(Copy(np.int64))
    report = ex.run()
    assert report.exit_code == 1 and not report.ok
    assert report.failures == {"type: char": "RuntimeError: kernel exploded"}
    assert isinstance(report.exceptions["type: char"], RuntimeError)
    assert [r.name for r in report.results] == ["type: long long"]
    failed = r"1 of 2 specialization\(s\) failed: type: char: RuntimeError"
    with pytest.raises(pb.BenchmarkFailed, match=failed) as raised:
        report.check()
    assert isinstance(raised.value.__cause__, RuntimeError) and raised.value.exit_code == 1
    assert load_results(tmp_path / "results.json").specializations[0].failed


def test_ctrl_c_propagates_from_run_after_writing_what_finished(tmp_path):
    class Interrupted(Copy):
        def run(self, state):
            raise KeyboardInterrupt

    ex = executor(tmp_path)
    ex.queue(Copy(np.int8))
    ex.queue(Interrupted(np.int64))
    with pytest.raises(KeyboardInterrupt):
        ex.run()
    assert [s["name"] for s in json.loads((tmp_path / "results.json").read_text())["specializations"]] == [
        "type: char"]
    assert ex.report is not None and ex.report.exit_code == 130


@pytest.mark.parametrize(("setup", "code"), [("ok", 0), ("fail", 1), ("bad option", 2), ("interrupt", 130)])
def test_main_exits_with_the_documented_code(tmp_path, capsys, setup, code):
    class Interrupted(Copy):
        def run(self, state):
            raise KeyboardInterrupt

    ex = executor(tmp_path, *(["--size", "12XB"] if setup == "bad option" else []))
    ex.queue(Copy(np.int8, fail=setup == "fail") if setup != "interrupt" else Interrupted(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == code
    err = capsys.readouterr().err
    assert (err.strip().count("\n"), "invalid size" in err) == ((0, True) if setup == "bad option" else (0, False))


def test_help_prints_and_returns(tmp_path, capsys):
    report = queued(executor(tmp_path, "--help")).run()
    assert report.mode == "help" and report.ok and report.document is None
    assert "--profile" in capsys.readouterr().out
    assert not (tmp_path / "results.json").exists()
    with pytest.raises(KeyError, match="a help run makes no results document"):
        report["specializations"]


class OldScript:
    """A program that ends with executor.run(), as the examples did before Executor.main()."""

    TEXT = """
import numpy as np
import primbench as pb
from tests.fakes import FakeDevice
from tests.test_executor import Copy
ex = pb.Executor(device=FakeDevice(0.25))
ex.queue(Copy(np.int8, fail={fail}))
ex.run()
"""


@pytest.mark.parametrize(("fail", "code"), [(False, 0), (True, 1)])
def test_primbench_run_exits_with_the_code_of_a_run_the_program_did_not_exit_with(tmp_path, fail, code):
    script = tmp_path / "old.py"
    script.write_text(OldScript.TEXT.format(fail=fail))
    result = CliRunner().invoke(app, ["run", str(script), "--min-secs", "0", "--json-out", str(tmp_path / "r.json")])
    assert result.exit_code == code, result.output
    assert (tmp_path / "r.json").exists()


def test_the_examples_exit_through_main():
    for path in sorted((ROOT / "examples").glob("*.py")):
        text = path.read_text()
        if "pb.Executor(" in text:
            assert "executor.main()" in text and "executor.run()" not in text, path


# ----------------------------------------------------------------- --list


def test_list_prints_the_filtered_names_and_writes_nothing(tmp_path):
    out = io.StringIO()
    dev = FakeDevice(0.25)
    ex = pb.Executor(["--json-out", str(tmp_path / "results.json"), "--csv-out", str(tmp_path / "r.csv"), "--list",
                      "--filter", "long|char"], device=dev, reporter=Reporter(make_console(out)))
    report = queued(ex, Copy(np.int8), Copy(np.int64), Copy(np.float32)).run()
    assert out.getvalue() == "type: char\ntype: long long\n"
    assert report.mode == "list" and report.names == ("type: char", "type: long long") and report.ok
    assert list(tmp_path.iterdir()) == []
    assert dev.ops == [] and dev.prepared is None


def test_list_through_the_command_line_exits_0_and_writes_nothing(tmp_path):
    example = ROOT / "examples" / "copy_benchmark.py"
    proc = subprocess.run([sys.executable, str(example), "--list", "--json-out", str(tmp_path / "r.json")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"},
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "type: char\ntype: long long\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("dtype", "n"), [(np.int8, 1_000_003), (np.int8, 200), (np.int16, 70_001), (np.int64, 5_000),
                                           (np.int32, 1_000)])
def test_the_copy_example_makes_the_values_the_cpp_cast_wraps_to(dtype: type, n: int) -> None:
    """examples/copy_benchmark.py's input: i as T for i below n, as C++'s T(i) wraps (what the old
    ``np.arange(n).astype`` gave), made from one period of a narrow type's values."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("copy_benchmark_example", ROOT / "examples" / "copy_benchmark.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.wrapped_range(n, np.dtype(dtype))
    assert made.dtype == np.dtype(dtype) and np.array_equal(made, np.arange(n).astype(dtype))


# ----------------------------------------------------------------- --profile


class Checked(Copy):
    """Copy, with a test and a restore before every call, counting both."""

    def run(self, state):
        self.restores = 0
        state.set_items(1)
        state.test(lambda: setattr(self, "tests", self.tests + 1))
        state.run_before_every_iteration(lambda: setattr(self, "restores", self.restores + 1))
        state.run(state.device.launch)


def test_profile_calls_each_function_once_with_no_harness_work_and_writes_nothing(tmp_path):
    dev = FakeDevice(0.25, temperature=30.0)  # cold: normal runs would warm it
    benches = [Checked(np.int8), Checked(np.int64)]
    out = io.StringIO()
    ex = pb.Executor(["--json-out", str(tmp_path / "results.json"), "--csv-out", str(tmp_path / "r.csv"),
                      "--profile"], device=dev, reporter=Reporter(make_console(out)))
    report = queued(ex, *benches).run()
    assert report.mode == "profile" and report.ok and report.document is None
    assert out.getvalue().splitlines() == ["copy: 2 specializations (profile: one call each)",
                                           "called [1/2] type: char  once", "called [2/2] type: long long  once"]
    assert dev.calls == 2
    # per specialization: its setup has finished, then one call, inside a range of its name
    assert dev.ops == ["device_sync", "kernel", "sync"] * 2
    assert dev.range_tree() == [(0, "type: char"), (0, "type: long long")]
    assert dev.prepared is None and dev.heated_secs == 0 and dev.slept_secs == 0
    assert [(b.tests, b.restores) for b in benches] == [(0, 0), (0, 0)]
    assert list(tmp_path.iterdir()) == []


def test_profile_reports_a_failing_specialization_and_refuses_dry(tmp_path):
    report = queued(executor(tmp_path, "--profile"), Copy(np.int8, fail=True), Copy(np.int64)).run()
    assert report.exit_code == 1 and list(report.failures) == ["type: char"]
    with pytest.raises(pb.UsageError, match="--profile and --dry exclude each other"):
        queued(executor(tmp_path, "--profile", "--dry")).run()


# ----------------------------------------------------------------- NVTX


def test_nvtx_ranges_nest_specialization_round_and_batch(tmp_path):
    dev = FakeDevice(0.25)
    report = queued(executor(tmp_path, "--rounds", "2", device=dev)).run()
    tree = dev.range_tree()
    tops = [name for depth, name in tree if depth == 0]
    # rounds are interleaved: char, long long, char, long long
    assert tops == ["type: char", "type: long long"] * 2
    first = tree[: tree.index((0, "type: long long"))]
    assert first[:3] == [(0, "type: char"), (1, "round 1/2"), (2, "warmup")]
    sizing = [name for depth, name in first if name.startswith("sizing")]
    batches = [name for depth, name in first if depth == 2 and name.startswith("batch")]
    assert sizing[0] == "sizing batch 1 (1 calls)" and all(d == 2 for d, n in first if n.startswith("sizing"))
    rnd = report["specializations"][0]["rounds"][0]
    # the last sizing batch already had the final size: it is measured batch 1, the rest follow
    assert batches == [f"batch {i}" for i in range(2, rnd["batches"] + 1)]
    second_round = [name for depth, name in tree if depth == 1]
    assert second_round == ["round 1/2", "round 1/2", "round 2/2", "round 2/2"]
