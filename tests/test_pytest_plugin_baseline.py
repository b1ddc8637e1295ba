"""The pytest plugin's baseline (issue 23): ``--primbench-baseline PATH`` takes a results file
of any format the loader reads, compares the session's measurements with it in the terminal
summary, and fails the session on a regression."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

# imported here: pytester's in-process runs drop the modules they import, and a C extension
# cannot load twice in one process
import scipy.special
import scipy.stats  # noqa: F401

from tests.test_pytest_plugin import SHARED_DEVICE_CONFTEST, TESTS, inner
from tests.test_pytest_plugin import run as run_harness

pytest_plugins = ["pytester"]
__all__ = ["inner"]

SAMPLES = Path(__file__).resolve().parent / "formats"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """A session with the harness plugin and the baseline plugin (both entry points)."""
    return run_harness(pytester, "-p", "primbench.compare.pytest_baseline", *args)

#: The fake device with 1 % of noise per call (a noiseless one gives compare no spread to test against).
NOISY_CONFTEST = """
import random

from tests.fakes import FakeDevice

_RNG = random.Random({seed})
DEVICE = FakeDevice(lambda n, cold: {kernel_ms} * (1 + 0.01 * _RNG.gauss(0, 1)))

def pytest_primbench_device(config):
    return DEVICE
"""


def _baseline(pytester: pytest.Pytester, kernel_ms: float) -> Path:
    pytester.makeconftest(NOISY_CONFTEST.format(kernel_ms=kernel_ms, seed=1))
    pytester.makepyfile(test_benches=TESTS)
    out = pytester.path / f"base-{kernel_ms}.json"
    run(pytester, "--primbench-json", str(out)).assert_outcomes(passed=4)
    return out


def test_the_same_kernel_is_unchanged_and_the_session_passes(inner: pytest.Pytester) -> None:
    base = _baseline(inner, 0.25)
    inner.makeconftest(NOISY_CONFTEST.format(kernel_ms=0.25, seed=2))
    result = run(inner, "--primbench-baseline", str(base))
    result.assert_outcomes(passed=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"Against {base}:", "*0 regressions, 0 improvements*"])


def test_a_slower_kernel_is_a_regression_and_fails_the_session(inner: pytest.Pytester) -> None:
    base = _baseline(inner, 0.25)
    inner.makeconftest(NOISY_CONFTEST.format(kernel_ms=0.5, seed=2))
    result = run(inner, "--primbench-baseline", str(base))
    result.assert_outcomes(passed=4)  # the tests pass; the comparison fails the session
    assert result.ret == 1
    result.stdout.fnmatch_lines(["Against *:", "warning: suite-wide shift -* (5 of 5 specializations*"])


def test_a_baseline_of_another_format_is_read(inner: pytest.Pytester) -> None:
    """A CSV of the C++ harness is read; sharing no specialization with the session it is a
    baseline that does not fit: named, and the session is a usage error."""
    inner.makeconftest(SHARED_DEVICE_CONFTEST.format(kernel_ms=0.25))
    inner.makepyfile(test_benches=TESTS)
    shutil.copy(SAMPLES / "copy.csv", inner.path / "copy.csv")
    result = run(inner, "--primbench-baseline", "copy.csv")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["Against copy.csv: error: nothing to compare: *'copy' (copy.csv)*"])


def test_a_bad_baseline_is_a_usage_error(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_benches=TESTS)
    (inner.path / "bad.json").write_text(json.dumps({"what": 1}))
    result = run(inner, "--primbench-baseline", "bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--primbench-baseline: bad.json: matches no known results format*"])
