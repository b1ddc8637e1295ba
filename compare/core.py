"""Comparing two sides (base, head) of results: matching, context checks, verdicts. Never prints.

`compare_runs` is the one entry point (the CLI and the history layer call it);
`load_side` reads a side from a results.json or a directory of them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from primbench.compare import priors, stats
from primbench.compare.comparability import Comparability, NotComparableError, assess, by_algorithm
from primbench.compare.model import (
    Comparison,
    Method,
    ReasonKind,
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
from primbench.rounds import measured_rounds

METHOD_DESCRIPTION = (
    "a run's value: the mean of ln(metric) over its measured rounds (from 4 rounds on, the first is a warm-up "
    "and left out; a run without rounds is its own value; the metric is bytes/s, items/s or GPU time per call: "
    "--metric, else bytes/s where both sides declare bytes, then items/s, then time); d = mean over runs(head) - "
    "mean over runs(base); variance of d, per side: with one run, its rounds' variance (moderated robustly "
    "across the suite, limma's squeezeVar with winsorized moments and outliers kept; widened for the rounds' "
    "lag-1 correlation where the suite shows one) over their count plus the "
    "measured prior of what a process adds beyond its rounds (primbench.compare.priors, by size class; the "
    "whole run's for a run without rounds), or history's run-to-run variance in its place; with 2+ runs, the "
    "runs' spread moderated toward that prediction (the run is the unit); plus the prior of what all kernels "
    "of a process share (the suite shift); degrees of freedom by Welch-Satterthwaite; with 5+ specializations "
    "the relative test weighs d less the suite's median change (up is better: -d for time) against the row's "
    "own variance, the suite's median is tested against the shared variance, and with 10+ the standard errors "
    "are widened when the changes spread wider than predicted (empirical null); regression/improvement when "
    "|d| >= ln(1+threshold) and the deciding t-test is significant after Benjamini-Hochberg, the row moving "
    "that way: with a suite that did not shift, the relative test at alpha/2 (the suite's shift takes the other "
    "alpha/2); where it shifted beyond --suite-shift-limit, or without a suite, the absolute test (at alpha/2, "
    "or alpha without a suite); inconclusive when the smallest detectable change (80 % power, "
    "BH's first step) is above --max-detectable; unchanged when the TOST interval lies within the threshold or "
    "the smallest detectable change, whichever is larger, and no suite-wide shift was found; otherwise, after a "
    "noise timeout or a throttled SM clock, inconclusive"
)

#: A significant suite-wide shift larger than this (a fraction) counts as a regression or
#: improvement of its own for the exit code (``--suite-shift-limit``), and lets the rows that moved
#: with it count on their absolute tests. 1 %: on the evaluation's H200 (not the tuning data's),
#: identical processes moved whole suites by 0.3-0.4 % at 64 MiB and 2-2.5 % at 4 MiB, beyond
#: the shared variance the tuning data had shown (tests/benchmarks/verdicts/README.md). Chosen
#: after the evaluation, so its effect there is in-sample (evaluate-after.txt).
DEFAULT_SUITE_SHIFT_LIMIT = 0.01
#: A row whose smallest detectable change is above this is inconclusive, "insensitive"
#: (``--max-detectable``): these runs could not have seen a change that size.
DEFAULT_MAX_DETECTABLE = 0.05
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
    """One side of a comparison: a results file (of any format `load_results` reads), ``-``
    (standard input), or every ``*.json`` directly in a directory (one per benchmark program)
    and every results CSV without a results.json beside it (`primbench.formats.cpp_csv.in_directory`),
    in name order. A JSON file in the directory that is no results document of any format (another
    tool's output) is skipped, with a note in `notes`; errors name the file and the field."""
    if str(path) == STDIN:
        import sys

        return [parse_results(sys.stdin.buffer.read(), "<stdin>")]
    p = Path(path)
    if p.is_dir():
        from primbench.formats import cpp_csv

        files = sorted(f for f in (*p.glob("*.json"), *p.glob("*.csv"))
                       if f.is_file() and (f.suffix != ".csv" or cpp_csv.in_directory(f)))
        if not files:
            raise ResultsFileError(str(p), None, "directory holds no *.json results files and no results CSV")
        out: list[Results] = []
        for f in files:
            try:
                out.append(load_results(f))
            except ResultsFileError:
                if f.suffix == ".csv" or not _not_results(f):
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


def _index(side: Sequence[Results], by_gpu: bool = False) -> dict[tuple[str, str], list[_Entry]]:
    """Entries by (algorithm, name); a specialization in several files of a side is a repeat.
    `by_gpu` (a side measured a specialization on several GPUs: ``--devices --replicate``): by
    (algorithm, ``name @ GPU``), so that each physical GPU's measurements are a row of their own,
    never a mix (`gpu_label`)."""
    out: dict[tuple[str, str], list[_Entry]] = {}
    for results in side:
        for i, spec in enumerate(results.specializations):
            name = f"{spec.name} @ {gpu_label(spec, results)}" if by_gpu else spec.name
            key = (_spec_algorithm(spec, results), name)
            out.setdefault(key, []).append(_Entry(spec, results, i))
    return out


def gpu_label(spec: Specialization, results: Results) -> str:
    """The physical GPU that measured `spec`: its ``gpu`` (results 4.8.0) or the file's GPU, by UUID,
    else serial, else index."""
    if spec.gpu is not None:
        return spec.gpu.key
    gpu = results.gpu
    return gpu.uuid or gpu.serial or gpu.pci_bus_id or gpu.name or "the GPU"


def replicated(side: Sequence[Results]) -> bool:
    """Whether a file of `side` measured one specialization on several GPUs (``--replicate``)."""
    for results in side:
        seen: set[str] = set()
        for spec in results.specializations:
            if spec.gpu is not None and spec.name in seen:
                return True
            seen.add(spec.name)
    return False


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
    for side, results in (("base", base), ("head", head)):
        if devices := results.devices:
            how = "every specialization on each" if results.settings.replicate is True else "sharded"
            out.append(f"{side} ran across {len(devices)} GPUs of one host (--devices, {how}): each specialization "
                       "is compared as measured on its own GPU")
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
class _Run:
    """One run of a specialization on one side: the mean of ln(metric) over its measured rounds
    (`primbench.rounds.measured_rounds`: the warm-up round left out), their sum of squared
    deviations and how many they are (1 for a run without rounds: its own value), and the sum of
    the products of successive deviations (their lag-1 autocovariance times the count)."""

    mean: float
    ss: float
    rounds: int
    lag: float = 0.0


def _run(entry: _Entry, metric: str) -> _Run | None:
    values = [v for v in (getattr(r, metric) for r in entry.spec.rounds) if v is not None and 0 < v < math.inf]
    logs = [math.log(v) for v in values[measured_rounds(len(values))]]
    if not logs:
        own = float(getattr(entry.spec, metric) or 0.0)
        if not 0 < own < math.inf:
            return None
        logs = [math.log(own)]
    mean = math.fsum(logs) / len(logs)
    dev = [v - mean for v in logs]
    return _Run(mean, math.fsum(e * e for e in dev), len(logs), math.fsum(a * b for a, b in itertools.pairwise(dev)))


@dataclass
class _Tested:
    """A specialization with measurements on both sides, on its way to a verdict."""

    key: tuple[str, str]
    fields: dict[str, Any]
    base: list[_Run]
    head: list[_Run]
    untrusted: str | None
    history: tuple[float, float] | None
    klass: priors.SizeClass

    @staticmethod
    def side_mean(runs: list[_Run]) -> float:
        return math.fsum(r.mean for r in runs) / len(runs)

    @property
    def d(self) -> float:
        return self.side_mean(self.head) - self.side_mean(self.base)

    @staticmethod
    def within(runs: list[_Run]) -> tuple[float, float]:
        """The side's pooled variance between rounds and its df (nan, 0 without rounds)."""
        df = sum(r.rounds - 1 for r in runs)
        return (math.fsum(r.ss for r in runs) / df, float(df)) if df > 0 else (math.nan, 0.0)


def _size(entry: _Entry) -> float | None:
    """The bytes a specialization worked on: its run's --size, else the bytes it moved per call."""
    size = entry.results.settings.size
    if isinstance(size, int | float) and not isinstance(size, bool) and size > 0:
        return float(size)
    spec = entry.spec
    if spec.bytes_per_second and spec.gpu_seconds_per_call:
        return spec.bytes_per_second * spec.gpu_seconds_per_call
    return None


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
    skipped = [(side, e.spec) for side, es in (("base", base), ("head", head)) for e in es
               if e.spec.skipped is not None]
    if skipped:  # state.skip: not measured, and not a failure either
        which = " and ".join(dict.fromkeys(side for side, _ in skipped))
        return SpecComparison(verdict=Verdict.SKIPPED, reason=f"skipped in {which}: {skipped[0][1].skipped}",
                              reason_kind=ReasonKind.SKIPPED, **common)
    failed = [(side, e.spec) for side, es in (("base", base), ("head", head)) for e in es if e.spec.failed]
    if failed:
        which = " and ".join(dict.fromkeys(side for side, _ in failed))
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"failed in {which}: {failed[0][1].error or ''}",
                              reason_kind=ReasonKind.FAILED, **common)
    metric = _metric_of(base, head, choice)
    if metric is None:
        wanted = by_name(choice).name if choice else "bytes_per_second, items_per_second and gpu_seconds_per_call"
        return SpecComparison(verdict=Verdict.INCONCLUSIVE,
                              reason=f"no positive value on both sides ({wanted})", reason_kind=ReasonKind.NO_VALUE,
                              **common)
    bo = [r for e in base if (r := _run(e, metric)) is not None]
    ho = [r for e in head if (r := _run(e, metric)) is not None]
    if not bo or not ho:
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"no finite positive {metric}",
                              reason_kind=ReasonKind.NO_VALUE, **common)
    bm, hm = _Tested.side_mean(bo), _Tested.side_mean(ho)
    if not abs(hm - bm) < MAX_LOG_CHANGE:
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason="change out of range: head/base is beyond "
                              f"e^±{MAX_LOG_CHANGE:g} (a broken measurement on one side)",
                              reason_kind=ReasonKind.OUT_OF_RANGE, **common)
    fields = {**common, "metric": metric, "base_value": math.exp(bm), "head_value": math.exp(hm),
              "change": math.expm1(hm - bm), "base_observations": sum(r.rounds for r in bo),
              "head_observations": sum(r.rounds for r in ho)}
    untrusted = _untrusted([e.spec for e in base], [e.spec for e in head])
    if metric == "joules_per_call" and (short := _short_energy(base, head)):  # results 4.5.0
        untrusted = "; ".join(filter(None, (untrusted, short)))
    sizes = [z for e in (*base, *head) if (z := _size(e)) is not None]
    return _Tested(key, fields, bo, ho, untrusted, _history(history.get(key)) if history else None,
                   priors.size_class(min(sizes) if sizes else None))


