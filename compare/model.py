"""The result of a comparison: verdicts, per-specialization rows, the summary, and their JSON form.

Pure data: nothing here reads files, computes a statistic or prints.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from enum import StrEnum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

from primbench.metrics import METRICS

if TYPE_CHECKING:
    from primbench.compare.comparability import Comparability


class Verdict(StrEnum):
    """What happened to one specialization between base and head."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"
    ADDED = "added"
    REMOVED = "removed"
    SKIPPED = "skipped"  # the benchmark skipped it (state.skip) on a side: nothing to judge, not a failure


class ReasonKind(StrEnum):
    """Why a row has its verdict, as data beside the reason's text (`SpecComparison.reason_kind`):
    what the renderers read instead of the text."""

    SIGNIFICANT = "significant"  # beyond the threshold and significant: a regression or an improvement
    EQUIVALENT = "equivalent"  # the interval lies within the threshold or the smallest detectable change
    INSENSITIVE = "insensitive"  # these runs could not have detected a change under --max-detectable
    TOO_NOISY = "too_noisy"  # not significant, and the interval is too wide to call it unchanged
    MOVED_WITH_SUITE = "moved_with_suite"  # moved as the whole suite did
    UNTRUSTED = "untrusted"  # a noise timeout or a throttled SM clock on a side
    NO_VARIABILITY = "no_variability"  # nothing to weigh the change against
    NO_VALUE = "no_value"  # no positive, finite value of the metric on both sides
    OUT_OF_RANGE = "out_of_range"  # head/base beyond any plausible change: a broken measurement
    FAILED = "failed"  # the specialization failed on a side
    SKIPPED = "skipped"  # the benchmark skipped it (state.skip) on a side
    ONE_SIDED = "one_sided"  # only in base (removed) or only in head (added)
    NOT_COMPARABLE = "not_comparable"  # the sides measure different things

    @property
    def has_statistics(self) -> bool:
        """Whether the reason's text ends with the row's statistics (``; t-test p=…``)."""
        return self in (ReasonKind.SIGNIFICANT, ReasonKind.EQUIVALENT, ReasonKind.INSENSITIVE, ReasonKind.TOO_NOISY,
                        ReasonKind.MOVED_WITH_SUITE, ReasonKind.UNTRUSTED)


#: Where the statistics begin in the text of a reason whose kind `has_statistics` (compare/core.py
#: writes them so; tests/test_compare_pieces.py checks every kind against it).
STATISTICS_SEPARATOR = "; t-test p="
#: Where a one-sided row's failure begins in its reason's text (``only in head (failed: …)``).
FAILURE_MARK = " (failed: "


@dataclass(frozen=True)
class VerdictLook:
    """How every renderer shows a verdict: its word (the terminal, markdown, JSON and the HTML
    report), its Rich style (the terminal), its icon (markdown), and its rank (the order of the
    rows, what needs a look first: 0 first)."""

    word: str
    style: str
    icon: str
    rank: int


#: The one table of verdicts (`VerdictLook`), in the order of their rank.
VERDICTS: Mapping[Verdict, VerdictLook] = {
    Verdict.REGRESSION: VerdictLook("regression", "bold red", "🔴", 0),
    Verdict.IMPROVEMENT: VerdictLook("improvement", "bold green", "🟢", 1),
    Verdict.INCONCLUSIVE: VerdictLook("inconclusive", "yellow", "🟡", 2),
    Verdict.REMOVED: VerdictLook("removed", "cyan", "➖", 3),
    Verdict.ADDED: VerdictLook("added", "cyan", "➕", 4),
    Verdict.UNCHANGED: VerdictLook("unchanged", "", "⚪", 5),
    Verdict.SKIPPED: VerdictLook("skipped", "grey50", "⏭", 6),
}


def look(verdict: Verdict | str) -> VerdictLook | None:
    """The table's entry of a verdict, or of its word (None for a word that is no verdict, such
    as a history change's ``up``)."""
    try:
        return VERDICTS[Verdict(verdict)]
    except ValueError:
        return None


class FailOn(StrEnum):
    """Which findings make a command exit with 1 (`primbench compare`, `history compare`,
    `history regressions`): the one definition of ``--fail-on``. Several may be combined,
    ``regression,inconclusive``; `never` stands alone."""

    REGRESSION = "regression"  # a regression (or a suite-wide shift down beyond the limit)
    CHANGE = "change"  # a regression or an improvement
    INCONCLUSIVE = "inconclusive"  # a specialization that could not be judged
    NEVER = "never"


