"""Record building: what a run measured, in the results model (`primbench.results`).

A round as the round loop keeps it (`MeasuredRound`), a round's record, a specialization's
record over its rounds (and the failed, skipped and dry ones), the device's and the settings'
records, and the run's `Results` with its context and summary. Nothing here measures or writes."""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from primbench.clocks import clock_record
from primbench.energy import baseline_record, net_over_rounds, over_rounds
from primbench.errors import DeviceError, PrimbenchError
from primbench.graph import over_rounds as graph_over_rounds
from primbench.measure import Measurement
from primbench.plan import Queued
from primbench.provenance import host_name, now_iso, provenance
from primbench.results import (
    RESULTS_VERSION,
    Backend,
    Batch,
    BetweenRounds,
    Calls,
    Context,
    Elapsed,
    Energy,
    EnergyBaseline,
    Flags,
    General,
    Gpu,
    Graph,
    Monitoring,
    Results,
    Round,
    RoundEnergy,
    RoundEnergyBaseline,
    RoundGraph,
    RoundWall,
    SettingsRecord,
    SmClock,
    Specialization,
    Summary,
    Temperatures,
    ThermalRecord,
    TimePerCall,
    time_per_call_fields,
)
from primbench.rounds import log_sd
from primbench.settings import Settings
from primbench.state import RunOutcome, Thermal
from primbench.version import __version__


@dataclass(frozen=True)
class DeviceRecords:
    """What the run's context holds of the device and the settings, in the model."""

    gpu: Gpu | None
    backend: Backend | None
    monitoring: Monitoring | None
    temperature_type: str | None
    settings: SettingsRecord


def device_records(context: Mapping[str, Any], settings: Settings) -> DeviceRecords:
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

    return DeviceRecords(
        gpu=record("gpu", Gpu),
        backend=record("backend", Backend),
        monitoring=record("monitoring", Monitoring, monitored),
        temperature_type=record("temperature_type", str, monitored),
        settings=msgspec.convert(settings.to_json(), SettingsRecord),
    )


def _benchmark_dir() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return str(Path(path).resolve().parent) if path else os.getcwd()


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True)
class MeasuredRound:
    """What one round of a specialization measured, with what its run() declared."""

    outcome: RunOutcome
    items: int
    bytes_per_call: int
    default_clock_mhz: float | None
    power_limit_watts: float | None = None  # read in a specialization's first round only
    #: The round's host time (results 4.10.0): before run() called state.run (renew, setup), from there to
    #: its measuring (synchronize, warm-up call, test), and the whole round; None where not timed.
    wall: tuple[float, float, float] | None = None

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


def round_record(r: int, rd: MeasuredRound, settings: Settings) -> Round:
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
        wall_secs=RoundWall(setup=rd.wall[0], warmup=rd.wall[1], total=rd.wall[2]) if rd.wall is not None else None,
        throttled_batches=m.throttled_batches,  # results 4.5.0
        energy=msgspec.convert(m.energy.record(), RoundEnergy) if m.energy is not None else None,
        graph=msgspec.convert(out.graph.record(), RoundGraph) if out.graph is not None else None,  # results 4.6.0
        energy_baseline=(msgspec.convert(baseline_record(out.energy_baseline), RoundEnergyBaseline)
                         if out.energy_baseline is not None else None),  # results 4.7.0
    )


def specialization_record(index: int, q: Queued, rounds: Sequence[MeasuredRound], settings: Settings) -> Specialization:
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
    round_records = tuple(round_record(r, rd, settings) for r, rd in enumerate(rounds))
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
        energy=_energy(measurements, next((rd.power_limit_watts for rd in rounds if rd.power_limit_watts is not None),
                                          None)),
        graph=_graph(rounds, timed["gpu_seconds_per_call"]),  # results 4.6.0
        energy_baseline=_energy_baseline(rounds),  # results 4.7.0
    )