def _short_energy(base: Sequence[_Entry], head: Sequence[_Entry]) -> str | None:
    """On ``--metric energy``: the sides whose rounds were too short for the energy counter."""
    sides = [side for side, es in (("base", base), ("head", head))
             if any(e.spec.energy is not None and e.spec.energy.rounds_too_short for e in es)]
    return f"rounds too short for the energy counter in {' and '.join(sides)}" if sides else None


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
    """The noise model of the tested specializations, on ln(metric): the variance of d that is
    the specialization's own (`own`: rounds and what a process adds beyond them) and the part
    every specialization of a side shares (`common`: a process's suite shift), each side's sum,
    with the degrees of freedom of each and the evidence they came from."""

    own: np.ndarray
    own_df: np.ndarray
    common: np.ndarray
    common_df: np.ndarray
    source: list[str]
    round_correlation: float = 0.0


def _side_terms(runs: list[_Run], within: float, within_df: float, klass: priors.SizeClass,
                history: tuple[float, float] | None) -> tuple[list[tuple[float, float]], tuple[float, float], str]:
    """One side's variance of its mean as independent terms (variance, df): its own (rounds, the
    process part, or the spread of its runs) and the shared one (common, df), and their source.

    Two or more runs on the side: the runs are the unit (Kalibera & Jones 2013): their spread
    estimates everything a run varies by, moderated toward what the priors and the rounds predict.
    One run: its rounds' variance over their count, plus the measured prior of what a process adds
    beyond its rounds (`primbench.compare.priors`), or history's run-to-run variance in its place;
    a run without rounds takes the prior of a whole run (`single`)."""
    n = len(runs)
    with_rounds = all(r.rounds >= 2 for r in runs) and within_df > 0
    prior = klass.rounds if with_rounds else klass.single
    rounds_part = within * math.fsum(1 / r.rounds for r in runs) / n / n if with_rounds else 0.0
    common = (prior.common / n, prior.common_df)
    if history is not None:  # history's CV of a run's value: everything but the shared part
        cv, hdf = history
        beyond = max(0.0, cv * cv - prior.common - (rounds_part * n if with_rounds else 0.0))
        terms = [(rounds_part, within_df)] if with_rounds else []
        return [*terms, (beyond / n, hdf)], common, f"history ({hdf:.0f} df)"
    if n >= 2:
        means = [r.mean for r in runs]
        m = math.fsum(means) / n
        spread = math.fsum((x - m) ** 2 for x in means) / (n - 1)
        predicted = prior.process + prior.common + rounds_part * n
        pooled = (prior.process_df * predicted + (n - 1) * spread) / (prior.process_df + n - 1)
        own = max(pooled - prior.common, rounds_part * n) / n
        return [(own, prior.process_df + n - 1)], common, f"{n} runs ({n - 1} df) with the {klass.name} prior"
    own_terms = [(prior.process, prior.process_df)]
    if with_rounds:
        own_terms.insert(0, (rounds_part, within_df))
        return own_terms, common, f"{runs[0].rounds} rounds + {klass.name} process prior"
    return own_terms, common, f"no rounds: {klass.name} prior of a run"