def parse_fail_on(value: FailOn | str | Iterable[FailOn | str]) -> frozenset[FailOn]:
    """``"regression,inconclusive"`` (or a FailOn, or several) -> the set of FailOn; ValueError
    names what is wrong. ``never`` is the empty set."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
    else:
        parts = [str(FailOn(value))] if isinstance(value, FailOn) else [str(p).strip() for p in value]
    known = ", ".join(f.value for f in FailOn)
    chosen: set[FailOn] = set()
    for part in parts:
        try:
            chosen.add(FailOn(part.lower()))
        except ValueError:
            raise ValueError(f"{part!r} is not one of {known} (combine with a comma: regression,inconclusive)") \
                from None
    if FailOn.NEVER in chosen and len(chosen) > 1:
        raise ValueError("'never' cannot be combined with another choice")
    chosen.discard(FailOn.NEVER)
    return frozenset(chosen)


class ReasonTexts(Protocol):
    """Where rows' reasons are written when first read (`SpecComparison.from_state`): a table
    shows 100 rows of 100,000, whose reasons need not all be formatted."""

    def reason(self, i: int) -> str:
        """The reason of row `i`."""
        ...


#: The key of a row's state (`SpecComparison.from_state`) that holds its reason to come.
LATER_REASON = "_later_reason"


class RowStatistics(Protocol):
    """Where tested rows' statistics are read when first asked for (`SpecComparison.from_state`):
    a table reads the values and verdicts of 100,000 rows but the statistics of the 100 it shows."""

    def statistics(self, i: int) -> dict[str, Any]:
        """Every field of `LATER_FIELDS` of row `i`, with its value."""
        ...


#: The key of a row's state (`SpecComparison.from_state`) that holds its statistics to come.
LATER_STATISTICS = "_later_statistics"
#: The fields (each None by default) a row's state may leave to its `LATER_STATISTICS`.
LATER_FIELDS = frozenset(("test", "p_value", "q_value", "p_equivalence", "standard_error", "run_to_run_cv",
                          "run_to_run_source", "change_low", "change_high", "degrees_of_freedom",
                          "min_detectable_change", "relative_change", "absolute_p_value", "absolute_q_value"))


@dataclass(frozen=True)
class SpecComparison:
    """One specialization, matched by (algorithm, name), with its verdict and the reason for it.

    Values are in the row's `metric` (`primbench.metrics`: bytes/s or items/s, higher is
    better, or GPU seconds per call, lower is better); `change` is ``head / base - 1`` of that
    metric (a time going up is a positive change and a regression); noises are within-run
    coefficients of variation as fractions."""

    algorithm: str
    name: str
    verdict: Verdict
    reason: str
    #: What kind of reason `reason` says (`ReasonKind`), for the renderers; None only for a row
    #: built outside compare/core.py.
    reason_kind: ReasonKind | None = None
    metric: str | None = None
    base_value: float | None = None
    head_value: float | None = None
    change: float | None = None
    base_noise: float | None = None
    head_noise: float | None = None
    base_noise_timeout: bool = False
    head_noise_timeout: bool = False
    test: str | None = None
    p_value: float | None = None
    q_value: float | None = None
    p_equivalence: float | None = None
    standard_error: float | None = None
    run_to_run_cv: float | None = None
    run_to_run_source: str | None = None
    change_low: float | None = None
    change_high: float | None = None
    base_source: str | None = None
    head_source: str | None = None
    degrees_of_freedom: float | None = None
    min_detectable_change: float | None = None
    relative_change: float | None = None  # head/base - 1 relative to the suite's centre (the change most rows share)
    absolute_p_value: float | None = None  # the absolute test (d against everything a run varies by)
    absolute_q_value: float | None = None
    base_observations: int | None = None  # rounds (or runs without rounds) pooled on each side
    head_observations: int | None = None
    #: Why the sides measure different things (`compare.comparability`), one entry per
    #: difference; empty when comparable. A row with any is never judged (inconclusive).
    not_comparable: tuple[str, ...] = ()

    @classmethod
    def from_fields(cls, values: Mapping[str, Any]) -> SpecComparison:
        """The row ``SpecComparison(**fields)`` makes (every field not in `fields` its default),
        made without the frozen dataclass's ``__init__``, which sets each of its 33 fields through
        ``object.__setattr__`` (6 µs a row: 0.6 s of a comparison of 100,000 rows). `values` must
        hold `algorithm`, `name`, `verdict` and `reason`, and nothing that is not a field."""
        row = object.__new__(cls)
        state = row.__dict__
        state.update(_ROW_DEFAULTS)
        state.update(values)
        return row

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SpecComparison:
        """The row whose attributes are `state`, which becomes its ``__dict__`` (not copied): every
        field: ``{**ROW_DEFAULTS, **fields}`` (`from_fields` without its copies). In place of its
        ``reason``, `state` may hold ``LATER_REASON: (texts, i)``: the reason is then
        ``texts.reason(i)`` (`ReasonTexts`), written when it is first read and kept; and in place of
        the fields of `LATER_FIELDS`, ``LATER_STATISTICS: (statistics, i)``: they are then
        ``statistics.statistics(i)`` (`RowStatistics`), set when one of them is first read."""
        row = object.__new__(cls)
        object.__setattr__(row, "__dict__", state)
        return row

    if not TYPE_CHECKING:  # (for mypy, a class with __getattr__ would have every attribute)

        def __getattr__(self, name: str) -> Any:
            """`reason` of a row whose state holds its text to come, and the fields of `LATER_FIELDS`
            of one that holds its statistics to come (`from_state`)."""
            state = self.__dict__
            if name == "reason":
                later = state.get(LATER_REASON)
                if later is not None:  # written, then its maker let go (a second thread writes the same text)
                    text = state["reason"] = later[0].reason(later[1])
                    state.pop(LATER_REASON, None)
                    return text
            elif name in LATER_FIELDS:
                later = state.get(LATER_STATISTICS)
                if later is not None:  # set, then their maker let go (a second thread sets the same values)
                    state.update(later[0].statistics(later[1]))
                    state.pop(LATER_STATISTICS, None)
                return state.get(name)  # (None, the field's default, in a state without it)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def comparable(self) -> bool:
        return not self.not_comparable

    @property
    def key(self) -> tuple[str, str]:
        return (self.algorithm, self.name)

    @property
    def clause(self) -> str:
        """The reason without the statistics its kind appends (`ReasonKind.has_statistics`)."""
        if self.reason_kind is not None and self.reason_kind.has_statistics:
            return self.reason.split(STATISTICS_SEPARATOR, 1)[0]
        return self.reason

    @property
    def failure(self) -> str | None:
        """A one-sided row's failure (the specialization's error on the side it is on), else None."""
        if self.reason_kind is not ReasonKind.FAILED or self.verdict not in (Verdict.ADDED, Verdict.REMOVED):
            return None
        return self.reason.split(FAILURE_MARK, 1)[1].rstrip(")")

    @property
    def ratio(self) -> float | None:
        if self.base_value and self.head_value and self.base_value > 0 and self.head_value > 0:
            return self.head_value / self.base_value
        return None

    @property
    def higher_is_better(self) -> bool | None:
        """Which way the row's metric improves (None without a metric)."""
        if self.metric is None:
            return None
        known = METRICS.get(self.metric)
        return None if known is None else known.higher_is_better

    def to_dict(self) -> dict[str, Any]:
        # `_num` of each float field, inline where it is a finite float (x - x is 0.0 for those
        # alone; `_num` returns them as they are): a call a field was a third of the JSON's CPU
        bv, bn, hv, hn, ch = self.base_value, self.base_noise, self.head_value, self.head_noise, self.change
        lo, hi, p, q, pe = self.change_low, self.change_high, self.p_value, self.q_value, self.p_equivalence
        se, cv, df, mdc = self.standard_error, self.run_to_run_cv, self.degrees_of_freedom, self.min_detectable_change
        rel, ap, aq = self.relative_change, self.absolute_p_value, self.absolute_q_value
        return {
            "algorithm": self.algorithm,
            "name": self.name,
            "verdict": VERDICTS[self.verdict].word,
            "reason": self.reason,
            "reason_kind": self.reason_kind.value if self.reason_kind is not None else None,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "base": {
                "value": bv if type(bv) is float and bv - bv == 0.0 else _num(bv),
                "noise": bn if type(bn) is float and bn - bn == 0.0 else _num(bn),
                "noise_timeout": self.base_noise_timeout,
                "source": self.base_source,
            },
            "head": {
                "value": hv if type(hv) is float and hv - hv == 0.0 else _num(hv),
                "noise": hn if type(hn) is float and hn - hn == 0.0 else _num(hn),
                "noise_timeout": self.head_noise_timeout,
                "source": self.head_source,
            },
            "change": ch if type(ch) is float and ch - ch == 0.0 else _num(ch),
            "change_interval": (
                [lo if type(lo) is float and lo - lo == 0.0 else _num(lo),
                 hi if type(hi) is float and hi - hi == 0.0 else _num(hi)]
                if lo is not None and hi is not None else None
            ),
            "test": self.test,
            "p_value": p if type(p) is float and p - p == 0.0 else _num(p),
            "q_value": q if type(q) is float and q - q == 0.0 else _num(q),
            "p_equivalence": pe if type(pe) is float and pe - pe == 0.0 else _num(pe),
            "standard_error": se if type(se) is float and se - se == 0.0 else _num(se),
            "run_to_run_cv": cv if type(cv) is float and cv - cv == 0.0 else _num(cv),
            "run_to_run_source": self.run_to_run_source,
            "degrees_of_freedom": df if type(df) is float and df - df == 0.0 else _num(df),
            "min_detectable_change": mdc if type(mdc) is float and mdc - mdc == 0.0 else _num(mdc),
            "relative_change": rel if type(rel) is float and rel - rel == 0.0 else _num(rel),
            "absolute_p_value": ap if type(ap) is float and ap - ap == 0.0 else _num(ap),
            "absolute_q_value": aq if type(aq) is float and aq - aq == 0.0 else _num(aq),
            "observations": {"base": self.base_observations, "head": self.head_observations},
            "comparable": self.comparable,
            "not_comparable": list(self.not_comparable),
        }


