"""The pytest plugin: GPU benchmarks beside the tests, with the ``gpubench`` fixture.

Registered through the ``pytest11`` entry point ``primbench`` (``-p no:primbench`` turns it off)::

    def test_copy(gpubench):
        x = cupy.arange(1 << 24, dtype=cupy.int64)
        y = cupy.empty_like(x)
        result = gpubench(lambda: copy_kernel(grid, block, (x, y)), items=x.size, bytes=2 * x.nbytes)
        assert result.bytes_per_second > 1e12

Each call measures the function with the executor's protocol (the device and thermal control are
shared by the session) and returns a `primbench.BenchResult`. Without a GPU the test is skipped
at its setup, before its body runs, naming why (a test file that imports CuPy at its top fails
to collect without CuPy: use ``cp = pytest.importorskip("cupy")``, as the README does). With
``--primbench-json PATH`` the session's measurements go to one results.json (branch and
commit from the options, the environment, the CI or git at pytest's rootdir), which
``primbench compare`` and ``primbench history ingest`` take like any other; nothing is written
without it. ``--primbench-options "--rounds 1 --min-secs 0.2"`` sets the harness options of every
measurement, as a benchmark program takes them; a single option goes after ``=``:
``--primbench-options=--hot`` (pytest's parser takes a lone ``--hot`` for an option of its own).
The session's results go to the hook ``pytest_primbench_results`` at its end:
``--primbench-baseline PATH`` (the plugin `primbench.compare.pytest_baseline`, on the analysis
side) compares them with a baseline.

A test's specialization is named after its node id (for example ``test: test_kernels.py::test_copy``, plus
``name:`` when a test measures more than one function); the results' algorithm is the ini option
``primbench_algorithm`` (default ``pytest``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from primbench.errors import DeviceError, MissingDependencyError, PrimbenchError
from primbench.library import BenchSession
from primbench.report import BenchResult
from primbench.settings import Settings, parse_args

if TYPE_CHECKING:
    from primbench.device import Device
    from primbench.results import Results

_SESSION = pytest.StashKey["_PluginSession"]()


class _Hooks:
    @pytest.hookspec(firstresult=True)
    def pytest_primbench_device(self, config: pytest.Config) -> Device | None:
        """The `primbench.device.Device` the ``gpubench`` fixture measures on; None: the GPU that
        the installed CuPy sees (the default). Raise `primbench.DeviceError` to skip as without a
        GPU. Called once per session, at the first measurement."""

    @pytest.hookspec
    def pytest_primbench_results(self, config: pytest.Config, results: Results) -> None:
        """The session's measurements as one `primbench.results.Results`, once, at the session's
        end (only when something was measured), after ``--primbench-json`` is written."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(_Hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("primbench", "primbench: GPU benchmarks with the gpubench fixture")
    group.addoption("--primbench-json", metavar="PATH", default=None,
                    help="write the session's gpubench measurements to one results.json at PATH "
                         "(with branch and commit); off by default")
    group.addoption("--primbench-options", metavar="OPTIONS", default="",
                    help='harness options for every gpubench measurement, as a benchmark program takes them, '
                         'e.g. "--rounds 1 --min-secs 0.2 --hot"; one option alone after =: '
                         '--primbench-options=--hot')
    parser.addini("primbench_algorithm", default="pytest",
                  help="the algorithm name of the results that --primbench-json writes (default: pytest)")


class _PluginSession:
    """The session's measurements: a `BenchSession` opened at the first one."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        text = config.getoption("primbench_options") or ""
        try:
            settings, _, modes, _given, _naming = parse_args("--primbench-options", shlex.split(text), Settings(), [],
                                            allow_unknown=False)
            if modes or settings.dry:
                raise PrimbenchError("takes measurement options only, not --help, --list, --profile or --dry")
            settings.validate()
        except (PrimbenchError, ValueError) as exc:
            raise pytest.UsageError(f"--primbench-options {text!r}: {exc}") from None
        self.settings = settings
        self.json_path: str | None = config.getoption("primbench_json")
        self.algorithm = str(config.getini("primbench_algorithm") or "pytest")
        self.session: BenchSession | None = None
        self.unavailable: str | None = None  # why there is no device, once known
        self.results: list[BenchResult] = []
        self.written: str | None = None

    def open(self) -> BenchSession:
        """The session, with its device; `pytest.skip` where there is none."""
        if self.unavailable is not None:
            pytest.skip(self.unavailable)
        if self.session is None:
            try:
                device = self.config.hook.pytest_primbench_device(config=self.config)
                session = BenchSession(self.settings, algorithm=self.algorithm, device=device,
                                       where=str(self.config.rootpath))
                session.device()  # opens the GPU here when no device was given
            except (DeviceError, MissingDependencyError) as exc:
                self.unavailable = f"primbench: no GPU to measure on: {exc}"
                pytest.skip(self.unavailable)
            self.session = session
        return self.session

    def finish(self) -> None:
        """Write the results file if asked (`written`), hand the results to
        ``pytest_primbench_results``; close the device."""
        if self.session is not None:
            try:
                if self.json_path and self.session.write(self.json_path, self.settings.spaces_per_indent):
                    self.written = self.json_path
                results = self.session.results()
                if results is not None:
                    self.config.hook.pytest_primbench_results(config=self.config, results=results)
            finally:
                self.session.close()


class GpuBench:
    """The ``gpubench`` fixture: call it with a function to measure it (see `primbench.bench`)."""

    def __init__(self, plugin: _PluginSession, node_id: str) -> None:
        self._plugin = plugin
        self._node_id = node_id
        self.results: list[BenchResult] = []

    def __call__(self, fn: Callable[..., object], *, setup: Callable[[], object] | None = None,
                 items: int | None = None, bytes: int | None = None, hot: bool | None = None,
                 sync: bool = False, test: Callable[..., object] | None = None, name: str | None = None,
                 meta: Mapping[str, Any] | None = None) -> BenchResult:
        """Measure `fn` and return its `BenchResult`; the arguments are `primbench.bench`'s. `name`
        tells apart several measurements in one test; `meta` adds keys to the specialization's name."""
        session = self._plugin.open()
        keys: dict[str, Any] = {**(meta or {}), "test": self._node_id}
        if name is not None:
            keys["name"] = name
        result = session.bench(fn, keys, setup=setup, items=items, bytes=bytes, hot=hot, sync=sync, test=test)
        self.results.append(result)
        self._plugin.results.append(result)
        return result


@pytest.fixture
def gpubench(request: pytest.FixtureRequest) -> GpuBench:
    """Measure a GPU function with primbench's protocol: ``gpubench(fn, items=..., bytes=...)``
    returns a `primbench.BenchResult`. The device is resolved here, at the test's setup, so a
    test without a GPU is skipped before its body (and its CuPy set-up) runs."""
    plugin = request.config.stash[_SESSION]
    plugin.open()
    return GpuBench(plugin, request.node.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SESSION] = _PluginSession(config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    plugin = session.config.stash.get(_SESSION, None)
    if plugin is not None:
        plugin.finish()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    plugin = config.stash.get(_SESSION, None)
    if plugin is None or not plugin.results:
        return
    terminalreporter.section("primbench")
    for result in plugin.results:
        terminalreporter.write_line(str(result))
    if plugin.written:
        terminalreporter.write_line(f"Wrote {plugin.written}")