def _round_autocorrelation(tested: Sequence[_Tested]) -> float:
    """The suite's lag-1 correlation of successive rounds (`stats.round_autocorrelation`), pooled
    over every run of 3 or more rounds: 0 unless significantly positive."""
    runs = [r for t in tested for r in (*t.base, *t.head) if r.rounds >= 3]
    if not runs:
        return 0.0
    return stats.round_autocorrelation(math.fsum(r.lag for r in runs), math.fsum(r.ss for r in runs),
                                       [r.rounds for r in runs])


def _noise(tested: Sequence[_Tested]) -> _Noise:
    """Noise model: each side's round variance moderated across the suite (robustly), plus the
    measured priors (or history, or the spread of repeated runs) for what rounds do not see."""
    sides = [(t.within(t.base), t.within(t.head)) for t in tested]
    s_sq = np.array([v for pair in sides for v, _ in pair])
    df = np.array([f for pair in sides for _, f in pair])
    trusted = np.repeat(np.array([t.untrusted is None for t in tested], dtype=bool), 2)
    prior = stats.fit_prior(s_sq[trusted], df[trusted]) if trusted.any() else None
    post, post_df = stats.moderated_variance(s_sq, df, prior)
    rho = _round_autocorrelation([t for t in tested if t.untrusted is None])
    if rho > 0:  # the variance of a mean of correlated rounds is larger than s^2 / n
        counts = np.array([sum(r.rounds for r in runs) / len(runs) for t in tested for runs in (t.base, t.head)])
        post = post * stats.autocorrelation_inflation(rho, counts)
    n = len(tested)
    own, own_df, common, common_df = (np.zeros(n) for _ in range(4))
    source: list[str] = []
    for i, t in enumerate(tested):
        terms: list[tuple[float, float]] = []
        shared: list[tuple[float, float]] = []
        where = []
        for k, runs in ((2 * i, t.base), (2 * i + 1, t.head)):
            w, wdf = (float(post[k]), float(post_df[k])) if df[k] > 0 else (math.nan, 0.0)
            side, c, src = _side_terms(runs, w, wdf, t.klass, t.history)
            terms += side
            shared.append(c)
            where.append(src)
        own[i] = math.fsum(v for v, _ in terms)
        own_df[i] = stats.satterthwaite(terms)
        common[i] = math.fsum(v for v, _ in shared)
        common_df[i] = stats.satterthwaite(shared)
        src = where[0] if where[0] == where[1] else f"base {where[0]}, head {where[1]}"
        source.append(src + (", moderated" if prior is not None and df[2 * i] + df[2 * i + 1] > 0 else ""))
    return _Noise(own, own_df, common, common_df, source, rho)


