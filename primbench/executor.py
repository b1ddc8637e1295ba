"""The executor: options, the queue of specializations, the run, the results files."""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from primbench import __version__
from primbench.atomicfile import fallback_path, unwritable_reason
from primbench.benchmark import Benchmark, checked_meta, specialization_name
from primbench.clocks import clock_record
from primbench.console import Reporter, set_active
from primbench.device import Device, open_device
from primbench.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    DeviceError,
    PrimbenchError,
    ThermalError,
    UsageError,
)
from primbench.measure import SYNC_EVERY
from primbench.provenance import host_name, now_iso, provenance
from primbench.results import RESULTS_VERSION, write_csv, write_json
from primbench.settings import CustomOption, Settings, build_parser, flags, parse_args
from primbench.state import State, Thermal


@dataclass
class _Queued:
    benchmark: Benchmark
    meta: dict[str, Any]
    name: str


class Executor:
    """Builds settings from argv (over an optional `Settings`), queues benchmarks, runs them.

    >>> ex = Executor()                       # sys.argv[1:]
    >>> dims = ex.get("dimensions", 3, "The number of dimensions")
    >>> ex.queue(CopyBenchmark(np.int8))
    >>> ex.run()                              # exits non-zero on failure
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
    ) -> None:
        self._started = time.perf_counter()
        self._argv = list(sys.argv[1:] if argv is None else argv)
        self._base = settings or Settings()
        self.flags = flags
        self._device = device
        self._thermal = thermal
        self._reporter = reporter
        self._prog = prog or os.path.basename(sys.argv[0] or "benchmark")
        self._custom: list[CustomOption] = []
        self._custom_values: dict[str, Any] = {}
        self._queue: list[_Queued] = []
        self.exit_code: int | None = None
        self.settings = self._guarded(self._parse, allow_unknown=True)

    # ----- options

    def _parse(self, *, allow_unknown: bool) -> Settings:
        settings, custom_values, self._wants_help = parse_args(
            self._prog, self._argv, self._base, self._custom, allow_unknown=allow_unknown
        )
        self._custom_values = custom_values
        return settings

    def _guarded(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run `fn`; a PrimbenchError becomes a one-line error and exit code 2."""
        try:
            return fn(*args, **kwargs)
        except PrimbenchError as exc:
            self._fail(str(exc), exc.exit_code)

    def _fail(self, message: str, code: int) -> None:
        print(f"{self._prog}: error: {message}", file=sys.stderr)
        raise SystemExit(code)

    def get(self, name: str, default: Any, help: str = "") -> Any:
        """Register a custom option ``--name`` (type from `default`) and return its value."""
        if any(o.name == name for o in self._custom):
            return self._custom_values[name]
        self._custom.append(CustomOption(name, default, help))
        self.settings = self._guarded(self._parse, allow_unknown=True)
        return self._custom_values[name]

    def help_text(self) -> str:
        return build_parser(self._prog, self._custom).format_help()

    # ----- queue

    def queue(self, benchmark: Benchmark | type[Benchmark], *args: Any, **kwargs: Any) -> None:
        """Queue a benchmark instance, or a class with its constructor arguments."""
        if isinstance(benchmark, type):
            benchmark = benchmark(*args, **kwargs)
        if not isinstance(benchmark, Benchmark):
            self._fail(f"queue() takes a primbench.Benchmark, got {type(benchmark).__name__}", EXIT_USAGE)
        meta = self._guarded(checked_meta, benchmark)
        self._queue.append(_Queued(benchmark, meta, specialization_name(meta)))

    # ----- run

    def _selected(self) -> list[_Queued]:
        if not self._queue:
            raise UsageError("no benchmarks queued: call executor.queue(...) before run()")
        algos = {q.meta["algo"] for q in self._queue}
        if len(algos) > 1:
            raise UsageError(
                "every queued specialization must have the same 'algo'; found "
                + ", ".join(repr(a) for a in sorted(map(str, algos)))
            )
        seen: dict[str, str] = {}
        for q in self._queue:
            if q.name in seen:
                raise UsageError(
                    f"two specializations are named {q.name!r} ({seen[q.name]} and "
                    f"{type(q.benchmark).__name__}); give their meta() a distinguishing key"
                )
            seen[q.name] = type(q.benchmark).__name__
        pattern = re.compile(self.settings.filter)
        chosen = sorted((q for q in self._queue if pattern.search(q.name)), key=lambda q: q.name)
        if not chosen:
            names = ", ".join(repr(q.name) for q in sorted(self._queue, key=lambda q: q.name))
            raise UsageError(f"--filter {self.settings.filter!r} matches none of: {names}")
        return chosen

    def run(self) -> dict[str, Any]:
        """Run every selected specialization and write the results; returns the document.

        Raises SystemExit with 1 if a specialization failed, 2 on bad options or input,
        130 when interrupted (after writing what finished)."""
        settings = self._guarded(self._parse, allow_unknown=False)
        self.settings = settings
        if self._wants_help:
            print(self.help_text())
            raise SystemExit(EXIT_OK)
        self._guarded(settings.validate)
        selected = self._guarded(self._selected)
        self._guarded(self._check_outputs, settings, len(selected))
        reporter = self._reporter or Reporter()
        set_active(reporter)
        try:
            return self._run(settings, selected, reporter)
        finally:
            set_active(None)

    def _open_device(self, settings: Settings) -> Device | None:
        if self._device is not None:
            return self._device
        if settings.dry:
            return None
        self._device = self._guarded(open_device, settings.device, monitoring=not settings.no_monitoring)
        return self._device

    @staticmethod
    def _prepare(device: Device, settings: Settings) -> None:
        try:
            device.prepare(
                cache_size=0 if settings.hot else settings.cache_size,
                blocking_timeout_secs=settings.stream_blocking_timeout_secs,
                slots=SYNC_EVERY,
            )
        except PrimbenchError:
            raise
        except Exception as exc:  # the runtime's own error, e.g. out of memory for the cache buffer
            raise DeviceError(f"preparing the GPU failed: {type(exc).__name__}: {exc}") from exc

    def _thermal_control(self, device: Device, settings: Settings) -> Thermal:
        if self._thermal is not None:
            return self._thermal
        from primbench.thermal import thermal_for

        return thermal_for(device, settings)

    def _run(self, settings: Settings, selected: list[_Queued], reporter: Reporter) -> dict[str, Any]:
        device = self._open_device(settings)
        # Read the device's context now: it needs the monitor, which close() shuts down.
        dev_ctx = device.context() if device is not None else {}
        algorithm = str(selected[0].meta["algo"])
        count = len(selected)
        reporter.header(algorithm, count, settings.dry)
        records: list[dict[str, Any]] = []
        interrupted = False
        fatal: str | None = None
        thermal = None
        if device is not None and not settings.dry:
            self._guarded(self._prepare, device, settings)
            thermal = self._guarded(self._thermal_control, device, settings)
        try:
            for index, q in enumerate(selected):
                reporter.started(index, count, q.name)
                if settings.dry:
                    record = _dry_record(index, q)
                    reporter.finished(index, count, {**record, "dry": True})
                    records.append(record)
                    continue
                assert device is not None
                state = State(
                    device,
                    settings,
                    sync=bool(self.flags & flags.sync),
                    thermal=thermal,
                    on_batch=lambda p, i=index: reporter.batch(i, count, p),
                )
                try:
                    # Setup runs with the harness stream current too, so that the
                    # benchmark's uploads are ordered before its kernels.
                    with device.activate():
                        q.benchmark.run(state)
                    if state.outcome is None:
                        raise UsageError(f"{type(q.benchmark).__name__}.run() never called state.run(fn)")
                    record = _record(index, q, state, settings)
                except (KeyboardInterrupt, ThermalError):
                    raise
                except Exception as exc:  # the benchmark's own fault: report it, go on
                    record = _failed_record(index, q, exc)
                reporter.finished(index, count, record, _clock_note(record))
                records.append(record)
        except KeyboardInterrupt:
            interrupted = True
            reporter.error("interrupted: writing the specializations that finished")
        except ThermalError as exc:
            fatal = str(exc)
            reporter.error(fatal)
        finally:
            if device is not None and not settings.dry:
                device.close()
        document = self._document(settings, algorithm, records, dev_ctx, thermal)
        outputs = self._write(settings, document)
        failed = sum(1 for r in records if r.get("error") is not None)
        reporter.summary({**document["summary"], "specializations": len(records)}, failed, outputs)
        code = EXIT_INTERRUPTED if interrupted else EXIT_FAILED if (failed or fatal) else EXIT_OK
        self.exit_code = code
        if code != EXIT_OK:
            raise SystemExit(code)
        return document

    def _document(self, settings: Settings, algorithm: str, records: list[dict[str, Any]],
                  dev_ctx: Mapping[str, Any], thermal: Thermal | None) -> dict[str, Any]:
        general: dict[str, Any] = {
            "algorithm": algorithm,
            "specialization_count": len(records),
            "library_build_type": "python",
        }
        for key in ("gpu", "backend", "monitoring", "temperature_type"):
            if key in dev_ctx and not (settings.no_monitoring and key in ("monitoring", "temperature_type")):
                general[key] = dev_ctx[key]
        thermal_record = thermal.record() if thermal is not None else None
        if thermal_record is not None:
            general["thermal"] = thermal_record
        general["host_name"] = host_name()
        general["date"] = now_iso()
        general.update(provenance(settings.branch, settings.commit, _benchmark_dir()))
        general["primbench_version"] = __version__
        general["python_version"] = platform.python_version()
        context: dict[str, Any] = {
            "results_version": RESULTS_VERSION,
            "general": general,
            "settings": settings.to_json(),
            "flags": {"sync": bool(self.flags & flags.sync)},
        }
        if self._custom:
            context["custom_settings"] = dict(self._custom_values)
        ok = [r for r in records if r.get("error") is None]
        summary = {
            "noise_timeouts": sum(1 for r in ok if r["noise_timeout"]),
            "failures": len(records) - len(ok),
            "elapsed_secs": {
                "host": time.perf_counter() - self._started,
                "gpu": sum(r["elapsed_secs"]["gpu"] for r in ok),
            },
        }
        return {"context": context, "specializations": records, "summary": summary}

    def _check_outputs(self, settings: Settings, expected: int) -> None:
        """Before anything is measured: every output can be written (else exit 2 now, not
        after minutes of measuring). `expected` specializations make a complete file."""
        self._expected = expected
        for option, path in (("--json-out", settings.json_out), ("--csv-out", settings.csv_out)):
            if path and path != os.devnull and (reason := unwritable_reason(path)):
                raise UsageError(f"{option} {path}: cannot write there ({reason}); nothing was measured")

    def _write(self, settings: Settings, document: Mapping[str, Any]) -> list[str]:
        """Write the outputs. A run that did not finish never replaces a file holding more
        specializations (it goes beside it, NAME.partial.json); a write that fails goes to a
        fallback path, named in a one-line error (exit 2)."""
        records = document["specializations"]
        partial = len(records) < getattr(self, "_expected", len(records))
        outputs: list[str] = []
        problems: list[str] = []
        for path, csv in ((settings.json_out, False), (settings.csv_out, True)):
            if not path:
                continue
            count = sum(1 for r in records if r.get("error") is None) if csv else len(records)
            target = _partial_path(path) if partial and _holds_more(path, csv, count) else path

            def write(to: str | Path, csv: bool = csv) -> None:
                if csv:
                    write_csv(records, to)
                else:
                    write_json(document, to, settings.spaces_per_indent)

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
            self._fail("; ".join(problems), EXIT_USAGE)
        return [o for o in outputs if o != os.devnull]


