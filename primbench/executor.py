"""The executor: options, the queue of specializations, the run, the results files."""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, NoReturn, cast

import msgspec
from msgspec import UNSET

from primbench.atomicfile import STDOUT, fallback_path, is_stdout, unwritable_reason, write_output
from primbench.axis import SIZE, Axis, Constraint, combinations, constraints, declared, override, parse_override, zips
from primbench.benchmark import (
    Benchmark,
    checked_meta,
    name_for,
    order_key,
    specialization_name,
)
from primbench.clocks import clock_record
from primbench.console import Reporter, make_console, set_active
from primbench.device import Device
from primbench.energy import over_rounds
from primbench.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    DeviceError,
    PrimbenchError,
    Skipped,
    ThermalError,
    UsageError,
)
from primbench.graph import counts as graph_counts
from primbench.graph import over_rounds as graph_over_rounds
from primbench.measure import SYNC_EVERY, Measurement
from primbench.provenance import host_name, now_iso, provenance
from primbench.report import Report
from primbench.results import (
    RESULTS_VERSION,
    Backend,
    Batch,
    BetweenRounds,
    Calls,
    Context,
    Elapsed,
    Energy,
    Flags,
    General,
    Gpu,
    Graph,
    Monitoring,
    Results,
    Round,
    RoundEnergy,
    RoundGraph,
    SettingsRecord,
    SmClock,
    Specialization,
    Summary,
    Temperatures,
    ThermalRecord,
    TimePerCall,
    time_per_call_fields,
)
from primbench.rounds import log_sd, precise_enough
from primbench.settings import (
    DEFAULT_NAMING,
    NAMINGS,
    CustomOption,
    Settings,
    build_parser,
    effective_cache_size,
    flags,
    parse_args,
)
from primbench.signals import Deferred, Terminated, terminate_as_interrupt
from primbench.signals import exit_code as signal_exit_code
from primbench.state import RunOutcome, State, Thermal
from primbench.stdio import GuardedStream, occupy_closed_streams, say, silence
from primbench.version import __version__

#: Exit codes other than 0 of runs that returned without their program exiting through
#: `Executor.main`: ``primbench run FILE`` exits with the first when FILE ends without exiting.
unexited: list[int] = []


@dataclass
class _Queued:
    """A queued benchmark (with the axes it declares), or after expansion one specialization
    of it (with its axis values)."""

    benchmark: Benchmark
    meta: dict[str, Any]
    name: str
    declared: dict[str, Axis] = field(default_factory=dict)
    axes: dict[str, Any] = field(default_factory=dict)  # this specialization's value of each axis
    size: int | None = None  # its value of the size axis: state.size
    zips: tuple[tuple[str, ...], ...] = ()  # axes that advance together (pb.axis.zipped)
    constraints: tuple[Constraint, ...] = ()  # predicates that exclude combinations (pb.axis.constrain)
    excluded: str | None = None  # after expansion: why a constraint excludes this combination