def compare_runs(
    base: Sequence[Results],
    head: Sequence[Results],
    *,
    threshold: float = stats.DEFAULT_THRESHOLD,
    alpha: float = stats.DEFAULT_ALPHA,
    run_to_run_cv: Mapping[tuple[str, str], Any] | None = None,
    suite_shift_limit: float = DEFAULT_SUITE_SHIFT_LIMIT,
    metric: str | None = None,
    max_detectable: float = DEFAULT_MAX_DETECTABLE,
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
                             suite_shift_limit=suite_shift_limit, metric=metric, max_detectable=max_detectable,
                             allow_mismatch=allow_mismatch, strict_environment=strict_environment)


def _compare_runs(base: Sequence[Results], head: Sequence[Results], *, threshold: float, alpha: float,
                  run_to_run_cv: Mapping[tuple[str, str], Any] | None, suite_shift_limit: float,
                  metric: str | None = None, max_detectable: float = DEFAULT_MAX_DETECTABLE,
                  allow_mismatch: bool = False, strict_environment: bool = False) -> Comparison:
    _check_parameters(threshold, alpha, suite_shift_limit, max_detectable, metric)
    by_gpu = replicated(base) or replicated(head)
    b_index, h_index = _index(base, by_gpu), _index(head, by_gpu)
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
    finding, widen, insensitive, rho, gpu_shifts = _judge_by_process(
        tested, rows, b_index, h_index, delta, threshold, alpha, suite_shift_limit, base, head, max_detectable)

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
        compared=sum(1 for k in common if rows[k].verdict is not Verdict.SKIPPED),  # a skipped row compares nothing
        geomean_ratio=stats.geometric_mean(ratios),
        higher_is_better=not lower_is_better,
        not_comparable=sum(1 for k in common if not rows[k].comparable),
    )
    method = Method(threshold=float(threshold), alpha=float(alpha), description=METHOD_DESCRIPTION,
                    suite_shift_limit=float(suite_shift_limit), standard_error_scale=float(widen),
                    metric=metric, max_detectable=float(max_detectable), round_correlation=float(rho))
    warnings = _warnings(base, head, comparability, finding, tested, insensitive, max_detectable, rho, widen)
    warnings += gpu_shifts
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


