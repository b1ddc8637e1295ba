"""Comparing two sides (base, head) of results: matching, context checks, verdicts. Never prints.

`compare_runs` is the one entry point (the CLI and the history layer call it);
`load_side` reads a side from a results.json or a directory of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from primbench.compare import stats
from primbench.compare.comparability import NotComparableError, assess, by_algorithm
from primbench.compare.model import (
    Comparison,
    Method,
    SpecComparison,
    SuiteFinding,
    Summary,
    Verdict,
    count_verdicts,
)
from primbench.errors import PrimbenchError, UsageError
from primbench.metrics import CHOICES, METRICS, by_name, choose
from primbench.resultconfig import PROTOCOL_SETTINGS, RESULT_FLAGS, setting_differences
from primbench.results import (
    Results,
    ResultsFileError,
    Specialization,
    cyclic_gc_paused,
    load_results,
    parse_results,
)

METHOD_DESCRIPTION = (
    "observations: ln(metric) of every round of every run on a side (a run without rounds counts once; the "
    "metric is bytes/s, items/s or GPU time per call: --metric, else bytes/s where both sides declare bytes, "
    "then items/s, then time); "
    "d = mean(head) - mean(base); variance: the pooled sample variance of both sides' observations, "
    "moderated toward a prior fitted across the suite (empirical Bayes, limma's squeezeVar), or history's "
    "run-to-run variance where that is larger; with 5+ specializations, d is taken relative to the suite's "
    "median change (taken on the scale where higher is better: -d for time; a suite-wide shift is reported on its "
    "own); with 10+ specializations, standard errors "
    "widened when the changes spread wider than that predicts (empirical null); regression/improvement when |d| >= "
    "ln(1+threshold) and the t-test of d = 0 is significant after Benjamini-Hochberg (q <= alpha), a regression "
    "being a change in the worse direction (throughput down, time up); unchanged "
    "when the TOST equivalence t-test at alpha puts |d| inside the threshold; otherwise, after a noise "
    "timeout or a throttled SM clock, or without any run-to-run variability, inconclusive"
)

#: A suite-wide shift larger than this (a fraction) counts as a regression or improvement of
#: its own for the exit code (``--suite-shift-limit``); smaller ones are reported only.
DEFAULT_SUITE_SHIFT_LIMIT = 0.05
#: Widening of the standard errors (empirical null) above which compare warns.
WIDEN_WARNING = 1.25
#: Largest |ln(head/base)| judged: beyond it (a factor of about 10^87) a side is broken, and
#: head/base - 1 would not be a finite float.
MAX_LOG_CHANGE = 200.0
#: Degrees of freedom of a history variability given without any.
HISTORY_DEFAULT_DF = 2.0


class NothingToCompareError(PrimbenchError):
    """Base and head share no specialization (exit 2)."""


# --------------------------------------------------------------------------- loading


#: The path that means standard input (``compare - head.json``).
STDIN = "-"


def _not_results(path: Path) -> bool:
    """Whether `path` holds JSON that is no results document at all (an object without
    ``context`` and ``specializations``, or not an object): another tool's file beside the
    results, skipped. Invalid JSON, or a results document with a bad field, is not this."""
    import json

    try:
        data = json.loads(path.read_bytes()[:MAX_SNIFF_BYTES])
    except (OSError, ValueError):
        return False
    return not isinstance(data, dict) or not ({"context", "specializations"} & set(data))


MAX_SNIFF_BYTES = 64 * 1024 * 1024


def load_side(path: str | Path, notes: list[str] | None = None) -> list[Results]:
    """One side of a comparison: a results.json, ``-`` (standard input), or every ``*.json``
    directly in a directory (one per benchmark program), in name order. A JSON file in the
    directory that is no results document (another tool's output) is skipped, with a note in
    `notes`; errors name the file and the field."""
    if str(path) == STDIN:
        import sys

        return [parse_results(sys.stdin.buffer.read(), "<stdin>")]
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.glob("*.json") if f.is_file())
        if not files:
            raise ResultsFileError(str(p), None, "directory holds no *.json results files")
        out: list[Results] = []
        for f in files:
            try:
                out.append(load_results(f))
            except ResultsFileError:
                if not _not_results(f):
                    raise
                if notes is not None:
                    notes.append(f"{f}: not a results file (no context or specializations): skipped")
        if not out:
            raise ResultsFileError(str(p), None, "directory holds no results files (only other JSON)")
        return out
    if not p.exists():
        raise ResultsFileError(str(p), None, "no such file or directory")
    return [load_results(p)]


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class _Entry:
    spec: Specialization
    results: Results
    index: int


def _spec_algorithm(spec: Specialization, results: Results) -> str:
    return spec.algorithm or results.algorithm


def _index(side: Sequence[Results]) -> dict[tuple[str, str], list[_Entry]]:
    """Entries by (algorithm, name); a specialization in several files of a side is a repeat."""
    out: dict[tuple[str, str], list[_Entry]] = {}
    for results in side:
        for i, spec in enumerate(results.specializations):
            key = (_spec_algorithm(spec, results), spec.name)
            out.setdefault(key, []).append(_Entry(spec, results, i))
    return out


def _describe(side: Sequence[Results], index: Mapping[tuple[str, str], Any]) -> str:
    algos = sorted({k[0] for k in index})
    files = ", ".join(r.source for r in side) or "no files"
    if not algos:
        return f"no specializations ({files})"
    return f"{len(index)} specialization(s) of {', '.join(repr(a) for a in algos)} ({files})"


# --------------------------------------------------------------------------- context checks


def _fmt(value: Any) -> str:
    """A value for a warning: a record of the model as ``key value, …`` (never a Python dict)."""
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items() if v is not None) or "nothing"
    return "absent" if value is None else repr(value) if isinstance(value, str) else str(value)


def context_warnings(base: Results, head: Results) -> list[str]:
    """What differs between two files of one algorithm in ways that can move results without
    making them another measurement (what does is `compare.comparability`'s): the schema
    version, the protocol settings, a dry run, monitoring, the GPU runtime."""
    out: list[str] = []
    if base.version != head.version:
        out.append(f"schema version differs: base {base.version}, head {head.version}")
    for section, key, b, h in setting_differences(base, head):
        if section == "settings" and key in PROTOCOL_SETTINGS:
            out.append(f"setting {key} differs: base {_fmt(b)}, head {_fmt(h)}")
        elif section == "flags" and key not in RESULT_FLAGS:
            out.append(f"flags.{key} differs: base {_fmt(b)}, head {_fmt(h)}")
    if base.settings.dry is True or head.settings.dry is True:
        out.append("a side is a dry run (--dry): its throughputs are zeros")
    bm, hm = base.general.monitoring, head.general.monitoring
    if bm != hm:
        if bm is None or hm is None:
            on = "head" if bm is None else "base"
            out.append(f"monitoring differs: only {on} ran with temperature monitoring and control")
        else:
            out.append(f"monitoring differs: base {_fmt(bm)}, head {_fmt(hm)}")
    bb, hb = base.general.backend, head.general.backend
    if bb is not None and hb is not None and bb != hb:
        out.append(f"GPU runtime differs: base {_fmt(bb)}, head {_fmt(hb)}")
    return out


def _all_context_warnings(base: Sequence[Results], head: Sequence[Results]) -> list[str]:
    b, h = by_algorithm(base), by_algorithm(head)
    common = [a for a in b if a in h]
    warnings: list[str] = []
    for algo in common:
        for w in context_warnings(b[algo], h[algo]):
            text = f"{algo}: {w}" if len(common) > 1 else w
            if text not in warnings:
                warnings.append(text)
    return warnings


def _side_context(side: Sequence[Results]) -> dict[str, Any]:
    if not side:
        return {}
    first = side[0]
    return {
        "files": [r.source for r in side],
        "branch": first.branch,
        "commit": first.commit,
        "date": first.date,
        "gpu": first.gpu.name,
    }


# --------------------------------------------------------------------------- per-specialization


def _pct(x: float) -> str:
    return f"{x * 100:+.2f} %"


def _p(x: float) -> str:
    return f"{x:.2g}"


def _history(value: Any) -> tuple[float, float] | None:
    """History's variability: a CV, or (CV, degrees of freedom); None when unusable."""
    cv, df = (value if isinstance(value, tuple) else (value, HISTORY_DEFAULT_DF))
    if isinstance(cv, bool) or not isinstance(cv, int | float) or not isinstance(df, int | float):
        return None
    return (float(cv), float(df)) if math.isfinite(cv) and cv > 0 and df > 0 else None


def _slow_clock(spec: Specialization) -> str | None:
    """The 4.2.0 ``sm_clock`` check: a description when the SM clock fell below expectations."""
    clock = spec.sm_clock
    if clock is None or not clock.below_expected:
        return None
    avg, frac = clock.average_mhz, clock.fraction_of_default
    parts = []
    if avg is not None:
        parts.append(f"{avg:.0f} MHz")
    if frac is not None:
        parts.append(f"{frac * 100:.0f} % of default")
    return ", ".join(parts) or "below expected"


def _untrusted(base: Sequence[Specialization], head: Sequence[Specialization]) -> str | None:
    """Why a side's measurements (one per run) cannot carry a verdict (noise timeout, throttled
    SM clock), or None."""
    sides = (("base", base), ("head", head))
    reasons = []
    timeouts = [side for side, specs in sides if any(s.noise_timeout for s in specs)]
    if timeouts:
        reasons.append(f"noise timeout in {' and '.join(timeouts)}")
    for side, specs in sides:
        for slow in dict.fromkeys(filter(None, map(_slow_clock, specs))):
            reasons.append(f"SM clock below expected in {side} ({slow})")
    return "; ".join(reasons) or None


@dataclass(frozen=True)
class _Sample:
    """One side's observations of a specialization: how many, their mean and the sum of their
    squared deviations (a handful of values: plain Python is faster than NumPy here)."""

    n: int
    mean: float
    ss: float


def _sample(values: list[float]) -> _Sample:
    n = len(values)
    if n == 0:
        return _Sample(0, math.nan, math.nan)
    mean = math.fsum(values) / n
    return _Sample(n, mean, math.fsum((v - mean) ** 2 for v in values))


@dataclass
class _Tested:
    """A specialization with measurements on both sides, on its way to a verdict."""

    key: tuple[str, str]
    fields: dict[str, Any]
    base: _Sample
    head: _Sample
    base_runs: int
    head_runs: int
    untrusted: str | None
    history: tuple[float, float] | None

    @property
    def d(self) -> float:
        return self.head.mean - self.base.mean

    @property
    def n_factor(self) -> float:
        """1/m + 1/n: what turns a per-observation variance into the variance of d."""
        return 1 / self.base.n + 1 / self.head.n

    def sample_variance(self) -> tuple[float, float]:
        """Pooled sample variance of both sides' observations and its degrees of freedom."""
        df = self.base.n + self.head.n - 2
        if df <= 0:
            return math.nan, 0.0
        return (self.base.ss + self.head.ss) / df, float(df)


def _observations(entries: Sequence[_Entry], metric: str) -> list[float]:
    """ln(metric) of every round of every run (a run without rounds: its own value)."""
    out: list[float] = []
    for e in entries:
        rounds = [getattr(r, metric) for r in e.spec.rounds]
        values = [v for v in rounds if v > 0] or [float(getattr(e.spec, metric) or 0.0)]
        out.extend(math.log(v) for v in values if 0 < v < math.inf)
    return out


def _pair(key: tuple[str, str], base: list[_Entry], head: list[_Entry],
          history: Mapping[tuple[str, str], Any] | None, choice: str | None = None) -> _Tested | SpecComparison:
    """Pairing: both sides' observations of one specialization, or the row that ends it."""
    b, h = base[0].spec, head[0].spec
    common: dict[str, Any] = {
        "algorithm": key[0], "name": key[1],
        "base_source": ", ".join(e.results.source for e in base),
        "head_source": ", ".join(e.results.source for e in head),
        "base_noise_timeout": any(e.spec.noise_timeout for e in base),
        "head_noise_timeout": any(e.spec.noise_timeout for e in head),
        "base_noise": b.noise_percent / 100 if b.noise_percent is not None else None,
        "head_noise": h.noise_percent / 100 if h.noise_percent is not None else None,
    }
    failed = [(side, e.spec) for side, es in (("base", base), ("head", head)) for e in es if e.spec.failed]
    if failed:
        which = " and ".join(dict.fromkeys(side for side, _ in failed))
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"failed in {which}: {failed[0][1].error or ''}",
                              **common)
    metric = _metric_of(base, head, choice)
    if metric is None:
        wanted = by_name(choice).name if choice else "bytes_per_second, items_per_second and gpu_seconds_per_call"
        return SpecComparison(verdict=Verdict.INCONCLUSIVE,
                              reason=f"no positive value on both sides ({wanted})", **common)
    bo, ho = _sample(_observations(base, metric)), _sample(_observations(head, metric))
    if bo.n == 0 or ho.n == 0:
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"no finite positive {metric}", **common)
    if not abs(ho.mean - bo.mean) < MAX_LOG_CHANGE:
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason="change out of range: head/base is beyond "
                              f"e^±{MAX_LOG_CHANGE:g} (a broken measurement on one side)", **common)
    fields = {**common, "metric": metric, "base_value": math.exp(bo.mean), "head_value": math.exp(ho.mean),
              "change": math.expm1(ho.mean - bo.mean), "base_observations": bo.n, "head_observations": ho.n}
    untrusted = _untrusted([e.spec for e in base], [e.spec for e in head])
    return _Tested(key, fields, bo, ho, len(base), len(head), untrusted,
                   _history(history.get(key)) if history else None)


