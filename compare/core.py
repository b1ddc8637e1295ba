"""Comparing two sides (base, head) of results: matching, context checks, verdicts. Never prints.

`compare_runs` is the one entry point (the CLI and the history layer call it);
`load_side` reads a side from a results.json or a directory of them.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import numpy as np

from primbench.compare import priors, stats
from primbench.compare.clock import shrunk_clock_responses, within_files
from primbench.compare.comparability import Comparability, NotComparableError, assess, by_algorithm
from primbench.compare.model import (
    LATER_FIELDS,
    LATER_REASON,
    LATER_STATISTICS,
    ROW_DEFAULTS,
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
    "a run's value: the mean of ln(metric) over its measured rounds (from 4 rounds on, the first is a warm-up and "
    "left out; a run without rounds is its own value; the metric is bytes/s, items/s or GPU time per call: "
    "--metric, else bytes/s where both sides declare bytes, then items/s, then time); d = mean over runs(head) - "
    "mean over runs(base); variance of d, per side: with one run, its rounds' variance (moderated robustly across "
    "the suite, limma's squeezeVar with winsorized moments and outliers kept; widened for the rounds' lag-1 "
    "correlation where the suite shows one) over their count plus the measured prior of what a process adds beyond "
    "its rounds (primbench.compare.priors, by size class; the whole run's for a run without rounds), or history's "
    "run-to-run variance in its place (over what the runs predict for a file, moderated across the suite); "
    "with 2+ runs, the runs' spread moderated toward that prediction (the run is "
    "the unit), or, where the side's runs (separate files, or the worker processes of --processes files) line up "
    "across 5+ specializations, each one's spread about the suite (every run's mean over the specializations "
    "taken out) moderated across the suite (squeezeVar on the spread over that prediction), plus what the sides' "
    "SM clocks apart add (kernels answer the clock unequally: SD 0.5 of its change about the suite's), or, where "
    "each side has 2+ files whose workers' clocks spread 0.35 % or more within a file (or history measured it), "
    "each kernel's own answer to the clock (the slope of its workers' means on their clocks within each file, "
    "shrunk toward the suite's): "
    "every run moved to its side's mean clock, the change corrected for the clocks apart, the slope's variance "
    "carried; plus "
    "the prior of what all kernels of a process share (the suite shift); degrees of freedom by "
    "Welch-Satterthwaite; with 5+ specializations the relative test weighs d less the suite's centre (the change "
    "most rows share: the densest point of the rows' changes, each spread over twice its own standard error; the "
    "median above 64 rows; up is better: -d for time) against the row's own variance, the suite's centre is tested "
    "against the shared variance, and with 10+ the standard errors are widened when the changes spread wider than "
    "predicted (empirical null); regression/improvement when |d| >= ln(1+threshold) and the deciding t-test is "
    "significant after Benjamini-Hochberg, the row moving that way: with a suite that did not shift, the relative "
    "test at alpha/2 (the suite's shift takes the other alpha/2); where it shifted beyond --suite-shift-limit, or "
    "without a suite, the absolute test (at alpha/2, or alpha without a suite); inconclusive when the smallest "
    "detectable change (80 % power, BH's first step) is above --max-detectable; unchanged when the TOST interval "
    "lies within the threshold or the smallest detectable change, whichever is larger, and no suite-wide shift was "
    "found; otherwise, after a noise timeout in a run without rounds or a throttled SM clock, inconclusive (a run "
    "of rounds that ended on the noise timeout is judged on its rounds' spread, and marked)"
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
    """`_load_side`, each file of a ``--processes`` run split into one run per worker process
    (`Results.per_process`): the process is the unit of replication, not the round."""
    return [part for results in _load_side(path, notes) for part in results.per_process()]


def _load_side(path: str | Path, notes: list[str] | None = None) -> list[Results]:
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
                out.append(load_results(f, keep_written=False))
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
    return [load_results(p, keep_written=False)]


# --------------------------------------------------------------------------- matching


class _Entry(NamedTuple):
    """A specialization of a side, the file it is in and its place there."""

    spec: Specialization
    results: Results
    position: int


def _index(side: Sequence[Results], by_gpu: bool = False) -> dict[tuple[str, str], list[_Entry]]:
    """Entries by (algorithm, name); a specialization in several files of a side is a repeat.
    `by_gpu` (a side measured a specialization on several GPUs: ``--devices --replicate``): by
    (algorithm, ``name @ GPU``), so that each physical GPU's measurements are a row of their own,
    never a mix (`gpu_label`)."""
    out: dict[tuple[str, str], list[_Entry]] = {}
    new_entry = tuple.__new__
    for results in side:
        default = results.algorithm
        specs = results.specializations
        if not by_gpu and not out:  # a side's first file: its entries at once, where no key repeats
            # Specialization.algorithm, without a property call a row
            keys = list(zip([(a if type(a := s.meta.get("algo", "")) is str else str(a)) or default for s in specs],
                            map(_NAME, specs), strict=True))
            made = map(new_entry, itertools.repeat(_Entry), zip(specs, itertools.repeat(results), itertools.count()))
            first = dict(zip(keys, map(list, zip(made)), strict=True))  # each entry in a list of its own
            if len(first) == len(keys):
                out = first
                continue
        for i, spec in enumerate(specs):
            algo = spec.meta.get("algo", "")  # Specialization.algorithm, without a property call a row
            algo = (algo if type(algo) is str else str(algo)) or default
            key = (algo, f"{spec.name} @ {gpu_label(spec, results)}" if by_gpu else spec.name)
            entry = new_entry(_Entry, (spec, results, i))  # _Entry(spec, results, i) without its Python __new__
            entries = out.get(key)
            if entries is None:
                out[key] = [entry]
            else:
                entries.append(entry)
    return out


def gpu_label(spec: Specialization, results: Results) -> str:
    """The physical GPU that measured `spec`: its ``gpu`` (results 4.8.0) or the file's GPU, by UUID,
    else serial, else index."""
    if spec.gpu is not None:
        return spec.gpu.key
    gpu = results.gpu
    return gpu.uuid or gpu.serial or gpu.pci_bus_id or gpu.name or "the GPU"


_GPU, _NAME = attrgetter("gpu"), attrgetter("name")


def replicated(side: Sequence[Results]) -> bool:
    """Whether a file of `side` measured one specialization on several GPUs (``--replicate``)."""
    for results in side:
        if not any(map(_GPU, results.specializations)):  # no specialization names its GPU (the usual file)
            continue
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


def _files(side: Sequence[Results]) -> list[str]:
    """The side's files in order: a ``--processes`` file once, with its count of processes (its
    runs, `Results.per_process`); any other once per time it was given."""
    out: list[tuple[str, int, bool]] = []
    for r in side:
        many = isinstance(r.settings.processes, int) and r.settings.processes > 1
        if many and out and out[-1][0] == r.source and out[-1][2]:
            out[-1] = (r.source, out[-1][1] + 1, True)
        else:
            out.append((r.source, 1, many))
    return [f"{src} [{n} processes]" if many else src for src, n, many in out]


def _side_context(side: Sequence[Results]) -> dict[str, Any]:
    if not side:
        return {}
    first = side[0]
    return {
        "files": _files(side),
        "branch": first.branch,
        "commit": first.commit,
        "date": first.date,
        "gpu": first.gpu.name,
    }


# --------------------------------------------------------------------------- per-specialization


def _pct(x: float) -> str:
    return f"{x * 100:+.2f} %"


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


def _unjudged_timeout(spec: Specialization) -> bool:
    """A noise timeout that leaves a run nothing to be judged on: the run has fewer than two
    measured rounds. A run of rounds is judged on their spread, which holds its batches' scatter
    too (tests/benchmarks/verdicts/evaluate2.txt: at 64 MiB four of ten library calls ended on the
    timeout in almost every process on that H200); a run without rounds has only the measured prior
    of a whole run, taken from runs that met the batch tolerance."""
    return bool(spec.noise_timeout) and len(spec.rounds[measured_rounds(len(spec.rounds))]) < 2


def _untrusted(base: Sequence[Specialization], head: Sequence[Specialization]) -> str | None:
    """Why a side's measurements (one per run) cannot carry a verdict (a noise timeout in a run
    without rounds, `_unjudged_timeout`; a throttled SM clock), or None."""
    if not any([_unjudged_timeout(s) or (s.sm_clock is not None and s.sm_clock.below_expected)
                for s in (*base, *head)]):
        return None
    sides = (("base", base), ("head", head))
    reasons = []
    timeouts = [side for side, specs in sides if any(_unjudged_timeout(s) for s in specs)]
    if timeouts:
        reasons.append(f"noise timeout in {' and '.join(timeouts)}")
    for side, specs in sides:
        for slow in dict.fromkeys(filter(None, map(_slow_clock, specs))):
            reasons.append(f"SM clock below expected in {side} ({slow})")
    return "; ".join(reasons) or None


@dataclass(frozen=True)
class _Runs:
    """Every run of the tested specializations as arrays, one entry a run (one file's measurement
    of a specialization on one side): its row (the specialization's place among the tested), its
    side (0 base, 1 head), the mean of ln(metric) over its measured rounds
    (`primbench.rounds.measured_rounds`: the warm-up round left out), their sum of squared
    deviations and how many they are (1 for a run without rounds: its own value), the sum of
    the products of successive deviations (their lag-1 autocovariance times the count), the mean
    ln(SM clock) of its measured rounds (NaN where not read, or with one run a side and no history
    of the clock: unused), and the file it came from (the workers of a ``--processes`` file, one run
    each, share theirs)."""

    row: np.ndarray
    side: np.ndarray
    mean: np.ndarray
    ss: np.ndarray
    rounds: np.ndarray
    lag: np.ndarray
    clock: np.ndarray
    file: np.ndarray  # which file the run came from (the workers of one --processes file share one)

    @property
    def slot(self) -> np.ndarray:
        """Each run's row and side as one index, 2 row + side (a slot: one side of one row)."""
        return 2 * self.row + self.side

    def take(self, keep: np.ndarray) -> _Runs:
        """The runs of the rows `keep` marks, their rows renumbered."""
        new = np.cumsum(keep) - 1
        at = keep[self.row]
        return _Runs(new[self.row[at]], self.side[at], self.mean[at], self.ss[at], self.rounds[at], self.lag[at],
                     self.clock[at], self.file[at])


_ROUNDS = attrgetter("spec.rounds")


def _are_none(values: Sequence[object]) -> np.ndarray:
    """``np.array([v is None for v in values], dtype=bool)``, by C iteration (a value a row)."""
    return np.fromiter(map(operator.is_, values, itertools.repeat(None)), dtype=bool, count=len(values))


def _run_values(entries: Sequence[_Entry], metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ln of each run's values of `metric` (a run: an entry): its measured rounds' (the positive,
    finite ones, the warm-up left out, `primbench.rounds.measured_rounds`), else its own value (a
    run without rounds). Returns the values, run after run, how many each run has, and which
    entry each run is; an entry without a positive, finite value is no run. ln is math.log's."""
    get = attrgetter(metric)
    rounds = list(map(_ROUNDS, entries))
    per = np.fromiter(map(len, rounds), dtype=np.int64, count=len(rounds))
    raw = list(map(get, itertools.chain.from_iterable(rounds)))
    try:
        x = np.fromiter(raw, dtype=float, count=len(raw))  # the same floats as np.array's, in half the time
    except TypeError:  # a metric a round may lack (energy, graph)
        x = np.array([math.nan if v is None else v for v in raw], dtype=float)
    ok = (x > 0) & (x < math.inf)
    run = np.repeat(np.arange(len(entries)), per)[ok]
    valid = np.bincount(run, minlength=len(entries))
    skip = np.zeros(int(valid.max(initial=0)) + 1, dtype=np.int64)
    for c in sorted(set(valid.tolist())):  # not np.unique: its masked-array check imports numpy.ma
        skip[c] = measured_rounds(c).start or 0
    keep = np.arange(run.size) - (np.cumsum(valid) - valid)[run] >= skip[valid][run]
    count = np.bincount(run[keep], minlength=len(entries))
    logs = list(map(math.log, x[ok][keep].tolist()))
    own = [i for i in np.flatnonzero(count == 0).tolist()
           if 0 < float(getattr(entries[i].spec, metric) or 0.0) < math.inf]
    logs += [math.log(float(getattr(entries[i].spec, metric))) for i in own]
    has = np.flatnonzero(count > 0)
    return (np.array(logs, dtype=float), np.concatenate([count[has], np.ones(len(own), dtype=np.int64)]),
            np.concatenate([has, np.array(own, dtype=np.int64)]))


def _run_clocks(entries: Sequence[_Entry]) -> np.ndarray:
    """Each run's mean ln(SM clock) over its measured rounds (`primbench.rounds.measured_rounds`)
    that read the clock, else (a run without rounds) its specialization's average clock; NaN for a
    run without any."""
    out = np.full(len(entries), math.nan)
    for i, e in enumerate(entries):
        rounds = e.spec.rounds
        clocks = [c for r in rounds[measured_rounds(len(rounds))] if (c := r.average_clock_mhz)]
        if clocks:
            out[i] = math.fsum(map(math.log, clocks)) / len(clocks)
        elif e.spec.sm_clock is not None and (avg := e.spec.sm_clock.average_mhz):
            out[i] = math.log(avg)
    return out


def _runs(logs: np.ndarray, count: np.ndarray, row: np.ndarray, side: np.ndarray, clock: np.ndarray,
          file: np.ndarray | None = None) -> _Runs:
    """The runs' statistics from their ln values (`logs`, run after run, `count` a run), computed
    for all runs of a count at once (the sums exactly rounded, `stats.exact_sums`, as math.fsum)."""
    mean, ss, lag = np.empty(count.size), np.empty(count.size), np.empty(count.size)
    start = np.cumsum(count) - count
    for c in sorted(set(count.tolist())):
        at = np.flatnonzero(count == c)
        x = logs[start[at][:, None] + np.arange(c)]
        m = stats.exact_sums(x) / c
        dev = x - m[:, None]
        mean[at], ss[at], lag[at] = m, stats.exact_sums(dev * dev), stats.exact_sums(dev[:, :-1] * dev[:, 1:])
    return _Runs(np.asarray(row, dtype=np.int64), np.asarray(side, dtype=np.int64), mean, ss,
                 np.asarray(count, dtype=np.int64), lag, np.asarray(clock, dtype=float),
                 np.arange(count.size) if file is None else np.asarray(file, dtype=np.int64))


class _Paired(NamedTuple):
    """A specialization with a positive value of its metric in every run of both sides, before
    its runs' values are read."""

    key: tuple[str, str]
    common: dict[str, Any]
    metric: str
    base: list[_Entry]
    head: list[_Entry]
    untrusted: str | None
    history: tuple[float, float] | None
    klass: priors.SizeClass


@dataclass(frozen=True)
class _Suite:
    """The specializations with measurements on both sides, on their way to a verdict, as columns:
    each one's key, its row's fields, why its measurements cannot carry a verdict (None: they
    can), history's variability, its size class; and every run of them (`_Runs`)."""

    keys: list[tuple[str, str]]
    fields: list[dict[str, Any]]
    untrusted: list[str | None]
    history: list[tuple[float, float] | None]
    klass: list[priors.SizeClass]
    runs: _Runs
    #: Each row's answer to the SM clock (d ln time / d ln clock, its variance), or None: measured in
    #: history (`compare_runs`' ``clock_response``), else within each side's files (`_clock_within`).
    clock_response: list[tuple[float, float] | None] | None = None
    #: Where `clock_response` was measured: "history" or "files" (`_clock_within`).
    clock_source: str = "history"

    def __len__(self) -> int:
        return len(self.keys)

    def take(self, keep: np.ndarray) -> _Suite:
        at = np.flatnonzero(keep).tolist()
        cr = self.clock_response
        return _Suite([self.keys[i] for i in at], [self.fields[i] for i in at], [self.untrusted[i] for i in at],
                      [self.history[i] for i in at], [self.klass[i] for i in at], self.runs.take(keep),
                      None if cr is None else [cr[i] for i in at], self.clock_source)

    @functools.cached_property
    def clock_responses(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's measured answer to the clock and its variance (NaN where none)."""
        if not self.clock_response:  # the usual case: no history of the clock (100,000 rows: skip the list)
            return np.full(len(self), math.nan), np.full(len(self), math.nan)
        out = np.array([c if c is not None else (math.nan, math.nan) for c in self.clock_response],
                       dtype=float).reshape(-1, 2)
        return out[:, 0], out[:, 1]

    @functools.cached_property
    def clocks_apart(self) -> np.ndarray:
        """Each row's head side's mean ln(SM clock) less its base side's (NaN where a side's is unknown)."""
        runs, slots = self.runs, 2 * len(self)
        known = np.isfinite(runs.clock)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = np.bincount(runs.slot[known], weights=runs.clock[known], minlength=slots)
            mean = total / np.bincount(runs.slot[known], minlength=slots)
        return mean[1::2] - mean[0::2]

    def run_counts(self) -> np.ndarray:
        """How many runs each slot (side of a row, `_Runs.slot`) has."""
        return np.bincount(self.runs.slot, minlength=2 * len(self))

    def side_means(self) -> np.ndarray:
        """Each slot's mean over its runs of their means."""
        return stats.grouped_sums(self.runs.mean, self.runs.slot, 2 * len(self)) / self.run_counts()

    @property
    def d(self) -> np.ndarray:
        means = self.side_means()
        return means[1::2] - means[0::2]

    def within(self) -> tuple[np.ndarray, np.ndarray]:
        """Each slot's pooled variance between rounds and its df (nan, 0 without rounds)."""
        slot, slots = self.runs.slot, 2 * len(self)
        df = np.bincount(slot, weights=self.runs.rounds - 1, minlength=slots)
        ss = stats.grouped_sums(self.runs.ss, slot, slots)
        ok = df > 0
        return np.where(ok, ss / np.where(ok, df, 1.0), math.nan), np.where(ok, df, 0.0)

    def without_rounds(self) -> np.ndarray:
        """Each slot: whether a run of it has no rounds (fewer than 2)."""
        return np.bincount(self.runs.slot, weights=self.runs.rounds < 2, minlength=2 * len(self)) > 0

    def rows_without_rounds(self) -> np.ndarray:
        """Each row: whether a run of either side has no rounds."""
        slots = self.without_rounds()
        return slots[0::2] | slots[1::2]

    def prior_only(self) -> np.ndarray:
        """The rows judged on the measured prior of a whole run: a side without rounds, no history."""
        return self.rows_without_rounds() & _are_none(self.history)


def _size(entry: _Entry, file_sizes: Mapping[int, float | None] | None = None) -> float | None:
    """The bytes a specialization worked on: its run's --size, else the bytes it moved per call.
    `file_sizes`: each file's `_file_size` by its id (`_pair`'s)."""
    size = file_sizes[id(entry.results)] if file_sizes is not None else _file_size(entry.results)
    if size is not None:
        return size
    spec = entry.spec
    if spec.bytes_per_second and spec.gpu_seconds_per_call:
        return spec.bytes_per_second * spec.gpu_seconds_per_call
    return None


def _file_size(results: Results) -> float | None:
    """A run's --size in bytes (None where not a positive number)."""
    size = results.settings.size
    return float(size) if isinstance(size, int | float) and not isinstance(size, bool) and size > 0 else None


def _joined(entries: Sequence[_Entry]) -> str:
    """The files of a side's runs, each once (a --processes file holds several runs)."""
    return ", ".join(dict.fromkeys([e.results.source for e in entries]))


def _pair(key: tuple[str, str], base: list[_Entry], head: list[_Entry],
          history: Mapping[tuple[str, str], Any] | None, choice: str | None = None,
          file_sizes: Mapping[int, float | None] | None = None) -> _Paired | SpecComparison:
    """Pairing: both sides' observations of one specialization, or the row that ends it.
    `file_sizes`: `_file_size` of every file of both sides, by its id (else each is read again)."""
    if len(base) == 1 and len(head) == 1:
        paired = _pair_one(key, base, head, history, choice, file_sizes)
        if paired is not None:
            return paired
    b, h = base[0].spec, head[0].spec
    common: dict[str, Any] = {
        "algorithm": key[0], "name": key[1],
        "base_source": base[0].results.source if len(base) == 1 else _joined(base),
        "head_source": head[0].results.source if len(head) == 1 else _joined(head),
        "base_noise_timeout": any([e.spec.noise_timeout for e in base]),
        "head_noise_timeout": any([e.spec.noise_timeout for e in head]),
        "base_noise": b.noise_percent / 100 if b.noise_percent is not None else None,
        "head_noise": h.noise_percent / 100 if h.noise_percent is not None else None,
    }
    both = (("base", base), ("head", head))
    entries = (*base, *head)
    if any([e.spec.skipped is not None for e in entries]):  # state.skip: not measured, nor a failure
        skipped = [(side, e.spec) for side, es in both for e in es if e.spec.skipped is not None]
        which = " and ".join(dict.fromkeys(side for side, _ in skipped))
        return SpecComparison(verdict=Verdict.SKIPPED, reason=f"skipped in {which}: {skipped[0][1].skipped}",
                              reason_kind=ReasonKind.SKIPPED, **common)
    if any([e.spec.error is not None for e in entries]):
        failed = [(side, e.spec) for side, es in both for e in es if e.spec.failed]
        which = " and ".join(dict.fromkeys(side for side, _ in failed))
        return SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"failed in {which}: {failed[0][1].error or ''}",
                              reason_kind=ReasonKind.FAILED, **common)
    metric = _metric_of(base, head, choice)
    if metric is None:
        wanted = by_name(choice).name if choice else "bytes_per_second, items_per_second and gpu_seconds_per_call"
        return SpecComparison(verdict=Verdict.INCONCLUSIVE,
                              reason=f"no positive value on both sides ({wanted})", reason_kind=ReasonKind.NO_VALUE,
                              **common)
    untrusted = _untrusted([e.spec for e in base], [e.spec for e in head])
    if metric == "joules_per_call" and (short := _short_energy(base, head)):  # results 4.5.0
        untrusted = "; ".join(filter(None, (untrusted, short)))
    sizes = [z for e in entries if (z := _size(e, file_sizes)) is not None]
    return _Paired(key, common, metric, base, head, untrusted, _history(history.get(key)) if history else None,
                   priors.size_class(min(sizes) if sizes else None))


def _pair_one(key: tuple[str, str], base: list[_Entry], head: list[_Entry],
              history: Mapping[tuple[str, str], Any] | None, choice: str | None,
              file_sizes: Mapping[int, float | None] | None = None,
              size_class: Callable[[float | None], priors.SizeClass] = priors.size_class) -> _Paired | None:
    """`_pair` of a specialization measured once a side (a file a side: the usual case), with
    nothing that ends it (skipped, failed, no value); None for anything else, which `_pair`
    itself decides. The same pair as `_pair`'s, without its lists of one entry (the pair keeps the
    index's lists: 200,000 lists of one are 14 MB at 100,000 specializations). `size_class`:
    `priors.size_class`, or a cache of it (`_compare_runs`')."""
    (be,), (he,) = base, head
    b, h = be.spec, he.spec
    if b.skipped is not None or h.skipped is not None or b.error is not None or h.error is not None:
        return None
    # _metric_of of one entry a side: bytes/s, as most rows have, without a generator
    if choice is None and (b.bytes_per_second or 0) > 0 and (h.bytes_per_second or 0) > 0:
        metric: str | None = "bytes_per_second"
    else:
        metric = _metric_of(base, head, choice)
    if metric is None:
        return None
    common: dict[str, Any] = {
        "algorithm": key[0], "name": key[1], "base_source": be.results.source, "head_source": he.results.source,
        "base_noise_timeout": bool(b.noise_timeout), "head_noise_timeout": bool(h.noise_timeout),
        "base_noise": b.noise_percent / 100 if b.noise_percent is not None else None,
        "head_noise": h.noise_percent / 100 if h.noise_percent is not None else None,
    }
    untrusted = (_untrusted([b], [h]) if b.noise_timeout or h.noise_timeout
                 or (b.sm_clock is not None and b.sm_clock.below_expected)
                 or (h.sm_clock is not None and h.sm_clock.below_expected) else None)
    if metric == "joules_per_call" and (short := _short_energy(base, head)):  # results 4.5.0
        untrusted = "; ".join(filter(None, (untrusted, short)))
    if file_sizes is not None:  # `_size`, without a call where the file's --size is known
        sb, sh = file_sizes[id(be.results)], file_sizes[id(he.results)]
        sb = _size(be, file_sizes) if sb is None else sb
        sh = _size(he, file_sizes) if sh is None else sh
    else:
        sb, sh = _size(be), _size(he)
    size = sh if sb is None else sb if sh is None else sh if sh < sb else sb  # min([sb, sh]) of those known
    # _Paired(...) without its Python __new__ (as `_index` makes its entries)
    return tuple.__new__(_Paired, (key, common, metric, base, head, untrusted,
                                   _history(history.get(key)) if history else None, size_class(size)))


_BASE, _HEAD = attrgetter("base"), attrgetter("head")
_KEY, _UNTRUSTED, _HISTORY, _KLASS = (attrgetter(f) for f in ("key", "untrusted", "history", "klass"))


def _runs_of(paired: Sequence[_Paired], clocks: bool = False) -> _Runs:
    """Every run of the paired specializations (`_run_values`, `_runs`), those of each metric
    read at once; a run without a positive, finite value is none."""
    parts = []
    for metric in dict.fromkeys(p.metric for p in paired):
        rows = [i for i, p in enumerate(paired) if p.metric == metric]
        chosen = [paired[i] for i in rows] if len(rows) < len(paired) else paired
        bases, heads = list(map(_BASE, chosen)), list(map(_HEAD, chosen))
        # each pair's base entries, then its head's
        entries = list(itertools.chain.from_iterable(itertools.chain.from_iterable(zip(bases, heads, strict=True))))
        counts = np.stack([np.fromiter(map(len, bases), dtype=np.int64, count=len(bases)),
                           np.fromiter(map(len, heads), dtype=np.int64, count=len(heads))], axis=1)
        row = np.repeat(rows, counts.sum(axis=1))
        side = np.repeat(np.tile([0, 1], len(rows)), counts.reshape(-1))
        logs, count, which = _run_values(entries, metric)
        several = counts.max(initial=0) >= 2  # one run a side: files and clocks are moot
        clock = _run_clocks(entries) if several or clocks else np.full(len(entries), math.nan)
        sources: dict[str, int] = {}
        file = (np.fromiter((sources.setdefault(e.results.source, len(sources)) for e in entries), dtype=np.int64,
                            count=len(entries)) if several else np.arange(len(entries)))
        parts.append(_runs(logs, count, row[which], side[which], clock[which], file[which]))
    return _Runs(*(np.concatenate([getattr(r, f) for r in parts]) for f in ("row", "side", "mean", "ss", "rounds",
                                                                              "lag", "clock", "file")))


def _blockers(comparability: Comparability, key: tuple[str, str]) -> tuple[str, ...]:
    return tuple(d.describe() for d in comparability.blockers_of(key)) if comparability.blockers else ()


def _suite(paired: Sequence[_Paired], comparability: Comparability,
           rows: dict[tuple[str, str], SpecComparison],
           clock_response: Mapping[tuple[str, str], tuple[float, float]] | None = None) -> _Suite:
    """The runs' statistics of every paired specialization, their rows' fields; the rows without a
    finite positive value on a side, whose change is out of range, or whose sides measure
    different things go to `rows` (the rest are the suite tested)."""
    runs = _runs_of(paired, clocks=bool(clock_response))
    suite = _Suite(list(map(_KEY, paired)), [], list(map(_UNTRUSTED, paired)), list(map(_HISTORY, paired)),
                   list(map(_KLASS, paired)), runs,
                   [clock_response.get(p.key) for p in paired] if clock_response else None)
    sides = np.bincount(runs.slot, minlength=2 * len(paired)).reshape(-1, 2)
    valued = np.asarray(np.all(sides > 0, axis=1))
    with np.errstate(invalid="ignore"):
        means = suite.side_means()
    bm, hm = means[0::2], means[1::2]
    keep = valued & (np.abs(hm - bm) < MAX_LOG_CHANGE)
    observations = np.bincount(runs.slot, weights=runs.rounds, minlength=2 * len(paired)).astype(np.int64).tolist()
    valued_at, kept = valued.tolist(), keep.tolist()
    # each kept row's values and change (math's exp and expm1, through map: no call from the loop a row;
    # the others' are not read, and their means may be out of exp's range)
    bk, hk = np.where(keep, bm, 0.0).tolist(), np.where(keep, hm, 0.0).tolist()
    base_values, head_values = list(map(math.exp, bk)), list(map(math.exp, hk))
    changes = list(map(math.expm1, map(operator.sub, hk, bk)))
    any_blockers = bool(comparability.blockers)  # a list made a call: once, not once a row
    for i, p in enumerate(paired):
        blockers = _blockers(comparability, p.key) if any_blockers else ()
        if not valued_at[i]:
            rows[p.key] = SpecComparison(verdict=Verdict.INCONCLUSIVE, reason=f"no finite positive {p.metric}",
                                         reason_kind=ReasonKind.NO_VALUE, not_comparable=blockers, **p.common)
            suite.fields.append({})
            continue
        if not kept[i]:
            rows[p.key] = SpecComparison(verdict=Verdict.INCONCLUSIVE, reason="change out of range: head/base is "
                                         f"beyond e^±{MAX_LOG_CHANGE:g} (a broken measurement on one side)",
                                         reason_kind=ReasonKind.OUT_OF_RANGE, not_comparable=blockers, **p.common)
            suite.fields.append({})
            continue
        fields = p.common  # the pair's own: it becomes the row's
        fields.update(metric=p.metric, base_value=base_values[i], head_value=head_values[i],
                      change=changes[i], base_observations=observations[2 * i],
                      head_observations=observations[2 * i + 1])
        suite.fields.append(fields)
        if blockers:
            kept[i] = False
            rows[p.key] = _not_comparable(fields, blockers)
    suite = suite.take(np.array(kept, dtype=bool))
    return suite if clock_response else _clock_within(suite)


#: The fewest files (runs) a side has for `_clock_within` to measure the kernels' answers to the clock.
MIN_FILES_A_SIDE = 2


def _clock_within(suite: _Suite) -> _Suite:
    """`suite` with each row's answer to the SM clock measured within its sides' files, where history
    measured none and each side has `MIN_FILES_A_SIDE` files (runs) or more: the slope of the workers'
    means on their clocks within each file (`clock.within_files`), shrunk toward the suite's
    (`clock.shrunk_clock_responses`). A row with a slope has each run's mean moved to its side's mean
    clock (so its sides' spread no longer holds what the clock did; each side's mean is unchanged),
    and its change is corrected by the slope times the sides' clocks apart (`_clock_correction`),
    carrying the slope's variance times that apart (`_clock_part`). The suite as it was where no row
    has a slope: fewer than `clock.MIN_RUNS_A_SIDE` runs with a clock a side, or clocks that spread
    less than `clock.MIN_CLOCK_RANGE` within files (every worker of a file in one regime). A side of
    one file keeps the prior's term, which also stands in for the state its run shares and cannot
    show (data11's p16r4 at 64 MiB). On data15's 64 MiB A/A pairs the state the two runs of a file
    showed was mostly their clocks' (tests/benchmarks/verdicts/README.md)."""
    runs = suite.runs
    if len(suite) == 0 or not np.isfinite(runs.clock).any():
        return suite
    beta, var = within_files(runs.row, runs.side, runs.file, runs.clock, runs.mean, len(suite),
                             min_files=MIN_FILES_A_SIDE)
    measured = np.flatnonzero(np.isfinite(beta)).tolist()
    if not measured:
        return suite
    # in time's terms, as history's: a throughput's ln is -ln time
    to_time = np.array([-_better(f.get("metric")) for f in suite.fields], dtype=float)
    shrunk = shrunk_clock_responses({suite.keys[i]: (float(to_time[i] * beta[i]), float(var[i])) for i in measured})
    if not shrunk:
        return suite
    responses = [shrunk.get(k) for k in suite.keys]
    slope = np.array([math.nan if r is None else r[0] for r in responses], dtype=float)
    per_run = (slope * to_time)[runs.row]  # the slope of ln(metric) on ln(clock)
    move = np.isfinite(per_run) & np.isfinite(runs.clock)
    slots = 2 * len(suite)
    with np.errstate(invalid="ignore", divide="ignore"):
        side_clock = (np.bincount(runs.slot[move], weights=runs.clock[move], minlength=slots)
                      / np.bincount(runs.slot[move], minlength=slots))
    mean = runs.mean.copy()
    mean[move] -= per_run[move] * (runs.clock[move] - side_clock[runs.slot[move]])
    return replace(suite, runs=replace(runs, mean=mean), clock_response=responses, clock_source="files")


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
    clocked: np.ndarray | None = None  # rows that carry what the sides' SM clocks apart add


@dataclass(frozen=True)
class _SideTerms:
    """Each slot's (side of a row's) variance of its mean as independent terms: its own, at most
    three (variance, df; a variance of 0 is no term: its rounds, the process or its runs' spread,
    the clocks apart), the shared one (common, df), and the source."""

    own: np.ndarray  # slots x 3
    own_df: np.ndarray  # slots x 3
    common: np.ndarray
    common_df: np.ndarray
    source: np.ndarray  # one code a slot: the row of `sources`
    sources: list[str]
    clocked: np.ndarray  # slots carrying what the sides' SM clocks apart add (`_clock_part`)


def _class_table(klass: Sequence[priors.SizeClass]) -> tuple[list[priors.SizeClass], np.ndarray]:
    """The distinct size classes, and each row's index among them."""
    distinct = {id(k): k for k in klass}  # by identity: a class's hash walks its priors
    index = {key: i for i, key in enumerate(distinct)}
    return list(distinct.values()), np.array([index[id(k)] for k in klass], dtype=np.int64)


def _side_terms(suite: _Suite, within: np.ndarray, within_df: np.ndarray) -> _SideTerms:
    """Every side's variance of its mean as independent terms: its own (rounds, the process part, or
    the spread of its runs) and the shared one, and their source.

    Two or more runs on the side: the runs are the unit (Kalibera & Jones 2013): their spread
    estimates everything a run varies by, moderated toward what the priors and the rounds predict.
    One run: its rounds' variance over their count, plus the measured prior of what a process adds
    beyond its rounds (`primbench.compare.priors`), or history's run-to-run variance in its place;
    a run without rounds takes the prior of a whole run (`single`)."""
    runs, slots = suite.runs, 2 * len(suite)
    slot = runs.slot
    n = suite.run_counts().astype(float)
    short = suite.without_rounds()
    with_rounds = ~short & (within_df > 0)
    classes, at = _class_table(suite.klass)
    at = np.repeat(at, 2)

    def prior(part: str) -> np.ndarray:
        rounds = np.array([getattr(k.rounds, part) for k in classes])[at]
        single = np.array([getattr(k.single, part) for k in classes])[at]
        return np.where(with_rounds, rounds, single)

    common, common_df, process, process_df = (prior(p) for p in ("common", "common_df", "process", "process_df"))
    if suite.history.count(None) == len(suite) and len(suite):  # no history (the usual case): no list of pairs
        history = np.full((slots, 2), math.nan)
    else:
        history = np.repeat(np.array([h if h is not None else (math.nan, math.nan) for h in suite.history],
                                     dtype=float).reshape(len(suite), 2), 2, axis=0)
    cv, hdf = history[:, 0], history[:, 1]
    from_history = ~np.isnan(cv)
    # history's run-to-run CV is of a file's value: a side of the workers of k --processes files is
    # k such runs, however many runs compare splits them into
    files = int(runs.file.max(initial=0)) + 1
    keys = np.sort(slot * files + runs.file)  # not np.unique: it imports numpy.ma (the start-up cost)
    distinct = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys
    per_slot = np.bincount(distinct // files, minlength=slots).astype(float)
    workers_of_files = per_slot < n
    spread_of_runs = ~from_history & (n >= 2)
    inverse = stats.grouped_sums(1.0 / runs.rounds, slot, slots)
    with np.errstate(divide="ignore", invalid="ignore"):
        rounds_part = np.where(with_rounds, within * inverse / n / n, 0.0)
        scaled = rounds_part * n
        # what the current runs predict for the variance of one file's value, which history measures
        file_var = common + np.where(workers_of_files, (process + scaled) * per_slot / n, process + scaled)
        cv_sq, hdf = _moderated_history(cv * cv, hdf, from_history, file_var)
        beyond = cv_sq - common - np.where(with_rounds, scaled, 0.0)
        beyond = np.where(beyond > 0.0, beyond, 0.0)
        mean = stats.grouped_sums(runs.mean, slot, slots) / n
        spread = stats.grouped_sums((runs.mean - mean[slot]) ** 2, slot, slots) / (n - 1)
        predicted = process + common + scaled
        pooled = (process_df * predicted + (n - 1) * spread) / (process_df + n - 1)
        over = pooled - common
        spread_own = np.where(scaled > over, scaled, over) / n
        moderated_df = process_df + n - 1
        workers = _relative_own(suite, process + scaled, n, spread_own, moderated_df)
        relative = spread_of_runs & workers
        _between_files(suite, relative & workers_of_files, per_slot, spread_own, moderated_df)
        clock = _clock_part(suite, relative)
        # the files' mean's variance less what the other terms carry
        whole_files = cv_sq / np.where(per_slot > 0, per_slot, 1.0) - common / n - rounds_part
        history_own = np.where(workers_of_files, np.where(whole_files > 0, whole_files, 0.0), beyond / n)
        # never narrower than the side's own workers show about the suite: a short history's CV of a
        # kernel can come out below what this run's workers spread (six runs of history made 6 of 42
        # A/A pairs fail where the workers alone failed none: verdicts/history_loo9-10-base.txt)
        floor = np.where(from_history & workers & workers_of_files,
                         spread_own - np.where(with_rounds, rounds_part, 0.0), 0.0)
        by_workers = floor > history_own
        history_own = np.where(by_workers, floor, history_own)
        own = np.stack([np.where(with_rounds & ~spread_of_runs, rounds_part, 0.0),
                        np.where(from_history, history_own, np.where(spread_of_runs, spread_own, process)),
                        clock], axis=1)
    runs_df = np.where(spread_of_runs, moderated_df, process_df)
    own_df = np.stack([within_df, np.where(from_history, np.where(by_workers, moderated_df, hdf), runs_df),
                       np.full(slots, math.inf)], axis=1)
    kind = np.where(from_history, 0, np.where(relative, 4, np.where(spread_of_runs, 1, np.where(with_rounds, 2, 3))))
    rounds = np.bincount(slot, weights=runs.rounds, minlength=slots)
    param = np.where(from_history, hdf, np.where(spread_of_runs, n, np.where(with_rounds, rounds, 0.0)))
    params, param_at = np.unique(param, return_inverse=True)
    codes, source = np.unique((param_at.reshape(-1) * 5 + kind) * len(classes) + at, return_inverse=True)
    sources = [_source(c // len(classes) % 5, float(params[c // len(classes) // 5]), classes[c % len(classes)].name)
               for c in codes.tolist()]
    return _SideTerms(own, own_df, common / n, common_df, source.reshape(-1), sources, clock > 0)


def _relative_own(suite: _Suite, predicted: np.ndarray, n: np.ndarray, own: np.ndarray,
                  own_df: np.ndarray) -> np.ndarray:
    """Sides of several runs (separate files, or the worker processes of ``--processes`` files)
    that line up across the suite (`_relative_spreads`): each kernel's own
    variance is its runs' spread about the suite (each run's mean over the kernels taken out),
    moderated across the suite's kernels (`stats.fit_prior` on that spread over `predicted`, what
    the process prior and the rounds predict: its s0^2 scales the prediction to this GPU, its df0
    says how far kernels differ; an outlier keeps its own), in place of the spread moderated toward
    the class prior with the prior's 20-150 df and floored at the rounds' spread over their count,
    which made every kernel's variance about the prior's and, with rounds that spread wider than
    processes, about twice too wide (tests/benchmarks/verdicts/calibration6.txt: on the fifth
    evaluation's runs the A/A changes spread 0.18-0.97x the reported standard error). The workers of
    one ``--processes`` file share a part of their run that their spread cannot show (1.3-1.4x the
    variance their spread predicts in the sixth evaluation), most of it the run's SM clock regime:
    `_side_terms` adds it from the sides' clocks (`_clock_part`). Writes `own` (the variance of the
    side's mean) and `own_df` there; returns where."""
    spread, aligned = _relative_spreads(suite)
    use = aligned & (n >= 2) & (predicted > 0)
    if int(use.sum()) < stats.PRIOR_MIN:
        return np.zeros(len(n), dtype=bool)
    moderated = stats.moderated_over(spread[use], n[use] - 1, predicted[use])
    if moderated is None:
        return np.zeros(len(n), dtype=bool)
    own[use] = moderated[0] / n[use]
    own_df[use] = moderated[1]
    return use


def _between_files(suite: _Suite, relative: np.ndarray, per_slot: np.ndarray, own: np.ndarray,
                   own_df: np.ndarray) -> None:
    """Sides of two or more ``--processes`` files (``B1 B2 -- H1 H2``): the file, not the worker, is the
    unit (Kalibera & Jones 2013, one level up). The workers of one run share a state that their spread
    cannot show (tests/benchmarks/verdicts/calibration11-p16r4.txt: a Triton kernel's run means at 4 MiB
    spread 2.2-2.4x the SD its workers predict, every worker of a run in the run's state), so each
    kernel's files' means about the suite (`_file_spreads`) are moderated across the suite's kernels
    over what the workers predict for a file's mean (`own` times the side's files) and, where that
    says more, taken over the workers' own (`own`, `own_df` written there), on the slots `relative`
    marks (those judged by their runs' spread about the suite whose runs are workers of files). Sides
    of one file keep the workers' spread (one file cannot show its run's state)."""
    spread, aligned = _file_spreads(suite, per_slot)
    use = relative & aligned & (per_slot >= 2) & (own > 0)
    _take_wider(own, own_df, use, _files_variance(spread, per_slot - 1, use, own, per_slot))


def _files_variance(spread: np.ndarray, df: np.ndarray, use: np.ndarray, own: np.ndarray,
                    per_slot: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The variance of the mean of each `use` slot's files: their `spread` (on `df`) over what the workers
    predict for a file (`own` times the files), that ratio pooled over the row's two sides and moderated
    across the suite's kernels, times `own`; with its df. None with too few rows or no prior.

    The ratio is pooled because the state a run shares is the kernel's (on one GPU): both sides measure it,
    and with two files a side each has one df. Judged one side at a time, the kernels' ratios were
    moderated to the suite's, which widened every kernel for the few whose runs differ; pooled, those few
    are told apart (`stats.outlying` on twice the df) and the others keep the suite's smaller part
    (tests/benchmarks/verdicts/calibration16.txt, 25 A/A collections, in sample: the median
    detectable change smaller in 24, by up to 10 %, and 21 of 1,320 A/A pairs failing, as before). Each
    side keeps its own workers' scale (`own`), so a head whose workers spread more still weighs more."""
    predicted = own * per_slot
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(use & (predicted > 0), spread / predicted, 0.0)
    weight = np.where(use & (predicted > 0), df, 0.0).reshape(-1, 2)
    row_df = weight.sum(axis=1)
    rows = row_df > 0
    if int(rows.sum()) < stats.PRIOR_MIN:
        return None
    row_ratio = (ratio.reshape(-1, 2) * weight).sum(axis=1)[rows] / row_df[rows]
    moderated = stats.moderated_over(row_ratio, row_df[rows], np.ones_like(row_ratio))  # already over the prediction
    if moderated is None:
        return None
    post, post_df = moderated
    slot_ratio, slot_df = np.zeros(len(row_df)), np.zeros(len(row_df))
    slot_ratio[rows], slot_df[rows] = post, post_df
    return np.repeat(slot_ratio, 2)[use] * own[use], np.repeat(slot_df, 2)[use]


def _take_wider(own: np.ndarray, own_df: np.ndarray, use: np.ndarray,
                files: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Where the files' variance (`_files_variance`, over the `use` slots) is wider than `own`, it and its df
    replace `own` and `own_df`."""
    if files is None:
        return
    files_var, files_df = files
    wider = files_var > own[use]
    at = np.flatnonzero(use)[wider]
    own[at] = files_var[wider]
    own_df[at] = files_df[wider]


def _file_spreads(suite: _Suite, per_slot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each slot's variance, over its side's files, of the file's mean (over its runs) less that file's
    mean over the side's kernels, where the side's files line up: the slots of the side that have its
    most common count of files (2 or more; at least `stats.SUITE_MIN` of them) and the same files.
    Returns the variances (NaN elsewhere) and where they are."""
    runs, slots = suite.runs, 2 * len(suite)
    spread = np.full(slots, np.nan)
    aligned = np.zeros(slots, dtype=bool)
    if not (per_slot >= 2).any():
        return spread, aligned
    files = int(runs.file.max(initial=0)) + 1
    key = runs.slot * files + runs.file
    sums = np.bincount(key, weights=runs.mean, minlength=slots * files).reshape(slots, files)
    counts = np.bincount(key, minlength=slots * files).reshape(slots, files)
    for side in (0, 1):
        lined = _lined_up(per_slot, side)
        if lined is None:
            continue
        sel, common = lined
        present = counts[sel] > 0
        pattern = present[0]
        sel = sel[(present == pattern).all(axis=1)]  # the same files in every slot
        if len(sel) < stats.SUITE_MIN or int(pattern.sum()) != common:
            continue
        spread[sel] = _about_the_suite(sums[sel][:, pattern] / counts[sel][:, pattern])
        aligned[sel] = True
    return spread, aligned


def _moderated_history(cv_sq: np.ndarray, df: np.ndarray, use: np.ndarray,
                       predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """History's run-to-run variances of a file's value (`cv_sq`, with `df`) moderated across the
    suite, and their degrees of freedom. Each kernel's CV from a short history is worth little (6
    runs: 1.85 df, `history.variability.MAD_EFFICIENCY`), and the kernel whose estimate came out
    low decides a comparison: with 6-7 runs of history, 4-8 of 56 A/A pairs failed at 1-4 MiB
    (tests/benchmarks/verdicts/history_loo.txt). So each is taken over what the current runs
    predict for it (`predicted`: the shared part, the process prior and the rounds, for one file),
    moderated across the suite's kernels as the workers' own spread is (`_relative_own`:
    `stats.fit_prior` on that ratio, an outlier keeping its own) and scaled back. Rows without
    history, or too few with it, keep theirs."""
    at = use & (predicted > 0) & (df > 0) & (cv_sq > 0)
    moderated = (stats.moderated_over(cv_sq[at], df[at], predicted[at]) if int(at.sum()) >= stats.PRIOR_MIN
                 else None)
    if moderated is None:
        return cv_sq, df
    out, out_df = cv_sq.copy(), df.astype(float).copy()
    out[at], out_df[at] = moderated
    return out, out_df


def _clock_part(suite: _Suite, relative: np.ndarray) -> np.ndarray:
    """Each slot's share (half) of its row's variance from the sides' SM clocks. The kernels of a
    suite answer a change of the clock unequally (`priors.CLOCK_RESPONSE_SD` about the suite's
    own), so a row whose sides ran at mean clocks a fraction c apart carries (0.5 c)^2 that its
    runs' spread cannot show where every run of a side ran in the same clock regime (the workers
    of one ``--processes`` run: `tests/benchmarks/verdicts/clock_regimes.txt`): on the `relative`
    slots (sides of runs judged about the suite). A row whose answer to the clock history measured
    (`_Suite.clock_response`) has its change corrected by it (`_clock_correction`) and carries that
    answer's own variance times c^2 instead, on every kind of side. 0 where a side's clock is
    unknown."""
    half_sq = np.nan_to_num(suite.clocks_apart) ** 2 / 2.0  # an unknown clock: none apart
    _, measured = suite.clock_responses
    has = np.repeat(np.isfinite(measured), 2)
    own = np.repeat(np.nan_to_num(measured) * half_sq, 2)
    prior = np.repeat(priors.CLOCK_RESPONSE_SD**2 * half_sq, 2)
    return np.where(has, own, np.where(relative, prior, 0.0))


def _clock_correction(suite: _Suite, better: np.ndarray) -> np.ndarray:
    """Each row's change owed to the sides' SM clocks apart, on its metric's ln scale, where history
    measured its answer to the clock (0 elsewhere): ln time moves by beta times ln clock, so a
    throughput moves by -beta times it (`better` +1)."""
    beta, _ = suite.clock_responses
    return -better * np.nan_to_num(beta) * np.nan_to_num(suite.clocks_apart)


def _relative_spreads(suite: _Suite) -> tuple[np.ndarray, np.ndarray]:
    """Each slot's variance, over its runs, of the run's mean less that run's mean over the side's
    kernels, where the side's runs line up: the rows of the side that have its most common count of
    runs (2 or more; at least `stats.SUITE_MIN` of them), the j-th run of each from the j-th file
    (or the j-th worker process of the ``--processes`` files, in their order). Returns the
    variances (NaN elsewhere) and where they are."""
    runs, slots = suite.runs, 2 * len(suite)
    counts = suite.run_counts()
    spread = np.full(slots, np.nan)
    aligned = np.zeros(slots, dtype=bool)
    if not (counts >= 2).any():  # one run a side
        return spread, aligned
    order = np.argsort(runs.slot, kind="stable")  # a slot's runs stay in their files' order
    means = runs.mean[order]
    starts = np.cumsum(counts) - counts
    for side in (0, 1):
        lined = _lined_up(counts, side)
        if lined is None:
            continue
        sel, common = lined
        spread[sel] = _about_the_suite(means[starts[sel][:, None] + np.arange(common)[None, :]])
        aligned[sel] = True
    return spread, aligned


def _lined_up(counts: np.ndarray, side: int) -> tuple[np.ndarray, int] | None:
    """The slots of `side` (0 base, 1 head) whose count (`counts`, one a slot: runs, or files) is the
    side's most common of 2 or more, and that count; None where fewer than `stats.SUITE_MIN` have it."""
    at = np.arange(side, len(counts), 2)
    c = counts[at]
    if not (c >= 2).any():
        return None
    common = int(np.bincount(c[c >= 2].astype(int)).argmax())
    sel = at[c == common]
    return (sel, common) if len(sel) >= stats.SUITE_MIN else None


def _about_the_suite(values: np.ndarray) -> np.ndarray:
    """Each row's (kernel's) variance over its columns (runs, or files) of its values less each
    column's mean over the rows: its spread about the suite."""
    return (values - values.mean(axis=0, keepdims=True)).var(axis=1, ddof=1)


def _source(kind: int, param: float, klass: str) -> str:
    """Where a side's variance came from (`_side_terms`' kinds: history, the spread of its runs, its
    rounds and the process prior, the prior of a run, the spread of its runs about the suite)."""
    if kind == 0:
        return f"history ({param:.0f} df)"
    if kind == 4:
        return f"{int(param)} runs about the suite ({int(param) - 1} df), across its kernels"
    if kind == 1:
        return f"{int(param)} runs ({int(param) - 1} df) with the {klass} prior"
    if kind == 2:
        return f"{int(param)} rounds + {klass} process prior"
    return f"no rounds: {klass} prior of a run"


def _round_autocorrelation(runs: _Runs, trusted: np.ndarray) -> float:
    """The suite's lag-1 correlation of successive rounds (`stats.round_autocorrelation`), pooled
    over every run of 3 or more rounds of the `trusted` rows: 0 unless significantly positive."""
    at = trusted[runs.row] & (runs.rounds >= 3)
    if not at.any():
        return 0.0
    return stats.round_autocorrelation(math.fsum(runs.lag[at].tolist()), math.fsum(runs.ss[at].tolist()),
                                       runs.rounds[at].tolist())


def _noise(suite: _Suite) -> _Noise:
    """Noise model: each side's round variance moderated across the suite (robustly), plus the
    measured priors (or history, or the spread of repeated runs) for what rounds do not see."""
    n = len(suite)
    s_sq, df = suite.within()
    trusted_rows = _are_none(suite.untrusted)
    trusted = np.repeat(trusted_rows, 2)
    prior = stats.fit_prior(s_sq[trusted], df[trusted]) if trusted.any() else None
    post, post_df = stats.moderated_variance(s_sq, df, prior)
    rho = _round_autocorrelation(suite.runs, trusted_rows)
    if rho > 0:  # the variance of a mean of correlated rounds is larger than s^2 / n
        counts = np.bincount(suite.runs.slot, weights=suite.runs.rounds, minlength=2 * n) / suite.run_counts()
        post = post * stats.autocorrelation_inflation(rho, counts)
    has = df > 0
    terms = _side_terms(suite, np.where(has, post, math.nan), np.where(has, post_df, 0.0))
    own = terms.own.reshape(n, 6)
    own_df = terms.own_df.reshape(n, 6)
    shared, shared_df = terms.common.reshape(n, 2), terms.common_df.reshape(n, 2)
    moderated = (prior is not None) & (df[0::2] + df[1::2] > 0)
    kinds = len(terms.sources)
    codes, which = np.unique((terms.source[0::2] * kinds + terms.source[1::2]) * 2 + moderated, return_inverse=True)
    texts = []
    for code in codes.tolist():
        b, h, m = code // 2 // kinds, code // 2 % kinds, code % 2
        src = terms.sources[b] if b == h else f"base {terms.sources[b]}, head {terms.sources[h]}"
        texts.append(src + (", moderated" if m else ""))
    source = [texts[i] for i in which.reshape(-1).tolist()]
    return _Noise(stats.exact_sums(own), stats.satterthwaite_rows(own, own_df), stats.exact_sums(shared),
                  stats.satterthwaite_rows(shared, shared_df), source, rho, terms.clocked[0::2] | terms.clocked[1::2])


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
    clock_response: Mapping[tuple[str, str], tuple[float, float]] | None = None,
) -> Comparison:
    """Compare base and head, matched by (algorithm, specialization name).

    Each side is one or more results files; a specialization found in several files of a side
    is measured repeatedly and all its rounds are pooled (several ``--processes`` files a side:
    each file's workers share its run, `_between_files`). `threshold`: the smallest change (a
    fraction of throughput) that matters; `alpha`: the false-discovery rate and the level of
    the equivalence test; `run_to_run_cv`: per (algorithm, name), history's run-to-run CV of a
    run's value, or (CV, degrees of freedom), used in place of what the runs show, moderated across the
    suite (`_moderated_history`);
    `suite_shift_limit`: a suite-wide shift beyond it counts for the exit code; `metric`: a
    ``--metric`` choice (``time``, ``bytes``, ``items``) compared for every specialization, or
    None: bytes/s where both sides declare bytes, else items/s, else GPU time per call (lower is
    better: a regression is the time going up).

    Comparability is decided first (`compare.comparability`): sides that measure different
    things (size, custom settings, GPU model, timer, metric, hot/cold) raise NotComparableError
    (exit 2, one line per difference) unless `allow_mismatch`, which compares them with every
    affected row marked ``not_comparable`` and left inconclusive. Another physical GPU of the
    same model or another driver is a warning, blocking too with `strict_environment`.
    `clock_response`: per (algorithm, name), history's measured answer of ln(GPU time per call) to
    ln(SM clock) and its variance (`primbench.history.variability.clock_responses`): a row whose
    sides ran at clocks apart has its change corrected by it and carries its variance.

    Raises UsageError for bad parameters, NothingToCompareError when the sides share no
    specialization, NotComparableError as above."""
    with cyclic_gc_paused():  # tens of thousands of small objects, none in a cycle
        return _compare_runs(base, head, threshold=threshold, alpha=alpha, run_to_run_cv=run_to_run_cv,
                             suite_shift_limit=suite_shift_limit, metric=metric, max_detectable=max_detectable,
                             allow_mismatch=allow_mismatch, strict_environment=strict_environment,
                             clock_response=clock_response)


def _compare_runs(base: Sequence[Results], head: Sequence[Results], *, threshold: float, alpha: float,
                  run_to_run_cv: Mapping[tuple[str, str], Any] | None, suite_shift_limit: float,
                  metric: str | None = None, max_detectable: float = DEFAULT_MAX_DETECTABLE,
                  allow_mismatch: bool = False, strict_environment: bool = False,
                  clock_response: Mapping[tuple[str, str], tuple[float, float]] | None = None) -> Comparison:
    _check_parameters(threshold, alpha, suite_shift_limit, max_detectable, metric)
    by_gpu = replicated(base) or replicated(head)
    b_index, h_index = _index(base, by_gpu), _index(head, by_gpu)
    common = list(filter(h_index.__contains__, b_index))  # b_index's order, as a comprehension gives it
    if not common:
        raise NothingToCompareError(
            "nothing to compare: base and head share no specialization (matched by algorithm and name); "
            f"base has {_describe(base, b_index)}; head has {_describe(head, h_index)}"
        )
    sides = zip(map(b_index.__getitem__, common), map(h_index.__getitem__, common), strict=True)
    both = dict(zip(common, sides, strict=True))
    comparability = assess(base, head, both, metric=metric, strict=strict_environment)
    del both
    if not comparability.comparable and not allow_mismatch:
        raise NotComparableError(comparability)
    delta = stats.log_threshold(threshold)
    rows: dict[tuple[str, str], SpecComparison] = {}
    paired: list[_Paired] = []
    file_sizes = {id(r): _file_size(r) for r in (*base, *head)}
    size_class = functools.lru_cache(maxsize=256)(priors.size_class)  # a side's files share their --size
    for key in common:
        b, h = b_index[key], h_index[key]
        # `_pair`, through its usual path at once where each side measured the specialization once
        pair = ((len(b) == 1 and len(h) == 1 and _pair_one(key, b, h, run_to_run_cv, metric, file_sizes, size_class))
                or _pair(key, b, h, run_to_run_cv, metric, file_sizes))
        if isinstance(pair, SpecComparison):
            blockers = _blockers(comparability, key)
            rows[key] = replace(pair, not_comparable=blockers) if blockers else pair
        else:
            paired.append(pair)
    judgement, gpu_shifts, tested = _judge_by_process(
        paired, rows, comparability, b_index, h_index, delta, threshold, alpha, suite_shift_limit, base, head,
        max_detectable, clock_response)
    del paired  # the runs' ln values: 30 MB at 100,000 specializations

    shared = list(map(rows.__getitem__, common))
    if len(shared) == len(b_index) == len(h_index):  # every specialization on both sides (the usual case)
        ordered = shared  # in b_index's order, as below
    else:
        ordered = []
        for key, entries in b_index.items():
            ordered.append(rows[key] if key in rows
                           else _one_sided(key, entries[0], Verdict.REMOVED, "only in base", metric))
        for key, entries in h_index.items():
            if key not in b_index:
                ordered.append(_one_sided(key, entries[0], Verdict.ADDED, "only in head", metric))

    # each shared row's fields read by C iteration: (its `ratio`, metric) where it has a ratio and is comparable
    of_rows, blocked = list(map(_ROW_FIELDS, shared)), list(map(_NOT_COMPARABLE, shared))
    compared = [(hv / bv, m) for m, bv, hv, nc in of_rows if m is not None and bv and hv and bv > 0 and hv > 0
                and not nc]
    metrics = {m for _, m in compared}
    lower_is_better = bool(compared) and all(_better(m) < 0 for m in metrics)
    # One direction for the geometric mean: head/base of the metric where every row is a time,
    # else of throughput (a time row enters as base/head, its speed).
    power = {m: _better(m) if not lower_is_better else 1.0 for m in metrics}
    summary = Summary(
        counts=count_verdicts(ordered),
        # a skipped row compares nothing
        compared=len(shared) - sum(map(operator.is_, map(_VERDICT, shared), itertools.repeat(Verdict.SKIPPED))),
        geomean_ratio=stats.geometric_mean([ratio ** power[m] for ratio, m in compared]),
        higher_is_better=not lower_is_better,
        not_comparable=sum(map(bool, blocked)),  # not `comparable`
    )
    method = Method(threshold=float(threshold), alpha=float(alpha), description=METHOD_DESCRIPTION,
                    suite_shift_limit=float(suite_shift_limit), standard_error_scale=float(judgement.widen),
                    metric=metric, max_detectable=float(max_detectable), round_correlation=float(judgement.rho))
    warnings = _warnings(base, head, comparability, judgement, tested, max_detectable, bool(run_to_run_cv))
    warnings += gpu_shifts
    return Comparison(
        rows=tuple(ordered),
        warnings=warnings,
        summary=summary,
        method=method,
        base_sources=tuple(r.source for r in base),
        head_sources=tuple(r.source for r in head),
        context={"base": _side_context(base), "head": _side_context(head)},
        suite_shift=judgement.finding,
        comparability=comparability,
    )


_ROW_FIELDS = attrgetter("metric", "base_value", "head_value", "not_comparable")
_NOT_COMPARABLE, _VERDICT = attrgetter("not_comparable"), attrgetter("verdict")


class _Judgement(NamedTuple):
    """What `_judge` found for a suite, beside the rows it wrote: the suite's finding, the
    empirical-null widening, how many rows were insensitive, the rounds' lag-1 correlation allowed
    for and the spread the widening came from (before its cap)."""

    finding: SuiteFinding | None
    widen: float
    insensitive: int
    rho: float
    spread: float
    #: Where rows carried what the sides' SM clocks apart add (`_clock_part`): the base's and the
    #: head's mean SM clock (MHz), how many rows, and how many of them history's answer corrected.
    clocks: tuple[float, float, int, int, str] | None = None


#: The sides' SM clocks apart (ln) from which compare warns that they widened the standard errors.
CLOCK_WARNING = 0.001

#: The judgement of no suite.
_NO_JUDGEMENT = _Judgement(None, 1.0, 0, 0.0, 1.0)


def _judge_by_process(paired: list[_Paired], rows: dict[tuple[str, str], SpecComparison],
                      comparability: Comparability, b_index: Mapping[tuple[str, str], list[_Entry]],
                      h_index: Mapping[tuple[str, str], list[_Entry]], delta: float, threshold: float, alpha: float,
                      suite_shift_limit: float, base: Sequence[Results], head: Sequence[Results],
                      max_detectable: float,
                      clock_response: Mapping[tuple[str, str], tuple[float, float]] | None = None,
                      ) -> tuple[_Judgement, list[str], tuple[int, int]]:
    """`_judge` once per suite of rows that one pair of processes measured. A ``--devices`` side
    (results 4.8.0) measured each GPU's specializations in a worker process of its own, whose
    shift (the part every kernel of a process shares) is that GPU's: each (base GPU, head GPU)
    pair is judged as a suite of its own, so a GPU that runs slower is its suite's shift, never
    a regression of its kernels against the others'. Returns the judgement that counts (the
    finding of the largest detected shift, else the largest suite's; the widest widening and
    spread, the insensitive rows, the largest correlation), a warning for each other pair's
    detected shift, and how many rows were tested (and of them on a side without rounds)."""
    if not paired:
        return _NO_JUDGEMENT, [], (0, 0)
    if not any(r.devices for r in (*base, *head)):
        suite = _suite(paired, comparability, rows, clock_response)
        if not suite:
            return _NO_JUDGEMENT, [], (0, 0)
        judgement = _judge(suite, rows, delta, threshold, alpha, suite_shift_limit, base, head, max_detectable)
        return judgement, [], (len(suite), int(suite.prior_only().sum()))
    groups: dict[tuple[str, str], list[_Paired]] = {}
    for p in paired:
        pair = tuple(", ".join(sorted({gpu_label(e.spec, e.results) for e in index[p.key]}))
                     for index in (b_index, h_index))
        groups.setdefault((pair[0], pair[1]), []).append(p)
    suites = [(pair, suite) for pair, group in groups.items()
              if (suite := _suite(group, comparability, rows, clock_response))]
    if not suites:
        return _NO_JUDGEMENT, [], (0, 0)
    judged = [(pair, _judge(suite, rows, delta, threshold, alpha, suite_shift_limit, base, head, max_detectable))
              for pair, suite in suites]
    found = [(pair, j.finding) for pair, j in judged if j.finding is not None]
    detected = sorted(((p, f) for p, f in found if f.detected), key=lambda pf: -abs(pf[1].change))
    finding = (detected[0][1] if detected
               else max((f for _, f in found), key=lambda f: f.specializations, default=None))
    notes = [f"GPU {b} (base) against GPU {h} (head): {f.describe()}" for (b, h), f in detected[1:]]
    if detected and len(groups) > 1:
        (b, h), _ = detected[0]
        notes.insert(0, f"the suite-wide shift is that of GPU {b} (base) against GPU {h} (head): each pair of GPUs "
                        "(a worker process each) is judged as a suite of its own")
    counts = (sum(len(suite) for _, suite in suites), sum(int(suite.prior_only().sum()) for _, suite in suites))
    each = [j for _, j in judged]
    clocked = [j.clocks for j in each if j.clocks is not None]
    judgement = _Judgement(finding, max(j.widen for j in each), sum(j.insensitive for j in each),
                           max(j.rho for j in each), max(j.spread for j in each),
                           max(clocked, key=lambda c: abs(math.log(c[1] / c[0])), default=None))
    return judgement, notes, counts


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


def _one_run_of_workers(base: Sequence[Results], head: Sequence[Results]) -> str:
    """Which sides ("base is", "head is", "each side is") are one ``--processes`` file of two or more
    workers (`load_side` splits a file into its workers, who share its `source`); "" where none is."""
    lone = [name for name, side in (("base", base), ("head", head))
            if len(side) >= 2 and len({r.source for r in side}) == 1]
    return "each side is" if len(lone) == 2 else f"{lone[0]} is" if lone else ""


def _same_files(base: Sequence[Results], head: Sequence[Results]) -> list[str]:
    """The files both sides hold (their sources less a run's ``#runR``, resolved), in name order: a comparison of
    a file with itself, whose every change is 0 (a CI step that fetched one artifact for both sides)."""
    def files(side: Sequence[Results]) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in side:
            name = re.sub(r"#run\d+$", "", r.source)
            if os.path.isfile(name):  # not standard input, nor a document built in memory
                out[os.path.realpath(name)] = name
        return out

    b, h = files(base), files(head)
    return sorted(h[path] for path in b.keys() & h.keys())


def _warnings(base: Sequence[Results], head: Sequence[Results], comparability: Comparability,
              judgement: _Judgement, tested: tuple[int, int], max_detectable: float, history: bool) -> list[str]:
    """The comparison's warnings: what is not comparable, other machines, the contexts, the suite's
    shift, the rows judged on priors, the insensitive rows, correlated rounds and the widening (and
    where the spread was beyond what the widening may correct, that the verdicts may be noise), and
    a side that is one run of workers (without `history`). `tested`: how many rows were tested, and
    how many of them on a side without rounds."""
    warnings = [f"not comparable (--allow-mismatch: these rows are not judged): {line}"
                for line in comparability.lines()]
    warnings += [f"{d.describe()} (the same measurement on another machine; --strict-environment refuses it)"
                 for d in comparability.warnings]
    warnings += _all_context_warnings(base, head)
    if same := _same_files(base, head):
        warnings.append(f"base and head hold the same file ({', '.join(same)}): each of its changes is 0 by "
                        "construction; was one results file fetched for both sides?")
    finding, insensitive, rho, widen, spread = (judgement.finding, judgement.insensitive, judgement.rho,
                                                judgement.widen, judgement.spread)
    if finding is not None and finding.detected:
        warnings.append(finding.describe())
    count, prior_only = tested
    if prior_only:
        warnings.append(f"{prior_only} of {count} specializations have a side without rounds (a C++ "
                        "primbench file, --rounds 1, or an older file): their run-to-run variation is the measured "
                        "prior of their size class (primbench.compare.priors), not their own; --rounds 4+ or history "
                        "would measure it")
    if count and insensitive:
        warnings.append(f"{insensitive} of {count} specializations could not have detected a change under "
                        f"{max_detectable * 100:g} % (--max-detectable): inconclusive")
    if judgement.clocks is not None:
        b_mhz, h_mhz, rows, corrected, source = judgement.clocks
        apart = math.log(h_mhz / b_mhz)
        if abs(apart) >= CLOCK_WARNING:
            said = (f"base ran at a mean SM clock of {b_mhz:.0f} MHz, head at {h_mhz:.0f} MHz ({apart * 100:+.2f} %), "
                    "and kernels answer the clock unequally: ")
            parts = []
            if corrected:
                where = "in history" if source == "history" else "within each side's files"
                parts.append(f"{corrected} specialization{'s' if corrected != 1 else ''}' change corrected by "
                             f"its answer to the clock measured {where}")
            if rows > corrected:
                more = priors.CLOCK_RESPONSE_SD * abs(apart) * 100
                parts.append(f"{rows - corrected} carry ±{more:.2f} % more in their standard error "
                             "(compare.priors.CLOCK_RESPONSE_SD of the clocks apart; history of the base would "
                             "measure each one's answer, sides run at the same clock need none)")
            warnings.append(said + "; ".join(parts))
    if rho > 0:
        warnings.append(f"successive rounds are correlated (lag-1 {rho:.2f}, pooled over the suite): the rounds' "
                        "variance of a mean is widened for it; a drift within the runs (temperature, clocks) is the "
                        "usual cause")
    judged = sum(1 for side in (base, head) for r in side for spec in filter(_NOISE_TIMEOUT, r.specializations)
                 if not _unjudged_timeout(spec))
    if judged:
        warnings.append(f"{judged} measurement{'s' if judged != 1 else ''} ended on the noise timeout (batches "
                        "scattered beyond the noise tolerance): judged on the spread of their rounds, which holds "
                        "that scatter; their smallest detectable change is marked *")
    if spread > widen * WIDEN_WARNING:
        warnings.append(f"the changes of this suite spread {spread:.2f}x wider than the noise model predicts, but the "
                        f"standard errors were widened only {widen:.2f}x (the empirical null's cap): the model misses "
                        "much of what varies between these runs (a per-process state of some kernels, or most of the "
                        "suite changed), so a flagged row may be noise; repeats (2+ runs a side) or history would "
                        "measure it")
    elif widen > WIDEN_WARNING:
        warnings.append(f"the changes of this suite spread {widen:.2f}x wider than the rounds' spread predicts: "
                        f"standard errors widened {widen:.2f}x (empirical null); more rounds or repeats, or history, "
                        "would sharpen the verdicts")
    if count and not history and (lone := _one_run_of_workers(base, head)):
        warnings.append(f"{lone} one run of several worker processes, judged by its workers' spread, which a state "
                        "every worker of the run shares does not show (H100: 9 of 20 identical pairs of one run "
                        "failed at 4 MiB, 7 of 30 at 64 MiB; 0-2 of 56 with two runs a side, "
                        "tests/benchmarks/verdicts/); two runs a side (--runs 2, or BASE1 BASE2 -- HEAD1 HEAD2, or a "
                        "directory of both) or history measure it")
    return warnings


_NOISE_TIMEOUT = attrgetter("noise_timeout")


def _not_comparable(fields: Mapping[str, Any], blockers: tuple[str, ...]) -> SpecComparison:
    """A row whose sides measure different things: its values and change, no verdict."""
    return SpecComparison(verdict=Verdict.INCONCLUSIVE, not_comparable=blockers,
                          reason="not comparable: " + "; ".join(blockers), reason_kind=ReasonKind.NOT_COMPARABLE,
                          **fields)


def _side_conditions(side: Sequence[Results]) -> tuple[float | None, float | None]:
    """Mean GPU temperature at the start of the specializations and mean SM clock of a side."""
    # Specialization.gpu_temp_start, without two property calls a specialization
    temps = [t.start for r in side for s in r.specializations
             if (t := s.gpu_temp_celsius) is not None and t.start is not None]
    mhz = [float(c.average_mhz) for r in side for s in r.specializations
           if (c := s.sm_clock) is not None and c.average_mhz is not None]
    return (float(np.mean(temps)) if temps else None, float(np.mean(mhz)) if mhz else None)


def _aa_shift_p(suite: _Suite, family: np.ndarray, centre: float) -> float:
    """How often the measured A/A suites of the family's size classes moved apart at least as far as
    `centre` (`stats.shift_tail_p`): the median over the family's rows, each by its class's shifts
    for runs with rounds or without, scaled for sides of several runs (the median run count)."""
    counts = suite.run_counts().astype(float)
    scale = math.sqrt((1.0 / float(stats.median_of(counts[0::2][family]))
                       + 1.0 / float(stats.median_of(counts[1::2][family]))) / 2.0)
    no_rounds = suite.rows_without_rounds().astype(np.int64)
    classes, at = _class_table(suite.klass)
    table = np.array([[stats.shift_tail_p(centre, c.shifts, priors.SHIFT_LEVELS, c.shift_pairs, scale)
                       for c in (k.rounds, k.single)] for k in classes])
    return float(stats.median_of(table[at[family], no_rounds[family]]))


def _prior_only_cap(suite: _Suite, family: np.ndarray) -> float:
    """The most the empirical null may widen a suite whose every row (of `family`) is judged on the
    measured prior of a whole run (no rounds on a side, no history): as far as that prior's own
    uncertainty reaches (`stats.prior_upper_ratio`, 95 %), not `stats.WIDEN_MAX`. Such a prior
    measured the whole process-to-process variance, so a spread beyond its upper bound is more
    likely the suite's changes than noise the model missed. Any other suite: `stats.WIDEN_MAX`."""
    rows = np.flatnonzero(family)
    if not rows.size or not suite.prior_only()[rows].all():
        return stats.WIDEN_MAX
    classes, at = _class_table([suite.klass[i] for i in rows.tolist()])
    bound = np.array([stats.prior_upper_ratio(k.single.process_df) for k in classes])
    return float(stats.median_of(bound[at]))


@dataclass(frozen=True)
class _Tests:
    """Every tested row's tests, as arrays: `better` (+1 where higher is better, -1 for a time),
    its change `d` and `up` (d on the scale where up is better), whether it is in the `family`
    tested (trusted, with a variance), and the deciding test's change, standard error, df, p-
    and q-values (`test_d`, `se`, `df`, `p_row`, `q_row`), the absolute test's, the equivalence
    test's, the interval, the smallest detectable change and the noise's part of it; the widening
    of the standard errors (`widen`) and the spread it came from (`spread`, before the cap)."""

    better: np.ndarray
    d: np.ndarray
    up: np.ndarray
    family: np.ndarray
    test_d: np.ndarray
    se: np.ndarray
    df: np.ndarray
    p_row: np.ndarray
    q_row: np.ndarray
    p_abs: np.ndarray
    q_abs: np.ndarray
    p_equiv: np.ndarray
    low: np.ndarray
    high: np.ndarray
    mdc: np.ndarray
    sensitivity: np.ndarray
    rel: np.ndarray
    relative: bool  # the relative test decides (a suite that did not move beyond its limit)
    centred: bool  # a suite: its centre (`stats.suite_centre`) taken out
    centre: float
    row_alpha: float
    widen: float
    spread: float  # the changes' spread against the model's (the empirical null before its cap)
    finding: SuiteFinding | None


def _tests(suite: _Suite, noise: _Noise, delta: float, threshold: float, alpha: float, suite_shift_limit: float,
           base: Sequence[Results], head: Sequence[Results]) -> _Tests:
    """The tests of every row, and of the suite's centre, the change most rows share (see `_judge`)."""
    metrics = list(map(operator.itemgetter("metric"), suite.fields))
    sign = {m: _better(m) for m in dict.fromkeys(metrics)}
    better = np.fromiter(map(sign.__getitem__, metrics), dtype=float, count=len(metrics))
    d = suite.d - _clock_correction(suite, better)  # the change the clocks apart owe, where history measured it
    up = better * d  # up is better
    trusted = _are_none(suite.untrusted)
    own_se = np.sqrt(noise.own)
    family = trusted & np.isfinite(own_se) & (own_se > 0)
    k = int(family.sum())
    centred = k >= stats.SUITE_MIN
    finding = None
    centre = 0.0
    rel_se, rel_df = own_se, noise.own_df
    widen = spread = 1.0
    suite_p = 1.0
    if centred:
        centre = float(stats.suite_centre(up[family], own_se[family])[0])
        rel_se = stats.centred_standard_errors(own_se, family)
        spread = stats.empirical_null_spread(up[family] - centre, rel_se[family], rel_df[family])
        widen = min(spread, stats.WIDEN_MAX, _prior_only_cap(suite, family))
        rel_se = rel_se * widen
        centre_var = stats.centre_variance(own_se[family] * widen)
        shared = float(stats.median_of(noise.common[family]))
        suite_se = math.sqrt(shared + centre_var)
        suite_df = float(stats.median_of(noise.common_df[family]))
        suite_p = float(stats.t_test_p(np.array([centre]), np.array([suite_se]), np.array([suite_df]))[0])
        # and against how far identical processes were measured to move apart as a whole
        suite_p = max(suite_p, _aa_shift_p(suite, family, centre))
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
    # where the suite moved beyond the limit, the rows' spread about its centre is no null: the
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
    return _Tests(better, d, up, family, test_d, se, df, p_row, q_row, p_abs, q_abs, p_equiv, low, high, mdc,
                  sensitivity, rel, relative, centred, centre, row_alpha, widen, spread, finding)


#: The reason kinds of tested rows, in the order the decision rules try them (`_kinds`).
_TESTED_KINDS = (ReasonKind.UNTRUSTED, ReasonKind.NO_VARIABILITY, ReasonKind.SIGNIFICANT, ReasonKind.INSENSITIVE,
                 ReasonKind.EQUIVALENT, ReasonKind.MOVED_WITH_SUITE, ReasonKind.TOO_NOISY)


def _kinds(suite: _Suite, t: _Tests, delta: float, alpha: float, max_detectable: float) -> np.ndarray:
    """The decision rules, every row at once: each row's kind of reason (its index in `_TESTED_KINDS`).
    Untrusted measurements, or no variance: inconclusive; beyond the threshold and significant,
    moving the way the test says: a regression or improvement; else insensitive (could not have
    detected `max_detectable`), unchanged (equivalent), moved with the suite, or too noisy."""
    untrusted = np.fromiter(map(bool, suite.untrusted), dtype=bool, count=len(suite))
    big = np.abs(t.d) >= delta
    flagged = big & (np.abs(t.test_d) >= delta) & (t.q_row <= t.row_alpha) \
        & (np.sign(t.test_d * t.better) == np.sign(t.up))
    moved = t.relative & big & (np.abs(t.test_d) < delta)
    return np.select([untrusted, ~t.family, flagged, t.sensitivity > max_detectable, t.p_equiv <= alpha, moved],
                     [0, 1, 2, 3, 4, 5], 6)


def _judge(suite: _Suite, rows: dict[tuple[str, str], SpecComparison], delta: float, threshold: float,
           alpha: float, suite_shift_limit: float, base: Sequence[Results],
           head: Sequence[Results],
           max_detectable: float = DEFAULT_MAX_DETECTABLE) -> _Judgement:
    """Test and decision rules: every tested specialization gets its verdict in `rows`; returns what
    was found for the suite (`_Judgement`).

    Two tests per row. The *absolute* one weighs d against everything a run varies by, the part
    that all kernels of a process share included: it catches a change shared by the suite (a
    header, a compiler flag) as well as a kernel's own. With `SUITE_MIN` or more rows the
    *relative* one weighs d less the suite's centre (`stats.suite_centre`: the change most rows
    share) against what is the kernel's own: it catches one kernel's change more sharply. The
    suite's centre itself is tested against the
    shared part (what A/A suites show). A row is a regression or improvement when either test is
    significant after BH, beyond the threshold, and the row itself moved that way."""
    noise = _noise(suite)
    t = _tests(suite, noise, delta, threshold, alpha, suite_shift_limit, base, head)
    kinds = _kinds(suite, t, delta, alpha, max_detectable)
    _write_rows(suite, noise, t, kinds, rows, threshold, alpha, suite_shift_limit, max_detectable)
    return _Judgement(t.finding, t.widen, int(np.sum(kinds == 3)), noise.round_correlation, t.spread,
                      _clocks_apart(suite, noise))


def _clocks_apart(suite: _Suite, noise: _Noise) -> tuple[float, float, int, int, str] | None:
    """The sides' mean SM clocks (MHz) over the rows that carried the clocks' term, how many rows
    did, how many of them a measured answer corrected, and where it was measured (history or the
    files: `_Suite.clock_source`); None where none did."""
    rows = np.flatnonzero(noise.clocked) if noise.clocked is not None else np.zeros(0, dtype=np.int64)
    if not rows.size:
        return None
    runs = suite.runs
    chosen = np.zeros(len(suite), dtype=bool)
    chosen[rows] = True  # not np.isin: it imports numpy.ma
    at = chosen[runs.row] & np.isfinite(runs.clock)
    side = runs.side[at]
    if not (side == 0).any() or not (side == 1).any():
        return None
    clock = runs.clock[at]
    corrected = int(np.isfinite(suite.clock_responses[0][rows]).sum())
    return (math.exp(float(clock[side == 0].mean())), math.exp(float(clock[side == 1].mean())), int(rows.size),
            corrected, suite.clock_source)


#: How many keys a tested row's dict has once every field but its reason and statistics is set, with both
#: to come (`_write_rows`; `SpecComparison.from_state`).
_ROW_KEYS = len(dataclass_fields(SpecComparison)) - len(LATER_FIELDS) + 1
#: `ROW_DEFAULTS` but the fields a tested row's statistics set (`_Reasons.statistics`).
_EAGER_DEFAULTS = {k: v for k, v in ROW_DEFAULTS.items() if k not in LATER_FIELDS}
#: The statistics of a row outside the family tested (`_Reasons.statistics`): the defaults.
_NO_STATISTICS = {k: v for k, v in ROW_DEFAULTS.items() if k in LATER_FIELDS}


class _Reasons:
    """The reason texts and statistics of one suite's tested rows (`_write_rows`): each row's text
    written when its ``reason`` is first read, its statistics set when one of them is first read
    (`SpecComparison.from_state`, `model.ReasonTexts`, `model.RowStatistics`): the terminal table
    shows 100 rows of 100,000, and formatting every row's statistics is 0.4 s, setting them 0.2 s.
    The same text and values as written at once: the same values, formatted the same way."""

    def __init__(self, suite: _Suite, noise: _Noise, t: _Tests, kinds: list[int], threshold: float, alpha: float,
                 suite_shift_limit: float, max_detectable: float) -> None:
        self.t, self.noise = t, noise
        self.kinds, self.threshold, self.relative = kinds, threshold, t.relative
        self.shift = {b: _pct(math.expm1(b * t.centre)) for b in (1.0, -1.0)}
        self.level = f"{(1 - 2 * alpha) * 100:g} % interval"
        self.moved_why = (f"within --suite-shift-limit {suite_shift_limit * 100:g} %" if t.finding is not None
                          and t.finding.detected else "not significant against what processes share")
        self.which = "with the suite-wide shift" if t.finding is not None and t.finding.beyond_limit else "absolute"
        self.sig = f" beyond the ±{threshold * 100:g} % threshold and significant ("
        self.sig_q = f", q <= {t.row_alpha:g}); "
        self.insensitive = f" % (--max-detectable {max_detectable * 100:g} %); "
        self.against_of = {b: f" relative to the suite's {self.shift[b]}" if t.relative else "" for b in self.shift}
        # x * 100 in NumPy is the same product as in Python
        self.better, self.d, self.mdc = t.better.tolist(), t.d.tolist(), t.mdc.tolist()
        self.sensitivity, self.untrusted, self.source = t.sensitivity.tolist(), suite.untrusted, noise.source
        self.p_row, self.q_row, self.p_abs = t.p_row.tolist(), t.q_row.tolist(), t.p_abs.tolist()
        self.se100, self.mdc100 = (t.se * 100).tolist(), (t.mdc * 100).tolist()
        self.low100, self.high100 = (t.low * 100).tolist(), (t.high * 100).tolist()
        self.df_text = list(map("{:.1f}".format, t.df.tolist()))

    @functools.cached_property
    def _columns(self) -> tuple[list[Any], ...]:
        """The statistics' columns as Python values (`statistics`), made once, when first read."""
        t, own = self.t, self.noise.own
        cv = np.where(np.isfinite(own), np.sqrt(np.where(np.isfinite(own), own, 0.0) / 2), math.nan).tolist()
        return (t.family.tolist(), t.q_abs.tolist(), t.p_equiv.tolist(), t.se.tolist(), t.df.tolist(),
                t.low.tolist(), t.high.tolist(),
                list(map(math.expm1, t.rel.tolist())) if t.centred else [None] * len(cv),
                [c if f else None for c, f in zip(cv, np.isfinite(own).tolist(), strict=True)])

    def statistics(self, i: int) -> dict[str, Any]:
        """Row `i`'s fields of `model.LATER_FIELDS`: those of the family tested, else their defaults
        but the relative change and the run-to-run CV and its source."""
        family, q_abs, p_equiv, se, df, low, high, relative, cv = self._columns
        if not family[i]:
            return {**_NO_STATISTICS, "relative_change": relative[i], "run_to_run_cv": cv[i],
                    "run_to_run_source": self.noise.source[i]}
        return {"p_value": self.p_row[i], "q_value": self.q_row[i], "absolute_p_value": self.p_abs[i],
                "absolute_q_value": q_abs[i], "p_equivalence": p_equiv[i], "standard_error": se[i],
                "degrees_of_freedom": df[i], "change_low": low[i], "change_high": high[i],
                "min_detectable_change": self.mdc[i], "relative_change": relative[i],
                "test": f"t-test on ln(head/base){self.against_of[self.better[i]]}, {self.df_text[i]} df",
                "run_to_run_cv": cv[i], "run_to_run_source": self.noise.source[i]}

    def _statistics(self, i: int) -> str:
        absolute = f"; absolute p={self.p_abs[i]:.2g}" if self.relative else ""
        return (f"t-test p={self.p_row[i]:.2g}, BH q={self.q_row[i]:.2g}{absolute}, σ={self.se100[i]:.3f} % "
                f"({self.df_text[i]} df, {self.source[i]}), smallest detectable {self.mdc100[i]:.2f} % (80 % power)")

    def reason(self, i: int) -> str:
        kind, better = self.kinds[i], self.better[i]
        against = self.against_of[better]
        if kind == 4:  # the usual one first
            within = max(self.threshold, self.mdc[i]) * 100
            return (f"{self.level} [{self.low100[i]:+.2f} %, {self.high100[i]:+.2f} %]{against} within "
                    f"±{within:.2f} % (the threshold or the smallest detectable change); {self._statistics(i)}")
        change = _pct(math.expm1(self.d[i]))
        if kind == 1:
            return f"no variability to weigh change {change} against"
        if kind == 0:
            return f"{self.untrusted[i]}: change {change} not trusted; {self._statistics(i)}"
        if kind == 2:
            how = f"relative to the suite's {self.shift[better]}" if self.relative else self.which
            return f"change {change}{self.sig}{how}{self.sig_q}{self._statistics(i)}"
        if kind == 3:
            return (f"insensitive: these runs could not have detected a change under "
                    f"{self.sensitivity[i] * 100:.1f}{self.insensitive}{self._statistics(i)}")
        if kind == 5:
            return (f"moved with the suite: change {change}, the suite's shift {self.shift[better]} "
                    f"{self.moved_why}; {self._statistics(i)}")
        return (f"too noisy to tell: change {change}{against} not significant, interval "
                f"[{self.low100[i]:+.2f} %, {self.high100[i]:+.2f} %] wider than "
                f"±{max(self.threshold, self.mdc[i]) * 100:.2f} %; {self._statistics(i)}")


def _write_rows(suite: _Suite, noise: _Noise, t: _Tests, kinds: np.ndarray,
                rows: dict[tuple[str, str], SpecComparison], threshold: float, alpha: float,
                suite_shift_limit: float, max_detectable: float) -> None:
    """Every tested row, its verdict (`kinds`, `_kinds`); its reason's text is written when first
    read, its statistics set when one of them is first read (`_Reasons`)."""
    kind_list = kinds.tolist()
    texts = _Reasons(suite, noise, t, kind_list, threshold, alpha, suite_shift_limit, max_detectable)
    up = t.up.tolist()
    keys, fields = suite.keys, suite.fields
    kinds_of = _TESTED_KINDS
    unchanged, inconclusive, regression, improvement = (Verdict.UNCHANGED, Verdict.INCONCLUSIVE, Verdict.REGRESSION,
                                                        Verdict.IMPROVEMENT)
    make = SpecComparison.from_state
    for i, kind in enumerate(kind_list):
        row = fields[i]  # the row's own: it becomes the row (and is let go once it has)
        fields[i] = {}
        row["verdict"] = (unchanged if kind == 4 else (regression if up[i] < 0 else improvement) if kind == 2
                          else inconclusive)
        row["reason_kind"] = kinds_of[kind]
        row["not_comparable"] = ()
        row[LATER_REASON] = row[LATER_STATISTICS] = (texts, i)
        # every field set (the usual case): the row's dict grows in place, not copied with the defaults
        rows[keys[i]] = make(row if len(row) == _ROW_KEYS else {**_EAGER_DEFAULTS, **row})


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