def _judge_by_process(tested: list[_Tested], rows: dict[tuple[str, str], SpecComparison],
                      b_index: Mapping[tuple[str, str], list[_Entry]], h_index: Mapping[tuple[str, str], list[_Entry]],
                      delta: float, threshold: float, alpha: float, suite_shift_limit: float,
                      base: Sequence[Results], head: Sequence[Results], max_detectable: float,
                      ) -> tuple[SuiteFinding | None, float, int, float, list[str]]:
    """`_judge` once per suite of rows that one pair of processes measured. A ``--devices`` side
    (results 4.8.0) measured each GPU's specializations in a worker process of its own, whose
    shift (the part every kernel of a process shares) is that GPU's: each (base GPU, head GPU)
    pair is judged as a suite of its own, so a GPU that runs slower is its suite's shift, never
    a regression of its kernels against the others'. Returns the finding that counts (the
    largest detected shift, else the largest suite's), the widest widening, the insensitive
    rows, the largest correlation, and a warning for each other pair's detected shift."""
    if not tested:
        return None, 1.0, 0, 0.0, []
    if not any(r.devices for r in (*base, *head)):
        return (*_judge(tested, rows, delta, threshold, alpha, suite_shift_limit, base, head, max_detectable), [])
    groups: dict[tuple[str, str], list[_Tested]] = {}
    for t in tested:
        pair = tuple(", ".join(sorted({gpu_label(e.spec, e.results) for e in index[t.key]}))
                     for index in (b_index, h_index))
        groups.setdefault((pair[0], pair[1]), []).append(t)
    judged = [(pair, *_judge(group, rows, delta, threshold, alpha, suite_shift_limit, base, head, max_detectable))
              for pair, group in groups.items()]
    found = [(pair, f) for pair, f, *_ in judged if f is not None]
    detected = sorted(((p, f) for p, f in found if f.detected), key=lambda pf: -abs(pf[1].change))
    finding = (detected[0][1] if detected
               else max((f for _, f in found), key=lambda f: f.specializations, default=None))
    notes = [f"GPU {b} (base) against GPU {h} (head): {f.describe()}" for (b, h), f in detected[1:]]
    if detected and len(groups) > 1:
        (b, h), _ = detected[0]
        notes.insert(0, f"the suite-wide shift is that of GPU {b} (base) against GPU {h} (head): each pair of GPUs "
                        "(a worker process each) is judged as a suite of its own")
    return (finding, max(j[2] for j in judged), sum(j[3] for j in judged), max(j[4] for j in judged), notes)


def _check_parameters(threshold: float, alpha: float, suite_shift_limit: float, max_detectable: float,
                      metric: str | None) -> None:
    """`compare_runs`' parameters, each refused with a UsageError that says what it takes."""
    if not (isinstance(threshold, int | float) and 0 < threshold < 1):
        raise UsageError(f"--threshold must be a fraction between 0 and 1 (0.005 = 0.5 %), got {threshold}")
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise UsageError(f"--alpha must be between 0 and 1, got {alpha}")
    if not (isinstance(suite_shift_limit, int | float) and suite_shift_limit >= 0):
        raise UsageError(f"--suite-shift-limit must be a fraction of at least 0, got {suite_shift_limit}")
    if not (isinstance(max_detectable, int | float) and max_detectable > 0):
        raise UsageError(f"--max-detectable must be a fraction above 0 (0.05 = 5 %), got {max_detectable}")
    if metric is not None and metric not in CHOICES:
        raise UsageError(f"--metric must be one of {', '.join(CHOICES)}, got {metric!r}")


def _warnings(base: Sequence[Results], head: Sequence[Results], comparability: Comparability,
              finding: SuiteFinding | None, tested: Sequence[_Tested], insensitive: int, max_detectable: float,
              rho: float, widen: float) -> list[str]:
    """The comparison's warnings: what is not comparable, other machines, the contexts, the suite's
    shift, the rows judged on priors, the insensitive rows, correlated rounds and the widening."""
    warnings = [f"not comparable (--allow-mismatch: these rows are not judged): {line}"
                for line in comparability.lines()]
    warnings += [f"{d.describe()} (the same measurement on another machine; --strict-environment refuses it)"
                 for d in comparability.warnings]
    warnings += _all_context_warnings(base, head)
    if finding is not None and finding.detected:
        warnings.append(finding.describe())
    prior_only = [t for t in tested if any(r.rounds < 2 for r in (*t.base, *t.head)) and t.history is None]
    if prior_only:
        warnings.append(f"{len(prior_only)} of {len(tested)} specializations have a side without rounds (a C++ "
                        "primbench file, --rounds 1, or an older file): their run-to-run variation is the measured "
                        "prior of their size class (primbench.compare.priors), not their own; --rounds 4+ or history "
                        "would measure it")
    if insensitive:
        warnings.append(f"{insensitive} of {len(tested)} specializations could not have detected a change under "
                        f"{max_detectable * 100:g} % (--max-detectable): inconclusive")
    if rho > 0:
        warnings.append(f"successive rounds are correlated (lag-1 {rho:.2f}, pooled over the suite): the rounds' "
                        "variance of a mean is widened for it; a drift within the runs (temperature, clocks) is the "
                        "usual cause")
    if widen > WIDEN_WARNING:
        warnings.append(f"the changes of this suite spread {widen:.2f}x wider than the rounds' spread predicts: "
                        f"standard errors widened {widen:.2f}x (empirical null); more rounds or repeats, or history, "
                        "would sharpen the verdicts")
    return warnings


