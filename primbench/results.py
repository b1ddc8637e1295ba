"""The results model: one set of typed classes that writes and reads results.json.

`Results` is a whole document: `Context` (``general`` with the GPU, backend, provenance
and thermal records; ``settings``; ``flags``; ``custom_settings``), the `Specialization`
records (with their `Round`, `Batch`, `SmClock`, ... objects) and the `Summary`. The
executor builds these objects and calls `Results.save` (and `Results.save_csv`);
`Results.load` reads a file back into the same classes, validating while it decodes
(msgspec), so what a consumer reads is typed and checked, and nothing else reads
results.json.

The schema is the C++ primbench's 4.0.0, key for key. Later versions only add keys:

* 4.1.0 - ``context.general``: ``branch_source``, ``commit_source``, ``primbench_version``,
  ``python_version``, ``gpu.uuid``, ``gpu.serial``, ``cache_size`` in settings; per
  specialization ``error`` (a failed run, metrics null) and, with ``--output-batches``,
  ``batches[].kernel_calls`` and ``batches[].host_secs``.
* 4.2.0 - per specialization ``sm_clock`` (average SM clock over the measurement from
  ``%globaltimer``/``clock64``, the default clock, NVML clock-event reasons at start and
  end, ``below_expected``); ``context.general.thermal`` (effective temperature range and
  the time spent warming and cooling); ``min_clock_fraction`` in settings.
* 4.3.0 - rounds (`primbench.rounds`): ``rounds`` in settings; per specialization ``rounds``
  (one object per round: ``round``, ``gpu_ms_per_call``, ``bytes_per_second``,
  ``items_per_second``, ``noise_timeout``, ``noise_percent``, ``batches``, ``kernel_calls``,
  ``kernel_calls_per_batch``, ``elapsed_secs``, optional ``gpu_temp_celsius`` and
  ``sm_clock_mhz``) and ``between_rounds`` (``count``, ``cv_percent``: the spread of the
  rounds' time per call); ``batches[].round``. The C++ primbench's fields of a specialization cover
  every call of every round. A file without rounds is one measurement whose run-to-run
  variability is unknown, not zero.
* 4.4.0 - time per call, first class: per specialization ``gpu_seconds_per_call`` (the mean
  GPU time per call: GPU time over calls, every batch of every round) and ``time_per_call``
  (``mean``, ``median``, ``min``, ``q1``, ``q3`` in seconds, over the per-call times of the
  batches: each batch's GPU time over its calls); written by `time_per_call_fields`. A
  specialization measured with the host timer (``state.run(fn, timer="host")``: host clock
  around a batch and one synchronization, for libraries on streams of their own) has
  ``"timer": "host"``; without the key its times are GPU event times, as in every older file.
  A dry run's specializations have ``"dry": true`` (nothing was measured). ``settings.axis``
  (the ``--axis`` overrides); ``settings.cache_size`` is the bytes cleared (null in a dry run:
  auto, unresolved); ``settings.min_gpu_temp`` / ``max_gpu_temp`` the limits applied, as
  numbers, under thermal control; ``context.general.thermal`` gains ``start_gpu_temp`` and
  ``highest_gpu_temp``. Files without the time fields (older ones, or a specialization that
  lacks them): `Specialization.gpu_seconds_per_call` is GPU time over calls and
  `Specialization.time_per_call` takes its other statistics from ``batches`` where the file
  holds them, else None.
* 4.5.0 - skip and throttling (issue 26): a specialization whose ``run()`` called
  ``state.skip(reason)`` has ``"skipped": "reason"`` and null metrics, as a failed one has, but
  it is not a failure; ``summary.skipped`` counts them. Batches measured while the SM clock
  was throttled (below ``min_clock_fraction`` of the default clock, or a thermal or power
  clock-event reason) are discarded and measured again (`primbench.throttle`):
  ``throttled_batches`` per specialization (and per round) and in the summary count them.
  Older files count nothing: the keys stay absent (unknown, not zero). Energy
  (`primbench.energy`): per round ``energy`` (``joules``, ``window_secs``, ``joules_per_call``,
  ``watts``, ``too_short``: the board's energy counter over the measured batches;
  ``power_samples_watts``: count, mean, min, max of the power draw after each batch) and per
  specialization ``energy`` (``joules_per_call``, ``watts``, ``cv_between_rounds_percent``,
  ``rounds_too_short``, ``window_secs``, ``power_limit_watts``), where the device has a counter.
* 4.6.0 - the CUDA-graph column (issue 26, `primbench.graph`), with ``--graph`` (``settings.graph``)
  or a benchmark's ``graph = True``: per specialization ``graph`` (``captured``; where true
  ``seconds_per_call``, the replay's GPU time per call over every round, beside
  ``stream_seconds_per_call``, ``saved_seconds_per_call`` and ``saved_percent``: the launch
  overhead the graph saves, ``cv_between_rounds_percent``, ``noise_percent``, ``kernel_calls``,
  ``host_seconds_per_call`` and ``stream_host_seconds_per_call``; where false the ``reason``: a
  host timer, a synchronizing function, the runtime's capture error, an empty graph) and per
  round ``graph`` (``captured``, ``reason`` or ``gpu_ms_per_call``, ``noise_percent``,
  ``noise_timeout``, ``batches``, ``kernel_calls``, ``host_seconds_per_call``). Older files
  measured no graph: the keys stay absent.
* 4.7.0 - the energy baseline (issue 26, `primbench.energy`), with ``--energy-baseline``
  (``settings.energy_baseline``): per round ``energy_baseline`` (``joules``, ``window_secs``,
  ``calls``, ``joules_per_call``, ``too_short``, ``aligned``: the energy counter over empty calls
  under the same per-call protocol after the round; with the option every window's ends are the
  counter's updates, and ``rounds[r].energy.aligned`` says so) and per specialization ``energy_baseline``
  (``joules_per_call``: the fixed part every call pays, ``net_joules_per_call``: the joules per
  call less it, ``net_cv_between_rounds_percent``, ``share_percent``: the fixed part's share of
  the joules per call, ``window_secs``, ``rounds_too_short``). Older files measured no baseline:
  the keys stay absent.
* 4.8.0 - a run across the GPUs of one host (issue 27, `primbench.workers`), with ``--devices``:
  per specialization ``gpu`` (``index``, ``uuid``, ``serial``: the GPU that measured it), and
  ``context.devices`` (one object per GPU of the run: ``index``, its ``gpu`` and ``thermal``
  records once, ``specializations`` it ran, and ``error`` where its worker failed: crashed,
  hung, or its device gone); ``context.general.gpu`` is the first GPU's. Settings
  ``devices``, ``replicate``, ``worker_timeout_secs`` and ``results_per_gpu`` are written only when given: a run
  on one GPU writes what 4.7.0 wrote. Older files ran on one GPU: the keys stay absent.
* 4.9.0 - worker processes on one GPU (issue 30, `primbench.processes`), with ``--processes K``:
  per round ``process`` (0 to K-1: the worker process that measured it; ``round`` counts the
  specialization's rounds across the processes, process after process), and ``settings.processes``,
  written only when above 1. A specialization's other fields are over every round of every
  process; compare takes each process's rounds as a run of their own (`Results.per_process`).
  Older files ran in one process: the keys stay absent.
* 4.10.0 - each round's host time (issue 30: where the wall goes), ``rounds[r].wall_secs``:
  ``setup`` (from the round's start, its stream renewed, until the benchmark's ``run()`` called
  ``state.run``: the benchmark's own setup), ``warmup`` (from there until the measuring began: the
  synchronization, the warm-up call and the test) and ``total`` (the whole round, to ``run()``
  returning; the measured batches are ``elapsed_secs.host``). Older files did not time it: the key
  stays absent.
* 4.11.0 - several runs of worker processes in one file (issue 30), with ``--processes K --runs N``:
  ``settings.runs`` (written only when above 1); the processes are numbered across the runs (run
  ``r`` holds processes ``r*K`` to ``r*K+K-1``), and compare takes each run's processes as the
  workers of a file of their own (`Results.per_process`). Older files are one run: the key stays
  absent.

A file of an older version is read through `UPGRADES`, one small function per version step
(a document in, the document of the next version out); `Results.version` still says which
version the file was written in, and `Results.as_written` gives the document back as it was
read (history's identity of a run and the document it stores). Any other version is
refused, naming the file and the field (the habit of pyperf). Keys the model does not know
(a hand-edited file) are not read.

Written JSON keeps the keys, nesting and order of the writers before this model: a key that
the writer leaves out stays out (a field whose absence means something has a default and
its class omits defaults), one it writes as null stays null.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import gc
import io
import itertools
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from primbench.errors import PrimbenchError
from primbench.results_versions import KNOWN_VERSIONS as KNOWN_VERSIONS  # re-exported: the model's versions
from primbench.results_versions import RESULTS_VERSION as RESULTS_VERSION
from primbench.textsafe import csv_cell

if TYPE_CHECKING:
    import mmap


CSV_HEADER = (
    "index",
    "name",
    "bytes_per_second",
    "gib_per_second",
    "items_per_second",
    "noise_timeout",
    "noise_percent",
    "gpu_seconds_per_call",  # results 4.4.0: appended after the C++ primbench's columns
)

MAX_FILE_BYTES = 1 << 30  # a results file larger than 1 GiB is refused unread
MAX_NAME_CHARS = 65536  # names, branches, commits, GPU names, algorithms, dates: 64 Ki characters at most


class ResultsFileError(PrimbenchError):
    """A results file that cannot be read: names the file and the field."""

    def __init__(self, source: str, field: str | None, message: str) -> None:
        where = f"{source}: {field}: " if field else f"{source}: "
        super().__init__(where + message)
        self.source = source
        self.field = field


# --------------------------------------------------------------------------- value types

_INT_MAX = 2**63 - 1  # an integer in a results file fits a signed 64-bit column
_FLOAT_MAX = sys.float_info.max  # and a float is finite

#: A finite, non-negative JSON number, kept as written (an integer stays an integer, so that
#: a document read and written again is the same document).
NonNegative = Annotated[int, Meta(ge=0, le=_INT_MAX)] | Annotated[float, Meta(ge=0.0, le=_FLOAT_MAX)]
#: A finite JSON number of either sign (temperatures, settings).
Real = Annotated[int, Meta(ge=-_INT_MAX, le=_INT_MAX)] | Annotated[float, Meta(ge=-_FLOAT_MAX, le=_FLOAT_MAX)]
#: A whole, non-negative number written as an integer.
Count = Annotated[int, Meta(ge=0, le=_INT_MAX)]
#: A string that names something (shown in every output, stored in every row).
Text = Annotated[str, Meta(max_length=MAX_NAME_CHARS)]

T = TypeVar("T")


def known(value: T | UnsetType) -> T | None:
    """A field that may be absent from a file (`msgspec.UNSET`) as None."""
    return None if isinstance(value, UnsetType) else value


class _Record(Struct, frozen=True, gc=False):
    """Base of every class of the model: immutable, not tracked by the cyclic collector
    (a results file makes hundreds of thousands of them, none in a reference cycle)."""


# --------------------------------------------------------------------------- specializations


class Batch(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """One measured batch (``--output-batches``): its GPU time and the calls it made."""

    batch_ms: NonNegative
    iterations_ms: tuple[NonNegative, ...] | None = None
    kernel_calls: Count | None = None  # 4.1.0
    host_secs: NonNegative | None = None  # 4.1.0
    round: Count | None = None  # 4.3.0, with more than one round


class Elapsed(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``elapsed_secs``: host (wall) and GPU seconds."""

    host: NonNegative | None = None
    gpu: NonNegative | None = None


