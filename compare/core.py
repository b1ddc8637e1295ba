"""Comparing two sides (base, head) of results: matching, context checks, verdicts. Never prints.

`compare_runs` is the one entry point (the CLI and the history layer call it);
`load_side` reads a side from a results.json or a directory of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from compare import stats
from compare.model import Comparison, Method, SpecComparison, Summary, Verdict, count_verdicts
from primbench.errors import PrimbenchError, UsageError
from primbench.resultconfig import setting_differences
from primbench.results import Results, ResultsFileError, Specialization, load_results

#: Widening of the standard errors (empirical null) above which compare warns.
WIDEN_WARNING = 1.25

METHOD_DESCRIPTION = (
    "d = ln(head/base), variance = within-run SE(base)^2 + SE(head)^2 + 2 * run-to-run CV^2, "
    "widened when a suite's changes spread wider than that predicts (empirical null, 20+ specializations); "
    "regression/improvement when |d| >= ln(1+threshold) and the z-test of d = 0 is significant "
    "after Benjamini-Hochberg across specializations (q <= alpha); unchanged when the TOST "
    "equivalence test at alpha puts |d| inside the threshold; otherwise, or after a noise "
    "timeout or a throttled SM clock, inconclusive"
)


class NothingToCompareError(PrimbenchError):
    """Base and head share no specialization (exit 2)."""


# --------------------------------------------------------------------------- loading


def load_side(path: str | Path) -> list[Results]:
    """One side of a comparison: a results.json, or every ``*.json`` directly in a directory
    (one per benchmark program), in name order. Errors name the file and the field."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.glob("*.json") if f.is_file())
        if not files:
            raise ResultsFileError(str(p), None, "directory holds no *.json results files")
        return [load_results(f) for f in files]
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


def _index(side: Sequence[Results]) -> dict[tuple[str, str], _Entry]:
    out: dict[tuple[str, str], _Entry] = {}
    for results in side:
        for i, spec in enumerate(results.specializations):
            key = (_spec_algorithm(spec, results), spec.name)
            if key in out:
                other = out[key]
                raise ResultsFileError(
                    results.source, f"specializations[{i}].name",
                    f"duplicate specialization {key[1]!r} of algorithm {key[0]!r} "
                    f"(also in {other.results.source}, specializations[{other.index}])",
                )
            out[key] = _Entry(spec, results, i)
    return out


def _describe(side: Sequence[Results], index: Mapping[tuple[str, str], _Entry]) -> str:
    algos = sorted({k[0] for k in index})
    files = ", ".join(r.source for r in side) or "no files"
    if not algos:
        return f"no specializations ({files})"
    return f"{len(index)} specialization(s) of {', '.join(repr(a) for a in algos)} ({files})"


# --------------------------------------------------------------------------- context checks


def _fmt(value: Any) -> str:
    return "absent" if value is None else repr(value) if isinstance(value, str) else str(value)


def _gpu_label(gpu: Mapping[str, Any]) -> str:
    parts = [str(gpu.get("name", "unknown GPU"))]
    for key in ("uuid", "serial"):
        if gpu.get(key):
            parts.append(f"{key} {gpu[key]}")
    return ", ".join(parts)


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def context_warnings(base: Results, head: Results) -> list[str]:
    """What differs between two files of one algorithm in ways that move results."""
    out: list[str] = []
    if base.version != head.version:
        out.append(f"schema version differs: base {base.version}, head {head.version}")
    bg, hg = _as_mapping(base.gpu), _as_mapping(head.gpu)
    if bg.get("name") != hg.get("name"):
        out.append(f"different GPU model: base {_gpu_label(bg)}; head {_gpu_label(hg)}")
    else:
        for key in ("uuid", "serial"):
            if bg.get(key) and hg.get(key) and bg.get(key) != hg.get(key):
                out.append(
                    f"different physical GPU ({key} differs): base {_gpu_label(bg)}; head {_gpu_label(hg)}; "
                    "two GPUs of one model can differ by several percent"
                )
                break
    # which settings move results: primbench.resultconfig (also history's key of a series)
    for section, key, b, h in setting_differences(base, head):
        label = f"setting {key}" if section == "settings" else f"{section}.{key}"
        out.append(f"{label} differs: base {_fmt(b)}, head {_fmt(h)}")
    bs, hs = _as_mapping(base.settings), _as_mapping(head.settings)
    if bs.get("dry") or hs.get("dry"):
        out.append("a side is a dry run (--dry): its throughputs are zeros")
    bm, hm = base.general.get("monitoring"), head.general.get("monitoring")
    if bm != hm:
        if bm is None or hm is None:
            on = "head" if bm is None else "base"
            out.append(f"monitoring differs: only {on} ran with temperature monitoring and control")
        else:
            out.append(f"monitoring differs: base {_fmt(bm)}, head {_fmt(hm)}")
    bb, hb = base.general.get("backend"), head.general.get("backend")
    if bb is not None and hb is not None and bb != hb:
        out.append(f"GPU runtime differs: base {_fmt(bb)}, head {_fmt(hb)}")
    return out