def _metric_of(base: Sequence[_Entry], head: Sequence[_Entry], choice: str | None = None) -> str | None:
    """The field compared: `choice` (a ``--metric`` choice) where every run of both sides has a
    positive value of it; without a choice bytes/s, then items/s, then GPU time per call (a
    benchmark that declares neither items nor bytes is compared on time)."""
    candidates = (by_name(choice).name,) if choice else ("bytes_per_second", "items_per_second",
                                                          "gpu_seconds_per_call")
    for metric in candidates:
        if all((getattr(e.spec, metric) or 0) > 0 for e in (*base, *head)):
            return metric
    return None


def _better(metric: str | None) -> float:
    """+1 where higher is better (throughput), -1 where lower is (time): d times it is the
    change on the scale where up is good."""
    return -1.0 if metric is not None and METRICS[metric].higher_is_better is False else 1.0


@dataclass(frozen=True)
class _Noise:
    """The noise model of the tested specializations: SE of d and its degrees of freedom."""

    se: np.ndarray
    df: np.ndarray
    source: list[str]


def _noise(tested: Sequence[_Tested]) -> _Noise:
    """Noise model: sample variances of rounds and repeats, moderated across the suite; history's
    run-to-run variance instead where it is larger."""
    variances = [t.sample_variance() for t in tested]
    s_sq = np.array([v for v, _ in variances])
    df = np.array([f for _, f in variances])
    trusted = np.array([t.untrusted is None for t in tested], dtype=bool)
    prior = stats.fit_prior(s_sq[trusted], df[trusted]) if trusted.any() else None
    post, post_df = stats.moderated_variance(s_sq, df, prior)
    n_factor = np.array([t.n_factor for t in tested])
    se = np.sqrt(post * n_factor)
    moderated = ", moderated" if prior else ""
    source = [f"{t.base.n}+{t.head.n} rounds/runs{moderated}" for t in tested]
    for i, t in enumerate(tested):
        if t.history is not None:
            cv, hdf = t.history
            h_se = cv * math.sqrt(1 / t.base_runs + 1 / t.head_runs)
            if not np.isfinite(se[i]) or h_se > se[i]:
                se[i], post_df[i], source[i] = h_se, hdf, f"history ({hdf:.0f} df)"
    return _Noise(se, post_df, source)


