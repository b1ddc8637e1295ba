"""A run in several worker processes on one GPU (``--processes K``, results 4.9.0): each worker's
budget, the turn-taking, and one specialization over every process's rounds.

Why processes: identical processes of identical code land in states up to 2-3 % apart on small
kernels (tests/benchmarks/variance/cpu_probe.txt: the state is drawn once per CUDA context,
whichever CPU the process runs on), and every round of a process carries its state. Rounds inside
one process cannot sample it; only more processes can, as pyperf runs its worker processes.

How: the parent is the benchmark program; it runs its own command line again K times
(`primbench.workers.start_processes`), each worker a run of every selected specialization on the
GPU with ``--min-secs`` split K ways and ``--rounds`` of its own (`PROCESS_ROUNDS` by default:
a warm-up and seven measured rounds, of batches of at least `PROCESS_MIN_GPU_MS_PER_BATCH`).
The workers start side by side: each imports the program, opens the device and prepares it,
primes every specialization (its setup and one untimed call: `Executor._prime`), says it is ready
and waits. Once every live worker is ready, they measure one after
another (`Turns`), so that no worker's imports or setup run beside another's measurement. Each
worker writes its file; `merge` builds one document: each specialization once, its rounds those
of every process in order (``rounds[].process``), its other fields over all of them (`combined`).
compare splits the document back into one run per process (`primbench.results.Results.per_process`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from primbench.clocks import clock_record
from primbench.energy import EnergyWindow, over_rounds
from primbench.errors import DeviceError
from primbench.plan import Queued
from primbench.records import failed_record
from primbench.results import (
    BetweenRounds,
    Calls,
    Elapsed,
    Energy,
    Results,
    Round,
    SmClock,
    Specialization,
    Summary,
    Temperatures,
    TimePerCall,
    time_per_call_fields,
)
from primbench.rounds import log_sd, round_windows
from primbench.settings import Settings
from primbench.workers import Worker, Workers, signal_file, worker_results

#: Rounds per worker process where ``--rounds`` is not given: one warm-up and seven measured
#: (`primbench.rounds.WARMUP_FROM`), each an eighth of the worker's share of ``--min-secs``. The
#: rounds of a process spread 1-2 % at 1-4 MiB while a round's own batches agree to 0.1 % (the
#: seventh evaluation's pilot, tests/benchmarks/verdicts/h200/pilot7/), so a process's mean is worth
#: more from many short rounds than from a few long ones: 4 rounds (3 measured) left the rounds' part
#: of a process mean about as large as the process's own.
PROCESS_ROUNDS = 8
#: A worker's floor of GPU time per batch (``--min-gpu-ms-per-batch``) where it is not given: a round
#: is at least `primbench.rounds.MIN_ROUND_WINDOW` batches, and with the per-call protocol's cache
#: clear and synchronization a 2 ms batch of a 10 us kernel takes 10-20 ms of host time, so the
#: default floor made a short round overrun its share of the budget (the pilot: 25-68 ms a round
#: against a share of 21 ms). The batches still fill the round's share (`primbench.measure.fill_window`).
PROCESS_MIN_GPU_MS_PER_BATCH = 0.5
#: A worker's checkpoints (its settled specializations written before a round, so that a crash keeps them)
#: at most this often, seconds. Written at every settled one, a turn of n specializations wrote n growing files
#: (the whole document each time, about 0.4 ms a specialization on this project's 2-CPU machine): quadratic in
#: n, in every one of the 16 turns. A crash in a turn, where 15 other processes measure the same
#: specializations, loses at most this much of its work.
PROCESS_CHECKPOINT_SECS = 0.25
#: How much longer than its GPU time a batch of a short kernel may take on the host with the per-call
#: protocol (cache clear, spin kernel, events, synchronization: about 70 us a call of a 4 us kernel on an
#: H100, tests/benchmarks/verdicts/h200/probe9): the batch floor leaves a round's window this margin.
HOST_PER_GPU_TIME = 10.0


def process_batch_floor(share_secs: float, rounds: int, batch_window_size: int) -> float:
    """A worker's floor of GPU milliseconds per batch where ``--min-gpu-ms-per-batch`` is not given:
    `PROCESS_MIN_GPU_MS_PER_BATCH`, lowered where a round's window (`primbench.rounds.round_windows`:
    `batch_window_size` shared out over the rounds, at least `MIN_ROUND_WINDOW` batches) would not fit the
    round's share of the worker's budget (`share_secs` over `rounds`) with the host taking
    `HOST_PER_GPU_TIME` times the GPU time. Such a round overruns its share, and the budget stop then
    ends the specialization after the fewest measured rounds (`primbench.rounds.budget_spent`): 16
    workers of the default 1 s have 7.8 ms a round, so their batches are at least 0.26 ms. With few rounds
    the window is the larger share of the batches: 8 workers of 0.25 s over 2 rounds have windows of 5
    batches in 15.6 ms, so their batches are at least 0.31 ms (the floor used to assume 3 batches a round,
    and at 64 KiB those rounds took 1.5x their share, a tenth of them 2.8x:
    `tests/benchmarks/verdicts/round_wall13.txt`)."""
    per_round_ms = share_secs * 1000.0 / max(1, rounds)
    window = max(round_windows(batch_window_size, rounds))
    return min(PROCESS_MIN_GPU_MS_PER_BATCH, per_round_ms / (window * HOST_PER_GPU_TIME))


def worker_settings(settings: Settings, given: frozenset[str]) -> Settings:
    """A worker's settings: one process of one run (``--runs`` sets are the parent's), ``--min-secs``
    its share, ``--rounds`` as given (else `PROCESS_ROUNDS`), ``--min-gpu-ms-per-batch`` as given
    (else `process_batch_floor`), its batches kept (the merged median per call needs them; `merge`
    leaves them out unless ``--output-batches`` was given), its file compact (only the parent reads
    it; indented, its write took three times as long in each turn)."""
    k = settings.processes
    rounds = settings.rounds if "rounds" in given else PROCESS_ROUNDS
    share = settings.min_secs / k
    floor = (settings.min_gpu_ms_per_batch if "min_gpu_ms_per_batch" in given
             else process_batch_floor(share, rounds, settings.batch_window_size))
    return dataclasses.replace(settings, processes=1, runs=1, min_secs=share, rounds=rounds,
                               min_gpu_ms_per_batch=floor, output_batches=True, csv_out="", spaces_per_indent=0)


#: The steps of a worker's start, in order, each the time it ended (`primbench.workers.WorkerRole.wait_turn`):
#: the program imported (the executor running), the device opened and prepared, every specialization primed.
START_STEPS = ("program", "device", "primed")


@dataclass(frozen=True)
class StartSplit:
    """How long the workers took, from the parent starting each, to end each step of their start
    (`START_STEPS`): the fastest and the slowest worker's seconds a step. What a run's wall spends before
    anything is measured (issue 30: about a third of a run of 24 specializations at 4 MiB)."""

    workers: int
    steps: tuple[tuple[str, float, float], ...]  # (step, fastest, slowest)


def start_split(workers: Workers) -> StartSplit | None:
    """The workers' start split from their ready files (`START_STEPS`), over those that wrote every step;
    None where none did (a dry run writes no priming step, an older worker an empty file)."""
    seconds: list[list[float]] = []
    for w in workers.workers:
        if w.ready is None or not w.spawned:
            continue
        try:
            said = json.loads(w.ready.read_text() or "{}")
            stamps = [float(said[step]) for step in START_STEPS]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        seconds.append([t - w.spawned for t in stamps])
    if not seconds:
        return None
    return StartSplit(len(seconds), tuple((step, min(col), max(col))
                                          for step, col in zip(START_STEPS, zip(*seconds, strict=True), strict=True)))



@dataclass(frozen=True)
class TimeToGo:
    """What is left of a run of ``--runs`` sets of `turns` workers once the first worker's turn is over: the
    other turns of every set, each as long as that one, and the starts of the later sets, each as long as the
    first's (`time_to_go`). Every worker measures the same specializations, so its turns take about as long."""

    turn_secs: float
    start_secs: float
    turns_left: int
    starts_left: int

    @property
    def secs(self) -> float:
        return self.turns_left * self.turn_secs + self.starts_left * self.start_secs