#: Every field of `SpecComparison` that has a default, with it (`SpecComparison.from_fields`,
#: `from_state`).
ROW_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(SpecComparison) if f.default is not MISSING}
_ROW_DEFAULTS = ROW_DEFAULTS
assert all(ROW_DEFAULTS.get(name, 0) is None for name in LATER_FIELDS)
for _name in LATER_FIELDS:  # no class attribute (the default) in the way: a row's __getattr__ reads them
    delattr(SpecComparison, _name)



@dataclass(frozen=True)
class Summary:
    """Counts per verdict and the geometric mean of head/base over the compared rows: of GPU
    time per call where every row compares time (`higher_is_better` False), else of throughput
    (a row compared on time enters as base/head, its speed)."""

    counts: Mapping[Verdict, int]
    compared: int
    geomean_ratio: float | None
    higher_is_better: bool = True
    not_comparable: int = 0  # rows left unjudged because the sides measure different things

    @property
    def regressions(self) -> int:
        return self.counts.get(Verdict.REGRESSION, 0)

    @property
    def improvements(self) -> int:
        return self.counts.get(Verdict.IMPROVEMENT, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": {v.value: self.counts.get(v, 0) for v in Verdict},
            "compared": self.compared,
            "geomean_ratio": _num(self.geomean_ratio),
            "geomean_change": _num(self.geomean_ratio - 1 if self.geomean_ratio is not None else None),
            "geomean_of": "throughput" if self.higher_is_better else "time",
            "not_comparable": self.not_comparable,
        }