def compare_runs(
    base: Sequence[Results],
    head: Sequence[Results],
    *,
    threshold: float = stats.DEFAULT_THRESHOLD,
    alpha: float = stats.DEFAULT_ALPHA,
    run_to_run_cv: Mapping[tuple[str, str], Any] | None = None,
    suite_shift_limit: float = DEFAULT_SUITE_SHIFT_LIMIT,
    metric: str | None = None,
    allow_mismatch: bool = False,
    strict_environment: bool = False,
) -> Comparison:
    """Compare base and head, matched by (algorithm, specialization name).

    Each side is one or more results files; a specialization found in several files of a side
    is measured repeatedly and all its rounds are pooled. `threshold`: the smallest change (a
    fraction of throughput) that matters; `alpha`: the false-discovery rate and the level of
    the equivalence test; `run_to_run_cv`: per (algorithm, name), history's run-to-run CV of a
    run's value, or (CV, degrees of freedom), used where larger than what the runs show;
    `suite_shift_limit`: a suite-wide shift beyond it counts for the exit code; `metric`: a
    ``--metric`` choice (``time``, ``bytes``, ``items``) compared for every specialization, or
    None: bytes/s where both sides declare bytes, else items/s, else GPU time per call (lower is
    better: a regression is the time going up).

    Comparability is decided first (`compare.comparability`): sides that measure different
    things (size, custom settings, GPU model, timer, metric, hot/cold) raise NotComparableError
    (exit 2, one line per difference) unless `allow_mismatch`, which compares them with every
    affected row marked ``not_comparable`` and left inconclusive. Another physical GPU of the
    same model or another driver is a warning, blocking too with `strict_environment`.

    Raises UsageError for bad parameters, NothingToCompareError when the sides share no
    specialization, NotComparableError as above."""
    with cyclic_gc_paused():  # tens of thousands of small objects, none in a cycle
        return _compare_runs(base, head, threshold=threshold, alpha=alpha, run_to_run_cv=run_to_run_cv,
                             suite_shift_limit=suite_shift_limit, metric=metric, allow_mismatch=allow_mismatch,
                             strict_environment=strict_environment)