class RoundWall(_Record, frozen=True, kw_only=True):
    """``rounds[r].wall_secs`` (results 4.10.0): a round's host seconds before its ``state.run``
    (``setup``), from there to its measuring (``warmup``), and the whole round (``total``)."""

    setup: NonNegative
    warmup: NonNegative
    total: NonNegative


class Temperatures(_Record, frozen=True, kw_only=True):
    """``gpu_temp_celsius`` at the start and end (either may be null: not read)."""

    start: Real | None = None
    end: Real | None = None


class PowerSamples(_Record, frozen=True, kw_only=True):
    """``rounds[r].energy.power_samples_watts`` (results 4.5.0): the board's power draw read
    after each measured batch (NVML ``nvmlDeviceGetPowerUsage``), in watts."""

    count: Count
    mean: NonNegative
    min: NonNegative
    max: NonNegative


class RoundEnergy(_Record, frozen=True, kw_only=True):
    """``rounds[r].energy`` (results 4.5.0): the energy counter over the round's measured batches."""

    joules: NonNegative
    window_secs: NonNegative
    joules_per_call: NonNegative | None = None  # null: the counter did not move
    watts: NonNegative | None = None
    too_short: bool = False  # the window was shorter than the counter's resolution allows
    power_samples_watts: PowerSamples | None = None  # the power draw after each measured batch
    aligned: bool | UnsetType = UNSET  # 4.7.0: true where the window's ends were the counter's updates


class Energy(_Record, frozen=True, kw_only=True):
    """A specialization's ``energy`` (results 4.5.0, `primbench.energy.over_rounds`): the board's
    energy per call and average power over every round, the spread between rounds, how many
    rounds were too short for the counter, and the enforced power limit."""

    joules_per_call: NonNegative | None = None
    watts: NonNegative | None = None
    cv_between_rounds_percent: NonNegative | None = None
    rounds_too_short: Count = 0
    window_secs: NonNegative | None = None
    power_limit_watts: NonNegative | None = None


class RoundEnergyBaseline(_Record, frozen=True, kw_only=True):
    """``rounds[r].energy_baseline`` (results 4.7.0, ``--energy-baseline``): the energy counter over
    the empty calls run after the round (`primbench.energy`)."""

    joules: NonNegative
    window_secs: NonNegative
    calls: Count
    joules_per_call: NonNegative | None = None  # null: the counter did not move
    too_short: bool = False
    aligned: bool | UnsetType = UNSET  # the window's ends were the counter's updates (absent: not known)


class EnergyBaseline(_Record, frozen=True, kw_only=True):
    """A specialization's ``energy_baseline`` (results 4.7.0, `primbench.energy.net_over_rounds`):
    the empty calls' joules per call (the fixed part every call pays), the joules per call less
    it, the spread of the rounds' net values, the fixed part's share, the empty calls' window."""

    joules_per_call: NonNegative | None = None
    net_joules_per_call: Real | None = None  # may be negative where the counter's steps exceed the kernel's share
    net_cv_between_rounds_percent: NonNegative | None = None
    share_percent: Real | None = None
    window_secs: NonNegative | None = None
    rounds_too_short: Count = 0