def _all_context_warnings(base: Sequence[Results], head: Sequence[Results]) -> list[str]:
    def by_algo(side: Sequence[Results]) -> dict[str, Results]:
        out: dict[str, Results] = {}
        for r in side:
            algos = {_spec_algorithm(s, r) for s in r.specializations} or {r.algorithm}
            for a in algos:
                out.setdefault(a, r)
        return out

    b, h = by_algo(base), by_algo(head)
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
    gpu = _as_mapping(first.gpu)
    return {
        "files": [r.source for r in side],
        "branch": first.branch,
        "commit": first.commit,
        "date": first.date,
        "gpu": gpu.get("name"),
    }


# --------------------------------------------------------------------------- per-specialization


def _metric(b: Specialization, h: Specialization) -> str | None:
    if (b.bytes_per_second or 0) > 0 and (h.bytes_per_second or 0) > 0:
        return "bytes_per_second"
    if (b.items_per_second or 0) > 0 and (h.items_per_second or 0) > 0:
        return "items_per_second"
    return None


def _within(spec: Specialization, results: Results) -> stats.WithinRun:
    if spec.batches:
        times = stats.per_call_times(spec.batches.batch_ms, spec.batches.kernel_calls, spec.kernel_calls_per_batch)
        found = stats.within_run_from_batches(times)
        if found is not None:
            return found
    window = results.settings.get("batch_window_size")
    window = int(window) if isinstance(window, int | float) and not isinstance(window, bool) and window > 0 else None
    return stats.within_run_from_summary(spec.noise_percent or 0.0, spec.batch_count, window)


def _pct(x: float) -> str:
    return f"{x * 100:+.2f} %"


def _p(x: float) -> str:
    return f"{x:.2g}"