def _compare_runs(base: Sequence[Results], head: Sequence[Results], *, threshold: float, alpha: float,
                  run_to_run_cv: Mapping[tuple[str, str], Any] | None, suite_shift_limit: float,
                  metric: str | None = None, allow_mismatch: bool = False,
                  strict_environment: bool = False) -> Comparison:
    if not (isinstance(threshold, int | float) and 0 < threshold < 1):
        raise UsageError(f"--threshold must be a fraction between 0 and 1 (0.005 = 0.5 %), got {threshold}")
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise UsageError(f"--alpha must be between 0 and 1, got {alpha}")
    if not (isinstance(suite_shift_limit, int | float) and suite_shift_limit >= 0):
        raise UsageError(f"--suite-shift-limit must be a fraction of at least 0, got {suite_shift_limit}")
    if metric is not None and metric not in CHOICES:
        raise UsageError(f"--metric must be one of {', '.join(CHOICES)}, got {metric!r}")
    b_index, h_index = _index(base), _index(head)
    common = [k for k in b_index if k in h_index]
    if not common:
        raise NothingToCompareError(
            "nothing to compare: base and head share no specialization (matched by algorithm and name); "
            f"base has {_describe(base, b_index)}; head has {_describe(head, h_index)}"
        )
    comparability = assess(base, head, {k: ([e.spec for e in b_index[k]], [e.spec for e in h_index[k]])
                                        for k in common}, metric=metric, strict=strict_environment)
    if not comparability.comparable and not allow_mismatch:
        raise NotComparableError(comparability)
    delta = stats.log_threshold(threshold)
    rows: dict[tuple[str, str], SpecComparison] = {}
    tested: list[_Tested] = []
    for key in common:
        paired = _pair(key, b_index[key], h_index[key], run_to_run_cv, metric)
        blockers = tuple(d.describe() for d in comparability.blockers_of(key))
        if isinstance(paired, SpecComparison):
            rows[key] = replace(paired, not_comparable=blockers) if blockers else paired
        elif blockers:
            rows[key] = _not_comparable(paired, blockers)
        else:
            tested.append(paired)
    finding, widen = (_judge(tested, rows, delta, threshold, alpha, suite_shift_limit, base, head) if tested
                      else (None, 1.0))

    ordered: list[SpecComparison] = []
    for key, entries in b_index.items():
        ordered.append(rows[key] if key in rows
                       else _one_sided(key, entries[0], Verdict.REMOVED, "only in base", metric))
    for key, entries in h_index.items():
        if key not in b_index:
            ordered.append(_one_sided(key, entries[0], Verdict.ADDED, "only in head", metric))

    compared = [r for r in common if rows[r].metric is not None and rows[r].ratio is not None
                and rows[r].comparable]
    lower_is_better = bool(compared) and all(_better(rows[k].metric) < 0 for k in compared)
    # One direction for the geometric mean: head/base of the metric where every row is a time,
    # else of throughput (a time row enters as base/head, its speed).
    ratios = [r ** (_better(rows[k].metric) if not lower_is_better else 1.0)
              for k in compared if (r := rows[k].ratio) is not None]
    summary = Summary(
        counts=count_verdicts(ordered),
        compared=len(common),
        geomean_ratio=stats.geometric_mean(ratios),
        higher_is_better=not lower_is_better,
        not_comparable=sum(1 for k in common if not rows[k].comparable),
    )
    method = Method(threshold=float(threshold), alpha=float(alpha), description=METHOD_DESCRIPTION,
                    suite_shift_limit=float(suite_shift_limit), standard_error_scale=float(widen),
                    metric=metric)
    warnings = [f"not comparable (--allow-mismatch: these rows are not judged): {line}"
                for line in comparability.lines()]
    warnings += [f"{d.describe()} (the same measurement on another machine; --strict-environment refuses it)"
                 for d in comparability.warnings]
    warnings += _all_context_warnings(base, head)
    if finding is not None and finding.detected:
        warnings.append(finding.describe())
    if widen > WIDEN_WARNING:
        warnings.append(f"the changes of this suite spread {widen:.2f}x wider than the rounds' spread predicts: "
                        f"standard errors widened {widen:.2f}x (empirical null); more rounds or repeats, or history, "
                        "would sharpen the verdicts")
    return Comparison(
        rows=tuple(ordered),
        warnings=warnings,
        summary=summary,
        method=method,
        base_sources=tuple(r.source for r in base),
        head_sources=tuple(r.source for r in head),
        context={"base": _side_context(base), "head": _side_context(head)},
        suite_shift=finding,
        comparability=comparability,
    )