class Executor:
    """Builds settings from argv (over an optional `Settings`), queues benchmarks, runs them.

    >>> ex = Executor()                       # sys.argv[1:]
    >>> dims = ex.get("dimensions", 3, "The number of dimensions")
    >>> ex.queue(CopyBenchmark(np.int8))
    >>> ex.main()                             # a script: run, then exit with the run's code

    `run()` is the library form: it returns a `Report` and never exits. Bad options or benchmark
    definitions (found by the constructor, `get` or `queue`) are raised by `run()` as a
    `PrimbenchError`, which `main()` prints as one line before exiting with its code.
    """

    def __init__(
        self,
        argv: Sequence[str] | None = None,
        settings: Settings | None = None,
        flags: flags = flags.none,
        *,
        device: Device | None = None,
        thermal: Thermal | None = None,
        reporter: Reporter | None = None,
        prog: str | None = None,
        naming: str = DEFAULT_NAMING,
    ) -> None:
        self._started = time.perf_counter()
        self._argv = list(sys.argv[1:] if argv is None else argv)
        self._base = settings or Settings()
        self.flags = flags
        self._device = device
        self._owns_device = device is None  # a device it was given is released, not closed
        self._thermal = thermal
        self._reporter = reporter
        self._prog = prog or os.path.basename(sys.argv[0] or "benchmark")
        self._naming = naming if naming in NAMINGS else DEFAULT_NAMING  # the program's; --naming wins
        self._naming_given: str | None = None
        self._custom: list[CustomOption] = []
        self._custom_values: dict[str, Any] = {}
        self._queue: list[_Queued] = []
        self._excluded: list[tuple[str, str]] = []  # (name, reason) of the selected combinations excluded
        self._deferred: list[PrimbenchError] = []  # bad definitions, raised by run()
        if naming not in NAMINGS:
            self._deferred.append(UsageError(f"Executor(naming={naming!r}): give one of {', '.join(NAMINGS)}"))
        self._modes: frozenset[str] = frozenset()
        self._given: frozenset[str] = frozenset()  # the options the command line gave (_parse)
        self._expected: int | None = None  # specializations in a complete file (_check_outputs)
        self._renew_next = False  # the first round of a run uses the device as prepared
        self.exit_code: int | None = None
        self.report: Report | None = None  # the last run's
        #: The first failed write of the progress output (a closed pipe, a full disk), in one line
        self.output_error: str | None = None
        self._guards: list[GuardedStream] = []
        self.settings = self._lenient_parse()

    # ----- options

    def _parse(self, *, allow_unknown: bool) -> Settings:
        settings, custom_values, self._modes, self._given, self._naming_given = parse_args(
            self._prog, self._argv, self._base, self._custom, allow_unknown=allow_unknown
        )
        self._custom_values = custom_values
        return settings

    @property
    def naming(self) -> str:
        """The rules of the specialization names (`primbench.settings.NAMINGS`): ``--naming``,
        else the program's ``Executor(naming=...)``, else primbench's."""
        return self._naming_given or self._naming

    def _lenient_parse(self) -> Settings:
        """The settings so far; bad options leave the defaults here, and `run()` raises their error."""
        try:
            return self._parse(allow_unknown=True)
        except PrimbenchError:
            self._custom_values = {o.name: o.default for o in self._custom}
            return self._base

    def get(self, name: str, default: Any, help: str = "") -> Any:
        """Register a custom option ``--name`` (type from `default`) and return its value."""
        if any(o.name == name for o in self._custom):
            return self._custom_values[name]
        self._custom.append(CustomOption(name, default, help))
        self.settings = self._lenient_parse()
        return self._custom_values[name]

    def help_text(self) -> str:
        return build_parser(self._prog, self._custom).format_help()

    # ----- queue

    def queue(self, benchmark: Benchmark | type[Benchmark], *args: Any, **kwargs: Any) -> None:
        """Queue a benchmark instance, or a class with its constructor arguments. A benchmark
        with `axes` becomes one specialization per combination of their values (the Cartesian
        product, after ``--axis`` and ``--size`` replaced values), expanded when it runs."""
        if isinstance(benchmark, type):
            benchmark = benchmark(*args, **kwargs)
        if not isinstance(benchmark, Benchmark):
            self._deferred.append(UsageError(f"queue() takes a primbench.Benchmark, got {type(benchmark).__name__}"))
            return
        try:
            meta = checked_meta(benchmark)
            axes = declared(benchmark)
            groups = zips(benchmark, axes)
            rules = constraints(benchmark)
        except PrimbenchError as exc:
            self._deferred.append(exc)
            return
        if clash := sorted(set(axes) & set(meta)):
            self._deferred.append(UsageError(
                f"{type(benchmark).__name__}: {', '.join(map(repr, clash))} is both a meta() key and an axis; "
                "the axis value joins meta by itself"))
            return
        self._queue.append(_Queued(benchmark, meta, specialization_name(meta), axes, zips=groups, constraints=rules))

    def _overrides(self, settings: Settings) -> dict[str, str]:
        """``--axis`` values by axis name (and ``--size`` given on the command line, as the
        value of every declared size axis)."""
        out: dict[str, str] = {}
        for text in settings.axis:
            name, spec = parse_override(text)
            if name in out:
                raise UsageError(f"--axis {name}= is given twice ({out[name]!r} and {spec!r}); give all values in one")
            out[name] = spec
        if "size" in self._given and any(SIZE in q.declared for q in self._queue):
            if SIZE in out:
                raise UsageError("--size and --axis size=... are both given: give one")
            out[SIZE] = str(settings.size)
        return out

    def _expanded(self, settings: Settings) -> list[_Queued]:
        """Every specialization: each queued benchmark, or the Cartesian product of its axes
        (zipped axes advancing together); a combination a constraint excludes is kept with its
        reason in ``excluded`` (listed, never run)."""
        overrides = self._overrides(settings)
        used: set[str] = set()
        out: list[_Queued] = []
        for q in self._queue:
            axes = dict(q.declared)
            for name, spec in overrides.items():
                if name in axes:
                    axes[name] = override(axes[name], name, spec)
                    used.add(name)
            if not axes:
                out.append(q)
                continue
            if SIZE in axes and any(v <= 0 for v in axes[SIZE].values):
                raise UsageError(f"--axis size={overrides.get(SIZE)}: sizes must be greater than 0")
            for values, reason in combinations(type(q.benchmark).__name__, axes, q.zips, q.constraints):
                meta = {**q.meta, **{n: axes[n].label(v) for n, v in values.items()}}
                out.append(_Queued(q.benchmark, meta, specialization_name(meta), q.declared, values,
                                   values.get(SIZE), q.zips, q.constraints, reason))
        if unknown := [n for n in overrides if n not in used]:
            known = sorted({n for q in self._queue for n in q.declared})
            raise UsageError(f"--axis {unknown[0]}=...: no queued benchmark has an axis {unknown[0]!r} "
                             f"(axes: {', '.join(known) or 'none'})")
        return out

    # ----- run

    def _selected(self) -> list[_Queued]:
        """The specializations to run, named and ordered by `naming`: primbench's names in their
        natural order (`natural_key`), or the C++ primbench's sorted as strings."""
        if not self._queue:
            raise UsageError("no benchmarks queued: call executor.queue(...) before run()")
        algos = {q.meta["algo"] for q in self._queue}
        if len(algos) > 1:
            raise UsageError(
                "every queued specialization must have the same 'algo'; found "
                + ", ".join(repr(a) for a in sorted(map(str, algos)))
            )
        specs = self._expanded(self.settings)
        naming = self.naming
        if naming != DEFAULT_NAMING:
            specs = [dataclasses.replace(q, name=name_for(q.meta, naming)) for q in specs]
        key = order_key(naming)
        seen: dict[str, str] = {}
        for q in specs:
            if q.name in seen:
                raise UsageError(
                    f"two specializations are named {q.name!r} ({seen[q.name]} and "
                    f"{type(q.benchmark).__name__}); give their meta() a distinguishing key"
                )
            seen[q.name] = type(q.benchmark).__name__
        pattern = re.compile(self.settings.filter)
        matched = sorted((q for q in specs if pattern.search(q.name)), key=lambda q: key(q.name))
        chosen = [q for q in matched if q.excluded is None]
        self._excluded = [(q.name, q.excluded) for q in matched if q.excluded is not None]
        if not matched:
            names = ", ".join(repr(q.name) for q in sorted(specs, key=lambda q: key(q.name)) if q.excluded is None)
            raise UsageError(f"--filter {self.settings.filter!r} matches none of: {names}")
        if not chosen and "list" not in self._modes:
            raise UsageError(f"every selected combination is excluded by a constraint ({self._excluded[0][1]}, ...): "
                             "nothing to run")
        return chosen

    def run(self) -> Report:
        """Run every selected specialization and write the results; never exits (see `main`).

        Returns the `Report` (``report.exit_code`` 1 when a specialization failed: its error is in
        the report and the results; ``report.check()`` raises it). Raises a `PrimbenchError` for bad
        options, definitions or outputs (before anything runs) and for results that could not be
        written; KeyboardInterrupt after writing the specializations that finished. With ``--help``
        it prints the options, with ``--list`` the names; ``--profile`` calls each function once."""
        settings = self._parse(allow_unknown=False)
        self.settings = settings
        if "help" in self._modes:
            print(self.help_text())
            return self._returned(Report("help"))
        settings.validate()
        if self._deferred:
            raise self._deferred[0]
        selected = self._selected()
        to_stdout = is_stdout(settings.json_out) or is_stdout(settings.csv_out)  # the progress goes to stderr
        self.output_error = None
        self._guards = []  # this run's progress streams
        reporter = self._reporter or self._guarded_reporter(to_stdout)
        if "list" in self._modes:
            reporter.listing([q.name for q in selected], self._excluded)
            return self._returned(Report("list", names=tuple(q.name for q in selected),
                                         excluded=dict(self._excluded)))
        if "profile" in self._modes and settings.dry:
            raise UsageError("--profile and --dry exclude each other: --dry runs nothing, --profile calls once")
        if "profile" not in self._modes:
            self._check_outputs(settings, len(selected))
        set_active(reporter)
        try:
            if "profile" in self._modes:
                return self._returned(self._profile(settings, selected, reporter))
            with terminate_as_interrupt():  # SIGTERM and SIGHUP keep what finished, as Ctrl-C does
                return self._returned(self._run(settings, selected, reporter))
        finally:
            set_active(None)

    def _guarded_reporter(self, to_stderr: bool) -> Reporter:
        """The progress on stdout (stderr when a results file goes to stdout), through a stream that
        records a failed write (a closed pipe, a full disk) instead of stopping the run: the results
        are still written, and `main` exits 2 with the failure in one line."""
        name = "stderr" if to_stderr else "stdout"
        stream = getattr(sys, name)
        if stream is None:
            return Reporter(make_console(stderr=to_stderr))
        guard = GuardedStream(stream, name)
        self._guards.append(guard)
        return Reporter(make_console(cast("IO[str]", guard)))

    def _stream_failure(self) -> str | None:
        """The first failed write of the progress output, in one line (also `output_error`)."""
        for guard in self._guards:
            if (message := guard.message()) is not None:
                self.output_error = message
                return message
        return None

    def main(self) -> NoReturn:
        """Run, then exit with the documented code: 0, 1 when a specialization failed, 2 with one line
        on stderr for bad options or input, 130 when interrupted (Ctrl-C), 143 on SIGTERM and 129 on
        SIGHUP (every finished specialization written, as on Ctrl-C). What a script ends with."""
        from primbench.textsafe import term_clean

        occupy_closed_streams()  # `>&-`: a write fails as on a closed descriptor (exit 2), never lands in a file
        try:
            report = self.run()
        except PrimbenchError as exc:
            say(f"{self._prog}: error: {term_clean(exc)}")
            raise SystemExit(exc.exit_code) from None
        except KeyboardInterrupt as exc:
            raise SystemExit(signal_exit_code(exc, EXIT_INTERRUPTED)) from None
        except (OSError, UnicodeEncodeError) as exc:  # a standard stream written directly (--help, --json-out -)
            for name in ("stdout", "stderr"):
                silence(getattr(sys, name))
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            say(f"{self._prog}: error: cannot write to standard output: {term_clean(reason)}")
            raise SystemExit(EXIT_USAGE) from None
        if report.exit_code in unexited:
            unexited.remove(report.exit_code)
        if (failure := self._stream_failure()) is not None:
            written = f"; the results are in {', '.join(report.outputs)}" if report.outputs else ""
            say(f"{self._prog}: error: {term_clean(failure)}{written}")
            raise SystemExit(EXIT_USAGE)
        raise SystemExit(report.exit_code)

    def _keep(self, report: Report) -> Report:
        self.report = report
        self.exit_code = report.exit_code
        return report

    def _returned(self, report: Report) -> Report:
        if report.exit_code != EXIT_OK:
            unexited.append(report.exit_code)
        return self._keep(report)

    def _open_device(self, settings: Settings) -> Device | None:
        if self._device is not None:
            return self._device
        if settings.dry:
            return None
        from primbench.backends import open_device  # the GPU runtime loads here, not at import

        self._device = open_device(settings.device, monitoring=not settings.no_monitoring)
        return self._device

    def _close(self, device: Device) -> None:
        """Close a device this executor opened; release one it was given (its owner closes it)."""
        if self._owns_device:
            device.close()
            self._device = None
        else:
            device.release()

    @staticmethod
    def _prepare(device: Device, settings: Settings) -> None:
        try:
            device.prepare(
                # _run resolved --cache-size auto already (the L2 times a multiple, or the fallback)
                cache_size=0 if settings.hot else effective_cache_size(settings.cache_size, None),
                blocking_timeout_secs=settings.stream_blocking_timeout_secs,
                slots=SYNC_EVERY,
            )
        except PrimbenchError:
            raise
        except Exception as exc:  # the runtime's own error, e.g. out of memory for the cache buffer
            raise DeviceError(f"preparing the GPU failed: {type(exc).__name__}: {exc}") from exc

    def _thermal_control(self, device: Device, settings: Settings, reporter: Reporter) -> Thermal:
        if self._thermal is not None:
            return self._thermal
        from primbench.thermal import thermal_for

        return thermal_for(device, settings, reporter.note)

    def _run(self, settings: Settings, selected: list[_Queued], reporter: Reporter) -> Report:
        device = self._open_device(settings)
        # Read the device's context now: it needs the monitor, which close() shuts down.
        dev_ctx = device.context() if device is not None else {}
        if device is not None and not settings.dry and settings.cache_size is None:
            # --cache-size auto: the bytes used are what results.json records
            l2 = (dev_ctx.get("gpu") or {}).get("l2_cache_bytes")
            settings = dataclasses.replace(settings, cache_size=effective_cache_size(None, l2))
            self.settings = settings
        # Into the model before anything is measured: a context it cannot hold fails now.
        try:
            dev_records = _device_records(dev_ctx, settings)
        except BaseException:
            if device is not None and not settings.dry:
                self._close(device)
            raise
        algorithm = str(selected[0].meta["algo"])
        count = len(selected)
        reporter.header(algorithm, count, settings.dry, noise_tolerance_percent=settings.noise_tolerance_percent)
        done: dict[int, list[_Round]] = {i: [] for i in range(count)}
        failures: dict[int, Specialization] = {}
        skipped: dict[int, Specialization] = {}  # state.skip: recorded, not failed
        finished: dict[int, Specialization] = {}  # records of the specializations that ran every round
        exceptions: dict[str, BaseException] = {}
        interrupted: KeyboardInterrupt | None = None
        fatal: str | None = None
        thermal = None
        if device is not None and not settings.dry:
            try:
                self._prepare(device, settings)
                thermal = self._thermal_control(device, settings, reporter)
            except BaseException:
                self._close(device)
                raise
        rounds = 1 if settings.dry else settings.rounds
        deferred = Deferred()  # from the end of measuring on, a signal waits until the results are written
        try:
            # Rounds are interleaved: round 1 of every specialization, then round 2, ...
            started = time.perf_counter()
            for r in range(rounds):
                if rounds > 1:
                    reporter.round_started(r, rounds, _eta(started, r * count, rounds * count))
                for index, q in enumerate(selected):
                    if index in failures or index in skipped or index in finished:  # or stopped early: precise enough
                        continue
                    reporter.started(index, count, q.name)
                    if settings.dry:
                        reporter.finished(index, count, _dry_record(index, q))
                        continue
                    assert device is not None
                    try:
                        done[index].append(self._round(device, settings, thermal, q, r, rounds, done[index],
                                                       lambda p, i=index: reporter.batch(i, count, p)))
                    except (KeyboardInterrupt, ThermalError):
                        raise
                    except Skipped as exc:  # the benchmark declined this combination: not a failure
                        skipped[index] = _skipped_record(index, q, exc.reason)
                        reporter.finished(index, count, skipped[index])
                        continue
                    except Exception as exc:  # the benchmark's own fault: report it, go on
                        failures[index] = _failed_record(index, q, exc)
                        exceptions[q.name] = exc
                        reporter.finished(index, count, failures[index])
                        continue
                    if r == rounds - 1 or precise_enough([rd.gpu_secs / rd.calls for rd in done[index]], rounds):
                        finished[index] = record = _record(index, q, done[index], settings)
                        reporter.finished(index, count, record, _clock_note(record))
                    else:
                        reporter.round_finished(index, count, _round_record(r, done[index][-1], settings))
        except KeyboardInterrupt as exc:
            deferred.start()
            interrupted = exc
            how = f"terminated ({exc})" if isinstance(exc, Terminated) else "interrupted"
            reporter.error(f"{how}: writing the specializations that finished a round")
        except ThermalError as exc:
            deferred.start()
            fatal = str(exc)
            reporter.error(fatal)
        except BaseException:
            raise
        else:
            deferred.start()
        finally:
            if device is not None and not settings.dry:
                try:
                    self._close(device)
                except BaseException:
                    deferred.restore()
                    raise
        try:
            report = self._finish(settings, selected, algorithm, done, failures, skipped, finished, exceptions,
                                  interrupted, fatal, dev_records, thermal, reporter)
        except BaseException:
            deferred.restore()  # what failed is raised; a signal that came meanwhile is dropped
            raise
        if interrupted is not None:
            deferred.restore()
            raise interrupted
        deferred.stop()  # a signal during the write: the complete results are written, then it ends the run
        return report

    def _finish(self, settings: Settings, selected: list[_Queued], algorithm: str, done: dict[int, list[_Round]],
                failures: dict[int, Specialization], skipped: dict[int, Specialization],
                finished: dict[int, Specialization], exceptions: dict[str, BaseException],
                interrupted: KeyboardInterrupt | None, fatal: str | None,
                dev_records: _DeviceRecords, thermal: Thermal | None, reporter: Reporter) -> Report:
        """The records of the run, written (signals deferred by the caller); the report."""
        records: list[Specialization] = []
        for index, q in enumerate(selected):
            if settings.dry:
                records.append(_dry_record(index, q))
            elif index in failures:
                records.append(failures[index])
            elif index in skipped:
                records.append(skipped[index])
            elif index in finished:
                records.append(finished[index])
            elif done[index]:  # interrupted before its last round
                records.append(_record(index, q, done[index], settings))
        results = self._results(settings, algorithm, records, dev_records, thermal)
        errors = {r.name: r.error for r in records if r.error is not None}
        code = (signal_exit_code(interrupted, EXIT_INTERRUPTED) if interrupted
                else EXIT_FAILED if (errors or fatal) else EXIT_OK)
        report = Report("dry" if settings.dry else "run", code, tuple(q.name for q in selected), results,
                        failures=errors, exceptions=exceptions, error=fatal,
                        skipped={r.name: r.skipped for r in records if r.skipped is not None},
                        excluded=dict(self._excluded))
        self._keep(report)  # kept should writing fail
        # complete: every selected specialization ran all its planned rounds, stopped early by the
        # precision stop, failed or was skipped (state.skip); an interrupted one is not, whatever it finished
        complete = settings.dry or len(finished) + len(failures) + len(skipped) == len(selected)
        outputs = self._write(settings, results, complete=complete)
        assert results.summary is not None
        reporter.summary(results.summary, len(records), len(errors), outputs, excluded=len(self._excluded),
                         graphs=graph_counts(records))
        return self._keep(dataclasses.replace(report, outputs=tuple(outputs)))

    def _profile(self, settings: Settings, selected: list[_Queued], reporter: Reporter) -> Report:
        """--profile: each specialization's setup, then one call of its function in an NVTX range of its
        name. The device is not prepared (no cache buffer, spin or clock kernels), nothing warms, nothing
        is timed or written."""
        device = self._open_device(settings)
        assert device is not None
        count = len(selected)
        reporter.header(str(selected[0].meta["algo"]), count, False, profile=True)
        failures: dict[str, str] = {}
        exceptions: dict[str, BaseException] = {}
        try:
            for index, q in enumerate(selected):
                reporter.started(index, count, q.name)
                state = State(device, settings, sync=bool(self.flags & flags.sync), profile_range=q.name)
                try:
                    with device.activate():
                        q.benchmark.run(state)
                    if not state.profiled:
                        raise UsageError(f"{type(q.benchmark).__name__}.run() never called state.run(fn)")
                except KeyboardInterrupt:
                    raise
                except Skipped as exc:
                    reporter.finished(index, count, _skipped_record(index, q, exc.reason))
                    continue
                except Exception as exc:  # the benchmark's own fault: report it, go on
                    record = _failed_record(index, q, exc)
                    failures[q.name], exceptions[q.name] = str(record.error), exc
                    reporter.finished(index, count, record)
                    continue
                reporter.profiled(index, count, q.name)
        finally:
            self._close(device)
        return Report("profile", EXIT_FAILED if failures else EXIT_OK, tuple(q.name for q in selected),
                      failures=failures, exceptions=exceptions)

    def _round(self, device: Device, settings: Settings, thermal: Thermal | None, q: _Queued, r: int, rounds: int,
               earlier: list[_Round], on_batch: Any) -> _Round:
        """One round of one specialization: a fresh ``run(state)`` on a renewed stream, measured to
        its own stop rule."""
        if self._renew_next:
            device.renew()
        self._renew_next = True
        state = State(
            device,
            settings if q.size is None else replace(settings, size=q.size),
            sync=bool(self.flags & flags.sync),
            thermal=thermal,
            on_batch=on_batch,
            round_index=r,
            rounds=rounds,
            calls_per_batch=earlier[0].outcome.measurement.kernel_calls_per_batch if earlier else None,
            spent_secs=sum(e.outcome.measurement.round_secs for e in earlier),
            axes=q.axes,
            graph=settings.graph or bool(getattr(q.benchmark, "graph", False)),  # primbench.graph
        )
        # Setup runs with the harness stream current too, so that the
        # benchmark's uploads are ordered before its kernels. NVTX: specialization > round > batch.
        with device.activate(), device.nvtx_range(q.name), device.nvtx_range(f"round {r + 1}/{rounds}"):
            q.benchmark.run(state)
        if state.outcome is None:
            raise UsageError(f"{type(q.benchmark).__name__}.run() never called state.run(fn)")
        return _Round(state.outcome, state.items, state.bytes_per_call, device.default_clock_mhz(),
                      None if settings.no_monitoring else device.power_limit_watts())

    def _results(self, settings: Settings, algorithm: str, records: list[Specialization],
                 device: _DeviceRecords, thermal: Thermal | None) -> Results:
        """The results of the run: the model the writers read."""
        prov = provenance(settings.branch, settings.commit, _benchmark_dir())
        thermal_record = thermal.record() if thermal is not None else None
        general = General(
            algorithm=algorithm,
            specialization_count=len(records),
            library_build_type="python",
            gpu=device.gpu,
            backend=device.backend,
            monitoring=device.monitoring,
            temperature_type=device.temperature_type,
            thermal=msgspec.convert(thermal_record, ThermalRecord) if thermal_record is not None else None,
            host_name=host_name(),
            date=now_iso(),
            branch_name=prov.get("branch_name"),
            commit_hash=prov.get("commit_hash"),
            branch_source=prov.get("branch_source"),
            commit_source=prov.get("commit_source"),
            primbench_version=__version__,
            python_version=platform.python_version(),
        )
        limits = _thermal_limits(thermal_record)
        context = Context(
            results_version=RESULTS_VERSION,
            general=general,
            settings=msgspec.structs.replace(device.settings, **limits) if limits else device.settings,
            flags=Flags(sync=bool(self.flags & flags.sync)),
            custom_settings=dict(self._custom_values) if self._custom else None,
        )
        summary = Summary.of(records, time.perf_counter() - self._started)
        return Results(context, tuple(records), summary)

    def _check_outputs(self, settings: Settings, expected: int) -> None:
        """Before anything is measured: every output can be written (else exit 2 now, not
        after minutes of measuring). `expected` specializations make a complete file."""
        self._expected = expected
        if settings.json_out == STDOUT and settings.csv_out == STDOUT:
            raise UsageError("--json-out - and --csv-out -: only one of them can be standard output")
        for option, path in (("--json-out", settings.json_out), ("--csv-out", settings.csv_out)):
            if path and path not in (os.devnull, STDOUT) and (reason := unwritable_reason(path)):
                raise UsageError(f"{option} {path}: cannot write there ({reason}); nothing was measured")

    def _write(self, settings: Settings, results: Results, *, complete: bool = True) -> list[str]:
        """Write the outputs. A run that is not `complete` (interrupted: a specialization did not
        finish its rounds, or never ran) never replaces a results file (or CSV): it goes beside it,
        NAME.partial.json; a write that fails goes to a fallback path, named in a one-line error (exit 2)."""
        records = results.specializations
        partial = not complete or (self._expected is not None and len(records) < self._expected)
        outputs: list[str] = []
        problems: list[str] = []
        for path, csv in ((settings.json_out, False), (settings.csv_out, True)):
            if not path:
                continue
            target = _partial_path(path) if partial and _holds_results(path, csv) else path

            def write(to: str | Path, csv: bool = csv) -> None:
                if str(to) == STDOUT:
                    write_output(STDOUT, results.csv_text() if csv else results.dumps(settings.spaces_per_indent))
                elif csv:
                    results.save_csv(to)
                else:
                    results.save(to, settings.spaces_per_indent)

            try:
                write(target)
                outputs.append(str(target))
            except OSError as exc:
                fallback = fallback_path(path)
                try:
                    write(fallback)
                except OSError as again:
                    problems.append(f"cannot write {target} ({exc.strerror or exc}), nor the fallback {fallback} "
                                    f"({again.strerror or again})")
                else:
                    outputs.append(str(fallback))
                    problems.append(f"cannot write {target} ({exc.strerror or exc}); the results are in {fallback}")
        if problems:
            raise UsageError("; ".join(problems))
        return [o for o in outputs if o != os.devnull]


