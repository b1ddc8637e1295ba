"""The pytest plugin (primbench/pytest_plugin.py), run inside pytest's own `pytester`: the gpubench
fixture measures on the fake device (through the plugin's device hook), skips without a GPU, and
--primbench-json writes one results file per session that compare and history take."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.results import load_results

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

FAKE_CONFTEST = """
from tests.fakes import FakeDevice

def pytest_primbench_device(config):
    return FakeDevice({kernel_ms})
"""

TESTS = """
import pytest

def test_copy(gpubench):
    result = gpubench(lambda: gpubench_device().launch(), items=1000, bytes=8000)
    assert result.name == "test: test_benches.py::test_copy"
    assert result.bytes_per_second == pytest.approx(8000 / result.seconds_per_call)

@pytest.mark.parametrize("n", [1, 2])
def test_scaled(gpubench, n):
    first = gpubench(lambda: gpubench_device().launch(), items=n, name="plain")
    hot = gpubench(lambda: gpubench_device().launch(), items=n, name="hot", hot=True)
    assert first.name == f"name: plain, test: test_benches.py::test_scaled[{n}]"
    assert hot.name == f"hot: true, name: hot, test: test_benches.py::test_scaled[{n}]"

def test_without_gpu_work():
    pass

def gpubench_device():
    import conftest
    return conftest.DEVICE
"""

SHARED_DEVICE_CONFTEST = """
from tests.fakes import FakeDevice

DEVICE = FakeDevice({kernel_ms})

def pytest_primbench_device(config):
    return DEVICE
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester whose runs load only this plugin (not the installed entry points)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PRIMBENCH_BRANCH", "feature")
    monkeypatch.setenv("PRIMBENCH_COMMIT", "c0ffee")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "primbench.pytest_plugin", "-p", "no:cacheprovider", "-rs",
                              "--primbench-options", "--min-secs 0 --rounds 2", *args)


def test_the_fixture_measures_and_names_each_call_and_writes_nothing_by_default(inner):
    inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25))
    inner.makepyfile(test_benches=TESTS)
    result = run(inner)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*= primbench =*", "test: test_benches.py::test_copy  250.00 µs/call  32.00 MB/s*"])
    assert not list(inner.path.glob("*.json"))


def test_primbench_json_writes_one_results_file_for_the_session(inner):
    inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25))
    inner.makepyfile(test_benches=TESTS)
    result = run(inner, "--primbench-json", "bench.json")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["Wrote bench.json"])
    results = load_results(inner.path / "bench.json")
    assert results.algorithm == "pytest" and results.branch == "feature" and results.commit == "c0ffee"
    assert [s.name for s in results.specializations] == [
        "test: test_benches.py::test_copy",
        "name: plain, test: test_benches.py::test_scaled[1]",
        "hot: true, name: hot, test: test_benches.py::test_scaled[1]",
        "name: plain, test: test_benches.py::test_scaled[2]",
        "hot: true, name: hot, test: test_benches.py::test_scaled[2]",
    ]
    assert [s.index for s in results.specializations] == [0, 1, 2, 3, 4]
    assert results.general.specialization_count == 5 and results.general.branch_source == "env:PRIMBENCH_BRANCH"
    assert results.settings.hot is False and results.settings.json_out == "bench.json"
    assert results.settings.rounds == 2
    assert results.summary.failures == 0
    gpu = sum(s.elapsed_gpu_secs or 0 for s in results.specializations)
    assert results.summary.elapsed_secs.gpu == pytest.approx(gpu) and gpu > 0


def test_two_sessions_compare_like_any_two_runs(inner):
    """The CI gate: the test whose kernel slowed is a regression (exit 1), the others unchanged."""
    inner.makepyfile(test_benches="""
import conftest
import pytest

def test_copy(gpubench):
    gpubench(lambda: conftest.DEVICE.launch(conftest.COPY_MS), items=1000, bytes=8000)

@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_other(gpubench, n):
    gpubench(lambda: conftest.DEVICE.launch(0.1 * n), items=1000)
""")
    for name, copy_ms in (("base", 0.25), ("head", 0.30)):
        inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25) + f"COPY_MS = {copy_ms}\n")
        run(inner, "--primbench-json", f"{name}.json").assert_outcomes(passed=5)
    done = CliRunner().invoke(app, ["compare", str(inner.path / "base.json"), str(inner.path / "head.json"),
                                    "--format", "json"])
    assert done.exit_code == 1, done.output
    verdicts = {s["name"]: s["verdict"] for s in json.loads(done.stdout)["specializations"]}
    assert verdicts.pop("test: test_benches.py::test_copy") == "regression"
    assert set(verdicts.values()) == {"unchanged"} and len(verdicts) == 4