def _not_comparable(t: _Tested, blockers: tuple[str, ...]) -> SpecComparison:
    """A row whose sides measure different things: its values and change, no verdict."""
    return SpecComparison(verdict=Verdict.INCONCLUSIVE, not_comparable=blockers,
                          reason="not comparable: " + "; ".join(blockers), **t.fields)


def _side_conditions(side: Sequence[Results]) -> tuple[float | None, float | None]:
    """Mean GPU temperature at the start of the specializations and mean SM clock of a side."""
    temps = [s.gpu_temp_start for r in side for s in r.specializations if s.gpu_temp_start is not None]
    mhz = [float(s.sm_clock.average_mhz) for r in side for s in r.specializations
           if s.sm_clock is not None and s.sm_clock.average_mhz is not None]
    return (float(np.mean(temps)) if temps else None, float(np.mean(mhz)) if mhz else None)


def _judge(tested: list[_Tested], rows: dict[tuple[str, str], SpecComparison], delta: float, threshold: float,
           alpha: float, suite_shift_limit: float, base: Sequence[Results],
           head: Sequence[Results]) -> tuple[SuiteFinding | None, float]:
    """Test and decision rules: every tested specialization gets its verdict in `rows`."""
    noise = _noise(tested)
    # The sign that makes each change "up is better" (+1 for a throughput, -1 for a time): the
    # suite's shift and its empirical null are taken on that common scale; each row's change,
    # interval and text stay in its own metric (a time going up is +, and a regression).
    better = np.array([_better(t.fields["metric"]) for t in tested])
    d = np.array([t.d for t in tested])
    trusted = np.array([t.untrusted is None for t in tested], dtype=bool)
    have_noise = np.isfinite(noise.se) & (noise.df > 0)
    family = trusted & have_noise
    shift = stats.suite_shift((better * d)[family], delta)
    finding = None
    se = noise.se.copy()
    centre = 0.0  # on the up-is-better scale
    if shift is not None:
        centre = shift.shift
        se = stats.centred_standard_errors(se, family)
        times = bool(family.any()) and bool(np.all(better[family] < 0))  # every row a time: say it in time
        finding = SuiteFinding(change=math.expm1(-shift.shift if times else shift.shift),
                               specializations=shift.count,
                               same_direction=shift.same_direction, detected=shift.detected,
                               limit=suite_shift_limit, base_conditions=_side_conditions(base),
                               head_conditions=_side_conditions(head),
                               higher_is_better=not times)
    gain = better * d - centre  # relative to the suite, up is better
    rel = better * gain  # the same in each row's own metric
    widen = stats.empirical_null_scale(gain[family], se[family], noise.df[family])
    se = se * widen
    p_zero = stats.t_test_p(rel, se, noise.df)
    p_equiv = stats.equivalence_p(rel, se, noise.df, delta)
    low, high = stats.change_interval(rel, se, noise.df, alpha)
    mdc = stats.min_detectable_change(se, noise.df, alpha, int(family.sum()), delta)
    q = np.full(d.shape, np.nan)
    q[family] = stats.benjamini_hochberg(p_zero[family])
    level = f"{(1 - 2 * alpha) * 100:g} % interval"
    thr = f"±{threshold * 100:g} % threshold"
    for i, t in enumerate(tested):
        f = t.fields
        against = f" relative to the suite's {_pct(math.expm1(better[i] * centre))}" if shift is not None else ""
        change = _pct(math.expm1(rel[i]))
        common = dict(p_value=float(p_zero[i]), q_value=float(q[i]) if family[i] else None,
                      p_equivalence=float(p_equiv[i]), standard_error=float(se[i]),
                      degrees_of_freedom=float(noise.df[i]),
                      change_low=float(low[i]), change_high=float(high[i]), min_detectable_change=float(mdc[i]),
                      relative_change=float(math.expm1(rel[i])) if shift is not None else None,
                      run_to_run_cv=float(se[i] / math.sqrt(t.n_factor)),
                      run_to_run_source=noise.source[i],
                      test=f"t-test on ln(head/base){against}, {noise.df[i]:.1f} df", **f)
        stats_text = (f"t-test p={_p(p_zero[i])}" + (f", BH q={_p(q[i])}" if family[i] else "")
                      + f", TOST p={_p(p_equiv[i])}, σ={se[i] * 100:.3f} % ({noise.df[i]:.1f} df, {noise.source[i]}), "
                      f"smallest detectable {mdc[i] * 100:.2f} %")
        beyond = abs(rel[i]) >= delta
        if t.untrusted:
            verdict, reason = Verdict.INCONCLUSIVE, f"{t.untrusted}: change {change} not trusted; {stats_text}"
        elif not have_noise[i]:
            verdict = Verdict.INCONCLUSIVE
            reason = (f"no run-to-run variability: change {change} cannot be judged (one run without rounds on "
                      "each side; measure with --rounds 2 or more, give repeated runs, or history)")
        elif beyond and q[i] <= alpha:
            verdict = Verdict.REGRESSION if gain[i] < 0 else Verdict.IMPROVEMENT
            reason = f"change {change}{against} beyond the {thr} and significant (BH q <= α={alpha:g}); {stats_text}"
        elif p_equiv[i] <= alpha:
            verdict = Verdict.UNCHANGED
            reason = f"{level} [{_pct(low[i])}, {_pct(high[i])}]{against} within the {thr}; {stats_text}"
        elif beyond:
            verdict = Verdict.INCONCLUSIVE
            reason = f"too noisy to tell: change {change}{against} beyond the {thr} but not significant; {stats_text}"
        else:
            verdict = Verdict.INCONCLUSIVE
            reason = f"too noisy to tell: {level} [{_pct(low[i])}, {_pct(high[i])}] straddles the {thr}; {stats_text}"
        rows[t.key] = SpecComparison(verdict=verdict, reason=reason, **common)
    return finding, widen


def _one_sided(key: tuple[str, str], entry: _Entry, verdict: Verdict, reason: str,
               choice: str | None = None) -> SpecComparison:
    """A specialization found on one side only: its value in the chosen metric, else its default
    one (`primbench.metrics.choose`)."""
    spec = entry.spec
    metric = by_name(choice).name if choice else choose(spec.bytes_per_second, spec.items_per_second).name
    value = getattr(spec, metric)
    noise = spec.noise_percent / 100 if spec.noise_percent is not None else None
    side = "base" if verdict is Verdict.REMOVED else "head"
    fields: dict[str, Any] = {f"{side}_value": value, f"{side}_noise": noise,
                              f"{side}_noise_timeout": spec.noise_timeout, f"{side}_source": entry.results.source}
    return SpecComparison(
        algorithm=key[0], name=key[1], verdict=verdict,
        reason=reason + (f" (failed: {spec.error})" if spec.failed else ""),
        metric=metric if value else None,
        **fields,
    )