class RoundGraph(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``rounds[r].graph`` (results 4.6.0, `primbench.graph`): the round's function captured into
    a graph and its replay measured, or why the capture was impossible."""

    captured: bool
    reason: str | None = None  # why not (captured false)
    gpu_ms_per_call: NonNegative | None = None  # the replay's GPU time per call
    noise_percent: NonNegative | None = None
    noise_timeout: bool | None = None
    batches: Count | None = None
    kernel_calls: Count | None = None
    host_seconds_per_call: NonNegative | None = None


class Graph(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """A specialization's ``graph`` (results 4.6.0, `primbench.graph.over_rounds`): the replay's GPU
    time per call beside the stream launches', what the graph saves, or why there is no replay."""

    captured: bool
    reason: str | None = None  # why the capture was impossible (captured false)
    seconds_per_call: NonNegative | None = None  # the replay's GPU time per call, every round
    stream_seconds_per_call: NonNegative | None = None  # the stream launches' (gpu_seconds_per_call)
    saved_seconds_per_call: Real | None = None  # stream - replay: the launch overhead the graph saves
    saved_percent: Real | None = None  # of the stream time
    cv_between_rounds_percent: NonNegative | None = None
    noise_percent: NonNegative | None = None
    kernel_calls: Count | None = None
    host_seconds_per_call: NonNegative | None = None  # wall time per replay, the harness's protocol included
    stream_host_seconds_per_call: NonNegative | None = None  # the same for the stream launches


class Round(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """One round of a specialization (results 4.3.0): a fresh ``run(state)``, measured alone."""

    round: Count | None = None
    gpu_ms_per_call: NonNegative
    bytes_per_second: NonNegative
    items_per_second: NonNegative
    noise_timeout: bool
    noise_percent: NonNegative
    batch_count: Count | None = msgspec.field(default=None, name="batches")
    kernel_calls: Count | None = None
    kernel_calls_per_batch: Count | None = None
    elapsed_secs: Elapsed | None = None
    gpu_temp_celsius: Temperatures | None = None
    sm_clock_mhz: NonNegative | UnsetType | None = UNSET  # written as null when the clock was not read
    throttled_batches: Count | None = None  # 4.5.0: batches discarded as throttled in this round
    energy: RoundEnergy | None = None  # 4.5.0: where the device has an energy counter
    graph: RoundGraph | None = None  # 4.6.0: with --graph (primbench.graph)
    energy_baseline: RoundEnergyBaseline | None = None  # 4.7.0: with --energy-baseline (primbench.energy)
    process: Count | None = None  # 4.9.0: with --processes, the worker process that measured it (primbench.processes)
    wall_secs: RoundWall | None = None  # 4.10.0: the round's host time, setup and warm-up apart

    @property
    def average_clock_mhz(self) -> float | None:
        return known(self.sm_clock_mhz)

    @property
    def graph_seconds_per_call(self) -> float | None:
        """The round's graph replay GPU time per call in seconds (the ``graph`` metric); None without one."""
        g = self.graph
        return g.gpu_ms_per_call / 1000.0 if g is not None and g.gpu_ms_per_call is not None else None

    @property
    def joules_per_call(self) -> float | None:
        """The round's energy per call in joules (the ``energy`` metric); None where not read."""
        return self.energy.joules_per_call if self.energy is not None else None

    @property
    def gpu_seconds_per_call(self) -> float:
        """The round's mean GPU time per call in seconds (the ``time`` metric)."""
        return self.gpu_ms_per_call / 1000.0


class Calls(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``calls``: how the measurement was batched."""

    kernel_calls_per_batch: Count | None = None
    ms_per_batch: NonNegative | None = None
    batches: Count | None = None
    kernel_calls: Count | None = None


class ClockEventReasons(_Record, frozen=True, kw_only=True):
    """NVML's clock-event reasons at the start and end of a measurement (null: unsupported)."""

    start: tuple[str, ...] | None = None
    end: tuple[str, ...] | None = None


class SmClock(_Record, frozen=True, kw_only=True):
    """``sm_clock`` (results 4.2.0): the average SM clock over the measurement against the
    device's default clock (`primbench.clocks`)."""

    average_mhz: NonNegative | None = None
    default_mhz: NonNegative | None = None
    fraction_of_default: NonNegative | None = None
    below_expected: bool = False
    clock_event_reasons: ClockEventReasons | None = None
    throttle_reasons: tuple[str, ...] = ()


class BetweenRounds(_Record, frozen=True, kw_only=True):
    """``between_rounds`` (results 4.3.0): how many rounds, and the spread of their time per
    call (null with one round: unknown)."""

    count: Count | None = None
    cv_percent: NonNegative | None = None


class TimePerCall(_Record, frozen=True, kw_only=True):
    """``time_per_call`` (results 4.4.0): GPU time per call in seconds over the per-call times
    of a specialization's batches (each batch's GPU time over its calls, every round): `mean`
    is GPU time over calls; quartiles interpolate linearly (NumPy's default). None where a
    file cannot give it."""

    mean: NonNegative | None = None
    median: NonNegative | None = None
    min: NonNegative | None = None
    q1: NonNegative | None = None
    q3: NonNegative | None = None


#: How a specialization was timed (results 4.4.0 ``timer``; absent: GPU events).
Timer = Literal["events", "host"]

#: What a specialization without an error must have (a failed one writes them as null).
_MEASURED = ("bytes_per_second", "items_per_second", "noise_timeout", "noise_percent", "elapsed_secs", "calls")


class SpecGpu(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``specializations[].gpu`` (results 4.8.0, ``--devices``): the GPU that measured it; its
    whole record is in ``context.devices`` once."""

    index: Count
    uuid: Text | None = None
    serial: Text | None = None

    @property
    def key(self) -> str:
        """What tells physical GPUs apart: the UUID, else the serial, else ``gpu INDEX``."""
        return self.uuid or self.serial or f"gpu {self.index}"


class Specialization(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """One measured (or failed) specialization of a results file."""

    index: Count
    name: Text
    bytes_per_second: NonNegative | None
    items_per_second: NonNegative | None
    bytes_per_item: NonNegative | None
    items: Count | None
    noise_timeout: bool | None
    noise_percent: NonNegative | None
    meta: dict[str, Any]
    elapsed_secs: Elapsed | None
    gpu_temp_celsius: Temperatures | None = None
    calls: Calls | None
    batches: tuple[Batch, ...] | None = None
    sm_clock: SmClock | None = None  # 4.2.0
    rounds: tuple[Round, ...] = ()  # 4.3.0
    between_rounds: BetweenRounds | None = None  # 4.3.0
    #: ``gpu_seconds_per_call`` and ``time_per_call`` as the file holds them (4.4.0; absent
    #: before, written as null where nothing was timed); read them through the properties
    #: `gpu_seconds_per_call` and `time_per_call`, which derive them for older files.
    written_seconds_per_call: NonNegative | UnsetType | None = msgspec.field(default=UNSET,
                                                                             name="gpu_seconds_per_call")
    written_time_per_call: TimePerCall | UnsetType | None = msgspec.field(default=UNSET, name="time_per_call")
    timer: Timer = "events"  # 4.4.0: "host" is written, "events" (the GPU's) is not
    error: str | None = None  # 4.1.0
    dry: bool = False  # 4.4.0: a dry run's (nothing measured), written only when true
    #: 4.5.0: why the benchmark skipped this specialization (``state.skip(reason)``); its
    #: metrics are null, and it is not a failure.
    skipped: str | None = None
    #: 4.5.0: batches discarded because the SM clock was throttled (absent in older files).
    throttled_batches: Count | None = None
    #: 4.5.0: the board's energy per call and power (`primbench.energy`), where it was read.
    energy: Energy | None = None
    #: 4.6.0: with --graph, the function's CUDA-graph replay beside its stream launches (`primbench.graph`).
    graph: Graph | None = None
    #: 4.7.0: with --energy-baseline, the empty calls' joules per call and the net (`primbench.energy`).
    energy_baseline: EnergyBaseline | None = None
    #: 4.8.0: with --devices, the GPU that measured it (`primbench.workers`).
    gpu: SpecGpu | None = None

    def __post_init__(self) -> None:
        if self.error is None and self.skipped is None:
            if (self.bytes_per_second is None or self.items_per_second is None or self.noise_timeout is None
                    or self.noise_percent is None or self.elapsed_secs is None or self.calls is None):  # _MEASURED
                for key in _MEASURED:
                    if getattr(self, key) is None:
                        raise ValueError(f"{key}: is null, yet the specialization has no error")
        elif self.error is not None and self.skipped is not None:
            raise ValueError("skipped: a specialization is skipped or failed (error), not both")
        algo = self.meta.get("algo")
        if isinstance(algo, str) and len(algo) > MAX_NAME_CHARS:
            raise ValueError(f"meta.algo: is {len(algo)} characters long, over the limit of {MAX_NAME_CHARS}")

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def measured(self) -> bool:
        """Whether it holds measurements: not failed, not skipped, not a dry run's."""
        return self.error is None and self.skipped is None and not self.dry

    @property
    def algorithm(self) -> str:
        return str(self.meta.get("algo", ""))

    @property
    def elapsed_host_secs(self) -> float | None:
        return self.elapsed_secs.host if self.elapsed_secs is not None else None

    @property
    def elapsed_gpu_secs(self) -> float | None:
        return self.elapsed_secs.gpu if self.elapsed_secs is not None else None

    @property
    def kernel_calls_per_batch(self) -> int | None:
        return self.calls.kernel_calls_per_batch if self.calls is not None else None

    @property
    def ms_per_batch(self) -> float | None:
        return self.calls.ms_per_batch if self.calls is not None else None

    @property
    def batch_count(self) -> int | None:
        return self.calls.batches if self.calls is not None else None

    @property
    def kernel_calls(self) -> int | None:
        return self.calls.kernel_calls if self.calls is not None else None

    @property
    def gpu_temp_start(self) -> float | None:
        return self.gpu_temp_celsius.start if self.gpu_temp_celsius is not None else None

    @property
    def gpu_temp_end(self) -> float | None:
        return self.gpu_temp_celsius.end if self.gpu_temp_celsius is not None else None

    @property
    def gpu_seconds_per_call(self) -> float | None:
        """The mean GPU seconds per call over every call of every round (the ``time`` metric):
        as written (results 4.4.0), else GPU time over calls; None where nothing was timed."""
        written = known(self.written_seconds_per_call)
        if written is not None:
            return written
        stats = self.written_time_per_call
        if isinstance(stats, TimePerCall) and stats.mean is not None:
            return stats.mean
        gpu, calls = self.elapsed_gpu_secs, self.kernel_calls
        return gpu / calls if gpu is not None and calls else None

    @property
    def time_per_call(self) -> TimePerCall | None:
        """Mean, median, min and quartiles of the time per call in seconds: as written
        (results 4.4.0), else the mean (`gpu_seconds_per_call`) and the other statistics from
        ``batches`` where the file holds them (with --output-batches), else None."""
        stats = self.written_time_per_call
        if isinstance(stats, TimePerCall):
            return stats
        mean = self.gpu_seconds_per_call
        if mean is None:
            return None
        per_call = _batch_per_call_secs(self.batches, self.kernel_calls_per_batch) if self.batches else None
        if not per_call:
            return TimePerCall(mean=mean)
        derived = time_per_call_stats(per_call)
        return TimePerCall(mean=mean, median=derived["median"], min=derived["min"], q1=derived["q1"],
                           q3=derived["q3"])

    @property
    def cv_between_rounds_percent(self) -> float | None:
        return self.between_rounds.cv_percent if self.between_rounds is not None else None

    @property
    def joules_per_call(self) -> float | None:
        """The board's energy per call in joules over every round (the ``energy`` metric)."""
        return self.energy.joules_per_call if self.energy is not None else None

    @property
    def watts(self) -> float | None:
        return self.energy.watts if self.energy is not None else None

    @property
    def graph_seconds_per_call(self) -> float | None:
        """The CUDA-graph replay's GPU time per call in seconds (the ``graph`` metric); None without one."""
        return self.graph.seconds_per_call if self.graph is not None else None


def _batch_per_call_secs(batches: tuple[Batch, ...], calls_per_batch: int | None) -> list[float] | None:
    """Each batch's GPU seconds per call (a batch without its own count has `calls_per_batch`)."""
    out = []
    for b in batches:
        n = b.kernel_calls if b.kernel_calls is not None else calls_per_batch
        if not n:
            return None
        out.append(b.batch_ms / 1000.0 / n)
    return out


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The `q` quantile of sorted values, interpolated linearly (NumPy's default method)."""
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def time_per_call_stats(per_call_secs: Sequence[float]) -> dict[str, float]:
    """mean, median, min, q1 and q3 of per-call times (the mean unweighted: see
    `time_per_call_fields` for the one written)."""
    ordered = sorted(per_call_secs)
    return {
        "mean": math.fsum(ordered) / len(ordered),
        "median": _quantile(ordered, 0.5),
        "min": ordered[0],
        "q1": _quantile(ordered, 0.25),
        "q3": _quantile(ordered, 0.75),
    }


def time_per_call_fields(per_call_secs: Sequence[float], gpu_secs: float, calls: int) -> dict[str, Any]:
    """The fields results 4.4.0 adds to a measured specialization: ``gpu_seconds_per_call``
    (GPU time over calls, every call of every round) and ``time_per_call`` (that mean, then
    median, min and quartiles of the batches' per-call times, in seconds); both None where
    nothing was timed."""
    if not per_call_secs or calls <= 0:
        return {"gpu_seconds_per_call": None, "time_per_call": None}
    mean = gpu_secs / calls
    return {"gpu_seconds_per_call": mean, "time_per_call": {**time_per_call_stats(per_call_secs), "mean": mean}}


# --------------------------------------------------------------------------- context


class Gpu(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.general.gpu``: which GPU (its identity, for history's series) and its size."""

    name: Text | None = None
    arch: Text | None = None
    pci_bus_id: Text | None = None
    uuid: Text | None = None  # 4.1.0
    serial: Text | None = None  # 4.1.0
    multiprocessors: Count | None = None
    l2_cache_bytes: Count | None = None
    memory_bytes: Count | None = None


class Compiler(_Record, frozen=True, kw_only=True):
    name: str | None = None
    version: str | None = None


class Backend(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.general.backend``: the GPU runtime (CUDA or HIP) and its versions."""

    name: str | UnsetType | None = UNSET
    hip_version: str | UnsetType | None = UNSET
    runtime_version: str | UnsetType | None = UNSET
    driver_version: str | UnsetType | None = UNSET
    compiler: Compiler | UnsetType | None = UNSET
    cupy_version: str | UnsetType | None = UNSET
    python_version: str | UnsetType | None = UNSET
    kernel_driver_version: str | UnsetType | None = UNSET


class Monitoring(_Record, frozen=True, kw_only=True):
    """``context.general.monitoring``: the library that read temperatures and clocks."""

    name: str | None = None
    version: str | None = None


class ThermalRecord(_Record, frozen=True, kw_only=True):
    """``context.general.thermal`` (results 4.2.0): the effective temperature range and the
    time spent warming and cooling (`primbench.thermal`)."""

    min_gpu_temp: Real | None = None
    min_mode: str | None = None
    max_gpu_temp: Real | None = None
    max_mode: str | None = None
    warming_secs: NonNegative | None = None
    cooling_secs: NonNegative | None = None
    start_gpu_temp: Real | UnsetType | None = UNSET  # 4.4.0: the first reading (null: none)
    highest_gpu_temp: Real | UnsetType | None = UNSET  # 4.4.0: the highest before a specialization


class General(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.general``: what ran, where, when, and from which commit."""

    algorithm: Text
    specialization_count: Count | None = None
    library_build_type: str | None = None
    gpu: Gpu | None = None
    backend: Backend | None = None
    monitoring: Monitoring | None = None
    temperature_type: str | None = None
    thermal: ThermalRecord | None = None  # 4.2.0
    host_name: Text | None = None
    date: Text | None = None
    branch_name: Text | None = None
    commit_hash: Text | None = None
    branch_source: str | None = None  # 4.1.0
    commit_source: str | None = None  # 4.1.0
    primbench_version: str | None = None  # 4.1.0
    python_version: str | None = None  # 4.1.0

    def __post_init__(self) -> None:
        if self.date is not None:
            _check_date(self.date)


def _check_date(text: str) -> None:
    """An ISO 8601 date must be an instant that exists in UTC too (datetime's years 1 to 9999)."""
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        return  # not ISO 8601: `history` names it; compare only shows it
    try:
        if when.tzinfo is not None:
            when.astimezone(_dt.UTC)
    except (OverflowError, ValueError):
        raise ValueError(f"date: {text!r} lies outside the dates that can be stored (years 1 to 9999 in UTC)"
                         ) from None


class SettingsRecord(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.settings``: every option of the run (`primbench.settings.Settings`, field for
    field); a key a version did not write yet is absent (`msgspec.UNSET`)."""

    size: Count | UnsetType = UNSET
    hot: bool | UnsetType = UNSET
    seed: int | UnsetType = UNSET
    json_out: str | UnsetType = UNSET
    csv_out: str | UnsetType = UNSET
    filter: str | UnsetType = UNSET
    dry: bool | UnsetType = UNSET
    min_gpu_ms_per_batch: Real | UnsetType = UNSET
    min_secs: Real | UnsetType = UNSET
    noise_timeout_secs: Real | UnsetType = UNSET
    batch_window_size: int | UnsetType = UNSET
    noise_tolerance_percent: Real | UnsetType = UNSET
    min_gpu_temp: Real | UnsetType | None = UNSET
    max_gpu_temp: Real | UnsetType | None = UNSET
    max_warming_secs: Real | UnsetType = UNSET
    max_cooling_secs: Real | UnsetType = UNSET
    output_batches: bool | UnsetType = UNSET
    spaces_per_indent: int | UnsetType = UNSET
    stream_blocking_timeout_secs: Real | UnsetType = UNSET
    cache_size: Count | UnsetType | None = UNSET  # 4.1.0; 4.4.0: null in a dry run (auto, unresolved)
    device: int | UnsetType | None = UNSET  # 4.1.0
    no_test: bool | UnsetType = UNSET  # 4.1.0
    no_monitoring: bool | UnsetType = UNSET  # 4.1.0
    branch: str | UnsetType = UNSET  # 4.1.0
    commit: str | UnsetType = UNSET  # 4.1.0
    min_clock_fraction: Real | UnsetType = UNSET  # 4.2.0
    rounds: Count | UnsetType = UNSET  # 4.3.0
    axis: tuple[str, ...] | UnsetType = UNSET  # 4.4.0: --axis NAME=SPEC, as given
    graph: bool | UnsetType = UNSET  # 4.6.0: --graph (primbench.graph)
    energy_baseline: bool | UnsetType = UNSET  # 4.7.0: --energy-baseline (primbench.energy)
    devices: str | UnsetType = UNSET  # 4.8.0: --devices, written only when given (primbench.workers)
    replicate: bool | UnsetType = UNSET  # 4.8.0: --replicate, written only when given
    worker_timeout_secs: Real | UnsetType | None = UNSET  # 4.8.0: --worker-timeout-secs, only when given
    results_per_gpu: bool | UnsetType = UNSET  # 4.8.0: --results-per-gpu, only when given
    processes: Count | UnsetType = UNSET  # 4.9.0: --processes, written only when above 1 (primbench.processes)
    runs: Count | UnsetType = UNSET  # 4.11.0: --runs, written only when above 1 (sets of --processes workers)


class Flags(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.flags``: the executor's flags (`primbench.settings.flags`)."""

    sync: bool | None = None


class DeviceRun(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context.devices[]`` (results 4.8.0, ``--devices``): one GPU of the run, its records
    once, how many specializations its worker ran, and why the worker failed, if it did."""

    index: Count
    gpu: Gpu | None = None
    thermal: ThermalRecord | None = None
    specializations: Count = 0
    error: str | None = None

    @property
    def ref(self) -> SpecGpu:
        """What each of its specializations names (``specializations[].gpu``)."""
        gpu = self.gpu or Gpu()
        return SpecGpu(index=self.index, uuid=gpu.uuid, serial=gpu.serial)


class Context(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``context``: the schema version, the run's general record, its settings and flags."""

    results_version: str
    general: General
    settings: SettingsRecord
    flags: Flags | None = None
    custom_settings: dict[str, Any] | None = None  # a benchmark program's own options
    devices: tuple[DeviceRun, ...] | None = None  # 4.8.0: --devices, one per GPU of the run


class Summary(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """``summary``: totals over the specializations."""

    noise_timeouts: Count | None = None
    failures: Count | None = None
    elapsed_secs: Elapsed | None = None
    skipped: Count | None = None  # 4.5.0: specializations that called state.skip
    throttled_batches: Count | None = None  # 4.5.0: batches discarded as throttled, every specialization

    @classmethod
    def of(cls, records: Sequence[Specialization], host_secs: float) -> Summary:
        """The totals of `records`: noise timeouts and GPU time of those that ran, failures,
        skipped specializations, throttled batches and the run's `host_secs`."""
        ok = [r for r in records if not r.failed and r.skipped is None]
        failures = sum(1 for r in records if r.failed)
        return cls(noise_timeouts=sum(1 for r in ok if r.noise_timeout), failures=failures,
                   elapsed_secs=Elapsed(host=host_secs, gpu=sum(r.elapsed_gpu_secs or 0 for r in ok)),
                   skipped=sum(1 for r in records if r.skipped is not None),
                   throttled_batches=sum(r.throttled_batches or 0 for r in records))


class Document(_Record, frozen=True, kw_only=True, omit_defaults=True):
    """The JSON object of a results file, as it is encoded and decoded."""

    context: Context
    specializations: tuple[Specialization, ...]
    summary: Summary | None = None


# --------------------------------------------------------------------------- the results


_PROCESS, _ROUNDS = attrgetter("process"), attrgetter("rounds")


@dataclass(frozen=True)
class Results:
    """A results document (`Document`'s three parts), where it came from, and its version
    as written. Built by the executor and written with `save`; read with `load`."""

    context: Context
    specializations: tuple[Specialization, ...]
    summary: Summary | None = None
    source: str = field(default="<results>", compare=False)
    #: The version the file was written in (an older one was upgraded on reading).
    written_version: str | None = field(default=None, compare=False)
    #: The text or dict the results were read from (None: built in this process, or converted
    #: from another harness's file: see `format`).
    _written: bytes | Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    #: The file's format: ``"primbench"`` (results.json 4.x), or the `primbench.formats`
    #: reader that converted it (``"cpp-legacy"``, ``"cpp-csv"``, ``"nvbench"``, ``"gbench"``,
    #: ``"pytest-benchmark"``).
    format: str = field(default="primbench", compare=False)
    #: What the file's format does not hold (a CSV: context, batches, ...; `primbench.formats`).
    lacks: tuple[str, ...] = field(default=(), compare=False)

    # ----- reading

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, keep_written: bool = True) -> Results:
        """Read and validate one results.json; raise ResultsFileError naming file and field.

        Only a regular file (or a link to one) of at most `MAX_FILE_BYTES` is read: a FIFO, a
        device such as /dev/zero or a socket is refused before it is opened. `keep_written`
        False: the file's text is not kept for `as_written` (which then gives `to_dict`), for a
        reader that never asks for it (compare: 155 MB a side of 100,000 specializations)."""
        source = str(path)
        if not keep_written:
            mapped = _load_mapped(path, source)
            if mapped is not None:
                return mapped
        results = _decode(_read(path, source), source)
        return results if keep_written else dataclasses.replace(results, _written=None)

    @classmethod
    def parse(cls, text: str | bytes, source: str = "<string>") -> Results:
        """Validate the text of a results.json."""
        if isinstance(text, str):
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                raise _surrogate_error(text, source) from None
        else:
            data = text
        return _decode(data, source)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> Results:
        """Validate a parsed results.json document (any mapping: a `primbench.Report` too)."""
        if isinstance(data, Mapping) and not isinstance(data, dict):
            data = dict(data)  # msgspec would encode a dataclass mapping by its fields
        with cyclic_gc_paused():
            if isinstance(data, dict):  # a document of the C++ harness's older versions (history keeps them)
                from primbench.formats import cpp_legacy

                if cpp_legacy.detect(data):
                    from primbench.formats import FormatError

                    try:
                        converted = cpp_legacy.read(data, source)
                    except FormatError as exc:
                        raise ResultsFileError(source, exc.field, exc.message) from None
                    return _from_converted(converted, source, data)
            version = _version_of(data, source)
            plain = _builtins(data, source)
            if version != RESULTS_VERSION:
                return _upgraded(plain, data, version, source)
            return _from_document(_converted(plain, source), source, version, data)

    # ----- what a consumer reads

    @property
    def version(self) -> str:
        """The schema version the file was written in."""
        return self.written_version or self.context.results_version

    @property
    def general(self) -> General:
        return self.context.general

    @property
    def settings(self) -> SettingsRecord:
        return self.context.settings

    @property
    def algorithm(self) -> str:
        return self.general.algorithm

    @property
    def branch(self) -> str | None:
        return self.general.branch_name

    @property
    def commit(self) -> str | None:
        return self.general.commit_hash

    @property
    def date(self) -> str | None:
        return self.general.date

    @property
    def gpu(self) -> Gpu:
        return self.general.gpu or Gpu()

    @property
    def devices(self) -> tuple[DeviceRun, ...]:
        """The GPUs of a ``--devices`` run (results 4.8.0); empty for a run on one GPU."""
        return self.context.devices or ()

    def per_gpu(self) -> list[Results]:
        """One document per physical GPU of a ``--devices`` run: each with that GPU's records as
        ``general.gpu`` and ``thermal`` and the specializations it measured (their ``gpu`` and
        index kept); a run on one GPU is itself. What compare and history key series by, so that
        a specialization measured on several GPUs (``--replicate``) is one series per GPU."""
        if not self.devices:
            return [self]
        parts: list[Results] = []
        for device in self.devices:
            specs = tuple(s for s in self.specializations if s.gpu is not None and s.gpu.index == device.index)
            if not specs:
                continue
            general = msgspec.structs.replace(self.general, gpu=device.gpu, thermal=device.thermal,
                                              specialization_count=len(specs))
            context = msgspec.structs.replace(self.context, general=general, devices=(device,))
            host = float((self.summary.elapsed_secs.host if self.summary and self.summary.elapsed_secs else 0.0) or 0.0)
            parts.append(dataclasses.replace(self, context=context, specializations=specs,
                                             summary=Summary.of(specs, host), _written=None))
        return parts

    def per_process(self) -> list[Results]:
        """One document per worker process of a ``--processes`` run (results 4.9.0): each
        specialization with that process's rounds alone, numbered from 0 as a run of one process
        numbers them; a run of one process is itself. What compare takes as a side's runs: the
        process is the unit of replication (a state drawn once per CUDA context that rounds
        inside it cannot sample). A file of ``--runs N`` (results 4.11.0) gives each run's
        processes the source ``FILE#runR`` (R from 1): compare takes them as a file of their own,
        as it takes separate files, so the state every worker of one run shares is seen between runs."""
        processes = sorted(set(map(_PROCESS, itertools.chain.from_iterable(map(_ROUNDS, self.specializations))))
                           - {None})
        if not processes:
            return [self]
        parts: list[Results] = []
        for k in processes:
            specs = []
            for spec in self.specializations:
                own = [r for r in spec.rounds if r.process == k]
                if spec.rounds and not own:
                    continue  # measured by the other processes only (this one failed it)
                specs.append(msgspec.structs.replace(spec, rounds=tuple(
                    msgspec.structs.replace(r, round=i) for i, r in enumerate(own))) if own else spec)
            parts.append(dataclasses.replace(self, specializations=tuple(specs), _written=None,
                                             source=self._run_source(k)))
        return parts

    def _run_source(self, process: int) -> str:
        """The source of a worker process's part: the file's, with its run where the file holds several."""
        runs, per_run = self.settings.runs, self.settings.processes
        if not isinstance(runs, int) or runs < 2 or not isinstance(per_run, int) or per_run < 1:
            return self.source
        return f"{self.source}#run{process // per_run + 1}"

    # ----- writing

    def document(self) -> Document:
        return Document(context=self.context, specializations=self.specializations, summary=self.summary)

    def to_dict(self) -> dict[str, Any]:
        """The document as JSON values (dicts, lists, numbers, strings), keys in written order."""
        out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(self.document()))
        return out

    def as_written(self) -> dict[str, Any]:
        """The document exactly as it was read (an older version before its upgrade, keys the
        model does not know included): history's identity of a run and the document it keeps.
        Results built in this process give `to_dict`."""
        if self._written is None:
            return self.to_dict()
        if isinstance(self._written, bytes):
            written: dict[str, Any] = msgspec.json.decode(self._written)
            return written
        return copy.deepcopy(dict(self._written))

    def dumps(self, spaces_per_indent: int = 4) -> str:
        """results.json text: `spaces_per_indent` 0 gives one compact line (json.dumps, as
        before this model: a NaN or an infinity is an error, not null)."""
        return dumps(msgspec.to_builtins(self.document()), spaces_per_indent)

    def save(self, path: str | os.PathLike[str], spaces_per_indent: int = 4) -> None:
        """The one writer of results.json (atomic: `write_atomic`)."""
        write_atomic(path, self.dumps(spaces_per_indent))

    def csv_text(self) -> str:
        """The C++ primbench's CSV: index, quoted name, throughputs and noise of each
        specialization that did not fail; then (results 4.4.0) its mean GPU seconds per call
        as written (empty where none was: a dry run)."""
        out = io.StringIO()
        out.write(",".join(CSV_HEADER) + "\n")
        for spec in self.specializations:
            if spec.failed or spec.skipped is not None:
                continue
            bps = float(spec.bytes_per_second or 0)
            name = '"' + csv_cell(spec.name).replace('"', '""') + '"'  # quoted: commas, line breaks, \r
            row = [
                str(spec.index),
                name,
                _g(bps),
                _g(bps / 2**30),
                _g(float(spec.items_per_second or 0)),
                "1" if spec.noise_timeout else "0",
                _g(float(spec.noise_percent or 0)),
                _g(float(per_call)) if (per_call := known(spec.written_seconds_per_call)) is not None else "",
            ]
            out.write(",".join(row) + "\n")
        return out.getvalue()

    def save_csv(self, path: str | os.PathLike[str]) -> None:
        """The one writer of the CSV summary."""
        write_atomic(path, self.csv_text())


def load_results(path: str | os.PathLike[str], *, keep_written: bool = True) -> Results:
    """`Results.load`."""
    return Results.load(path, keep_written=keep_written)


def parse_results(text: str | bytes, source: str = "<string>") -> Results:
    """`Results.parse`."""
    return Results.parse(text, source)


def results_from_dict(data: Any, source: str = "<dict>") -> Results:
    """`Results.from_dict`."""
    return Results.from_dict(data, source)


# --------------------------------------------------------------------------- upgrades


def _with_settings(doc: Mapping[str, Any], version: str, **defaults: Any) -> dict[str, Any]:
    """`doc` at `version`, its settings given `defaults` where it lacks them; `doc` itself is
    left as it is (the parts that change are copied)."""
    out = dict(doc)
    context = out.get("context")
    if isinstance(context, Mapping):
        context = dict(context)
        settings = context.get("settings")
        if isinstance(settings, Mapping):
            context["settings"] = {**settings, **{k: v for k, v in defaults.items() if k not in settings}}
        context["results_version"] = version
        out["context"] = context
    return out


def _from_4_0_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.0.0 -> 4.1.0: the C++ primbench cleared a 256 MiB cache between calls, which 4.1.0
    writes as ``settings.cache_size`` (`primbench.resultconfig.ABSENT`). The other keys of
    4.1.0 (provenance sources, GPU UUID and serial, ``error``, batches' calls and host
    seconds) were not recorded: they stay absent."""
    return _with_settings(doc, "4.1.0", cache_size=256 * 2**20)


def _from_4_1_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.1.0 -> 4.2.0: the SM clock and the thermal record were not measured, and there was
    no ``min_clock_fraction`` to check against: nothing is added but the version."""
    return _with_settings(doc, "4.2.0")


def _from_4_2_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.2.0 -> 4.3.0: each specialization was measured once, which is ``rounds`` 1 (its
    specializations keep no ``rounds`` list: one measurement, variability unknown)."""
    return _with_settings(doc, "4.3.0", rounds=1)


def _from_4_3_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.3.0 -> 4.4.0: every specialization was timed with GPU events (no ``timer``), none was
    marked ``dry``, there were no axes, and the thermal record kept no start or highest
    temperature: they stay absent. The time per call was not written; it is not invented here
    either: `Specialization.gpu_seconds_per_call` and `Specialization.time_per_call` derive it
    from what the file holds (GPU time over calls; the batches' statistics where it has them),
    exactly as for a 4.4.0 specialization that lacks the keys."""
    return _with_settings(doc, "4.4.0")


def _from_4_4_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.4.0 -> 4.5.0: no specialization could skip (no ``skipped``), and throttled batches
    were neither discarded nor counted: ``throttled_batches`` stays absent (unknown)."""
    return _with_settings(doc, "4.5.0")


def _from_4_5_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.5.0 -> 4.6.0: no graph was captured (no ``graph``, no ``settings.graph``): absent."""
    return _with_settings(doc, "4.6.0")


def _from_4_6_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.6.0 -> 4.7.0: no energy baseline was measured (no ``energy_baseline``): absent."""
    return _with_settings(doc, "4.7.0")


def _from_4_7_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.7.0 -> 4.8.0: the run was on one GPU (no ``--devices``): ``gpu`` per specialization and
    ``context.devices`` stay absent."""
    return _with_settings(doc, "4.8.0")


def _from_4_8_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.8.0 -> 4.9.0: the run was one process (no ``--processes``): ``rounds[].process`` and
    ``settings.processes`` stay absent."""
    return _with_settings(doc, "4.9.0")


def _from_4_9_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.9.0 -> 4.10.0: the rounds' host time was not timed: ``rounds[].wall_secs`` stays absent."""
    return _with_settings(doc, "4.10.0")


def _from_4_10_0(doc: Mapping[str, Any]) -> dict[str, Any]:
    """4.10.0 -> 4.11.0: the file is one run (no ``--runs``): ``settings.runs`` stays absent."""
    return _with_settings(doc, "4.11.0")


#: One step per older version: its document in, the next version's out (a new dict; the
#: parts that change are copied).
UPGRADES: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "4.0.0": _from_4_0_0,
    "4.1.0": _from_4_1_0,
    "4.2.0": _from_4_2_0,
    "4.3.0": _from_4_3_0,
    "4.4.0": _from_4_4_0,
    "4.5.0": _from_4_5_0,
    "4.6.0": _from_4_6_0,
    "4.7.0": _from_4_7_0,
    "4.8.0": _from_4_8_0,
    "4.9.0": _from_4_9_0,
    "4.10.0": _from_4_10_0,
}


def upgrade(doc: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """`doc`, written in `version`, upgraded step by step to `RESULTS_VERSION`."""
    for step in KNOWN_VERSIONS[KNOWN_VERSIONS.index(version):-1]:
        doc = UPGRADES[step](doc)
    return doc


# --------------------------------------------------------------------------- loading


class _VersionContext(Struct):
    results_version: str


class _VersionOnly(Struct):
    context: _VersionContext


class _ContextOnly(Struct):
    context: dict[str, Any]


class _RawContextDocument(Struct, frozen=True, gc=False):
    """`Document` with its context left as JSON text (`_decoded`)."""

    context: msgspec.Raw
    specializations: tuple[Specialization, ...]
    summary: Summary | None = None


_DECODER = msgspec.json.Decoder(Document)
_VERSION_DECODER = msgspec.json.Decoder(_VersionOnly)
_CONTEXT_DECODER = msgspec.json.Decoder(_ContextOnly)
_RAW_CONTEXT_DECODER = msgspec.json.Decoder(_RawContextDocument)
_CONTEXT_MODEL_DECODER = msgspec.json.Decoder(Context)


def _decoded(data: bytes | mmap.mmap) -> tuple[Document, bytes | None]:
    """`_DECODER.decode(data)`, and the context's JSON text where it came apart: the context is
    decoded on its own, so that an older version's upgrade (`_context_upgraded`) need not parse
    the whole file again for it (0.15 s for 100,000 specializations). Anything that fails is
    decoded whole, as before, for its error."""
    try:
        parts = _RAW_CONTEXT_DECODER.decode(data)
        context = _CONTEXT_MODEL_DECODER.decode(parts.context)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return _DECODER.decode(data), None
    return Document(context=context, specializations=parts.specializations, summary=parts.summary), \
        bytes(parts.context)

#: The versions whose every upgrade step (`UPGRADES`) changes the context alone (the
#: settings' defaults and the version): their specializations read as the model decodes them.
#: A step that changes anything else must leave its version (and those before it) out.
CONTEXT_ONLY_UPGRADES = frozenset(("4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0", "4.5.0", "4.6.0", "4.7.0",
                                   "4.8.0", "4.9.0", "4.10.0"))


def _read(path: str | os.PathLike[str], source: str) -> bytes:
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise ResultsFileError(source, None, "is a directory, not a results file")
        if not stat.S_ISREG(info.st_mode):
            raise ResultsFileError(source, None, "is not a regular file (a FIFO, device or socket is not read)")
        if info.st_size > MAX_FILE_BYTES:
            raise ResultsFileError(source, None, f"is {info.st_size} bytes, over the limit of {MAX_FILE_BYTES}")
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ResultsFileError(source, None, f"is over the limit of {MAX_FILE_BYTES} bytes")
    except FileNotFoundError:
        raise ResultsFileError(source, None, "no such file") from None
    except IsADirectoryError:
        raise ResultsFileError(source, None, "is a directory, not a results file") from None
    except (OSError, ValueError) as exc:
        raise ResultsFileError(source, None, f"cannot be read ({exc})") from None
    return data


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Loading or comparing results makes hundreds of thousands of small objects, none in a
    reference cycle; the cyclic collector would walk them again and again for nothing.
    Reference counting still frees garbage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode(data: bytes, source: str) -> Results:
    """A document from JSON bytes: straight into the model for the current version, through
    `UPGRADES` for an older one."""
    try:
        if not data.isascii():  # ASCII is UTF-8 (and checking it copies nothing)
            data.decode("utf-8")  # names the first byte that is not UTF-8 (msgspec does not)
    except UnicodeDecodeError as exc:
        raise ResultsFileError(source, None, f"cannot be read ({exc})") from None
    with cyclic_gc_paused():
        failure: Exception | None = None
        context_text: bytes | None = None
        try:  # a file of the current version is read once; anything else takes the checks below
            current, context_text = _decoded(data)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
            current, failure = None, exc
        if current is not None:
            usual = _usual(current, context_text, data, source, data)
            if usual is not None:
                return usual
            version = current.context.results_version
        else:
            foreign = _foreign(data, source)
            if foreign is not None:
                return foreign
            try:
                version = _VERSION_DECODER.decode(data).context.results_version
            except msgspec.ValidationError:  # the checks of `_version_of` name what is wrong
                version = _version_of(_json(data, source), source)
            except (msgspec.DecodeError, RecursionError) as exc:
                raise _json_error(data, source, exc) from None
        _check_version(version, source)
        if version != RESULTS_VERSION:
            return _upgraded(_json(data, source), data, version, source)
        # the current version, yet the model's decode failed: say what is wrong with it
        assert failure is not None
        if isinstance(failure, msgspec.ValidationError):
            raise _field_error(failure, source, lambda: msgspec.json.decode(data)) from None
        raise _json_error(data, source, failure) from None


def _usual(current: Document, context_text: bytes | None, data: bytes | mmap.mmap, source: str,
           written: bytes | None) -> Results | None:
    """The decoded document (`_decoded`: `current`, its context's text or None) as Results, where
    its version is the current one or upgrades in its context alone (`_context_upgraded`); None
    for anything else (`_decode`'s other paths). `data`: the file's JSON text."""
    version = current.context.results_version
    if version == RESULTS_VERSION:
        return _from_document(current, source, RESULTS_VERSION, written)
    upgraded = _context_upgraded(current, data if context_text is None else context_text, version,
                                 whole=context_text is None)
    return None if upgraded is None else _from_document(upgraded, source, version, written)


def _load_mapped(path: str | os.PathLike[str], source: str) -> Results | None:
    """`Results.load` of a file whose text is not kept (compare's: 155 MB a side at 100,000
    specializations): mapped, not read (0.1 s less a side, mostly the kernel's page faults of a
    copy), where it is the usual file: a regular file of at most `MAX_FILE_BYTES`, ASCII, that
    `_decoded` decodes and `_usual` takes. None for anything else, which `_read` and `_decode`
    read as before (their checks and errors): the same Results either way."""
    import mmap

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= MAX_FILE_BYTES:
            return None
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    import numpy as np  # (loaded by compare already)

    if int(np.frombuffer(mapped, dtype=np.uint8).max()) >= 128:  # not ASCII: `_decode` checks its UTF-8
        return None
    with cyclic_gc_paused():
        try:
            current, context_text = _decoded(mapped)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None
        return _usual(current, context_text, mapped, source, None)


def _context_upgraded(current: Document, data: bytes | mmap.mmap, version: str, *,
                      whole: bool = True) -> Document | None:
    """An older document that the model decoded whole, upgraded without decoding its
    specializations again: where every step from `version` changes the context alone
    (`CONTEXT_ONLY_UPGRADES`), the upgraded context beside the decoded specializations is what
    upgrading the whole document gives. None where that does not hold, or anything fails (the
    whole document's upgrade then names what is wrong). `data`: the document's JSON text, or
    with `whole` False its context's alone."""
    if version not in CONTEXT_ONLY_UPGRADES or version not in KNOWN_VERSIONS:
        return None
    try:
        context = _CONTEXT_DECODER.decode(data).context if whole else msgspec.json.decode(data)
        if not isinstance(context, dict):
            return None
        upgraded = upgrade({"context": context}, version)["context"]
        return Document(context=msgspec.convert(upgraded, Context), specializations=current.specializations,
                        summary=current.summary)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, ValueError, TypeError):
        return None


def _foreign(data: bytes, source: str) -> Results | None:
    """A file of another harness (`primbench.formats`) as Results; None for anything else,
    whose errors the checks of a results.json name (with the formats tried, where the file
    is not even an attempt at one)."""
    from primbench import formats

    failure: Exception | None = None
    try:
        parsed: Any = msgspec.json.decode(data)
    except msgspec.ValidationError:  # JSON with a number out of range: the checks below name it
        return None
    except (msgspec.DecodeError, RecursionError) as exc:
        parsed, failure = formats.NOT_JSON, exc
    try:
        converted = formats.convert(data, parsed, source)
    except formats.FormatError as exc:  # keys and values of the file may be in it: one line, no control characters
        from primbench.textsafe import term_clean

        raise ResultsFileError(source, term_clean(exc.field) if exc.field else None, term_clean(exc.message)) from None
    except RecursionError:
        raise ResultsFileError(source, None, "nested too deeply") from None
    if converted is None:
        if failure is not None and not isinstance(failure, RecursionError):
            error = _json_error(data, source, failure)
            if error.field is None and str(error).startswith(f"{source}: not valid JSON ("):
                raise ResultsFileError(source, None, f"not valid JSON ({failure}), nor a CSV ({formats.tried()})")
            raise error
        if isinstance(parsed, dict) and "context" not in parsed and "specializations" not in parsed:
            raise ResultsFileError(source, None, f"matches no known results format ({formats.tried()})")
        return None
    return _from_converted(converted, source, parsed if converted.format == "cpp-legacy" else None)


def _from_converted(converted: Any, source: str, written: Mapping[str, Any] | None = None) -> Results:
    """A `primbench.formats.Converted` validated by the model (upgraded first if older)."""
    doc = converted.document
    context = doc.get("context")
    if isinstance(context, dict):
        doc = {**doc, "context": {**context, "results_version": converted.document_version}}
    if converted.document_version != RESULTS_VERSION:
        _check_version(converted.document_version, source)
        doc = upgrade(doc, converted.document_version)
    document = _converted(_builtins(doc, source), source)
    results = _from_document(document, source, converted.version, written)
    return dataclasses.replace(results, format=converted.format, lacks=tuple(converted.lacks))


def _json(data: bytes, source: str) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.ValidationError as exc:  # a number out of range
        raise _field_error(exc, source) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _json_error(data, source, exc) from None


def _upgraded(raw: Any, written: bytes | Mapping[str, Any], version: str, source: str) -> Results:
    document = _converted(upgrade(raw, version), source)
    return _from_document(document, source, version, written)


def _converted(data: Any, source: str) -> Document:
    try:
        return msgspec.convert(data, Document)
    except msgspec.ValidationError as exc:
        raise _field_error(exc, source, lambda: data) from None
    except RecursionError:
        raise ResultsFileError(source, None, "not valid JSON (nested too deeply)") from None


def _scalar(value: Any) -> Any:
    """A NumPy scalar as the Python number it holds (a document built in Python may carry them)."""
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} is not a JSON value")
    return item()


def _builtins(data: Any, source: str) -> Any:
    """A document built in Python as plain JSON values (NumPy scalars as numbers)."""
    try:
        return msgspec.to_builtins(data, enc_hook=_scalar)
    except (TypeError, ValueError) as exc:
        raise ResultsFileError(source, None, f"not a JSON document ({exc})") from None
    except RecursionError:
        raise ResultsFileError(source, None, "not valid JSON (nested too deeply)") from None


def _version_of(data: Any, source: str) -> str:
    """``context.results_version`` of a parsed document, checked to be a known version."""
    if not isinstance(data, Mapping):
        raise ResultsFileError(source, None, "must be a JSON object with context, specializations, summary")
    context = data.get("context")
    if "context" not in data:
        raise ResultsFileError(source, "context", "missing")
    if not isinstance(context, Mapping):
        raise ResultsFileError(source, "context", f"must be an object, got {_kind(context)}")
    if "results_version" not in context:
        raise ResultsFileError(source, "context.results_version", "missing")
    version = context["results_version"]
    if not isinstance(version, str):
        raise ResultsFileError(source, "context.results_version", f"must be a string, got {_kind(version)}")
    _check_version(version, source)
    return version


def _check_version(version: str, source: str) -> None:
    if version not in KNOWN_VERSIONS:
        newer = _version_key(version) > _version_key(KNOWN_VERSIONS[-1])
        hint = "upgrade primbench to read it" if newer else "this primbench cannot read it"
        shown = version if _encodable(version) else version.encode("utf-8", "backslashreplace").decode()
        raise ResultsFileError(
            source, "context.results_version",
            f"unknown schema version {shown!r} (known: {', '.join(KNOWN_VERSIONS)}); {hint}",
        )


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split("."))
    except ValueError:
        return ()


def _from_document(document: Document, source: str, version: str,
                   written: bytes | Mapping[str, Any] | None = None) -> Results:
    specs = document.specializations
    if len({spec.name for spec in specs}) == len(specs):  # no name twice (the usual case): nothing to find
        return Results(document.context, specs, document.summary, source, version, written)
    seen: dict[tuple[str, int | None], int] = {}
    for i, spec in enumerate(specs):
        key = (spec.name, spec.gpu.index if spec.gpu is not None else None)  # 4.8.0: once per GPU (--replicate)
        if key in seen:
            on = f" on GPU {key[1]}" if key[1] is not None else ""
            raise ResultsFileError(
                source, f"specializations[{i}].name",
                f"duplicate name {spec.name!r}{on} (also specializations[{seen[key]}])",
            )
        seen[key] = i
    return Results(document.context, document.specializations, document.summary, source, version, written)


# --------------------------------------------------------------------------- errors


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_JSON_KINDS = {"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean", "null": "null",
               "object": "an object", "array": "a list"}
_MESSAGES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"Object missing required field `(?P<key>[^`]*)`"), lambda m: "missing"),
    (re.compile(r"Expected `(int \| float|float \| int)[^`]*`, got `(?P<got>\w+)`"),
     lambda m: f"must be a number, got {_JSON_KINDS.get(m['got'], m['got'])}"),
    (re.compile(r"Expected `int( \| null)?`, got `float`"),
     lambda m: "must be a whole number written as an integer, got a fraction or exponent"),
    (re.compile(r"Expected `(?P<want>\w+)[^`]*`, got `(?P<got>\w+)`"),
     lambda m: f"must be {_JSON_KINDS.get(m['want'], m['want'])}, got {_JSON_KINDS.get(m['got'], m['got'])}"),
    (re.compile(r"Expected `(int|float)` >= 0(\.0)?$"), lambda m: "must not be negative"),
    (re.compile(r"Expected `int` (<|<=|>=|>) \S+$"), lambda m: "must be finite (an integer of at most 2**63 - 1)"),
    (re.compile(r"Expected `float` (<|<=|>=|>) \S+$|Number out of range"), lambda m: "must be finite"),
    (re.compile(r"^Invalid enum value (?P<got>.*)$", re.DOTALL),  # the one Literal: `Timer`
     lambda m: f"must be one of {', '.join(get_args(Timer))}, got {m['got']}"),
    (re.compile(r"Expected `str` of length <= (?P<limit>\d+)"),
     lambda m: f"is over the limit of {m['limit']} characters"),
]


def _field_error(exc: msgspec.ValidationError, source: str, document: Callable[[], Any] | None = None,
                 ) -> ResultsFileError:
    """msgspec's "Expected `int` >= 0 - at `$.specializations[1].index`" as one line that
    names the field the way the rest of primbench does: "specializations[1].index: must not
    be negative, got -1" (the value is looked up in `document()`, the parsed JSON)."""
    found = _AT.match(str(exc))
    message = found["message"] if found else str(exc)
    path = (found["path"] or "") if found else ""
    path = path.lstrip(".").replace("[...]", "")
    for pattern, say in _MESSAGES:
        m = pattern.search(message)
        if m is not None:
            if "key" in pattern.groupindex:
                path = f"{path}.{m['key']}" if path else m["key"]
            if not path:
                return ResultsFileError(source, None, _root(message))
            text = say(m)
            if text.startswith(("must not be negative", "must be finite", "must be a whole number")):
                text += _got(document, path)
            return ResultsFileError(source, path, text)
    sub, sep, rest = message.partition(": ")  # a check of __post_init__: "field: message"
    if sep and re.fullmatch(r"[\w.\[\]]+", sub):
        return ResultsFileError(source, f"{path}.{sub}" if path else sub, rest)
    return ResultsFileError(source, path or None, message)


_STEP = re.compile(r"\.?([^.\[]+)|\[(\d+)\]")


def _got(document: Callable[[], Any] | None, path: str) -> str:
    """", got VALUE" for the number at `path` ("a.b[0].c") of the document, or nothing."""
    if document is None:
        return ""
    try:
        value = document()
        for key, index in _STEP.findall(path):
            value = value[int(index)] if index else value[key]
    except Exception:  # RecursionError too: the value only decorates the message
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return f", got {value}" if isinstance(value, float) or abs(value) < 10**20 else \
        f", got an integer of {len(str(abs(value)))} digits"


def _root(message: str) -> str:
    return "must be a JSON object with context, specializations, summary" if "object" in message else message


def _json_error(data: bytes, source: str, exc: BaseException) -> ResultsFileError:
    if isinstance(exc, RecursionError):
        return ResultsFileError(source, None, "not valid JSON (nested too deeply)")
    text = data.decode("utf-8", "surrogatepass")
    if _may_hold_surrogates(text):
        found = _lone_surrogate(text, source)
        if found is not None:
            return found
    return ResultsFileError(source, None, f"not valid JSON ({exc})")


# A \uD800-\uDFFF escape (json.loads pairs the valid ones and leaves a lone one in the string), or a
# surrogate in text that did not come from UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]|" + r"\\u[dD][89abcdefABCDEF]")


def _may_hold_surrogates(text: str) -> bool:
    if "\\ud" not in text and "\\uD" not in text and text.isascii():
        return False
    return _SURROGATE.search(text) is not None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate_error(text: str, source: str) -> ResultsFileError:
    """The error of a text that holds a surrogate character (it cannot be UTF-8)."""
    return _lone_surrogate(text, source) or ResultsFileError(
        source, None, "holds a lone surrogate (\\ud800-\\udfff), not text")


def _join(at: str, key: str) -> str:
    """The path of `key` under `at`: ``a.b``, or ``a["odd key"]`` (escaped, so that an error
    naming it stays one line of text)."""
    if re.fullmatch(r"\w+", key, re.ASCII):
        return f"{at}.{key}" if at else key
    return f"{at}[{json.dumps(key)}]"


def _lone_surrogate(text: str, source: str) -> ResultsFileError | None:
    """Where a lone surrogate (in a key or a value) is, if there is one: no UTF-8 output can
    carry it. msgspec refuses one without saying so; json.loads keeps it, and the walk names
    the field."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return ResultsFileError(source, at or None, "holds a lone surrogate (\\ud800-\\udfff), not text")
        elif isinstance(item, dict):
            for k, v in item.items():
                if not _encodable(k):
                    return ResultsFileError(source, at or None,
                                            "holds a key with a lone surrogate (\\ud800-\\udfff)")
                stack.append((v, _join(at, k)))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))
    return None


# --------------------------------------------------------------------------- writing


def dumps(document: Mapping[str, Any], spaces_per_indent: int = 4) -> str:
    """results.json text of a document's JSON values: `spaces_per_indent` 0 gives one compact line."""
    indent = spaces_per_indent if spaces_per_indent > 0 else None
    separators = None if indent else (",", ":")
    return json.dumps(document, indent=indent, separators=separators, allow_nan=False,
                      ensure_ascii=False) + "\n"


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one, with the
    user's umask (an existing file keeps its mode), through a symlink to its target
    (`primbench.atomicfile`). ``/dev/null`` and pipes are written directly."""
    from primbench.atomicfile import write_atomic as write

    write(path, text)


def _g(value: float) -> str:
    """C++ stream formatting of a double: 6 significant digits, as the C++ primbench's CSV shows."""
    return f"{value:g}"