def time_to_go(turn_secs: float, start_secs: float, workers: int, runs: int) -> TimeToGo:
    """The run's time to go after its first turn (`TimeToGo`): `workers` a set, `runs` sets, the first
    turn took `turn_secs` and the first set took `start_secs` to be ready."""
    return TimeToGo(turn_secs, start_secs, workers * runs - 1, runs - 1)


@dataclass
class Turns:
    """Who measures: nobody until every live worker is ready (it imported the program and opened
    the device), then one worker at a time in the order they started, the next once the last has
    written its results (`primbench.workers.WorkerRole.end_turn`) or ended; once nobody is left to
    measure, every worker may exit (the release file), and the parent merges without waiting for
    their exits (`primbench.workers.leave`). Called at every look of the parent (`primbench.workers.watch`)."""

    workers: Workers
    current: Worker | None = None
    given: int = 0
    #: The workers whose turn is over, in that order (`over`): the parent reports each once.
    ended: list[Worker] = field(default_factory=list)
    #: The specializations a worker whose turn is over failed, in the order met: `merge` records each
    #: as that failure whatever a later worker measures, so the later workers are told to leave them out
    #: (their names in the turn file, `primbench.workers.WorkerRole.wait_turn`). A function that
    #: synchronizes the host otherwise costs every worker the stream-blocking timeout (10 s) again: an
    #: H100 run of 16 workers with three such functions wrote nothing in 480 s
    #: (tests/benchmarks/verdicts/h200/data11/README.md).
    failed: list[str] = field(default_factory=list)

    @staticmethod
    def over(w: Worker) -> bool:
        """Whether the worker's turn is over: it wrote its results and waits to exit, or it ended."""
        return w.done or w.wrote_results

    def __call__(self) -> Worker | None:
        """Give the next worker its turn where it is due; returns the worker given it, else None."""
        if self.current is not None:
            if not self.over(self.current):
                return None
            if self.current not in self.ended:
                self.ended.append(self.current)
                self._note_failures(self.current)
        waiting = [w for w in self.workers.live() if not self.over(w)]
        if not waiting:
            if self.workers.release is not None:
                self.workers.release.touch()
            return None
        if not all(w.ready is not None and w.ready.exists() for w in waiting):
            return None
        nxt = waiting[0]
        assert nxt.turn is not None
        signal_file(nxt.turn, json.dumps(self.failed))  # the worker reads the list the moment the file exists
        self.current = nxt
        self.given += 1
        return nxt

    def _note_failures(self, w: Worker) -> None:
        """Add the specializations the worker `w` failed (its results file, where it wrote one) to `failed`."""
        got = worker_results(w) if w.wrote_results else None
        for spec in got.specializations if got is not None else ():
            if spec.error is not None and spec.name not in self.failed:
                self.failed.append(spec.name)


