"""The verdict evaluation's scripts (tests/benchmarks/verdicts/) without a GPU: the second suite
imports, names its kernels as collect.py plants them and shares no kind with the first; collect.py
and evaluate.py with their defaults still give what was recorded for the first suite."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import primbench as pb

VERDICTS = Path(__file__).resolve().parent / "benchmarks" / "verdicts"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"verdicts_{name}", VERDICTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_a_new_suite(name: str, earlier: tuple[str, ...], count: int, algo: str) -> ModuleType:
    """Suite `name` imports without a GPU: `count` kernels, none of a kind the `earlier` suites have, each
    with its setup, under the algorithm `algo`, named as collect.py plants them (the names the planted
    tail looks up). Returns collect.py."""
    collect = load("collect")
    seen = {op for other in earlier for op, _ in collect.load_suite(VERDICTS / other).KERNELS}
    suite = collect.load_suite(VERDICTS / name)
    ops = [op for op, _ in suite.KERNELS]
    assert len(ops) == len(set(ops)) == count
    assert not set(ops) & seen
    assert set(ops) == set(suite.SETUPS)
    kernels = [suite.Kernel(op, t) for op, t in suite.KERNELS]
    assert {k.meta()["algo"] for k in kernels} == {algo}
    assert [pb.specialization_name(k.meta()) for k in kernels] == collect.names(tuple(suite.KERNELS))
    return collect


def test_the_second_suite_imports_without_a_gpu_and_shares_no_kind_with_the_first() -> None:
    collect = _assert_a_new_suite("eval_suite2.py", ("eval_suite.py",), 10, "eval2")
    second = collect.load_suite(VERDICTS / "eval_suite2.py")
    assert "op: torch.bmm, type: half" in collect.names(tuple(second.KERNELS))


def test_the_third_suite_imports_without_a_gpu_and_shares_no_kind_with_the_others() -> None:
    _assert_a_new_suite("eval_suite3.py", ("eval_suite.py", "eval_suite2.py"), 10, "eval3")


def test_collect_with_the_default_suite_plants_what_was_recorded() -> None:
    collect = load("collect")
    kernels = tuple(collect.load_suite(collect.SUITE).KERNELS)
    d = VERDICTS / "h200" / "data" / "64KiB"
    for k in range(3):
        recorded = json.loads((d / f"plant-{k + 1}.json").read_text())
        assert collect.calibrate([d / "aa-1.json", d / "aa-2.json"], k, kernels) == recorded


def test_evaluate_describes_the_default_data_as_recorded() -> None:
    evaluate = load("evaluate")
    collect = load("collect")
    text = evaluate.header(evaluate.DATA, evaluate.SUITE, collect.load_suite(evaluate.SUITE).SUMMARY)
    recorded = (VERDICTS / "evaluate-after.txt").read_text().splitlines()
    assert text.splitlines()[1:] == recorded[1:3]
    other = evaluate.header(evaluate.DATA, VERDICTS / "eval_suite2.py", "k")
    assert other.startswith("# Verdicts on eval_suite2.py") and "Kernels: k." in other


def test_the_tenth_suite_imports_without_a_gpu_and_shares_no_kind_with_the_earlier_suites() -> None:
    earlier = ("eval_suite.py", *(f"eval_suite{i}.py" for i in (2, 3, 4, 5, 7, 8, 9)))
    _assert_a_new_suite("eval_suite10.py", earlier, 8, "eval10")


def test_collect_plants_the_fractions_asked_for_from_the_kernel_the_step_names(tmp_path: Path) -> None:
    """Three kernels a planted run from the 3k-th (the tenth plan's), wrapping past the suite's end, each
    calibrated from the A/A runs' time per call; the default stays six kernels from the 2k-th."""
    collect = load("collect")
    kernels = tuple((f"k{i}", "float") for i in range(8))
    names = collect.names(kernels)
    aa = tmp_path / "aa-1.json"
    aa.write_text(json.dumps({"specializations": [
        {"name": n, "rounds": [{"gpu_ms_per_call": 9.0}] + [{"gpu_ms_per_call": 0.1 * (i + 1)}] * 3,
         "sm_clock": {"average_mhz": 2000.0}} for i, n in enumerate(names)]}))
    plant = collect.calibrate([aa], 2, kernels, (0.01, 0.02, 0.05), 3)
    assert plant["fraction"] == {names[6]: 0.01, names[7]: 0.02, names[0]: 0.05}
    assert plant["cycles"] == {names[6]: round(0.01 * 0.7e-3 * 2000e6), names[7]: round(0.02 * 0.8e-3 * 2000e6),
                               names[0]: round(0.05 * 0.1e-3 * 2000e6)}
    default = collect.calibrate([aa], 1, kernels)
    assert list(default["fraction"]) == names[2:8]


def test_the_eleventh_suite_imports_without_a_gpu_and_shares_no_kind_with_the_earlier_suites() -> None:
    """21 specializations (24 as planned, less the CSR-to-CSC kind: eval11-plan.md's amendment), three variants of
    each of seven kinds; no op (kind and variant) of an earlier suite, and no kind either: every op's kind (its
    name before the variant) is new."""
    earlier = ("eval_suite.py", *(f"eval_suite{i}.py" for i in (2, 3, 4, 5, 7, 8, 9, 10)))
    collect = _assert_a_new_suite("eval_suite11.py", earlier, 21, "eval11")
    suite = collect.load_suite(VERDICTS / "eval_suite11.py")
    kinds = [op.rsplit(".", 1)[0] for op, _ in suite.KERNELS]
    assert len(set(kinds)) == 7 and all(kinds.count(k) == 3 for k in set(kinds)) and "sparse.tocsc" not in kinds
    seen = {op for other in earlier for op, _ in collect.load_suite(VERDICTS / other).KERNELS}
    assert not {k for k in kinds} & seen


def test_the_twelfth_suite_imports_without_a_gpu_and_shares_no_kind_with_the_earlier_suites() -> None:
    """24 specializations, three variants of each of eight kinds; no op (kind and variant) of an earlier suite, and
    no kind either: every op's kind (its name before the variant) is new."""
    earlier = ("eval_suite.py", *(f"eval_suite{i}.py" for i in (2, 3, 4, 5, 7, 8, 9, 10, 11)))
    collect = _assert_a_new_suite("eval_suite12.py", earlier, 24, "eval12")
    suite = collect.load_suite(VERDICTS / "eval_suite12.py")
    kinds = [op.rsplit(".", 1)[0] for op, _ in suite.KERNELS]
    assert len(set(kinds)) == 8 and all(kinds.count(k) == 3 for k in set(kinds))
    seen = {op for other in earlier for op, _ in collect.load_suite(VERDICTS / other).KERNELS}
    eleventh = {op.rsplit(".", 1)[0] for op, _ in collect.load_suite(VERDICTS / "eval_suite11.py").KERNELS}
    assert not set(kinds) & (seen | eleventh)


def test_the_fourteenth_suite_imports_without_a_gpu_and_shares_no_kind_with_the_earlier_suites() -> None:
    """24 specializations, three variants of each of eight kinds; no op of an earlier suite (the thirteenth's
    included), and no kind either."""
    earlier = ("eval_suite.py", *(f"eval_suite{i}.py" for i in (2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13)))
    collect = _assert_a_new_suite("eval_suite14.py", earlier, 24, "eval14")
    kinds = [op.rsplit(".", 1)[0] for op, _ in collect.load_suite(VERDICTS / "eval_suite14.py").KERNELS]
    assert len(set(kinds)) == 8 and all(kinds.count(k) == 3 for k in set(kinds))
    seen = {op.rsplit(".", 1)[0] for other in earlier for op, _ in collect.load_suite(VERDICTS / other).KERNELS}
    assert not set(kinds) & seen