def _valid_cv(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if math.isfinite(v) and v >= 0 else None


def _slow_clock(spec: Specialization) -> str | None:
    """The 4.2.0 ``sm_clock`` check: a description when the SM clock fell below expectations."""
    clock = spec.raw.get("sm_clock") if isinstance(spec.raw, Mapping) else None
    if not isinstance(clock, Mapping) or clock.get("below_expected") is not True:
        return None
    avg, frac = clock.get("average_mhz"), clock.get("fraction_of_default")
    parts = []
    if isinstance(avg, int | float) and not isinstance(avg, bool):
        parts.append(f"{avg:.0f} MHz")
    if isinstance(frac, int | float) and not isinstance(frac, bool):
        parts.append(f"{frac * 100:.0f} % of default")
    return ", ".join(parts) or "below expected"


def _untrusted(b: Specialization, h: Specialization) -> str | None:
    """Why a side's measurement cannot carry a verdict (noise timeout, throttled SM clock), or None."""
    reasons = []
    timeouts = [side for side, s in (("base", b), ("head", h)) if s.noise_timeout]
    if timeouts:
        reasons.append(f"noise timeout in {' and '.join(timeouts)}")
    for side, s in (("base", b), ("head", h)):
        slow = _slow_clock(s)
        if slow:
            reasons.append(f"SM clock below expected in {side} ({slow})")
    return "; ".join(reasons) or None


def compare_runs(
    base: Sequence[Results],
    head: Sequence[Results],
    *,
    threshold: float = stats.DEFAULT_THRESHOLD,
    alpha: float = stats.DEFAULT_ALPHA,
    run_to_run_cv: Mapping[tuple[str, str], float] | None = None,
) -> Comparison:
    """Compare base and head, matched by (algorithm, specialization name).

    `threshold`: the smallest change (fraction of throughput) that matters; `alpha`: the
    false-discovery rate for regressions and improvements and the level of the equivalence
    test; `run_to_run_cv`: per (algorithm, name), the relative run-to-run CV of a run's mean
    estimated from history; where absent, `stats.default_run_to_run_cv` (the prior). History
    can only raise the variability above the prior: an estimate from a few runs falls below
    the truth about as often as not, and a z-test that trusts it flags A/A pairs.

    Raises UsageError for bad parameters, ResultsFileError for a (algorithm, name) present
    twice on one side, NothingToCompareError when the sides share no specialization."""
    if not (isinstance(threshold, int | float) and 0 < threshold < 1):
        raise UsageError(f"--threshold must be a fraction between 0 and 1 (0.005 = 0.5 %), got {threshold}")
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise UsageError(f"--alpha must be between 0 and 1, got {alpha}")
    b_index, h_index = _index(base), _index(head)
    common = [k for k in b_index if k in h_index]
    if not common:
        raise NothingToCompareError(
            "nothing to compare: base and head share no specialization (matched by algorithm and name); "
            f"base has {_describe(base, b_index)}; head has {_describe(head, h_index)}"
        )
    delta = stats.log_threshold(threshold)
    rows: dict[tuple[str, str], SpecComparison] = {}
    tested: list[tuple[tuple[str, str], dict[str, Any]]] = []
    extra_warnings: list[str] = []
    se_scale = 1.0
    for key in common:
        be, he = b_index[key], h_index[key]
        b, h = be.spec, he.spec
        common_fields: dict[str, Any] = {
            "algorithm": key[0], "name": key[1],
            "base_source": be.results.source, "head_source": he.results.source,
            "base_noise_timeout": b.noise_timeout, "head_noise_timeout": h.noise_timeout,
            "base_noise": b.noise_percent / 100 if b.noise_percent is not None else None,
            "head_noise": h.noise_percent / 100 if h.noise_percent is not None else None,
        }
        if b.failed or h.failed:
            which = " and ".join(s for s, spec in (("base", b), ("head", h)) if spec.failed)
            err = (b.error if b.failed else h.error) or ""
            rows[key] = SpecComparison(
                verdict=Verdict.INCONCLUSIVE, reason=f"failed in {which}: {err}", **common_fields
            )
            continue
        metric = _metric(b, h)
        if metric is None:
            rows[key] = SpecComparison(
                verdict=Verdict.INCONCLUSIVE,
                reason="no positive throughput on both sides (bytes_per_second and items_per_second)",
                **common_fields,
            )
            continue
        bv, hv = float(getattr(b, metric)), float(getattr(h, metric))
        wb, wh = _within(b, be.results), _within(h, he.results)
        given = _valid_cv(run_to_run_cv.get(key)) if run_to_run_cv else None
        prior = stats.default_run_to_run_cv(wb.cv, wh.cv)
        if given is None:
            r2r, r2r_source = prior, "default prior"
        elif given >= prior:
            r2r, r2r_source = given, "history"
        else:  # history may raise the variability above the prior, never lower it below
            r2r, r2r_source = prior, f"default prior (history's {given * 100:.3f} % is lower)"
        fields = {
            **common_fields, "metric": metric, "base_value": bv, "head_value": hv, "change": hv / bv - 1,
            "run_to_run_cv": r2r, "run_to_run_source": r2r_source,
            "test": f"z-test on ln(head/base), within-run SE from {wb.source}/{wh.source}",
        }
        untrusted = _untrusted(b, h)
        tested.append((key, {"fields": fields, "d": math.log(hv / bv), "se_b": wb.se, "se_h": wh.se, "r2r": r2r,
                             "untrusted": untrusted}))

    if tested:
        d = np.array([t[1]["d"] for t in tested])
        se = stats.standard_error(
            np.array([t[1]["se_b"] for t in tested]),
            np.array([t[1]["se_h"] for t in tested]),
            np.array([t[1]["r2r"] for t in tested]),
        )
        q = np.full(d.shape, np.nan)
        family = np.array([not t[1]["untrusted"] for t in tested], dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            se_scale = stats.empirical_null_scale((d / se)[family & (se > 0)])
        se = se * se_scale
        if se_scale > WIDEN_WARNING:
            extra_warnings.append(
                f"the changes of the {int(family.sum())} specializations spread {se_scale:.2f}x wider than "
                "within-run noise and the run-to-run prior predict: standard errors widened "
                f"{se_scale:.2f}x (empirical null); run-to-run variability from history would sharpen the verdicts"
            )
        p_zero = stats.z_test_p(d, se)
        p_equiv = stats.equivalence_p(d, se, delta)
        low, high = stats.change_interval(d, se, alpha)
        q[family] = stats.benjamini_hochberg(p_zero[family])
        level = f"{(1 - 2 * alpha) * 100:g} % interval"
        thr = f"±{threshold * 100:g} % threshold"
        for i, (key, t) in enumerate(tested):
            f = t["fields"]
            change = _pct(f["change"])
            interval = f"{level} [{_pct(low[i])}, {_pct(high[i])}]"
            stats_text = (f"z-test p={_p(p_zero[i])}" + (f", BH q={_p(q[i])}" if family[i] else "")
                          + f", TOST p={_p(p_equiv[i])}, σ={se[i] * 100:.3f} % "
                          f"(run-to-run {f['run_to_run_cv'] * 100:.3f} %, {f['run_to_run_source']})")
            beyond = abs(d[i]) >= delta
            if t["untrusted"]:
                verdict = Verdict.INCONCLUSIVE
                reason = f"{t['untrusted']}: change {change} not trusted; {stats_text}"
            elif beyond and q[i] <= alpha:
                verdict = Verdict.REGRESSION if d[i] < 0 else Verdict.IMPROVEMENT
                reason = f"change {change} beyond the {thr} and significant (BH q <= α={alpha:g}); {stats_text}"
            elif p_equiv[i] <= alpha:
                verdict = Verdict.UNCHANGED
                reason = f"{interval} within the {thr} (TOST p <= α={alpha:g}); {stats_text}"
            elif beyond:
                verdict = Verdict.INCONCLUSIVE
                reason = f"too noisy to tell: change {change} beyond the {thr} but not significant; {stats_text}"
            else:
                verdict = Verdict.INCONCLUSIVE
                reason = f"too noisy to tell: {interval} straddles the {thr}; {stats_text}"
            rows[key] = SpecComparison(
                verdict=verdict, reason=reason, p_value=float(p_zero[i]),
                q_value=float(q[i]) if family[i] else None, p_equivalence=float(p_equiv[i]),
                standard_error=float(se[i]), change_low=float(low[i]), change_high=float(high[i]), **f,
            )

    ordered: list[SpecComparison] = []
    for key, entry in b_index.items():
        if key in rows:
            ordered.append(rows[key])
        else:
            ordered.append(_one_sided(key, entry, Verdict.REMOVED, "only in base"))
    for key, entry in h_index.items():
        if key not in b_index:
            ordered.append(_one_sided(key, entry, Verdict.ADDED, "only in head"))

    ratios = [r.ratio for r in ordered if r.metric is not None and r.ratio is not None]
    summary = Summary(
        counts=count_verdicts(ordered),
        compared=len(common),
        geomean_ratio=stats.geometric_mean([x for x in ratios if x is not None]),
    )
    method = Method(threshold=float(threshold), alpha=float(alpha),
                    default_run_to_run_cv=stats.DEFAULT_RUN_TO_RUN_CV, description=METHOD_DESCRIPTION,
                    standard_error_scale=float(se_scale))
    return Comparison(
        rows=tuple(ordered),
        warnings=_all_context_warnings(base, head) + extra_warnings,
        summary=summary,
        method=method,
        base_sources=tuple(r.source for r in base),
        head_sources=tuple(r.source for r in head),
        context={"base": _side_context(base), "head": _side_context(head)},
    )


def _one_sided(key: tuple[str, str], entry: _Entry, verdict: Verdict, reason: str) -> SpecComparison:
    spec = entry.spec
    value = spec.bytes_per_second if (spec.bytes_per_second or 0) > 0 else spec.items_per_second
    noise = spec.noise_percent / 100 if spec.noise_percent is not None else None
    side = "base" if verdict is Verdict.REMOVED else "head"
    return SpecComparison(
        algorithm=key[0], name=key[1], verdict=verdict,
        reason=reason + (f" (failed: {spec.error})" if spec.failed else ""),
        **{f"{side}_value": value, f"{side}_noise": noise, f"{side}_noise_timeout": spec.noise_timeout,
           f"{side}_source": entry.results.source},
    )