def _renumbered(parts: Sequence[tuple[int, Specialization]]) -> tuple[Round, ...]:
    out: list[Round] = []
    for process, spec in parts:
        for r in spec.rounds:
            out.append(msgspec.structs.replace(r, round=len(out), process=process))
    return tuple(out)


def _sm_clock(parts: Sequence[Specialization], settings: Settings) -> SmClock | None:
    """The processes' clocks as one: their average clock weighted by each one's host time."""
    clocks = [(s.sm_clock, s.elapsed_secs.host if s.elapsed_secs is not None else None) for s in parts]
    if any(c is None or c.average_mhz is None or not h for c, h in clocks):
        return None
    ns = math.fsum(float(h or 0.0) for _, h in clocks) * 1e9
    cycles = math.fsum(float(c.average_mhz or 0.0) * float(h or 0.0) * 1e6 for c, h in clocks if c is not None)
    first, last = clocks[0][0], clocks[-1][0]
    assert first is not None and last is not None
    record = clock_record((0, 0), (round(ns), round(cycles)), first.default_mhz,
                          list(first.clock_event_reasons.start or []) if first.clock_event_reasons else None,
                          list(last.clock_event_reasons.end or []) if last.clock_event_reasons else None,
                          settings.min_clock_fraction)
    return None if record is None else msgspec.convert(record, SmClock)