def _partial_path(path: str) -> str:
    """results.json -> results.partial.json (beside it)."""
    p = Path(path)
    return str(p.with_name(f"{p.stem}.partial{p.suffix}" if p.suffix else f"{p.name}.partial"))


def _holds_more(path: str, csv: bool, count: int) -> bool:
    """Whether `path` is a results file (or CSV) with more than `count` specializations."""
    try:
        if not Path(path).is_file():
            return False
        if csv:
            with open(path, encoding="utf-8", errors="replace") as f:
                return sum(1 for _ in f) - 1 > count
        from primbench.results import load_results

        return len(load_results(path).specializations) > count
    except (OSError, PrimbenchError):
        return False


def _benchmark_dir() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return str(Path(path).resolve().parent) if path else os.getcwd()


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _record(index: int, q: _Queued, state: State, settings: Settings) -> dict[str, Any]:
    out = state.outcome
    assert out is not None
    m = out.measurement
    gpu = m.gpu_secs
    calls = m.kernel_calls
    bytes_per_call = state.bytes_per_call
    record: dict[str, Any] = {
        "index": index,
        "name": q.name,
        "bytes_per_second": bytes_per_call * calls / gpu if gpu > 0 else 0.0,
        "items_per_second": state.items * calls / gpu if gpu > 0 else 0.0,
        "bytes_per_item": _number(bytes_per_call / state.items) if state.items else 0,
        "items": state.items,
        "noise_timeout": m.noise_timeout,
        "noise_percent": m.noise_percent,
        "meta": q.meta,
        "elapsed_secs": {"host": m.host_secs, "gpu": gpu},
    }
    if out.temp_start is not None or out.temp_end is not None:
        record["gpu_temp_celsius"] = {"start": out.temp_start, "end": out.temp_end}
    record["calls"] = {
        "kernel_calls_per_batch": m.kernel_calls_per_batch,
        "ms_per_batch": m.ms_per_batch,
        "batches": len(m.batches),
        "kernel_calls": calls,
    }
    if settings.output_batches:
        record["batches"] = [
            {
                "batch_ms": b.batch_ms,
                "iterations_ms": list(b.iterations_ms),
                "kernel_calls": b.kernel_calls,
                "host_secs": b.host_secs,
            }
            for b in m.batches
        ]
    clock = clock_record(out.clock_start, out.clock_end, state.device.default_clock_mhz(),
                         out.reasons_start, out.reasons_end, settings.min_clock_fraction)
    if clock is not None:
        record["sm_clock"] = clock
    return record