@dataclass(frozen=True)
class Method:
    """The parameters the verdicts were reached with (echoed into the JSON output)."""

    threshold: float
    alpha: float
    description: str
    suite_shift_limit: float = 0.05
    standard_error_scale: float = 1.0  # empirical-null widening applied to every standard error
    metric: str | None = None  # the --metric choice (time, bytes, items); None: each row's default
    max_detectable: float = 0.05  # a row that could not detect less than this is inconclusive
    round_correlation: float = 0.0  # lag-1 correlation of successive rounds the errors allow for (0: none)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric or "auto",
            "max_detectable": self.max_detectable,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "suite_shift_limit": self.suite_shift_limit,
            "standard_error_scale": self.standard_error_scale,
            "round_correlation": self.round_correlation,
            "description": self.description,
        }


@dataclass(frozen=True)
class SuiteFinding:
    """The suite's centre, the change most of its rows share (head/base - 1; `stats.suite_centre`):
    the relative test judges each specialization
    against it. `detected`: beyond the threshold and significant against what every kernel of a
    process shares in A/A suites (`p_value`, `standard_error` on ln, `min_detectable_change` at
    80 % power): a finding of its own (the environment, or a change in shared code); beyond
    `limit` (default 0) it counts for the exit code.
    Conditions are each side's mean start temperature (°C) and mean SM clock (MHz).
    `higher_is_better` False: every specialization was compared on GPU time per call, and
    `change` is the suite's change of time (up is a slowdown); else of throughput."""

    change: float
    specializations: int
    same_direction: int
    detected: bool
    limit: float
    base_conditions: tuple[float | None, float | None] = (None, None)
    head_conditions: tuple[float | None, float | None] = (None, None)
    higher_is_better: bool = True
    p_value: float | None = None
    standard_error: float | None = None
    min_detectable_change: float | None = None

    @property
    def beyond_limit(self) -> bool:
        return self.detected and abs(self.change) > self.limit

    @property
    def verdict(self) -> Verdict | None:
        """REGRESSION or IMPROVEMENT when the shift counts for the exit code."""
        if not self.beyond_limit:
            return None
        worse = self.change < 0 if self.higher_is_better else self.change > 0
        return Verdict.REGRESSION if worse else Verdict.IMPROVEMENT

    def describe(self) -> str:
        def side(c: tuple[float | None, float | None]) -> str:
            t, mhz = c
            parts = (f"{t:.0f} °C" if t is not None else "", f"{mhz:.0f} MHz" if mhz else "")
            return ", ".join(x for x in parts if x) or "no temperature or clock"

        gate = (f"counts as a {self.verdict}" if self.beyond_limit
                else f"within the {self.limit * 100:g} % suite-shift limit: reported only")
        p = f", p={self.p_value:.2g} against A/A suites" if self.p_value is not None else ""
        of = "" if self.higher_is_better else " of GPU time per call"
        return (f"suite-wide shift{of} {self.change * 100:+.2f} % ({self.same_direction} of {self.specializations} "
                f"specializations moved this way{p}; base {side(self.base_conditions)}, "
                f"head {side(self.head_conditions)}): "
                f"each specialization is judged relative to it; {gate}. The environment (temperature, clocks, "
                "another GPU) or a change in shared code; run base and head interleaved on one runner to tell")

    def to_dict(self) -> dict[str, Any]:
        return {
            "change": _num(self.change), "specializations": self.specializations,
            "same_direction": self.same_direction, "detected": self.detected, "limit": self.limit,
            "p_value": _num(self.p_value), "standard_error": _num(self.standard_error),
            "min_detectable_change": _num(self.min_detectable_change),
            "of": "throughput" if self.higher_is_better else "time",
            "counts_as": self.verdict.value if self.verdict else None,
            "base": {"gpu_temp_celsius": _num(self.base_conditions[0]), "sm_clock_mhz": _num(self.base_conditions[1])},
            "head": {"gpu_temp_celsius": _num(self.head_conditions[0]), "sm_clock_mhz": _num(self.head_conditions[1])},
        }