def test_without_a_gpu_the_fixture_skips_with_the_reason(inner):
    inner.makeconftest("""
from primbench.errors import DeviceError

def pytest_primbench_device(config):
    raise DeviceError("CuPy sees no GPU: check the driver")
""")
    inner.makepyfile(test_benches=TESTS)
    result = run(inner, "--primbench-json", "bench.json")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["SKIPPED*primbench: no GPU to measure on: CuPy sees no GPU: check the driver"])
    assert not (inner.path / "bench.json").exists()


def test_without_cupy_the_real_device_skips(inner):
    if __import__("importlib").util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: this checks a machine without it")
    inner.makepyfile(test_gpu="def test_it(gpubench):\n    gpubench(lambda: None)\n")
    result = run(inner)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*primbench: no GPU to measure on: *module 'cupy'*pip install cupy-cuda13x nvidia-ml-py*"])


def test_a_failing_function_fails_its_test_with_its_own_error(inner):
    inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25))
    inner.makepyfile(test_broken="""
def test_broken(gpubench):
    def launch():
        raise ValueError("kernel arguments do not match")
    gpubench(launch)

def test_twice(gpubench):
    import conftest
    gpubench(conftest.DEVICE.launch)
    gpubench(conftest.DEVICE.launch)
""")
    result = run(inner, "--primbench-json", "bench.json")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*ValueError: kernel arguments do not match",
                                 "*UsageError: two measurements are named 'test: test_broken.py::test_twice'*"])
    results = load_results(inner.path / "bench.json")
    assert [(s.name, s.error) for s in results.specializations] == [
        ("test: test_broken.py::test_broken", "ValueError: kernel arguments do not match"),
        ("test: test_broken.py::test_twice", None),
    ]
    assert results.summary.failures == 1


def test_bad_primbench_options_are_a_usage_error(inner):
    inner.makepyfile(test_x="def test_x():\n    pass\n")
    result = run(inner, "--primbench-options", "--rounds 0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--primbench-options '--rounds 0': --rounds must be at least 1*"])


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"primbench": "primbench.pytest_plugin",
                                                   "primbench-baseline": "primbench.compare.pytest_baseline"}


# --------------------------------------------------------------------------- issue 22


def test_without_a_gpu_the_test_is_skipped_at_setup_before_its_body(inner):
    """CuPy installed, no GPU: the test body (its CuPy set-up) never runs."""
    inner.makeconftest("""
from primbench.errors import DeviceError

def pytest_primbench_device(config):
    raise DeviceError("CuPy sees no GPU")
""")
    inner.makepyfile(test_gpu="""
def test_it(gpubench):
    raise RuntimeError("the body ran: cp.ones() would fail here without a GPU")
""")
    result = run(inner)
    result.assert_outcomes(skipped=1)
    assert "the body ran" not in result.stdout.str()


def test_a_lone_option_after_equals(inner):
    inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25))
    inner.makepyfile(test_benches="""
def test_copy(gpubench):
    import conftest
    gpubench(conftest.DEVICE.launch, items=1000)
""")
    result = inner.runpytest("-p", "primbench.pytest_plugin", "-p", "no:cacheprovider",
                             "--primbench-options=--hot", "--primbench-json", "bench.json")
    result.assert_outcomes(passed=1)
    assert load_results(inner.path / "bench.json").settings.hot is True


def _readme_example() -> str:
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def test_" in b and "gpubench" in b)
    return block


def test_the_readmes_example_is_skipped_on_a_cpu_only_runner(inner):
    """The README's gpubench test, verbatim, on this machine (no GPU; CuPy or not): skipped, never
    a collection error or a failure."""
    inner.makepyfile(test_readme=_readme_example())
    result = run(inner)
    result.assert_outcomes(skipped=1)


def test_the_readmes_example_with_cupy_and_no_gpu_is_skipped_at_setup(inner):
    """With a CuPy whose every call fails (as on a machine without a GPU) and no device: skipped
    at the fixture's setup, before the example's cp.ones()."""
    inner.makepyfile(cupy="""
float32 = "float32"

def _no_gpu(*args, **kwargs):
    raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

ones = empty_like = multiply = _no_gpu
""")
    inner.makeconftest("""
from primbench.errors import DeviceError

def pytest_primbench_device(config):
    raise DeviceError("no CUDA-capable device is detected")
""")
    inner.makepyfile(test_readme=_readme_example())
    result = run(inner)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*primbench: no GPU to measure on: no CUDA-capable device*"])