def _energy(rounds: Sequence[Round], parts: Sequence[Specialization]) -> Energy | None:
    """``energy`` over every process's rounds, where every round read the counter."""
    if not rounds or any(r.energy is None for r in rounds):
        return None
    windows = [EnergyWindow(joules=r.energy.joules, secs=r.energy.window_secs, calls=int(r.kernel_calls or 0),
                            aligned=r.energy.aligned is True) for r in rounds if r.energy is not None]
    limit = next((s.energy.power_limit_watts for s in parts if s.energy is not None), None)
    return msgspec.convert(over_rounds(windows, limit), Energy)


def combined(index: int, parts: Sequence[tuple[int, Specialization]], settings: Settings) -> Specialization:
    """One specialization over the measured specializations `parts` (process, record) of its
    worker processes, as one process's record is over its rounds: totals summed, rates over the
    totals, the noise pooled, the rounds those of each process in turn (``process``), the
    spread between all of them, the time per call over every batch."""
    specs = [s for _, s in parts]
    first, last = specs[0], specs[-1]
    rounds = _renumbered(parts)
    gpu = math.fsum(float(s.elapsed_secs.gpu or 0.0) for s in specs if s.elapsed_secs is not None)
    host = math.fsum(float(s.elapsed_secs.host or 0.0) for s in specs if s.elapsed_secs is not None)
    calls = sum(int(s.calls.kernel_calls or 0) for s in specs if s.calls is not None)
    batches = sum(int(s.calls.batches or 0) for s in specs if s.calls is not None)

    def total(rate: str) -> float:
        return math.fsum(float(getattr(s, rate) or 0.0) * float(s.elapsed_secs.gpu or 0.0)
                         for s in specs if s.elapsed_secs is not None)

    every_batch = [b for s in specs for b in (s.batches or ())]
    renumbered, offset = [], 0
    for s in specs:
        renumbered += [msgspec.structs.replace(b, round=offset + (b.round or 0)) for b in (s.batches or ())]
        offset += len(s.rounds)
    timed = time_per_call_fields([b.batch_ms / 1000.0 / b.kernel_calls for b in every_batch if b.kernel_calls],
                                 gpu, calls)
    stats = timed["time_per_call"]
    spread = log_sd([r.gpu_ms_per_call for r in rounds])
    noise = [(s.noise_percent, max(1, len(s.rounds))) for s in specs if s.noise_percent is not None]
    temps = [s.gpu_temp_celsius for s in specs]
    return msgspec.structs.replace(
        first,
        index=index,
        bytes_per_second=total("bytes_per_second") / gpu if gpu > 0 else 0.0,
        items_per_second=total("items_per_second") / gpu if gpu > 0 else 0.0,
        bytes_per_item=last.bytes_per_item,
        items=last.items,
        noise_timeout=any(bool(s.noise_timeout) for s in specs),
        # pooled over every round of every process (root mean square, as over one process's rounds)
        noise_percent=(math.sqrt(math.fsum(p * p * n for p, n in noise) / sum(n for _, n in noise))
                       if noise else None),
        elapsed_secs=Elapsed(host=host, gpu=gpu),
        gpu_temp_celsius=(Temperatures(start=temps[0].start if temps[0] else None,
                                       end=temps[-1].end if temps[-1] else None)
                          if any(t is not None for t in temps) else None),
        calls=Calls(kernel_calls_per_batch=first.calls.kernel_calls_per_batch if first.calls else None,
                    ms_per_batch=gpu * 1000.0 / batches if batches else 0.0, batches=batches, kernel_calls=calls),
        batches=tuple(renumbered) if settings.output_batches else None,
        sm_clock=_sm_clock(specs, settings),
        rounds=rounds,
        between_rounds=BetweenRounds(count=len(rounds), cv_percent=spread * 100.0 if spread is not None else None),
        written_seconds_per_call=timed["gpu_seconds_per_call"],
        written_time_per_call=TimePerCall(**stats) if stats is not None else None,
        timer="host" if any(s.timer == "host" for s in specs) else "events",
        throttled_batches=sum(int(s.throttled_batches or 0) for s in specs),
        energy=_energy(rounds, specs),
    )