def _not_comparable(t: _Tested, blockers: tuple[str, ...]) -> SpecComparison:
    """A row whose sides measure different things: its values and change, no verdict."""
    return SpecComparison(verdict=Verdict.INCONCLUSIVE, not_comparable=blockers,
                          reason="not comparable: " + "; ".join(blockers), reason_kind=ReasonKind.NOT_COMPARABLE,
                          **t.fields)


def _side_conditions(side: Sequence[Results]) -> tuple[float | None, float | None]:
    """Mean GPU temperature at the start of the specializations and mean SM clock of a side."""
    temps = [s.gpu_temp_start for r in side for s in r.specializations if s.gpu_temp_start is not None]
    mhz = [float(s.sm_clock.average_mhz) for r in side for s in r.specializations
           if s.sm_clock is not None and s.sm_clock.average_mhz is not None]
    return (float(np.mean(temps)) if temps else None, float(np.mean(mhz)) if mhz else None)


def _prior_only_cap(rows: Sequence[_Tested]) -> float:
    """The most the empirical null may widen a suite whose every row is judged on the measured
    prior of a whole run (no rounds on a side, no history): as far as that prior's own uncertainty
    reaches (`stats.prior_upper_ratio`, 95 %), not `stats.WIDEN_MAX`. Such a prior measured the
    whole process-to-process variance, so a spread beyond its upper bound is more likely the
    suite's changes than noise the model missed. Any other suite: `stats.WIDEN_MAX`."""
    if not rows or not all(t.history is None and any(r.rounds < 2 for r in (*t.base, *t.head)) for t in rows):
        return stats.WIDEN_MAX
    bound = {k: stats.prior_upper_ratio(k.single.process_df) for k in {t.klass for t in rows}}
    return float(np.median([bound[t.klass] for t in rows]))