@dataclass(frozen=True)
class Comparison:
    """Everything `compare_runs` found: rows in base order (added rows last), warnings, summary."""

    rows: tuple[SpecComparison, ...]
    warnings: list[str]
    summary: Summary
    method: Method
    base_sources: tuple[str, ...] = ()
    head_sources: tuple[str, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    suite_shift: SuiteFinding | None = None
    #: What differs between the sides (`compare.comparability.Comparability`), None when not assessed.
    comparability: Comparability | None = None

    @property
    def comparable(self) -> bool:
        return self.comparability is None or self.comparability.comparable

    @property
    def threshold(self) -> float:
        return self.method.threshold

    @property
    def alpha(self) -> float:
        return self.method.alpha

    def by_verdict(self, verdict: Verdict) -> list[SpecComparison]:
        return [r for r in self.rows if r.verdict is verdict]

    def row(self, algorithm: str, name: str) -> SpecComparison:
        for r in self.rows:
            if r.algorithm == algorithm and r.name == name:
                return r
        raise KeyError((algorithm, name))

    def failed(self, fail_on: FailOn | str | Iterable[FailOn | str] = FailOn.REGRESSION) -> bool:
        """Whether CI should fail: any regression (`regression`), any regression or
        improvement (`change`), any inconclusive specialization (`inconclusive`), a
        combination of them (``"regression,inconclusive"``), or never."""
        chosen = parse_fail_on(fail_on)
        shift = self.suite_shift.verdict if self.suite_shift is not None else None
        if FailOn.INCONCLUSIVE in chosen and self.summary.counts.get(Verdict.INCONCLUSIVE, 0) > 0:
            return True
        if FailOn.CHANGE in chosen and (self.summary.regressions + self.summary.improvements > 0 or shift is not None):
            return True
        return FailOn.REGRESSION in chosen and (self.summary.regressions > 0 or shift is Verdict.REGRESSION)

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": list(self.base_sources),
            "head": list(self.head_sources),
            "method": self.method.to_dict(),
            "context": dict(self.context),
            "warnings": list(self.warnings),
            "comparability": self.comparability.to_dict() if self.comparability is not None else None,
            "suite_shift": self.suite_shift.to_dict() if self.suite_shift is not None else None,
            "summary": self.summary.to_dict(),
            "specializations": [r.to_dict() for r in self.rows],
        }


def _num(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those become null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


_VERDICT = attrgetter("verdict")


def count_verdicts(rows: Sequence[SpecComparison]) -> dict[Verdict, int]:
    counts = dict.fromkeys(Verdict, 0)  # every verdict, in its order
    counts.update(collections.Counter(map(_VERDICT, rows)))  # counted in C, not a loop a row
    return counts