def merge(workers: Workers, selected: Sequence[Queued], parent: Results, settings: Settings, *,
          host_secs: float) -> tuple[Results, tuple[Worker, ...]]:
    """One document from the workers' files (`parent`: the parent's own results with no
    specialization, for the provenance and settings), and the workers that failed. Each
    specialization in the program's order: `combined` over the processes that measured it; failed
    where a process failed it or a failed worker did not write it (the error names the process);
    skipped where every process skipped it; left out where the run was interrupted before any
    process measured it."""
    files = [(w, worker_results(w)) for w in workers.workers]
    first = next((got for _, got in files if got is not None), None)
    written = [{s.name: s for s in got.specializations} if got is not None else {} for _, got in files]
    records: list[Specialization] = []
    for q in selected:
        index = len(records)
        failure: Specialization | None = None
        measured: list[tuple[int, Specialization]] = []
        skipped: Specialization | None = None
        for (w, _), own in zip(files, written, strict=True):
            process = w.rank if w.rank is not None else 0
            spec = own.get(q.name)
            if spec is None:
                if w.error is not None and failure is None:
                    failure = failed_record(index, q, DeviceError(f"process {process}: {w.error}"))
                continue
            if spec.error is not None and failure is None:
                failure = msgspec.structs.replace(spec, index=index, error=f"process {process}: {spec.error}")
            elif spec.skipped is not None:
                skipped = msgspec.structs.replace(spec, index=index)
            elif spec.error is None:
                measured.append((process, spec))
        if failure is not None:
            records.append(failure)
        elif measured:
            records.append(combined(index, measured, settings))
        elif skipped is not None:
            records.append(skipped)
    base = first or parent
    general = msgspec.structs.replace(parent.general, gpu=base.general.gpu, backend=base.general.backend,
                                      monitoring=base.general.monitoring,
                                      temperature_type=base.general.temperature_type, thermal=base.general.thermal,
                                      specialization_count=len(records))
    written_settings = parent.settings
    if first is not None:  # what the workers resolved: --cache-size auto, the thermal limits
        written_settings = msgspec.structs.replace(written_settings, cache_size=first.settings.cache_size,
                                                   min_gpu_temp=first.settings.min_gpu_temp,
                                                   max_gpu_temp=first.settings.max_gpu_temp)
    context = msgspec.structs.replace(parent.context, general=general, settings=written_settings)
    results = Results(context, tuple(records), Summary.of(records, host_secs))
    return results, tuple(w for w in workers.workers if w.failed)


__all__ = ["PROCESS_CHECKPOINT_SECS", "PROCESS_MIN_GPU_MS_PER_BATCH", "PROCESS_ROUNDS", "Turns", "combined", "merge",
           "worker_settings"]
