"""compare's pieces, each alone: pairing (`_pair`, `_suite`) pools the rounds of every run of a
side, and the noise model (`_noise`) moderates the variances across the suite and lets history's larger
run-to-run variance take over. `compare_runs` composes them with the decision rules (`_judge`),
which tests/test_compare_core.py tests through it."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy.stats import chi2

from primbench.compare import priors
from primbench.compare.comparability import Comparability
from primbench.compare.core import (
    _files_variance,
    _index,
    _noise,
    _pair,
    _Paired,
    _run_values,
    _Runs,
    _runs,
    _Suite,
    _suite,
)
from primbench.compare.model import ReasonKind, SpecComparison, Verdict
from primbench.results import Results, results_from_dict
from tests.compare_data import document, spec

TB = 1.0e12


def res(*specs: dict[str, Any], source: str) -> Results:
    return results_from_dict(document(specs, version="4.4.0"), source)


def suite_of(paired: _Paired) -> _Suite:
    """The suite of one paired specialization (its runs' statistics, its row's fields)."""
    rows: dict[Any, Any] = {}
    suite = _suite([paired], Comparability(()), rows)
    assert not rows and len(suite) == 1
    return suite


def test_pairing_keeps_each_run_with_its_measured_rounds() -> None:
    base = [res(spec("type: char", TB, round_cv=0.01), source=f"b{i}.json") for i in range(2)]
    head = [res(spec("type: char", TB * 1.02, round_cv=0.01), source="h.json")]
    key = ("copy", "type: char")
    paired = _pair(key, _index(base)[key], _index(head)[key], None)
    assert isinstance(paired, _Paired)
    suite = suite_of(paired)
    rounds = len(base[0].specializations[0].rounds)  # 3: fewer than WARMUP_FROM, so all measured
    runs = suite.runs
    assert runs.rounds[runs.side == 0].tolist() == [rounds, rounds] and runs.rounds[runs.side == 1].tolist() == [rounds]
    assert suite.fields[0]["change"] == pytest.approx(0.02, rel=1e-6)
    assert suite.fields[0]["base_observations"] == 2 * rounds
    assert suite.klass[0].name == "64 MiB"  # the files' --size, 128 MiB


def test_a_warm_up_round_is_left_out_from_four_rounds_on() -> None:
    record = spec("type: char", TB, round_cv=0.0)
    first = dict(record["rounds"][0], round=0, bytes_per_second=TB * 0.5, items_per_second=TB * 0.25)
    record["rounds"] = [first] + [dict(r, round=k + 1) for k, r in enumerate(record["rounds"])]
    run = _pair(("copy", "type: char"), _index([res(record, source="b.json")])[("copy", "type: char")],
                _index([res(spec("type: char", TB, round_cv=0.0), source="h.json")])[("copy", "type: char")], None)
    assert isinstance(run, _Paired)
    suite = suite_of(run)
    base = suite.runs.side == 0
    assert suite.runs.rounds[base].tolist() == [3]  # the slow first left out
    assert suite.runs.mean[base][0] == pytest.approx(math.log(TB))
    assert suite.fields[0]["change"] == pytest.approx(0.0, abs=1e-12)


def test_the_runs_statistics_are_math_fsum_s() -> None:
    """The vectorised sums give the floats the per-run Python sums gave (`math.fsum`)."""
    logs = [[27.6, 27.61, 27.59], [1e-9, 3.0, -3.0], [5.0], [27.6, 27.6 + 1e-15, 27.6 - 2e-15, 27.6]]
    runs = _runs(np.array([x for values in logs for x in values]), np.array([len(v) for v in logs]),
                 np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.full(4, np.nan))
    suite = _Suite([("a", "0"), ("a", "1")], [{}, {}], [None, None], [None, None], [priors.SIZE_CLASSES[-1]] * 2, runs)
    for k, values in enumerate(logs):
        mean = math.fsum(values) / len(values)
        dev = [v - mean for v in values]
        assert runs.mean[k] == mean
        assert runs.ss[k] == math.fsum(e * e for e in dev)
        assert runs.lag[k] == math.fsum(a * b for a, b in itertools.pairwise(dev))
    assert suite.d.tolist() == [runs.mean[1] - runs.mean[0], runs.mean[3] - runs.mean[2]]


def make_suite(rows: list[tuple[str, float, int, tuple[float, float] | None]]) -> _Suite:
    """Specializations of one run a side, each (key, its sides' squared deviations, rounds, history)."""
    n = len(rows)
    runs = _Runs(np.repeat(np.arange(n), 2), np.tile([0, 1], n), np.tile([0.0, 0.01], n),
                 np.repeat([ss for _, ss, _, _ in rows], 2), np.repeat([r for _, _, r, _ in rows], 2), np.zeros(2 * n),
                 np.full(2 * n, np.nan), np.arange(2 * n))
    return _Suite([("copy", k) for k, _, _, _ in rows], [{} for _ in rows], [None] * n, [h for *_, h in rows],
                  [priors.SIZE_CLASSES[-1]] * n, runs)


def test_the_noise_model_keeps_a_lone_outlier_variance_its_own_and_moderates_the_rest() -> None:
    quiet = [(f"t{i}", 1e-6 * (1 + 0.2 * (i % 3)), 3, None) for i in range(10)]
    noise = _noise(make_suite([*quiet, ("loud", 1e-3, 3, None)]))
    raw_loud = 2 * (1e-3 / 2) / 3  # both sides' round variance over their rounds
    assert noise.own[-1] >= raw_loud  # robust: not shrunk toward the quiet ones ...
    assert noise.own[-1] > 50 * noise.own[0]  # ... and far the loudest
    assert all(d > 4 for d in noise.own_df[:-1])  # the prior lends the quiet ones degrees of freedom
    assert all("moderated" in s for s in noise.source)


def test_history_takes_the_place_of_the_process_prior() -> None:
    noise = _noise(make_suite([(f"t{i}", 1e-6, 3, None) for i in range(5)] + [("known", 1e-6, 3, (0.05, 7.0))]))
    assert noise.own[-1] == pytest.approx(2 * (0.05**2 - priors.SIZE_CLASSES[-1].rounds.common), rel=0.01)
    assert noise.source[-1].startswith("history (7 df)")
    assert noise.own[0] < noise.own[-1]
    assert 7.0 <= noise.own_df[-1] < 20.0  # history's few df dominate


def test_run_values_take_the_measured_rounds_else_the_run_s_own_value() -> None:
    """`_run_values` reads every run at once: its positive, finite rounds (the warm-up left out
    from four on), else its own value; an entry with neither is no run."""
    with_rounds = spec("a", TB, round_cv=0.01)
    four = spec("b", TB, round_cv=0.0)
    four["rounds"] = [dict(four["rounds"][0], round=0, bytes_per_second=TB / 2)] + [
        dict(r, round=k + 1) for k, r in enumerate(four["rounds"])]
    without = spec("c", 2 * TB, round_cv=None)
    zero = spec("d", 0.0, round_cv=None)
    zero["bytes_per_second"] = 0.0
    results = res(with_rounds, four, without, zero, source="b.json")
    entries = [entry for key in (("copy", n) for n in "abcd") for entry in _index([results])[key]]
    logs, count, which = _run_values(entries, "bytes_per_second")
    assert which.tolist() == [0, 1, 2] and count.tolist() == [3, 3, 1]  # "d" has no positive value
    expected = [math.log(r.bytes_per_second) for r in results.specializations[0].rounds]
    expected += [math.log(r.bytes_per_second) for r in results.specializations[1].rounds[1:]]
    assert logs.tolist() == [*expected, math.log(2 * TB)]


def test_a_row_built_from_its_fields_is_the_row_the_dataclass_builds() -> None:
    fields: dict[str, Any] = {"algorithm": "copy", "name": "n", "verdict": Verdict.UNCHANGED, "reason": "r",
                              "reason_kind": ReasonKind.EQUIVALENT, "p_value": 0.5, "base_observations": 3}
    row = SpecComparison.from_fields(fields)
    assert row == SpecComparison(**fields) and repr(row) == repr(SpecComparison(**fields))
    assert row.to_dict() == SpecComparison(**fields).to_dict() and row.not_comparable == ()
    with pytest.raises(AttributeError):
        row.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("choice", [None, "time", "bytes", "items"])
def test_a_pair_of_one_run_a_side_is_the_general_pairing(monkeypatch: pytest.MonkeyPatch, choice: str | None) -> None:
    """`_pair`'s path for one file a side (`_pair_one`) gives what its general path gives: the row's
    fields, the metric, the size class, why it is untrusted, history's variability; and leaves to
    the general path what ends a pair (failed, no value)."""
    import primbench.compare.core as core

    slow = dict(spec("slow clock", TB), sm_clock={"average_mhz": 1500.0, "fraction_of_default": 0.8,
                                                    "below_expected": True})
    base = [res(spec("plain", TB), spec("timeout", TB, noise_timeout=True, round_cv=None, index=1),
                dict(slow, index=2), spec("no items", TB, items_per_second=0.0, index=3),
                spec("failed", TB, error="boom", index=4), spec("no value", 0.0, items_per_second=0.0, time_ms=0,
                                                               index=5), source="b.json")]
    head = [res(spec("plain", TB * 1.01), spec("timeout", TB, index=1), dict(slow, index=2),
                spec("no items", TB, items_per_second=0.0, index=3), spec("failed", TB, index=4),
                spec("no value", TB, index=5), source="h.json")]
    b_index, h_index = _index(base), _index(head)
    history = {("copy", "plain"): (0.002, 4.0), ("copy", "timeout"): 0.003}

    def pairs() -> list[Any]:
        return [_pair(k, b_index[k], h_index[k], history, choice) for k in b_index]

    fast = pairs()
    assert any(isinstance(p, _Paired) for p in fast)
    monkeypatch.setattr(core, "_pair_one", lambda *args: None)
    general = pairs()
    for got, want in zip(fast, general, strict=True):
        if isinstance(want, _Paired):
            assert isinstance(got, _Paired)
            assert got._replace(klass=None) == want._replace(klass=None) and got.klass is want.klass
            assert got.base is b_index[got.key] and got.head is h_index[got.key]  # the index's own lists
        else:
            assert got == want


def test_by_algorithm_names_each_algorithm_as_specialization_algorithm_does() -> None:
    """`by_algorithm` reads ``meta.algo`` as written where every one is text, else through
    `Specialization.algorithm` (str of the value): a number, null or a list name algorithms too."""
    from primbench.compare.comparability import by_algorithm

    text = res(spec("a", TB, algo="copy"), spec("b", TB, algo="", index=1), source="t.json")
    odd = res(spec("a", TB, algo=7), spec("b", TB, algo=None, index=1), spec("c", TB, algo=["x"], index=2),  # type: ignore[arg-type]
              spec("d", TB, algo=True, index=3), spec("e", TB, algo=1, index=4), source="o.json")
    for side in ([text], [odd], [text, odd]):
        want: dict[str, Results] = {}
        for r in side:
            for a in sorted({s.algorithm or r.algorithm for s in r.specializations} or {r.algorithm}):
                want.setdefault(a, r)
        assert by_algorithm(side) == want
    assert set(by_algorithm([odd])) == {"7", "None", "['x']", "True", "1"}


def _index_one_by_one(side: list[Results]) -> dict[tuple[str, str], list[tuple[Any, Results, int]]]:
    """`_index` without GPUs as a plain loop: (algorithm, name) -> (specialization, file, position)."""
    out: dict[tuple[str, str], list[tuple[Any, Results, int]]] = {}
    for results in side:
        for i, s in enumerate(results.specializations):
            out.setdefault((s.algorithm or results.algorithm, s.name), []).append((s, results, i))
    return out


def test_index_of_a_first_file_at_once_is_the_loops() -> None:
    """`_index` makes a side's first file's entries at once where no key repeats; the same entries,
    in the same order, as one by one (a second file repeating some, an algorithm not named)."""
    plain = [spec("a", TB, index=0), spec("b", TB, index=1, algo="reduce"), spec("c", TB, index=2, algo="")]
    for side in ([res(*plain, source="one.json")], [res(*plain, source="1.json"), res(*plain[:2], source="2.json")],
                 [res(source="empty.json"), res(*plain, source="1.json")]):
        index = _index(side)
        assert list(index) == list(_index_one_by_one(side))
        assert {k: [tuple(e) for e in v] for k, v in index.items()} == _index_one_by_one(side)
        assert all(type(e).__name__ == "_Entry" for v in index.values() for e in v)


def test_the_files_spread_is_weighed_as_the_kernels_over_both_sides_each_side_at_its_workers_scale() -> None:
    """`_files_variance` with two files a side (one df each): 21 kernels whose files spread as their workers
    predict (ratios of one df about 1, the chi-square's quantiles) and 3 whose files spread 5x on both sides.
    Pooled over the row's two sides (two df a kernel), the quiet kernels' files' variance stays within 1.5x
    what their workers give (each side judged alone, on one df, the three pulled the suite's to 1.7x); the
    three are the widest; each side keeps its own workers' scale (a head whose workers spread 4x is 4x);
    and a row with one usable side is that side's one df."""
    quiet = chi2.ppf((np.arange(42) + 0.5) / 42, 1)  # one df a slot, about 1
    np.random.default_rng(0).shuffle(quiet)
    ratio = np.concatenate([[5.0] * 6, quiet])
    own = np.full(48, 1e-6)
    own[1::2] *= 4.0  # the head's workers spread 4x (in variance)
    files = np.full(48, 2.0)
    df = np.ones(48)
    use = np.ones(48, dtype=bool)
    got = _files_variance(ratio * own * files, df, use, own, files)
    assert got is not None
    variance, var_df = got
    scale = variance / own
    assert np.allclose(scale[0::2], scale[1::2])  # one ratio a kernel, each side at its own scale
    assert float(np.median(scale[6:])) <= 1.5
    assert scale[:6].min() > scale[6:].max()
    assert np.all(var_df > 2.0)  # the suite's prior df and the kernel's two
    use[1] = False  # the first row's head not lined up: its base alone
    one_side = _files_variance(ratio * own * files, df, use, own, files)
    assert one_side is not None and len(one_side[0]) == 47
    assert one_side[1][0] < var_df[0]