@dataclass(frozen=True)
class _DeviceRecords:
    """What the run's context holds of the device and the settings, in the model."""

    gpu: Gpu | None
    backend: Backend | None
    monitoring: Monitoring | None
    temperature_type: str | None
    settings: SettingsRecord


def _device_records(context: Mapping[str, Any], settings: Settings) -> _DeviceRecords:
    """The device's ``gpu``, ``backend``, ``monitoring`` and ``temperature_type`` (the last two
    only with monitoring on) and the settings as records of the model; a value the model cannot
    hold is a DeviceError (one line, before anything is measured)."""
    monitored = not settings.no_monitoring

    def record(key: str, kind: type[Any], wanted: bool = True) -> Any:
        if not wanted or key not in context:
            return None
        try:
            return msgspec.convert(context[key], kind)
        except msgspec.ValidationError as exc:
            raise DeviceError(f"the device's {key} record does not fit results.json: {exc}") from None

    return _DeviceRecords(
        gpu=record("gpu", Gpu),
        backend=record("backend", Backend),
        monitoring=record("monitoring", Monitoring, monitored),
        temperature_type=record("temperature_type", str, monitored),
        settings=msgspec.convert(settings.to_json(), SettingsRecord),
    )


def _partial_path(path: str) -> str:
    """results.json -> results.partial.json (beside it)."""
    p = Path(path)
    return str(p.with_name(f"{p.stem}.partial{p.suffix}" if p.suffix else f"{p.name}.partial"))