def _judge(tested: list[_Tested], rows: dict[tuple[str, str], SpecComparison], delta: float, threshold: float,
           alpha: float, suite_shift_limit: float, base: Sequence[Results],
           head: Sequence[Results],
           max_detectable: float = DEFAULT_MAX_DETECTABLE) -> tuple[SuiteFinding | None, float, int, float]:
    """Test and decision rules: every tested specialization gets its verdict in `rows`; returns the
    suite's finding, the empirical-null widening, how many rows were insensitive and the rounds'
    lag-1 correlation allowed for.

    Two tests per row. The *absolute* one weighs d against everything a run varies by, the part
    that all kernels of a process share included: it catches a change shared by the suite (a
    header, a compiler flag) as well as a kernel's own. With `SUITE_MIN` or more rows the
    *relative* one weighs d less the suite's median change against what is the kernel's own: it
    catches one kernel's change more sharply. The suite's median itself is tested against the
    shared part (what A/A suites show). A row is a regression or improvement when either test is
    significant after BH, beyond the threshold, and the row itself moved that way."""
    noise = _noise(tested)
    better = np.array([_better(t.fields["metric"]) for t in tested])
    d = np.array([t.d for t in tested])
    up = better * d  # up is better
    trusted = np.array([t.untrusted is None for t in tested], dtype=bool)
    own_se = np.sqrt(noise.own)
    family = trusted & np.isfinite(own_se) & (own_se > 0)
    k = int(family.sum())
    centred = k >= stats.SUITE_MIN
    finding = None
    centre = 0.0
    rel_se, rel_df = own_se, noise.own_df
    widen = 1.0
    suite_p = 1.0
    if centred:
        centre = float(np.median(up[family]))
        rel_se = stats.centred_standard_errors(own_se, family)
        widen = stats.empirical_null_scale(up[family] - centre, rel_se[family], rel_df[family])
        widen = min(widen, _prior_only_cap([t for t, f in zip(tested, family, strict=True) if f]))
        rel_se = rel_se * widen
        median_var = stats.median_variance(own_se[family] * widen)
        shared = float(np.median(noise.common[family]))
        suite_se = math.sqrt(shared + median_var)
        suite_df = float(np.median(noise.common_df[family]))
        suite_p = float(stats.t_test_p(np.array([centre]), np.array([suite_se]), np.array([suite_df]))[0])
        detected = abs(centre) >= delta and suite_p <= alpha / 2
        times = bool(np.all(better[family] < 0))  # every row a time: say it in time
        same = int(np.sum(np.sign(up[family]) == np.sign(centre))) if centre != 0 else 0
        suite_mdc = float(stats.min_detectable_change(np.array([suite_se]), np.array([suite_df]), alpha / 2, 1,
                                                      delta)[0])
        finding = SuiteFinding(change=math.expm1(-centre if times else centre), specializations=k,
                               same_direction=same, detected=detected, limit=suite_shift_limit,
                               base_conditions=_side_conditions(base), head_conditions=_side_conditions(head),
                               higher_is_better=not times, p_value=suite_p, standard_error=suite_se,
                               min_detectable_change=suite_mdc)
    # where the suite moved beyond the limit, the rows' spread about its median is no null: the
    # absolute tests take the rows' own variance unwidened
    suite_moved = finding is not None and finding.beyond_limit
    abs_own = own_se * (1.0 if suite_moved else widen)
    abs_se = np.sqrt(abs_own**2 + noise.common)
    abs_df = stats.satterthwaite_pair(abs_own**2, noise.own_df, noise.common, noise.common_df)
    gain = up - centre  # relative to the suite, up is better
    rel = better * gain  # the same in each row's own metric
    p_abs = stats.t_test_p(d, abs_se, abs_df)
    p_rel = stats.t_test_p(rel, rel_se, rel_df)
    # One exit-1 rate for an A/A suite: with a suite, its shift is tested at alpha/2 and the rows'
    # relative tests share the other alpha/2 (BH); a row's absolute test counts only once the
    # suite's shift is found (the omnibus gate), at alpha/2. Without a suite, BH at alpha on the
    # absolute tests.
    row_alpha = alpha / 2 if centred else alpha
    q_abs, q_rel = np.full(d.shape, np.nan), np.full(d.shape, np.nan)
    q_abs[family] = stats.benjamini_hochberg(p_abs[family])
    q_rel[family] = stats.benjamini_hochberg(p_rel[family])
    # Which test decides a row: relative to a suite that did not move (sharper: the shared part
    # cancels); absolute where there is no suite, or where the suite moved (then each row is
    # judged on its own change, and a row that stayed is not an "improvement" against the rest).
    relative = centred and not suite_moved
    se, df = (rel_se, rel_df) if relative else (abs_se, abs_df)
    test_d = rel if relative else d
    p_row, q_row = (p_rel, q_rel) if relative else (p_abs, q_abs)
    mdc = stats.min_detectable_change(se, df, row_alpha, max(1, k), delta)
    sensitivity = stats.min_detectable_change(se, df, row_alpha, max(1, k), 0.0)  # the noise's part alone
    margin = np.log1p(np.maximum(threshold, mdc))
    p_equiv = stats.equivalence_p(test_d, se, df, margin)
    # unchanged needs the row's own change within its absolute margin too: a row that moved with a
    # suite whose shift is not significant is not called unchanged
    abs_margin = np.log1p(np.maximum(threshold, stats.min_detectable_change(abs_se, abs_df, row_alpha,
                                                                            max(1, k), delta)))
    p_equiv = np.maximum(p_equiv, stats.equivalence_p(d, abs_se, abs_df, abs_margin))
    low, high = stats.change_interval(test_d, se, df, alpha)
    level = f"{(1 - 2 * alpha) * 100:g} % interval"
    insensitive = 0
    for i, t in enumerate(tested):
        f = t.fields
        against = f" relative to the suite's {_pct(math.expm1(better[i] * centre))}" if relative else ""
        change = _pct(math.expm1(d[i]))
        tested_row = bool(family[i])
        common = dict(p_value=float(p_row[i]) if tested_row else None,
                      q_value=float(q_row[i]) if tested_row else None,
                      absolute_p_value=float(p_abs[i]) if tested_row else None,
                      absolute_q_value=float(q_abs[i]) if tested_row else None,
                      p_equivalence=float(p_equiv[i]) if tested_row else None,
                      standard_error=float(se[i]) if tested_row else None,
                      degrees_of_freedom=float(df[i]) if tested_row else None,
                      change_low=float(low[i]) if tested_row else None,
                      change_high=float(high[i]) if tested_row else None,
                      min_detectable_change=float(mdc[i]) if tested_row else None,
                      relative_change=float(math.expm1(rel[i])) if centred else None,
                      run_to_run_cv=float(math.sqrt(noise.own[i] / 2)) if np.isfinite(noise.own[i]) else None,
                      run_to_run_source=noise.source[i],
                      test=(f"t-test on ln(head/base){against}, {df[i]:.1f} df" if tested_row else None), **f)
        stats_text = (f"t-test p={_p(p_row[i])}, BH q={_p(q_row[i])}"
                      + (f"; absolute p={_p(p_abs[i])}" if relative else "")
                      + f", σ={se[i] * 100:.3f} % ({df[i]:.1f} df, {noise.source[i]}), "
                      f"smallest detectable {mdc[i] * 100:.2f} % (80 % power)")
        worse = up[i] < 0
        flagged = abs(d[i]) >= delta and abs(test_d[i]) >= delta and q_row[i] <= row_alpha \
            and np.sign(test_d[i] * better[i]) == np.sign(up[i])
        if t.untrusted:
            verdict, reason = Verdict.INCONCLUSIVE, f"{t.untrusted}: change {change} not trusted; {stats_text}"
            kind = ReasonKind.UNTRUSTED
        elif not tested_row:
            verdict = Verdict.INCONCLUSIVE
            reason = f"no variability to weigh change {change} against"
            kind = ReasonKind.NO_VARIABILITY
        elif flagged:
            verdict = Verdict.REGRESSION if worse else Verdict.IMPROVEMENT
            which = f"relative to the suite's {_pct(math.expm1(better[i] * centre))}" if relative else \
                "with the suite-wide shift" if suite_moved else "absolute"
            reason = (f"change {change} beyond the ±{threshold * 100:g} % threshold and significant ({which}, "
                      f"q <= {row_alpha:g}); {stats_text}")
            kind = ReasonKind.SIGNIFICANT
        elif sensitivity[i] > max_detectable:
            insensitive += 1
            verdict = Verdict.INCONCLUSIVE
            reason = (f"insensitive: these runs could not have detected a change under {sensitivity[i] * 100:.1f} % "
                      f"(--max-detectable {max_detectable * 100:g} %); {stats_text}")
            kind = ReasonKind.INSENSITIVE
        elif p_equiv[i] <= alpha:
            verdict = Verdict.UNCHANGED
            within = max(threshold, mdc[i]) * 100
            reason = (f"{level} [{_pct(low[i])}, {_pct(high[i])}]{against} within ±{within:.2f} % "
                      f"(the threshold or the smallest detectable change); {stats_text}")
            kind = ReasonKind.EQUIVALENT
        elif relative and abs(d[i]) >= delta and abs(test_d[i]) < delta:
            verdict = Verdict.INCONCLUSIVE
            suite = _pct(math.expm1(better[i] * centre))
            why_not = (f"within --suite-shift-limit {suite_shift_limit * 100:g} %" if finding is not None
                       and finding.detected else "not significant against what processes share")
            reason = f"moved with the suite: change {change}, the suite's shift {suite} {why_not}; {stats_text}"
            kind = ReasonKind.MOVED_WITH_SUITE
        else:
            verdict = Verdict.INCONCLUSIVE
            reason = f"too noisy to tell: change {change}{against} not significant, interval [{_pct(low[i])}, " \
                     f"{_pct(high[i])}] wider than ±{max(threshold, mdc[i]) * 100:.2f} %; {stats_text}"
            kind = ReasonKind.TOO_NOISY
        rows[t.key] = SpecComparison(verdict=verdict, reason=reason, reason_kind=kind, **common)
    return finding, widen, insensitive, noise.round_correlation