def _graph(rounds: Sequence[MeasuredRound], stream_secs_per_call: float | None) -> Graph | None:
    """A specialization's ``graph`` (results 4.6.0) where its rounds measured one (--graph)."""
    graphs = [rd.outcome.graph for rd in rounds if rd.outcome.graph is not None]
    return msgspec.convert(graph_over_rounds(graphs, stream_secs_per_call), Graph) if graphs else None


def _energy_baseline(rounds: Sequence[MeasuredRound]) -> EnergyBaseline | None:
    """A specialization's ``energy_baseline`` (results 4.7.0) where every round read the counter
    and ran its empty calls (--energy-baseline)."""
    windows = [rd.outcome.measurement.energy for rd in rounds]
    empties = [rd.outcome.energy_baseline for rd in rounds]
    if not rounds or any(w is None for w in windows) or any(e is None for e in empties):
        return None
    return msgspec.convert(net_over_rounds([w for w in windows if w is not None],
                                           [e for e in empties if e is not None]), EnergyBaseline)


def _energy(measurements: Sequence[Measurement], power_limit_watts: float | None) -> Energy | None:
    """A specialization's ``energy`` (results 4.5.0) where every round read the counter."""
    windows = [m.energy for m in measurements]
    if not windows or any(w is None for w in windows):
        return None
    return msgspec.convert(over_rounds([w for w in windows if w is not None], power_limit_watts), Energy)


def _clock_over(rounds: Sequence[MeasuredRound], settings: Settings) -> dict[str, Any] | None:
    """The ``sm_clock`` of a specialization: cycles over time summed across its rounds."""
    pairs = [(rd.outcome.clock_start, rd.outcome.clock_end) for rd in rounds]
    if any(a is None or b is None for a, b in pairs):
        return None
    ns = sum(b[0] - a[0] for a, b in pairs if a is not None and b is not None)
    ticks = sum(b[1] - a[1] for a, b in pairs if a is not None and b is not None)
    return clock_record((0, 0), (ns, ticks), rounds[0].default_clock_mhz,
                        rounds[0].outcome.reasons_start, rounds[-1].outcome.reasons_end, settings.min_clock_fraction)


def failed_record(index: int, q: Queued, exc: BaseException) -> Specialization:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, PrimbenchError):
        message = f"{type(exc).__name__}: {message}"
    return Specialization(
        index=index, name=q.name, bytes_per_second=None, items_per_second=None, bytes_per_item=None, items=None,
        noise_timeout=False, noise_percent=None, meta=q.meta, elapsed_secs=None, calls=None, error=message,
    )


def skipped_record(index: int, q: Queued, reason: str) -> Specialization:
    """A specialization its benchmark skipped (``state.skip``, results 4.5.0): no metrics, not failed."""
    return Specialization(
        index=index, name=q.name, bytes_per_second=None, items_per_second=None, bytes_per_item=None, items=None,
        noise_timeout=None, noise_percent=None, meta=q.meta, elapsed_secs=None, calls=None, skipped=reason,
    )


def dry_record(index: int, q: Queued) -> Specialization:
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


def clock_note(record: Specialization) -> str:
    clock = record.sm_clock
    if clock is None or clock.average_mhz is None:
        return ""
    note = f"  SM {clock.average_mhz:.0f} MHz"
    if clock.below_expected:
        note += " [red](below expected clock)[/]"
    if record.throttled_batches:
        note += f" [yellow]{record.throttled_batches} throttled batches discarded[/]"
    return note


def run_results(settings: Settings, algorithm: str, records: Sequence[Specialization], device: DeviceRecords,
                thermal: Thermal | None, *, sync: bool, custom_settings: dict[str, Any] | None,
                started: float) -> Results:
    """The results of the run (begun at `started`, ``time.perf_counter()``): the model the writers read."""
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
        flags=Flags(sync=sync),
        custom_settings=custom_settings,
    )
    summary = Summary.of(list(records), time.perf_counter() - started)
    return Results(context, tuple(records), summary)


__all__ = [
    "DeviceRecords",
    "MeasuredRound",
    "clock_note",
    "device_records",
    "dry_record",
    "failed_record",
    "round_record",
    "run_results",
    "skipped_record",
    "specialization_record",
]