def _failed_record(index: int, q: _Queued, exc: BaseException) -> dict[str, Any]:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, PrimbenchError):
        message = f"{type(exc).__name__}: {message}"
    return {
        "index": index,
        "name": q.name,
        "bytes_per_second": None,
        "items_per_second": None,
        "bytes_per_item": None,
        "items": None,
        "noise_timeout": False,
        "noise_percent": None,
        "meta": q.meta,
        "elapsed_secs": None,
        "calls": None,
        "error": message,
    }


def _dry_record(index: int, q: _Queued) -> dict[str, Any]:
    return {
        "index": index,
        "name": q.name,
        "bytes_per_second": 0,
        "items_per_second": 0,
        "bytes_per_item": 0,
        "items": 0,
        "noise_timeout": False,
        "noise_percent": 0,
        "meta": q.meta,
        "elapsed_secs": {"host": 0, "gpu": 0},
        "calls": {"kernel_calls_per_batch": 0, "ms_per_batch": 0, "batches": 0, "kernel_calls": 0},
    }


def _clock_note(record: Mapping[str, Any]) -> str:
    clock = record.get("sm_clock")
    if not clock or clock.get("average_mhz") is None:
        return ""
    note = f"  SM {clock['average_mhz']:.0f} MHz"
    if clock.get("below_expected"):
        note += " [red](below expected clock)[/]"
    return note


__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Executor"]
