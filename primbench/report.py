"""What a run returns to Python: `Report` (an executor's run) and `BenchResult` (one measured
specialization, typed).

A `Report` holds the run's `primbench.results.Results` (``report.model``, the typed results
model) and is also a read-only mapping over the results document as written
(``report["specializations"]``, ``report["context"]["general"]``), so code written when
`Executor.run` returned the document keeps working. The typed views read the model; nothing here
measures or writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from primbench.errors import EXIT_OK, BenchmarkFailed
from primbench.metrics import METRICS, Metric, choose
from primbench.results import Results, Specialization

__all__ = ["BenchResult", "Report"]


@dataclass(frozen=True)
class BenchResult:
    """One measured specialization: GPU time per call, rates, noise, rounds.

    ``bytes_per_second`` / ``items_per_second`` are None when the benchmark declared no bytes / no
    items. ``specialization`` is the specialization in the results model, ``record`` the same as
    written to results.json, ``document`` the whole results document it belongs to, ``json_path``
    the file written (None when none was)."""

    name: str
    meta: Mapping[str, Any]
    seconds_per_call: float
    bytes_per_second: float | None
    items_per_second: float | None
    noise_percent: float
    noise_timeout: bool
    rounds: int
    seconds_per_call_by_round: tuple[float, ...]
    between_rounds_cv_percent: float | None
    kernel_calls: int
    batches: int
    sm_clock_mhz: float | None
    clock_below_expected: bool
    record: Mapping[str, Any] = field(repr=False, compare=False)
    #: The board's energy per call and average power (results 4.5.0, `primbench.energy`); None unread.
    joules_per_call: float | None = None
    watts: float | None = None
    #: The spread of the rounds' joules per call (None with fewer than two that moved the counter),
    #: and how many rounds were too short for the counter (their energy is coarse).
    energy_cv_between_rounds_percent: float | None = None
    energy_rounds_too_short: int = 0
    #: With ``Settings(graph=True)`` (results 4.6.0, `primbench.graph`): the CUDA-graph replay's GPU
    #: seconds per call, what it saves against the stream launches, or why there is no replay.
    graph_seconds_per_call: float | None = None
    graph_saved_seconds_per_call: float | None = None
    graph_reason: str | None = None
    document: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    json_path: str | None = None
    specialization: Specialization | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_specialization(cls, spec: Specialization, record: Mapping[str, Any],
                            document: Mapping[str, Any] | None = None,
                            json_path: str | None = None) -> BenchResult:
        """The typed view of a measured specialization of the results model (not a failed or dry
        one); `record` is it as written."""
        clock = spec.sm_clock
        energy, graph = spec.energy, spec.graph
        return cls(
            name=spec.name,
            meta=dict(spec.meta),
            seconds_per_call=spec.gpu_seconds_per_call or 0.0,
            bytes_per_second=float(spec.bytes_per_second) if spec.bytes_per_second else None,
            items_per_second=float(spec.items_per_second) if spec.items_per_second else None,
            noise_percent=float(spec.noise_percent or 0.0),
            noise_timeout=bool(spec.noise_timeout),
            rounds=len(spec.rounds) or 1,
            seconds_per_call_by_round=tuple(r.gpu_seconds_per_call for r in spec.rounds),
            between_rounds_cv_percent=spec.cv_between_rounds_percent,
            kernel_calls=spec.kernel_calls or 0,
            batches=spec.batch_count or 0,
            sm_clock_mhz=clock.average_mhz if clock is not None else None,
            clock_below_expected=clock.below_expected if clock is not None else False,
            record=record,
            joules_per_call=spec.joules_per_call,
            watts=spec.watts,
            energy_cv_between_rounds_percent=energy.cv_between_rounds_percent if energy is not None else None,
            energy_rounds_too_short=energy.rounds_too_short if energy is not None else 0,
            graph_seconds_per_call=graph.seconds_per_call if graph is not None else None,
            graph_saved_seconds_per_call=graph.saved_seconds_per_call if graph is not None else None,
            graph_reason=graph.reason if graph is not None else None,
            document=document,
            json_path=json_path,
            specialization=spec,
        )

    @property
    def metric(self) -> Metric:
        """The default metric (`primbench.metrics.choose`): bytes/s, else items/s, else time per call."""
        return choose(self.bytes_per_second, self.items_per_second)

    def __str__(self) -> str:
        parts = [self.name or "(unnamed)", f"{METRICS['gpu_seconds_per_call'].format(self.seconds_per_call)}/call"]
        if self.bytes_per_second is not None:
            parts.append(METRICS["bytes_per_second"].format(self.bytes_per_second))
        if self.items_per_second is not None:
            parts.append(METRICS["items_per_second"].format(self.items_per_second))
        if self.joules_per_call is not None:
            parts.append(f"{METRICS['joules_per_call'].format(self.joules_per_call)}/call")
        if self.graph_seconds_per_call is not None:
            parts.append(f"graph {METRICS['gpu_seconds_per_call'].format(self.graph_seconds_per_call)}/call")
        elif self.graph_reason is not None:
            parts.append("graph not captured")
        parts.append(f"noise {self.noise_percent:.3f} %" + (" (noise timeout)" if self.noise_timeout else ""))
        if self.rounds > 1 and self.between_rounds_cv_percent is not None:
            parts.append(f"between {self.rounds} rounds {self.between_rounds_cv_percent:.3f} %")
        return "  ".join(parts)


@dataclass(frozen=True, eq=False)
class Report(Mapping[str, Any]):
    """The outcome of `Executor.run`.

    ``mode``: ``run``, ``dry``, ``list``, ``profile`` or ``help``. ``exit_code``: what
    `Executor.main` exits with (0 ok, 1 a specialization failed or the run was aborted). ``names``:
    the selected specializations. ``model``: the results (`primbench.results.Results`; None for
    list, profile and help, which make none); ``document`` the same as written to results.json,
    which the report reads as a mapping. ``failures``: name -> error of each
    failed specialization, ``exceptions`` their exceptions. ``error``: why the run was aborted
    (warming or cooling that timed out), else None. ``outputs``: the files written. ``skipped``:
    name -> reason of each specialization whose ``run()`` called ``state.skip`` (not failures);
    ``excluded``: name -> reason of each combination a `primbench.axis.constrain` excluded."""

    mode: str
    exit_code: int = EXIT_OK
    names: tuple[str, ...] = ()
    model: Results | None = field(default=None, repr=False)
    outputs: tuple[str, ...] = ()
    failures: Mapping[str, str] = field(default_factory=dict)
    exceptions: Mapping[str, BaseException] = field(default_factory=dict, repr=False)
    error: str | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    excluded: Mapping[str, str] = field(default_factory=dict)

    # ----- the document, as a mapping
    @cached_property
    def document(self) -> dict[str, Any] | None:
        """The results document as written (JSON values), made from `model` once."""
        return self.model.to_dict() if self.model is not None else None

    def __getitem__(self, key: str) -> Any:
        if self.document is None:
            raise KeyError(f"{key!r}: a {self.mode} run makes no results document")
        return self.document[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.document or {})

    def __len__(self) -> int:
        return len(self.document or {})

    # ----- typed views
    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def json_path(self) -> str | None:
        """The results.json written, if one was."""
        return next((o for o in self.outputs if not o.endswith(".csv")), None)

    @cached_property
    def results(self) -> tuple[BenchResult, ...]:
        """Each measured specialization (failed, skipped and dry ones left out), in results order."""
        if self.model is None or self.document is None:
            return ()
        return tuple(
            BenchResult.from_specialization(spec, record, self.document, self.json_path)
            for spec, record in zip(self.model.specializations, self.document["specializations"], strict=True)
            if spec.measured
        )

    def result(self, name: str) -> BenchResult:
        """The measured specialization `name`; KeyError names the measured ones."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"{name!r} was not measured; measured: {', '.join(repr(r.name) for r in self.results)}")

    def check(self) -> Report:
        """Raise `BenchmarkFailed` (caused by the first failure's exception) when a specialization
        failed or the run was aborted; otherwise return the report."""
        if self.ok:
            return self
        failed = [f"{name}: {error}" for name, error in self.failures.items()]
        if self.error is not None:
            failed.append(f"aborted: {self.error}")
        count = len(self.failures)
        what = f"{count} of {len(self.names)} specialization(s) failed" if count else "the run failed"
        cause = next(iter(self.exceptions.values()), None)
        raise BenchmarkFailed(f"{what}: " + "; ".join(failed)) from cause
