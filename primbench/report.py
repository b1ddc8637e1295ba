"""What a run returns to Python: `Report` (an executor's run) and `BenchResult` (one measured
specialization, typed).

A `Report` is also a read-only mapping over the results document (``report["specializations"]``,
``report["context"]["general"]``), so code written when `Executor.run` returned the document keeps
working. The typed views read the document's fields; nothing here measures or writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from primbench.errors import EXIT_OK, BenchmarkFailed
from primbench.metrics import METRICS, Metric, choose

__all__ = ["BenchResult", "Report"]


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class BenchResult:
    """One measured specialization: GPU time per call, rates, noise, rounds.

    ``bytes_per_second`` / ``items_per_second`` are None when the benchmark declared no bytes / no
    items. ``record`` is the specialization as written to results.json, ``document`` the whole
    results document it belongs to, ``json_path`` the file written (None when none was)."""

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
    document: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    json_path: str | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any], document: Mapping[str, Any] | None = None,
                    json_path: str | None = None) -> BenchResult:
        """The typed view of a measured specialization of results.json (not a failed or dry one)."""
        calls = record["calls"]["kernel_calls"]
        gpu = record["elapsed_secs"]["gpu"]
        per_call = _float(record.get("gpu_seconds_per_call"))
        if per_call is None:
            per_call = gpu / calls if calls else 0.0
        rounds = list(record.get("rounds") or [])
        clock = record.get("sm_clock") or {}
        spread = record.get("between_rounds") or {}
        return cls(
            name=str(record["name"]),
            meta=dict(record.get("meta") or {}),
            seconds_per_call=per_call,
            bytes_per_second=_float(record.get("bytes_per_second")) or None,
            items_per_second=_float(record.get("items_per_second")) or None,
            noise_percent=float(record["noise_percent"]),
            noise_timeout=bool(record["noise_timeout"]),
            rounds=len(rounds) or 1,
            seconds_per_call_by_round=tuple(float(r["gpu_ms_per_call"]) / 1000.0 for r in rounds),
            between_rounds_cv_percent=_float(spread.get("cv_percent")),
            kernel_calls=int(calls),
            batches=int(record["calls"]["batches"]),
            sm_clock_mhz=_float(clock.get("average_mhz")),
            clock_below_expected=bool(clock.get("below_expected", False)),
            record=record,
            document=document,
            json_path=json_path,
        )

    @property
    def metric(self) -> Metric:
        """The default metric (`primbench.metrics.choose`): bytes/s, else items/s, else time per call."""
        return choose(self.bytes_per_second, self.items_per_second)

    @property
    def value(self) -> float:
        """The value of `metric`."""
        return {"bytes_per_second": self.bytes_per_second, "items_per_second": self.items_per_second}.get(
            self.metric.name) or self.seconds_per_call

    def __str__(self) -> str:
        parts = [self.name or "(unnamed)", f"{METRICS['gpu_seconds_per_call'].format(self.seconds_per_call)}/call"]
        if self.bytes_per_second is not None:
            parts.append(METRICS["bytes_per_second"].format(self.bytes_per_second))
        if self.items_per_second is not None:
            parts.append(METRICS["items_per_second"].format(self.items_per_second))
        parts.append(f"noise {self.noise_percent:.3f} %" + (" (noise timeout)" if self.noise_timeout else ""))
        if self.rounds > 1 and self.between_rounds_cv_percent is not None:
            parts.append(f"between {self.rounds} rounds {self.between_rounds_cv_percent:.3f} %")
        return "  ".join(parts)


@dataclass(frozen=True, eq=False)
class Report(Mapping[str, Any]):
    """The outcome of `Executor.run`.

    ``mode``: ``run``, ``dry``, ``list``, ``profile`` or ``help``. ``exit_code``: what
    `Executor.main` exits with (0 ok, 1 a specialization failed or the run was aborted). ``names``:
    the selected specializations. ``document``: the results document (None for list, profile and
    help, which make none); the report reads as that mapping. ``failures``: name -> error of each
    failed specialization, ``exceptions`` their exceptions. ``error``: why the run was aborted
    (warming or cooling that timed out), else None. ``outputs``: the files written."""

    mode: str
    exit_code: int = EXIT_OK
    names: tuple[str, ...] = ()
    document: Mapping[str, Any] | None = field(default=None, repr=False)
    outputs: tuple[str, ...] = ()
    failures: Mapping[str, str] = field(default_factory=dict)
    exceptions: Mapping[str, BaseException] = field(default_factory=dict, repr=False)
    error: str | None = None

    # ----- the document, as a mapping
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

    @property
    def results(self) -> tuple[BenchResult, ...]:
        """Each measured specialization (failed and dry ones left out), in results order."""
        if self.document is None:
            return ()
        return tuple(
            BenchResult.from_record(r, self.document, self.json_path)
            for r in self.document.get("specializations", [])
            if r.get("error") is None and not r.get("dry")
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