def _holds_results(path: str, csv: bool) -> bool:
    """Whether `path` is a results file (or a CSV with a row), which an incomplete run must not replace."""
    try:
        if not Path(path).is_file():
            return False
        if csv:
            with open(path, encoding="utf-8", errors="replace") as f:
                return sum(1 for _ in f) > 1
        from primbench.results import load_results

        return len(load_results(path).specializations) > 0
    except (OSError, PrimbenchError):
        return False


def _eta(started: float, done: int, total: int) -> float | None:
    """Seconds left for `total` measurements when `done` took the time since `started`."""
    if done <= 0:
        return None
    return (time.perf_counter() - started) / done * (total - done)


def _benchmark_dir() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return str(Path(path).resolve().parent) if path else os.getcwd()


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True)
class _Round:
    """What one round of a specialization measured, with what its run() declared."""

    outcome: RunOutcome
    items: int
    bytes_per_call: int
    default_clock_mhz: float | None
    power_limit_watts: float | None = None

    @property
    def gpu_secs(self) -> float:
        return self.outcome.measurement.gpu_secs

    @property
    def calls(self) -> int:
        return self.outcome.measurement.kernel_calls


def _rate(per_call: float, calls: int, gpu_secs: float) -> float:
    return per_call * calls / gpu_secs if gpu_secs > 0 else 0.0


