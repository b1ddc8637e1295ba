"""primbench as a library: measure a function from Python, with no command line.

`bench(fn)` measures `fn` with exactly the executor's protocol (rounds, batches, stopping rules,
cache clear, stream blocking, thermal control): it queues one `FunctionBenchmark` on an `Executor`
that parses no argv, and returns a typed `BenchResult`. It writes no file unless given
``json_out=``, prints nothing unless ``verbose=True``, and raises instead of exiting: a
`PrimbenchError` for the harness's problems (bad settings, no GPU, warming that timed out, a
function that synchronizes under a blocked stream), and `fn`'s own exception when `fn` raises.

`BenchSession` runs several such measurements on one device and one thermal control and joins
them into one results document (the pytest plugin's ``gpubench`` fixture uses it).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from primbench.benchmark import Benchmark, specialization_name
from primbench.console import Reporter
from primbench.device import Device
from primbench.errors import ThermalError, UsageError
from primbench.executor import Executor
from primbench.provenance import provenance
from primbench.report import BenchResult, Report
from primbench.results import Flags, Results, Summary
from primbench.settings import Settings, flags
from primbench.state import State, Thermal

__all__ = ["BenchSession", "FunctionBenchmark", "bench"]

#: ``context.general`` keys that say where branch and commit came from.
_PROVENANCE_KEYS = ("branch_name", "commit_hash", "branch_source", "commit_source")


class FunctionBenchmark(Benchmark):
    """A function as a benchmark: `setup` (optional) runs on the harness stream before each round and
    what it returns is passed to `fn` (and `test`); `items` / `bytes` per call give items/s and bytes/s."""

    def __init__(self, fn: Callable[..., object], meta: Mapping[str, Any], *,
                 setup: Callable[[], object] | None = None, test: Callable[..., object] | None = None,
                 items: int | None = None, bytes: int | None = None) -> None:
        if not callable(fn):
            raise UsageError(f"bench() takes a function to measure, got {type(fn).__name__}")
        for label, value in (("items", items), ("bytes", bytes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise UsageError(f"{label}= must be a whole number of {label} per call, not negative; got {value!r}")
        if bytes is not None and items is None:
            raise UsageError("bytes= needs items= too (the items each call processes, for bytes per item "
                             "and items/s); give neither to record GPU time per call only")
        self._fn, self._meta, self._setup, self._test = fn, dict(meta), setup, test
        self._items, self._bytes = items, bytes

    def meta(self) -> Mapping[str, Any]:
        return self._meta

    def run(self, state: State) -> None:
        fn, test = self._fn, self._test
        if self._setup is not None:
            value = self._setup()
            fn = functools.partial(fn, value)
            test = functools.partial(test, value) if test is not None else None
        if self._items is not None:
            state.set_items(self._items)
        if self._bytes is not None:
            state.add_reads("u1", self._bytes)  # reads and writes together: only their sum is used
        if test is not None:
            state.test(test)
        state.run(fn)


def _default_name(fn: Callable[..., object]) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "function" if name == "<lambda>" else str(name)


def _measure(executor: Executor, benchmark: FunctionBenchmark) -> Report:
    """Run one function benchmark; raise what went wrong (its own exception, or the abort's)."""
    executor.queue(benchmark)
    report = executor.run()
    if report.exceptions:
        raise next(iter(report.exceptions.values()))
    if report.error is not None:
        raise ThermalError(report.error)
    report.check()
    return report


def bench(
    fn: Callable[..., object],
    *,
    setup: Callable[[], object] | None = None,
    items: int | None = None,
    bytes: int | None = None,
    hot: bool | None = None,
    sync: bool = False,
    test: Callable[..., object] | None = None,
    settings: Settings | None = None,
    name: str | None = None,
    meta: Mapping[str, Any] | None = None,
    json_out: str | Path | None = None,
    verbose: bool = False,
    device: Device | None = None,
    graph: bool | None = None,
) -> BenchResult:
    """Measure `fn` (a callable that launches GPU work on the current stream) as the executor does.

    ``setup``: called before each round with the harness stream current; `fn` (and `test`) then get
    its return value as their argument. ``items`` / ``bytes``: processed and moved (read plus written)
    per call, for items/s and bytes/s (bytes needs items; neither: GPU time per call only).
    ``hot``: skip the cache clear (default: ``settings.hot``). ``sync``: `fn` synchronizes (no stream
    blocking; ``flags.sync``). ``test``: checked once after the first warmup call.
    ``settings``: a `primbench.Settings` (rounds, time budget, tolerance ...); its ``json_out`` /
    ``csv_out`` are ignored: only ``json_out=`` writes a file. ``name`` / ``meta``: the
    specialization's name (default the function's) or its whole ``meta`` mapping (with ``algo``).
    ``verbose``: print progress as a benchmark program does. ``device``: a `primbench.device.Device`
    to run on (default: the GPU, opened and closed here). ``graph``: also capture `fn` into a CUDA graph
    and time its replay (`primbench.graph`: the result's ``graph_seconds_per_call``, or ``graph_reason``;
    default: ``settings.graph``).

    Returns a `BenchResult`. Raises a `PrimbenchError` for the harness's problems, and the function's
    own exception when `fn`, `setup` or `test` raises."""
    base = settings or Settings()
    if base.dry:
        raise UsageError("bench() measures and returns the measurement: Settings(dry=True) would run nothing")
    base = dataclasses.replace(base, json_out=str(json_out) if json_out is not None else "", csv_out="",
                               hot=base.hot if hot is None else hot, graph=base.graph if graph is None else graph)
    meta = dict(meta) if meta is not None else {"algo": "bench", "name": name or _default_name(fn)}
    benchmark = FunctionBenchmark(fn, meta, setup=setup, test=test, items=items, bytes=bytes)
    executor = Executor([], base, flags.sync if sync else flags.none, device=device,
                        reporter=Reporter() if verbose else Reporter.quiet(), prog="primbench.bench")
    report = _measure(executor, benchmark)
    (result,) = report.results
    return result


class BenchSession:
    """Measurements of several functions on one device and one thermal control, joined into one
    results document (one ``algo``; each call is a specialization).

    Settings that make a measurement another one are the session's (``settings``), except ``hot``
    and ``sync``, which a call may change: such a call's ``meta`` gets ``hot: true`` / ``sync: true``,
    so its name never pairs it with a measurement under the session's settings in compare or
    history. ``where``: the directory whose git checkout gives branch and commit (else the
    options, environment and CI variables as for a benchmark program)."""

    def __init__(self, settings: Settings | None = None, *, algorithm: str = "bench", device: Device | None = None,
                 reporter: Reporter | None = None, where: str | Path | None = None) -> None:
        self.settings = dataclasses.replace(settings or Settings(), json_out="", csv_out="")
        if self.settings.dry:
            raise UsageError("a session measures: Settings(dry=True) would run nothing")
        self.algorithm = algorithm
        self._device = device
        self._owns_device = device is None
        self._thermal: Thermal | None = None
        self._reporter = reporter or Reporter.quiet()
        self._where = str(where) if where is not None else None
        self._provenance: dict[str, str] | None = None
        self._started = time.perf_counter()
        self.reports: list[Report] = []
        self._names: set[str] = set()

    def device(self) -> Device:
        """The session's device, opened on first use; DeviceError or MissingDependencyError without a GPU."""
        if self._device is None:
            from primbench.backends import open_device  # the GPU runtime loads here

            self._device = open_device(self.settings.device, monitoring=not self.settings.no_monitoring)
        return self._device

    def _thermal_control(self, device: Device) -> Thermal:
        if self._thermal is None:
            from primbench.thermal import thermal_for

            self._thermal = thermal_for(device, self.settings, self._reporter.note)
        return self._thermal

    def bench(self, fn: Callable[..., object], meta: Mapping[str, Any], *,
              setup: Callable[[], object] | None = None, items: int | None = None, bytes: int | None = None,
              hot: bool | None = None, sync: bool = False, test: Callable[..., object] | None = None) -> BenchResult:
        """Measure `fn` as `bench` does; `meta` (without ``algo``) names the specialization."""
        meta = {**meta, "algo": self.algorithm}
        hot = self.settings.hot if hot is None else hot
        if hot != self.settings.hot:
            meta["hot"] = hot
        if sync:
            meta["sync"] = True
        name = specialization_name(meta)
        if name in self._names:
            raise UsageError(f"two measurements are named {name!r} in this session: give each call its own name=")
        benchmark = FunctionBenchmark(fn, meta, setup=setup, test=test, items=items, bytes=bytes)
        device = self.device()
        executor = Executor([], dataclasses.replace(self.settings, hot=hot), flags.sync if sync else flags.none,
                            device=device, thermal=self._thermal_control(device), reporter=self._reporter,
                            prog="primbench")
        self._names.add(name)
        try:
            report = _measure(executor, benchmark)
        finally:
            if executor.report is not None and executor.report.model is not None:
                self.reports.append(executor.report)
        (result,) = report.results
        return result

    def results(self) -> Results | None:
        """Every measurement (failed ones too) as one results model; None before the first."""
        models = [r.model for r in self.reports if r.model is not None]
        if not models:
            return None
        records = tuple(msgspec.structs.replace(spec, index=i)
                        for i, spec in enumerate(s for m in models for s in m.specializations))
        first = models[0].context
        general = msgspec.structs.replace(
            first.general,
            specialization_count=len(records),
            thermal=models[-1].context.general.thermal,  # the session's totals so far
        )
        if self._where is not None:
            if self._provenance is None:  # the checkout's branch and commit, asked of git once
                self._provenance = provenance(self.settings.branch, self.settings.commit, self._where)
            found = self._provenance
            general = msgspec.structs.replace(general, **{k: found.get(k) for k in _PROVENANCE_KEYS})
        context = msgspec.structs.replace(
            first,
            general=general,
            settings=msgspec.structs.replace(first.settings, hot=self.settings.hot),
            flags=msgspec.structs.replace(first.flags or Flags(), sync=False),
        )
        summary = Summary.of(records, time.perf_counter() - self._started)
        return Results(context, records, summary)

    def document(self) -> dict[str, Any] | None:
        """`results` as the JSON document it writes; None before the first measurement."""
        results = self.results()
        return results.to_dict() if results is not None else None

    def write(self, path: str | Path, spaces_per_indent: int = 4) -> Path | None:
        """Write `results` to `path` (whole or not at all); None, and nothing written, before the first
        measurement."""
        results = self.results()
        if results is None:
            return None
        context = results.context
        results = dataclasses.replace(results, context=msgspec.structs.replace(
            context, settings=msgspec.structs.replace(context.settings, json_out=str(path))))
        results.save(path, spaces_per_indent)
        return Path(path)

    def close(self) -> None:
        """Close the device if the session opened it."""
        if self._device is not None and self._owns_device:
            self._device.close()
            self._device = None
