"""Exceptions that the harness raises, and the exit codes they map to."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # a specialization failed (or, for compare, a regression was found)
EXIT_USAGE = 2  # bad options, bad input, missing dependency or device, an output that cannot be written
EXIT_INTERNAL = 3  # a bug in primbench: an exception no command expected ("internal error … please report")
EXIT_INTERRUPTED = 130


class PrimbenchError(Exception):
    """Base class: a problem the user can fix; the message says what and how."""

    exit_code = EXIT_USAGE


class UsageError(PrimbenchError):
    """Bad command-line options or benchmark definitions."""


class Skipped(BaseException):
    """Raised by ``state.skip(reason)``: the benchmark declines this specialization (an invalid
    combination of its axes). The executor records it as skipped, not failed. A BaseException,
    as pytest's skip is, so that a benchmark's own ``except Exception`` does not swallow it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: The packages of each extra of pyproject.toml (tests/test_dependencies.py checks that they
#: agree): what a missing-dependency message tells to install. primbench itself is not on
#: PyPI, so advice never names ``primbench[extra]`` as a package to fetch from an index.
EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "compare": ("scipy",),
    "history": ("scipy", "pandas", "duckdb", "matplotlib"),
    "cuda12": ("cupy-cuda12x", "nvidia-ml-py"),
    "cuda13": ("cupy-cuda13x", "nvidia-ml-py"),
    "rocm": ("cupy-rocm-7-0", "amdsmi"),
}


def install_advice(extra: str) -> str:
    """``pip install scipy pandas duckdb matplotlib`` (the packages of `extra`), or the extra from
    a clone of primbench's repository."""
    packages = " ".join(EXTRA_PACKAGES.get(extra, ()))
    clone = f"`pip install -e '.[{extra}]'` in a clone of primbench's repository"
    return f"`pip install {packages}`, or {clone}" if packages else clone


class MissingDependencyError(PrimbenchError):
    """An optional dependency is not installed; the message names the packages to install."""

    def __init__(self, module: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python module '{module}', which is not installed: run {install_advice(extra)}"
        )
        self.module = module
        self.extra = extra


class DeviceError(PrimbenchError):
    """No usable GPU, or the GPU runtime failed."""


class StreamBlockingTimeout(DeviceError):
    """The spin kernel that holds the stream gave up waiting for the host."""

    def __init__(self, timeout_secs: float) -> None:
        super().__init__(
            f"stream blocking timed out after {timeout_secs:g} s: the benchmarked function "
            "seems to synchronize (it waited for the blocked stream). Construct the executor "
            "with flags.sync (Executor(flags=primbench.flags.sync)) to turn stream blocking off, "
            "or raise --stream-blocking-timeout-secs if the enqueueing itself is that slow"
        )
        self.timeout_secs = timeout_secs


class ThermalError(PrimbenchError):
    """Warming or cooling did not reach the temperature range in time."""


class BenchmarkFailed(PrimbenchError):
    """A measured specialization failed (its run() or function raised); `Report.check` raises it
    for an executor's run, naming each failure. Its cause is the first failure's exception."""

    exit_code = EXIT_FAILED


class BenchmarkAssertionError(AssertionError):
    """A `test()` check failed; the message shows the actual values to paste in."""