def _batch_records(r: int | None, m: Measurement) -> list[Batch]:
    return [
        Batch(batch_ms=b.batch_ms, iterations_ms=tuple(b.iterations_ms), kernel_calls=b.kernel_calls,
              host_secs=b.host_secs, round=r)
        for b in m.batches
    ]


def _temperatures(start: float | None, end: float | None) -> Temperatures | None:
    return Temperatures(start=start, end=end) if start is not None or end is not None else None


def _sm_clock(record: Mapping[str, Any] | None) -> SmClock | None:
    """`primbench.clocks.clock_record`'s object in the model."""
    return None if record is None else msgspec.convert(record, SmClock)


def _round_record(r: int, rd: _Round, settings: Settings) -> Round:
    """``rounds[r]`` of a specialization (results 4.3.0)."""
    m, out = rd.outcome.measurement, rd.outcome
    gpu, calls = m.gpu_secs, m.kernel_calls
    clock = clock_record(out.clock_start, out.clock_end, rd.default_clock_mhz,
                         out.reasons_start, out.reasons_end, settings.min_clock_fraction)
    return Round(
        round=r,
        gpu_ms_per_call=gpu * 1000.0 / calls if calls else 0.0,
        bytes_per_second=_rate(rd.bytes_per_call, calls, gpu),
        items_per_second=_rate(rd.items, calls, gpu),
        noise_timeout=m.noise_timeout,
        noise_percent=m.noise_percent,
        batch_count=len(m.batches),
        kernel_calls=calls,
        kernel_calls_per_batch=m.kernel_calls_per_batch,
        elapsed_secs=Elapsed(host=m.host_secs, gpu=gpu),
        gpu_temp_celsius=_temperatures(out.temp_start, out.temp_end),
        sm_clock_mhz=clock["average_mhz"] if clock is not None else UNSET,
        throttled_batches=m.throttled_batches,  # results 4.5.0
        energy=msgspec.convert(m.energy.record(), RoundEnergy) if m.energy is not None else None,
        graph=msgspec.convert(out.graph.record(), RoundGraph) if out.graph is not None else None,  # results 4.6.0
    )


