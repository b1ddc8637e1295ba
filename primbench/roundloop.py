"""The round loop: the interleaved rounds of a run (round 1 of every specialization, then round
2, ...) and the one object that holds what the run has done so far (`RunState`).

The executor opens and prepares the device, hands the loop how one round of one specialization
is measured (`MeasureRound`) and the precision stop (`StopEarly`), and turns the state into the
records it writes (`RunState.records`). A benchmark's own exception fails its specialization and
the run goes on; ``state.skip`` skips it; KeyboardInterrupt (and SIGTERM, SIGHUP) and a
`ThermalError` leave the loop, with every finished round kept in the state."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from primbench.console import Reporter
from primbench.errors import Skipped, ThermalError
from primbench.measure import Progress
from primbench.plan import Queued
from primbench.records import (
    MeasuredRound,
    clock_note,
    dry_record,
    failed_record,
    round_record,
    skipped_record,
    specialization_record,
)
from primbench.results import Specialization
from primbench.rounds import budget_spent
from primbench.settings import Settings

#: One round of one specialization: (the specialization, its round index, a progress callback
#: for each batch) -> what the round measured.
MeasureRound = Callable[["SpecRun", int, Callable[[Progress], object]], MeasuredRound]
#: Whether a specialization's rounds so far (GPU seconds per call), of the rounds planned, are
#: precise enough to stop early (`primbench.rounds.precise_enough`).
StopEarly = Callable[[Sequence[float], int], bool]


@dataclass
class SpecRun:
    """One selected specialization during the run: its rounds so far and, once it is settled
    (every round run or stopped early by the precision stop, failed, or skipped), its record."""

    index: int
    queued: Queued
    rounds: list[MeasuredRound] = field(default_factory=list)
    record: Specialization | None = None

    @property
    def settled(self) -> bool:
        return self.record is not None


@dataclass
class RunState:
    """What a run has done so far: each specialization's rounds and record, the benchmarks' own
    exceptions by specialization name (in the order they happened), and what ended the loop early:
    an interrupt (Ctrl-C, SIGTERM, SIGHUP) or a fatal thermal error."""

    specs: list[SpecRun]
    rounds: int  # planned per specialization (1 in a dry run)
    exceptions: dict[str, BaseException] = field(default_factory=dict)
    interrupted: KeyboardInterrupt | None = None
    fatal: str | None = None

    @classmethod
    def start(cls, selected: Sequence[Queued], rounds: int) -> RunState:
        return cls([SpecRun(i, q) for i, q in enumerate(selected)], rounds)

    def pending(self) -> list[SpecRun]:
        """The specializations that still take a round."""
        return [s for s in self.specs if not s.settled]

    @property
    def complete(self) -> bool:
        """Every selected specialization ran all its planned rounds, stopped early by the precision
        stop, failed or was skipped; an interrupted one is not complete, whatever it finished."""
        return all(s.settled for s in self.specs)

    def records(self, settings: Settings) -> list[Specialization]:
        """The records to write: each settled specialization's, one over the rounds an unsettled
        one finished (interrupted before its last round); every one a dry record in a dry run."""
        if settings.dry:
            return [dry_record(s.index, s.queued) for s in self.specs]
        return [s.record if s.record is not None else specialization_record(s.index, s.queued, s.rounds, settings)
                for s in self.specs if s.record is not None or s.rounds]


def interleave(run: RunState, settings: Settings, reporter: Reporter, measure_round: MeasureRound,
               stop_early: StopEarly) -> None:
    """Rounds are interleaved: round 1 of every specialization, then round 2, ...; a settled
    specialization takes no more rounds. KeyboardInterrupt and `ThermalError` propagate."""
    count = len(run.specs)
    started = time.perf_counter()
    for r in range(run.rounds):
        if run.rounds > 1:
            reporter.round_started(r, run.rounds, _eta(started, r * count, run.rounds * count))
        for spec in run.pending():
            reporter.started(spec.index, count, spec.queued.name)
            if settings.dry:
                reporter.finished(spec.index, count, dry_record(spec.index, spec.queued))
                continue
            one_round(run, spec, r, settings, reporter, measure_round, stop_early)


def one_round(run: RunState, spec: SpecRun, r: int, settings: Settings, reporter: Reporter,
              measure_round: MeasureRound, stop_early: StopEarly) -> None:
    """Round `r` of one specialization, reported; its record once it is settled."""
    count = len(run.specs)
    index, q = spec.index, spec.queued
    try:
        spec.rounds.append(measure_round(spec, r, lambda p: reporter.batch(index, count, p)))
    except (KeyboardInterrupt, ThermalError):
        raise
    except Skipped as exc:  # the benchmark declined this combination: not a failure
        spec.record = skipped_record(index, q, exc.reason)
        reporter.finished(index, count, spec.record)
        return
    except Exception as exc:  # the benchmark's own fault: report it, go on
        spec.record = failed_record(index, q, exc)
        run.exceptions[q.name] = exc
        reporter.finished(index, count, spec.record)
        return
    if (r == run.rounds - 1 or stop_early([rd.gpu_secs / rd.calls for rd in spec.rounds], run.rounds)
            or budget_spent([rd.outcome.measurement.round_secs for rd in spec.rounds], run.rounds,
                            settings.min_secs)):
        spec.record = record = specialization_record(index, q, spec.rounds, settings)
        reporter.finished(index, count, record, clock_note(record))
    else:
        reporter.round_finished(index, count, round_record(r, spec.rounds[-1], settings))


def _eta(started: float, done: int, total: int) -> float | None:
    """Seconds left for `total` measurements when `done` took the time since `started`."""
    if done <= 0:
        return None
    return (time.perf_counter() - started) / done * (total - done)


__all__ = ["MeasureRound", "RunState", "SpecRun", "StopEarly", "interleave", "one_round"]
