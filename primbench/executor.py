"""The executor: options, the queue of specializations, the run, the results files."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, NoReturn, cast

from primbench import processes, runlog, workers
from primbench.atomicfile import STDOUT, fallback_path, is_stdout, unwritable_reason, write_output
from primbench.benchmark import Benchmark
from primbench.console import Reporter, make_console, set_active
from primbench.device import Device, DeviceOpener
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
from primbench.measure import SYNC_EVERY, Progress
from primbench.plan import Queued, plan, queued
from primbench.records import DeviceRecords, MeasuredRound, device_records, failed_record, run_results, skipped_record
from primbench.report import Report
from primbench.results import Results, Specialization
from primbench.roundloop import RunState, SpecRun, interleave
from primbench.rounds import precise_enough
from primbench.settings import (
    DEFAULT_NAMING,
    NAMINGS,
    CustomOption,
    Settings,
    build_parser,
    default_design,
    device_list,
    effective_cache_size,
    flags,
    parse_args,
)
from primbench.signals import Deferred, Terminated, terminate_as_interrupt
from primbench.signals import exit_code as signal_exit_code
from primbench.state import State, Thermal
from primbench.stdio import GuardedStream, occupy_closed_streams, say, silence

#: How the run's log names each step of a worker's start (`primbench.processes.START_STEPS`).
START_NAMES = {"program": "program imported", "device": "device open", "primed": "every specialization primed"}


class _WorkerEnds:
    """What the parent of ``--processes`` workers says as each ends: `failed` for one that ended with an
    error, `finished` for the others. A failure before any worker has measured is held until one does
    (`release`): where every worker fails so (no GPU in any of them) the run ends with one error
    (`Executor._run_sets`), not one line from each worker."""

    def __init__(self, failed: Callable[[workers.Worker], object],
                 finished: Callable[[workers.Worker], object]) -> None:
        self._failed, self._finished = failed, finished
        self._held: list[workers.Worker] | None = []  # None once released: said at once from then on

    def __call__(self, w: workers.Worker) -> None:
        if w.error is None:
            self._finished(w)
        elif self._held is not None:
            self._held.append(w)
        else:
            self._failed(w)

    def release(self) -> None:
        """Say the failures held, and every later one at once."""
        held, self._held = self._held or [], None
        for w in held:
            self._failed(w)


#: The time to go a run of workers says after its first turn (`primbench.processes.time_to_go`), where it is at
#: least this many seconds: a run of a few specializations needs none.
TIME_TO_GO_SECS = 10.0
#: At most how often a worker's progress ("k/N specializations finished") is said, seconds from its turn or its
#: start (`_Paced`): a turn of a few seconds (a default run's, 0.5-3 s at 64 KiB-64 MiB for 24 specializations)
#: says only that it began and ended; a long one, or a --devices worker, says how far it is.
PROGRESS_SECS = 5.0


class _Paced:
    """`say` a worker's progress at most every `every` seconds from when it began (`began`: its turn; else the
    parent started it)."""

    def __init__(self, say: Callable[[workers.Worker], object], every: float = PROGRESS_SECS,
                 now: Callable[[], float] = time.time) -> None:
        self._say, self._every, self._now = say, every, now
        self._last: dict[int, float] = {}

    def began(self, w: workers.Worker) -> None:
        self._last[id(w)] = self._now()

    def __call__(self, w: workers.Worker) -> None:
        now = self._now()
        if now - self._last.get(id(w), w.spawned) >= self._every:
            self._last[id(w)] = now
            self._say(w)


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
        device: Device | DeviceOpener | None = None,
        thermal: Thermal | None = None,
        reporter: Reporter | None = None,
        prog: str | None = None,
        naming: str = DEFAULT_NAMING,
        device_count: int | None = None,
        worker_command: Sequence[str] | None = None,
    ) -> None:
        self._started = time.perf_counter()
        self._argv = list(sys.argv[1:] if argv is None else argv)
        self._program = argv is None  # its own command line: the default protocol applies (`_parse`)
        self._base = settings or Settings()
        self.flags = flags
        # `device`: a device, or a function that opens the device of an index (--device, a --devices worker)
        self._opener = device if device is not None and not isinstance(device, Device) else None
        self._device = device if isinstance(device, Device) else None
        self._owns_device = not isinstance(device, Device)  # a device it was given is released, not closed
        self._device_count = device_count  # --devices all: the GPUs of the host (None: ask the runtime)
        self._worker_command = list(worker_command) if worker_command is not None else None
        self._role: workers.WorkerRole | None = None  # a --devices worker's, from its environment
        self._start_steps: dict[str, float] = {}  # a --processes worker's: when each step of its start ended
        self._checkpoint: Callable[[], None] = lambda: None  # a worker's (_checkpointer)
        self._thermal = thermal
        self._reporter = reporter
        self._prog = prog or os.path.basename(sys.argv[0] or "benchmark")
        self._naming = naming if naming in NAMINGS else DEFAULT_NAMING  # the program's; --naming wins
        self._naming_given: str | None = None
        self._custom: list[CustomOption] = []
        self._custom_values: dict[str, Any] = {}
        self._queue: list[Queued] = []
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
        if (self._program and not self._modes  # a program's measurement, not a library's call or --list
                and (self._worker_command is not None or workers.not_restartable() is None)):
            settings, self._given = default_design(settings, self._given, self._base, os.environ)
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
            self._queue.append(queued(benchmark))
        except PrimbenchError as exc:
            self._deferred.append(exc)

    # ----- run

    def _selected(self) -> list[Queued]:
        """The specializations to run (`primbench.plan.plan`); the excluded ones are kept for the listing."""
        chosen = plan(self._queue, self.settings, given=self._given, naming=self.naming, listing="list" in self._modes)
        self._excluded = list(chosen.excluded)
        return list(chosen.selected)

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
        self._role = workers.WorkerRole.from_env(os.environ) if "list" not in self._modes else None
        self._start_steps = {"program": time.time()}  # a --processes worker's start (its log)
        if self._role is not None:  # a worker: a run on its GPU of its specializations
            selected = self._role.selected(selected)
            if self._role.process is not None:  # of --processes: its share of the budget (primbench.processes)
                settings = processes.worker_settings(settings, self._given)
            settings = replace(settings, devices="", replicate=False, device=self._role.device,
                               json_out=self._role.out, csv_out="")
            self.settings = settings
            self._role.beat()
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
        if "profile" in self._modes and settings.devices:
            raise UsageError("--profile and --devices exclude each other: a profiler follows one process; "
                             "give --device")
        if "profile" in self._modes and settings.processes > 1:
            raise UsageError("--profile and --processes exclude each other: a profiler follows one process")
        if "profile" not in self._modes:
            self._check_outputs(settings, len(selected))
        set_active(reporter)
        try:
            if "profile" in self._modes:
                return self._returned(self._profile(settings, selected, reporter))
            with terminate_as_interrupt():  # SIGTERM and SIGHUP keep what finished, as Ctrl-C does
                if settings.devices and not settings.dry:
                    return self._returned(self._run_across(settings, selected, reporter))
                if settings.processes > 1 and not settings.dry:
                    return self._returned(self._run_processes(settings, selected, reporter))
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
            with terminate_as_interrupt():  # also before measuring (options, selection, outputs checked)
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
        runlog.exited(report)  # exits with its code here: `primbench run FILE` need not
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
        runlog.returned(report)  # a program that ends without main(): `primbench run FILE` exits with its code
        return self._keep(report)

    def _open_device(self, settings: Settings) -> Device | None:
        if self._device is not None:
            return self._device
        if settings.dry:
            return None
        if self._opener is not None:
            self._device = self._opener(settings.device)
            return self._device
        from primbench.backends import open_device  # the GPU runtime loads here, not at import

        self._device = open_device(settings.device, monitoring=not settings.no_monitoring)
        return self._device

    def _command(self, settings: Settings) -> list[str]:
        """The command line that starts a worker: the program's own (`primbench.workers.worker_command`), or
        the one it was given. A usage error where the program cannot be started again (read from standard
        input: the default protocol then measures in one process, `_parse`)."""
        if self._worker_command is not None:
            return self._worker_command
        if (why := workers.not_restartable()) is not None:
            option = "--devices" if settings.devices else "--processes"
            raise UsageError(f"{option}: this program {why}, which a worker process cannot start again; "
                             "save it to a file and run that")
        return workers.worker_command()

    def _check_runtime(self) -> None:
        """Before a parent starts its workers: where they will open the GPU runtime themselves (no device or
        opener given), that CuPy is installed (`primbench.backends.require_cupy`), so that a machine without it
        gets one line and exit 2 as a single process does, not one error from each worker."""
        if self._device is None and self._opener is None:
            from primbench.backends import require_cupy

            require_cupy()

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

    def _device_for_run(self, settings: Settings) -> tuple[Device | None, Settings, DeviceRecords]:
        """The device (None in a dry run), the settings with ``--cache-size auto`` resolved, and the
        device's and settings' records, in the model before anything is measured: a context it
        cannot hold fails now (the device closed)."""
        device = self._open_device(settings)
        # Read the device's context now: it needs the monitor, which close() shuts down.
        dev_ctx = device.context() if device is not None else {}
        if device is not None and not settings.dry and settings.cache_size is None:
            # --cache-size auto: the bytes used are what results.json records
            l2 = (dev_ctx.get("gpu") or {}).get("l2_cache_bytes")
            settings = dataclasses.replace(settings, cache_size=effective_cache_size(None, l2))
            self.settings = settings
        try:
            return device, settings, device_records(dev_ctx, settings)
        except BaseException:
            if device is not None and not settings.dry:
                self._close(device)
            raise

    def _prepared(self, device: Device | None, settings: Settings, reporter: Reporter) -> Thermal | None:
        """The device prepared and the thermal control, unless the run is dry (the device closed
        when either fails)."""
        if device is None or settings.dry:
            return None
        try:
            self._prepare(device, settings)
            return self._thermal_control(device, settings, reporter)
        except BaseException:
            self._close(device)
            raise

    def _run(self, settings: Settings, selected: list[Queued], reporter: Reporter) -> Report:
        device, settings, dev_records = self._device_for_run(settings)
        algorithm = str(selected[0].meta["algo"])
        reporter.header(algorithm, len(selected), settings.dry,
                        noise_tolerance_percent=settings.noise_tolerance_percent)
        thermal = self._prepared(device, settings, reporter)
        if self._role is not None and device is not None:  # a --processes worker measures in its turn
            try:
                self._start_steps["device"] = time.time()
                if self._role.turn and not settings.dry:
                    self._prime(device, settings, selected, self._role)
                    self._start_steps["primed"] = time.time()
                # an earlier worker's failures are the run's record
                failed_before = self._role.wait_turn(start=self._start_steps)
                selected = [q for q in selected if q.name not in failed_before]
            except BaseException:
                self._close(device)
                raise
        run = RunState.start(selected, 1 if settings.dry else settings.rounds)
        deferred = Deferred()  # from the end of measuring on, a signal waits until the results are written
        if self._role is not None:
            self._checkpoint = self._checkpointer(self._role, settings, run, algorithm, dev_records, thermal)
        self._measure(run, device, settings, thermal, reporter, deferred)
        try:
            report = self._finish(settings, run, algorithm, dev_records, thermal, reporter)
        except BaseException:
            deferred.restore()  # what failed is raised; a signal that came meanwhile is dropped
            raise
        if run.interrupted is not None:
            deferred.restore()
            raise run.interrupted
        deferred.stop()  # a signal during the write: the complete results are written, then it ends the run
        if self._role is not None:
            self._role.end_turn()  # a --processes worker exits with the others, after every turn
        return report

    def _measure(self, run: RunState, device: Device | None, settings: Settings, thermal: Thermal | None,
                 reporter: Reporter, deferred: Deferred) -> None:
        """The round loop (`primbench.roundloop.interleave`), then the device closed. An interrupt or
        a thermal error ends it with what finished kept in `run`; from then on signals wait."""

        role = self._role

        def measure_round(spec: SpecRun, r: int, on_batch: Callable[[Progress], object]) -> MeasuredRound:
            assert device is not None
            if role is not None:  # a --devices worker: each round and batch is its heartbeat
                role.beat()
                self._checkpoint()
                beating = on_batch

                def on_batch(p: Progress) -> object:
                    role.beat()
                    return beating(p)

            return self._round(device, settings, thermal, spec.queued, r, run.rounds, spec.rounds, on_batch)

        try:
            interleave(run, settings, reporter, measure_round, precise_enough)
        except KeyboardInterrupt as exc:
            deferred.start()
            run.interrupted = exc
            how = f"terminated ({exc})" if isinstance(exc, Terminated) else "interrupted"
            reporter.error(f"{how}: writing the specializations that finished a round")
        except ThermalError as exc:
            deferred.start()
            run.fatal = str(exc)
            reporter.error(run.fatal)
        else:
            deferred.start()
        finally:
            if device is not None and not settings.dry:
                try:
                    if role is not None and role.turn:  # it waits for the others' turns: holding no more than before
                        device.free_cached_memory()
                    self._close(device)
                except BaseException:
                    deferred.restore()
                    raise

    def _checkpointer(self, role: workers.WorkerRole, settings: Settings, run: RunState, algorithm: str,
                      dev_records: DeviceRecords, thermal: Thermal | None) -> Callable[[], None]:
        """A worker's: before each round, the specializations settled so far written to its checkpoint
        file (when one more has settled), so that a crash loses none of them; a --processes worker's at
        most every `primbench.processes.PROCESS_CHECKPOINT_SECS`, so that a crash there loses that much at most."""
        pace = workers.CheckpointPace(processes.PROCESS_CHECKPOINT_SECS if role.turn else 0.0)

        def checkpoint() -> None:
            records = [s.record for s in run.specs if s.record is not None]
            if not pace.due(len(records), time.perf_counter()):
                return
            results = run_results(settings, algorithm, records, dev_records, thermal,
                                  sync=bool(self.flags & flags.sync),
                                  custom_settings=dict(self._custom_values) if self._custom else None,
                                  started=self._started)
            with contextlib.suppress(OSError):  # the parent fails what it cannot read; measuring goes on
                results.save(role.checkpoint, 0)

        return checkpoint

    def _finish(self, settings: Settings, run: RunState, algorithm: str, dev_records: DeviceRecords,
                thermal: Thermal | None, reporter: Reporter) -> Report:
        """The records of the run, written (signals deferred by the caller); the report."""
        records = run.records(settings)
        results = run_results(settings, algorithm, records, dev_records, thermal,
                              sync=bool(self.flags & flags.sync),
                              custom_settings=dict(self._custom_values) if self._custom else None,
                              started=self._started)
        errors = {r.name: r.error for r in records if r.error is not None}
        code = (signal_exit_code(run.interrupted, EXIT_INTERRUPTED) if run.interrupted
                else EXIT_FAILED if (errors or run.fatal) else EXIT_OK)
        report = Report("dry" if settings.dry else "run", code, tuple(s.queued.name for s in run.specs), results,
                        failures=errors, exceptions=dict(run.exceptions), error=run.fatal,
                        skipped={r.name: r.skipped for r in records if r.skipped is not None},
                        excluded=dict(self._excluded))
        self._keep(report)  # kept should writing fail
        outputs = self._write(settings, results, complete=settings.dry or run.complete)
        assert results.summary is not None
        reporter.summary(results.summary, len(records), len(errors), outputs, excluded=len(self._excluded),
                         graphs=graph_counts(records))
        return self._keep(dataclasses.replace(report, outputs=tuple(outputs)))

    def _run_across(self, settings: Settings, selected: list[Queued], reporter: Reporter) -> Report:
        """``--devices``: one worker per GPU (`primbench.workers`), watched, their files merged into one
        document, written as a run on one GPU writes its; exit 1 when a worker or a specialization failed."""
        if self._device is not None and self._opener is None:
            raise UsageError("--devices: this program gives the executor one device (Executor(device=...)), which a "
                             "worker cannot move to another GPU; give a function of the GPU index instead")
        count = self._device_count
        if count is None and settings.devices.strip().lower() == "all":
            from primbench.backends import device_count

            count = device_count()
        devices = device_list(settings.devices, count)
        self._check_runtime()
        command = self._command(settings)
        places = workers.placement(len(selected), devices, replicate=settings.replicate)
        total = sum(len(p) for p in places.values())
        algorithm = str(selected[0].meta["algo"])
        self._expected = total
        reporter.header(algorithm, total, False, noise_tolerance_percent=settings.noise_tolerance_percent)
        how = "every specialization on each" if settings.replicate else "sharded round-robin"
        reporter.note(f"{len(devices)} GPUs ({', '.join(map(str, devices))}), {how}: one worker process per GPU")
        limit = workers.silence_limit(settings)

        def ended(w: workers.Worker) -> None:
            if w.error is not None:
                reporter.error(f"GPU {w.device}: {w.error}; its specializations fail, the others go on")
            else:
                reporter.note(f"GPU {w.device}: its worker finished ({len(w.positions)} specializations)")

        with tempfile.TemporaryDirectory(prefix="primbench-devices-") as folder:
            started = workers.start(command, places, Path(folder))
            interrupted = workers.watch(started, limit, ended, _Paced(lambda w: reporter.note(
                f"GPU {w.device}: {w.finished}/{len(w.positions)} specializations finished")))
            deferred = Deferred()
            deferred.start()
            try:
                parent = run_results(settings, algorithm, [], device_records({}, settings), None,
                                     sync=bool(self.flags & flags.sync),
                                     custom_settings=dict(self._custom_values) if self._custom else None,
                                     started=self._started)
                merged = workers.merge(started, selected, parent, host_secs=time.perf_counter() - self._started)
                for label, log in workers.keep_logs(started, settings.json_out).items():
                    reporter.note(f"{label}: its worker's output is in {log}")
                report = self._across_report(settings, merged, interrupted, reporter)
            except BaseException:
                deferred.restore()
                raise
        if interrupted is not None:
            deferred.restore()
            raise interrupted
        deferred.stop()
        return report

    def _run_processes(self, settings: Settings, selected: list[Queued], reporter: Reporter) -> Report:
        """``--processes K``: K workers on one GPU (`primbench.processes`), started side by side and
        measuring in turn, their files merged into one document, written as a run of one process
        writes its; exit 1 when a worker or a specialization failed."""
        self._check_runtime()
        command = self._command(settings)
        own = processes.worker_settings(settings, self._given)
        algorithm = str(selected[0].meta["algo"])
        self._expected = len(selected)
        reporter.header(algorithm, len(selected), False, noise_tolerance_percent=settings.noise_tolerance_percent)
        reporter.note(f"{settings.processes} worker processes on one GPU, measuring in turn: {own.rounds} rounds "
                      f"and {own.min_secs:.3g} s a specialization each")
        limit = workers.silence_limit(settings)

        said: set[int] = set()  # the workers reported finished (at the end of their turn, or when they ended)

        def at() -> str:  # when, since the program's executor started: where a run's wall time goes
            return f"at {time.perf_counter() - self._started:.1f} s"

        def finished(w: workers.Worker) -> None:
            if id(w) not in said:
                said.add(id(w))
                # interrupted (Ctrl-C, SIGTERM) before it wrote its results: in its turn, or waiting for one
                cut = w.interrupted and not w.wrote_results
                reporter.note(f"{w.label}: {'interrupted' if cut else 'finished'} {at()}")

        ended = _WorkerEnds(lambda w: reporter.error(f"{w.label}: {w.error}; the other processes go on"), finished)

        with tempfile.TemporaryDirectory(prefix="primbench-processes-") as folder:
            started, interrupted = self._run_sets(settings, len(selected), command, Path(folder), reporter, at,
                                                  finished, ended, limit)
            deferred = Deferred()
            deferred.start()
            if interrupted is not None:
                how = f"terminated ({interrupted})" if isinstance(interrupted, Terminated) else "interrupted"
                measured = sum(1 for w in started.workers if w.wrote_results)
                every = settings.processes * settings.runs
                reporter.error(f"{how}: writing the turns that ended ({measured} of {every} workers measured every "
                               "specialization)")
            try:
                written = replace(settings, rounds=own.rounds)  # what each process ran
                parent = run_results(written, algorithm, [], device_records({}, written), None,
                                     sync=bool(self.flags & flags.sync),
                                     custom_settings=dict(self._custom_values) if self._custom else None,
                                     started=self._started)
                results, failed = processes.merge(started, selected, parent, settings,
                                                  host_secs=time.perf_counter() - self._started)
                for label, log in workers.keep_logs(started, settings.json_out).items():
                    reporter.note(f"{label}: its worker's output is in {log}")
                report = self._across_report(settings, workers.Merged(results, failed), interrupted, reporter)
            except BaseException:
                deferred.restore()
                raise
        if interrupted is not None:
            deferred.restore()
            raise interrupted
        deferred.stop()
        return report

    def _run_sets(self, settings: Settings, count: int, command: list[str], folder: Path, reporter: Reporter,
                  at: Callable[[], str], finished: Callable[[workers.Worker], None],
                  ended: _WorkerEnds, limit: float
                  ) -> tuple[workers.Workers, KeyboardInterrupt | None]:
        """The ``--runs`` sets of ``--processes`` workers, one set after another (each started once the one
        before has measured, numbered on from it), each watched until its last turn; every set's workers
        together, and the interrupt that stopped them (no later set starts). Where every worker of the first
        set ended with an error before any measured (the GPU could not be opened in any of them), a
        `DeviceError` with the first one's, as one process would give, and no later set."""
        runs, k = settings.runs, settings.processes
        started = workers.Workers()
        interrupted: KeyboardInterrupt | None = None
        progress = _Paced(lambda w: reporter.note(f"{w.label}: {w.finished}/{count} specializations finished"))
        first_turn: dict[str, float] = {}  # the first set's first turn: when it "began", when its end was "said"
        for run in range(runs):
            set_began = time.time()
            if runs > 1:
                reporter.note(f"run {run + 1} of {runs}: {k} new worker processes {at()}")
            own = folder / f"run{run}"
            own.mkdir()
            these = workers.start_processes(command, k, settings.device, list(range(count)), own, first=run * k)
            started.workers += these.workers
            turns = processes.Turns(these)

            def poll(turns: processes.Turns = turns, these: workers.Workers = these, set_began: float = set_began,
                     first: bool = run == 0) -> None:
                given = turns()
                for w in turns.ended:
                    if w.error is None:
                        finished(w)
                if first and "began" in first_turn and "said" not in first_turn and turns.ended:
                    first_turn["said"] = now = time.time()
                    togo = processes.time_to_go(now - first_turn["began"], first_turn["began"] - set_began, k, runs)
                    if togo.secs >= TIME_TO_GO_SECS:
                        starts = (f" and {togo.starts_left} more start(s) of about {togo.start_secs:.1f} s"
                                  if togo.starts_left else "")
                        reporter.note(f"about {togo.secs:.0f} s to go: {togo.turns_left} more turn(s) of about "
                                      f"{togo.turn_secs:.1f} s{starts}")
                if given is not None:
                    if turns.given == 1 and (split := processes.start_split(these)) is not None:
                        reporter.note(f"{split.workers} workers ready, from their start: " + ", ".join(
                            f"{START_NAMES[step]} after {low:.1f}-{high:.1f} s" for step, low, high in split.steps))
                    reporter.note(f"{given.label}: measuring ({turns.given} of {k}) {at()}")
                    progress.began(given)
                    if first and "began" not in first_turn:
                        first_turn["began"] = time.time()
                    ended.release()

            interrupted = workers.watch(these, limit, ended, progress, poll, every=workers.TURN_POLL_SECS)
            if interrupted is None and run == 0 and turns.given == 0 and all(w.failed for w in these.workers):
                first = these.workers[0]
                raise DeviceError(f"none of the {k} worker processes could start; {first.label}: {first.error}")
            ended.release()
            if interrupted is not None:
                break
        return started, interrupted

    def _across_report(self, settings: Settings, merged: workers.Merged, interrupted: KeyboardInterrupt | None,
                       reporter: Reporter) -> Report:
        results = merged.results
        records = results.specializations
        count = len(records)
        for record in records:
            reporter.finished(record.index, count, record)
        def key(r: Specialization) -> str:  # replicated: a name once per GPU
            return f"{r.name} on GPU {r.gpu.index}" if settings.replicate and r.gpu is not None else r.name

        errors = {key(r): r.error for r in records if r.error is not None}
        fatal = "; ".join(f"{w.label}: {w.error}" for w in merged.failed) or None
        code = (signal_exit_code(interrupted, EXIT_INTERRUPTED) if interrupted
                else EXIT_FAILED if (errors or fatal) else EXIT_OK)
        report = Report("run", code, tuple(r.name for r in records), results, failures=errors, error=fatal,
                        skipped={key(r): r.skipped for r in records if r.skipped is not None},
                        excluded=dict(self._excluded))
        self._keep(report)
        if settings.results_per_gpu:  # NAME.gpuN.json, one per GPU (results.per_gpu); the CSV stays one
            self._expected = None  # each file holds its GPU's specializations
            outputs = []
            for part in results.per_gpu():
                own = replace(settings, json_out=_gpu_path(settings.json_out, part.devices[0].index), csv_out="")
                outputs += self._write(own, part, complete=interrupted is None)
            outputs += self._write(replace(settings, json_out=""), results, complete=interrupted is None)
        else:
            outputs = self._write(settings, results, complete=interrupted is None)
        assert results.summary is not None
        reporter.summary(results.summary, count, len(errors), outputs, excluded=len(self._excluded),
                         graphs=graph_counts(list(records)))
        return self._keep(dataclasses.replace(report, outputs=tuple(outputs)))

    def _profile(self, settings: Settings, selected: list[Queued], reporter: Reporter) -> Report:
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
                state = self._untimed_state(device, settings, q, q.name)
                try:
                    with device.activate():
                        q.benchmark.run(state)
                    if not state.profiled:
                        raise UsageError(f"{type(q.benchmark).__name__}.run() never called state.run(fn)")
                except KeyboardInterrupt:
                    raise
                except Skipped as exc:
                    reporter.finished(index, count, skipped_record(index, q, exc.reason))
                    continue
                except Exception as exc:  # the benchmark's own fault: report it, go on
                    record = failed_record(index, q, exc)
                    failures[q.name], exceptions[q.name] = str(record.error), exc
                    reporter.finished(index, count, record)
                    continue
                reporter.profiled(index, count, q.name)
        finally:
            self._close(device)
        return Report("profile", EXIT_FAILED if failures else EXIT_OK, tuple(q.name for q in selected),
                      failures=failures, exceptions=exceptions)

    def _untimed_state(self, device: Device, settings: Settings, q: Queued, range_name: str) -> State:
        """The state of one untimed call of `q`'s function (--profile, `_prime`): its size and axes
        as a round has them, the call in an NVTX range of `range_name`."""
        return State(device, settings if q.size is None else replace(settings, size=q.size),
                     sync=bool(self.flags & flags.sync), axes=q.axes, profile_range=range_name)

    def _prime(self, device: Device, settings: Settings, selected: list[Queued], role: workers.WorkerRole) -> None:
        """A --processes worker's, before it says it is ready: each specialization's setup and one
        call of its function, untimed (as --profile calls it), so that what a first use costs (module
        loading, JIT compilation, library handles) is paid while every worker starts side by side, not
        in the worker's turn while the others wait (tests/benchmarks/verdicts/h200/wall6: 4.5 s of a
        worker's 7.5 s turn at 1 MiB). A specialization that fails here is left to fail in its round,
        where its error is recorded."""
        for q in selected:
            role.beat()
            state = self._untimed_state(device, settings, q, f"prime {q.name}")
            try:
                with device.activate():
                    q.benchmark.run(state)
            except KeyboardInterrupt:
                raise
            except Exception:  # its measured round raises it again and records it
                continue
        with device.activate():
            device.synchronize_device()
        device.free_cached_memory()
        role.beat()

    def _round(self, device: Device, settings: Settings, thermal: Thermal | None, q: Queued, r: int, rounds: int,
               earlier: list[MeasuredRound], on_batch: Any) -> MeasuredRound:
        """One round of one specialization: a fresh ``run(state)`` on a renewed stream, measured to
        its own stop rule."""
        began = time.perf_counter()
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
            energy_baseline=settings.energy_baseline,  # primbench.energy
        )
        # Setup runs with the harness stream current too, so that the
        # benchmark's uploads are ordered before its kernels. NVTX: specialization > round > batch.
        with device.activate(), device.nvtx_range(q.name), device.nvtx_range(f"round {r + 1}/{rounds}"):
            q.benchmark.run(state)
        ended = time.perf_counter()
        if state.outcome is None:
            raise UsageError(f"{type(q.benchmark).__name__}.run() never called state.run(fn)")
        wall = None
        if state.entered_at is not None and state.measuring_at is not None:
            wall = (state.entered_at - began, state.measuring_at - state.entered_at, ended - began)
        # the power limit is context for the specialization's energy (its first round's reading): an NVML
        # read saved in every other round
        limit = None if settings.no_monitoring or r > 0 else device.power_limit_watts()
        return MeasuredRound(state.outcome, state.items, state.bytes_per_call, device.default_clock_mhz(), limit, wall)

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


def _gpu_path(path: str, index: int) -> str:
    """results.json -> results.gpu2.json (beside it): ``--results-per-gpu``."""
    p = Path(path)
    return str(p.with_name(f"{p.stem}.gpu{index}{p.suffix}" if p.suffix else f"{p.name}.gpu{index}"))


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


__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Executor"]