def _record(index: int, q: _Queued, rounds: Sequence[_Round], settings: Settings) -> Specialization:
    """A specialization over all its rounds: the C++ primbench's fields for the whole measurement (every
    call of every round), then the rounds and the spread between them, then (results 4.4.0) the time
    per call and the timer."""
    gpu = math.fsum(rd.gpu_secs for rd in rounds)
    calls = sum(rd.calls for rd in rounds)
    items_total = math.fsum(rd.items * rd.calls for rd in rounds)
    bytes_total = math.fsum(rd.bytes_per_call * rd.calls for rd in rounds)
    last = rounds[-1]
    first_m = rounds[0].outcome.measurement
    measurements = [rd.outcome.measurement for rd in rounds]
    batches = sum(len(m.batches) for m in measurements)
    several = len(rounds) > 1
    round_records = tuple(_round_record(r, rd, settings) for r, rd in enumerate(rounds))
    spread = log_sd([rr.gpu_ms_per_call for rr in round_records])
    per_call = [b.batch_ms / 1000.0 / b.kernel_calls for m in measurements for b in m.batches if b.kernel_calls]
    timed = time_per_call_fields(per_call, gpu, calls)  # results 4.4.0
    stats = timed["time_per_call"]
    return Specialization(
        index=index,
        name=q.name,
        bytes_per_second=bytes_total / gpu if gpu > 0 else 0.0,
        items_per_second=items_total / gpu if gpu > 0 else 0.0,
        bytes_per_item=_number(last.bytes_per_call / last.items) if last.items else 0,
        items=last.items,
        noise_timeout=any(m.noise_timeout for m in measurements),
        # pooled over the rounds (root mean square): each round's window estimates the same batch noise
        noise_percent=math.sqrt(math.fsum(m.noise_percent**2 for m in measurements) / len(measurements)),
        meta=q.meta,
        elapsed_secs=Elapsed(host=math.fsum(m.host_secs for m in measurements), gpu=gpu),
        gpu_temp_celsius=_temperatures(rounds[0].outcome.temp_start, last.outcome.temp_end),
        calls=Calls(
            kernel_calls_per_batch=first_m.kernel_calls_per_batch,
            ms_per_batch=gpu * 1000.0 / batches if batches else 0.0,
            batches=batches,
            kernel_calls=calls,
        ),
        batches=(tuple(b for r, m in enumerate(measurements) for b in _batch_records(r if several else None, m))
                 if settings.output_batches else None),
        sm_clock=_sm_clock(_clock_over(rounds, settings)),
        rounds=round_records,
        between_rounds=BetweenRounds(count=len(rounds), cv_percent=spread * 100.0 if spread is not None else None),
        written_seconds_per_call=timed["gpu_seconds_per_call"],
        written_time_per_call=TimePerCall(**stats) if stats is not None else None,
        # times on the host clock: compare warns before it mixes them with events
        timer="host" if any(rd.outcome.timer == "host" for rd in rounds) else "events",
        throttled_batches=sum(m.throttled_batches for m in measurements),  # results 4.5.0
        energy=_energy(measurements, last.power_limit_watts),
        graph=_graph(rounds, timed["gpu_seconds_per_call"]),  # results 4.6.0
    )