def _one_sided(key: tuple[str, str], entry: _Entry, verdict: Verdict, reason: str,
               choice: str | None = None) -> SpecComparison:
    """A specialization found on one side only: its value in the chosen metric, else its default
    one (`primbench.metrics.choose`)."""
    spec = entry.spec
    if spec.skipped is not None:  # skipped where it exists: says so, neither added nor removed work
        side = "base" if verdict is Verdict.REMOVED else "head"
        return SpecComparison(algorithm=key[0], name=key[1], verdict=Verdict.SKIPPED,
                              reason=f"skipped in {side} ({reason}): {spec.skipped}", reason_kind=ReasonKind.SKIPPED,
                              base_source=entry.results.source if side == "base" else None,
                              head_source=entry.results.source if side == "head" else None)
    metric = by_name(choice).name if choice else choose(spec.bytes_per_second, spec.items_per_second).name
    value = getattr(spec, metric)
    noise = spec.noise_percent / 100 if spec.noise_percent is not None else None
    side = "base" if verdict is Verdict.REMOVED else "head"
    fields: dict[str, Any] = {f"{side}_value": value, f"{side}_noise": noise,
                              f"{side}_noise_timeout": spec.noise_timeout, f"{side}_source": entry.results.source}
    return SpecComparison(
        algorithm=key[0], name=key[1], verdict=verdict,
        reason=reason + (f" (failed: {spec.error})" if spec.failed else ""),
        reason_kind=ReasonKind.FAILED if spec.failed else ReasonKind.ONE_SIDED,
        metric=metric if value else None,
        **fields,
    )