def _graph(rounds: Sequence[_Round], stream_secs_per_call: float | None) -> Graph | None:
    """A specialization's ``graph`` (results 4.6.0) where its rounds measured one (--graph)."""
    graphs = [rd.outcome.graph for rd in rounds if rd.outcome.graph is not None]
    return msgspec.convert(graph_over_rounds(graphs, stream_secs_per_call), Graph) if graphs else None


def _energy(measurements: Sequence[Measurement], power_limit_watts: float | None) -> Energy | None:
    """A specialization's ``energy`` (results 4.5.0) where every round read the counter."""
    windows = [m.energy for m in measurements]
    if not windows or any(w is None for w in windows):
        return None
    return msgspec.convert(over_rounds([w for w in windows if w is not None], power_limit_watts), Energy)


def _clock_over(rounds: Sequence[_Round], settings: Settings) -> dict[str, Any] | None:
    """The ``sm_clock`` of a specialization: cycles over time summed across its rounds."""
    pairs = [(rd.outcome.clock_start, rd.outcome.clock_end) for rd in rounds]
    if any(a is None or b is None for a, b in pairs):
        return None
    ns = sum(b[0] - a[0] for a, b in pairs if a is not None and b is not None)
    ticks = sum(b[1] - a[1] for a, b in pairs if a is not None and b is not None)
    return clock_record((0, 0), (ns, ticks), rounds[0].default_clock_mhz,
                        rounds[0].outcome.reasons_start, rounds[-1].outcome.reasons_end, settings.min_clock_fraction)


def _failed_record(index: int, q: _Queued, exc: BaseException) -> Specialization:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, PrimbenchError):
        message = f"{type(exc).__name__}: {message}"
    return Specialization(
        index=index, name=q.name, bytes_per_second=None, items_per_second=None, bytes_per_item=None, items=None,
        noise_timeout=False, noise_percent=None, meta=q.meta, elapsed_secs=None, calls=None, error=message,
    )


def _skipped_record(index: int, q: _Queued, reason: str) -> Specialization:
    """A specialization its benchmark skipped (``state.skip``, results 4.5.0): no metrics, not failed."""
    return Specialization(
        index=index, name=q.name, bytes_per_second=None, items_per_second=None, bytes_per_item=None, items=None,
        noise_timeout=None, noise_percent=None, meta=q.meta, elapsed_secs=None, calls=None, skipped=reason,
    )


def _dry_record(index: int, q: _Queued) -> Specialization:
    return Specialization(
        index=index, name=q.name, bytes_per_second=0, items_per_second=0, bytes_per_item=0, items=0,
        noise_timeout=False, noise_percent=0, meta=q.meta, elapsed_secs=Elapsed(host=0, gpu=0),
        calls=Calls(kernel_calls_per_batch=0, ms_per_batch=0, batches=0, kernel_calls=0),
        dry=True,  # nothing was measured: history ingest refuses the file
    )


def _thermal_limits(thermal_record: Mapping[str, Any] | None) -> dict[str, Any]:
    """``min_gpu_temp`` / ``max_gpu_temp`` as the run applied them (numbers where the options said
    auto); nothing without thermal control (--no-monitoring, no sensor), where they stay as given."""
    if thermal_record is None:
        return {}
    return {key: _number(thermal_record[key]) for key in ("min_gpu_temp", "max_gpu_temp")}


def _clock_note(record: Specialization) -> str:
    clock = record.sm_clock
    if clock is None or clock.average_mhz is None:
        return ""
    note = f"  SM {clock.average_mhz:.0f} MHz"
    if clock.below_expected:
        note += " [red](below expected clock)[/]"
    if record.throttled_batches:
        note += f" [yellow]{record.throttled_batches} throttled batches discarded[/]"
    return note


__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Executor"]
