"""Parameter axes against the fake device: expansion into the Cartesian product, names, natural
order, ``--axis`` and ``--size`` overrides, filters, errors and what results.json holds."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from primbench.errors import UsageError
from primbench.results import load_results
from tests.fakes import FakeDevice


@pb.axis.sweep(block=pb.axis.ints([256, 128]), size=pb.axis.pow2(8, 12, 2))
class Sweep(pb.Benchmark):
    """Records what every run(state) saw."""

    def __init__(self, algo: str = "sweep") -> None:
        self.algo = algo
        self.seen: list[tuple[dict[str, Any], int]] = []

    def meta(self) -> dict[str, Any]:
        return {"algo": self.algo}

    def run(self, state: pb.State) -> None:
        self.seen.append((state.axes, state.size))
        state.set_items(state.size // 4)
        state.add_reads(np.float32, state.size // 4)
        # time grows with the block and the size: different names must get different numbers
        ms = 0.001 * state.axis("block") / 128 * state.size / 256
        state.run(lambda: state.device.launch(ms))


class Plain(pb.Benchmark):
    def __init__(self, dtype: Any = np.int8) -> None:
        self.dtype = np.dtype(dtype)
        self.sizes: list[int] = []

    def meta(self) -> dict[str, Any]:
        return {"algo": "sweep", "type": pb.type_name(self.dtype)}

    def run(self, state: pb.State) -> None:
        self.sizes.append(state.size)
        state.run(state.device.launch)


def executor(tmp_path: Path, *args: str, settings: pb.Settings | None = None) -> pb.Executor:
    argv = ["--json-out", str(tmp_path / "r.json"), "--min-secs", "0", "--rounds", "1", *args]
    return pb.Executor(argv, settings=settings, device=FakeDevice(0.01),
                       reporter=Reporter(make_console(io.StringIO())), prog="bench")


def names(doc: dict[str, Any]) -> list[str]:
    return [s["name"] for s in doc["specializations"]]


def usage_error(ex: pb.Executor, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


# --------------------------------------------------------------------------- expansion and names


def test_the_product_is_queued_in_natural_order_and_each_run_sees_its_values(tmp_path: Path) -> None:
    bench = Sweep()
    ex = executor(tmp_path)
    ex.queue(bench)
    doc = ex.run()
    assert names(doc) == [
        "block: 128, size: 256", "block: 128, size: 1024", "block: 128, size: 4096",
        "block: 256, size: 256", "block: 256, size: 1024", "block: 256, size: 4096",
    ]
    assert [(s["block"], size) for s, size in bench.seen] == [(128, 256), (128, 1024), (128, 4096),
                                                               (256, 256), (256, 1024), (256, 4096)]
    assert all(s["size"] == size for s, size in bench.seen)  # the size axis is state.size
    for spec in doc["specializations"]:
        meta = spec["meta"]
        assert spec["items"] == meta["size"] // 4
        # 1 µs x block/128 x size/256 per call, as run() launched it
        assert spec["gpu_seconds_per_call"] == pytest.approx(1e-6 * meta["block"] / 128 * meta["size"] / 256)
    assert [s["index"] for s in doc["specializations"]] == list(range(6))


def test_meta_and_results_json_carry_the_axis_values(tmp_path: Path) -> None:
    pb.register_type(np.int8, "char")

    @pb.axis.sweep(dtype=pb.axis.dtypes([np.int8, np.float32]), p=pb.axis.floats([0.5, 0.25]),
                   dist=pb.axis.strings(["uniform"]))
    class Typed(Plain):
        def meta(self) -> dict[str, Any]:
            return {"algo": "sweep", "impl": "cupy"}

    ex = executor(tmp_path, "--axis", "p=[0.25,1e-5]")
    ex.queue(Typed())
    ex.run()
    raw = json.loads((tmp_path / "r.json").read_text())
    assert raw["context"]["settings"]["axis"] == ["p=[0.25,1e-5]"]
    first = raw["specializations"][0]
    assert first["meta"] == {"algo": "sweep", "impl": "cupy", "dtype": "char", "p": 1e-05, "dist": "uniform"}
    assert first["name"] == "dist: uniform, dtype: char, impl: cupy, p: 1e-05"
    loaded = load_results(tmp_path / "r.json")
    assert [s.name for s in loaded.specializations] == [
        "dist: uniform, dtype: char, impl: cupy, p: 1e-05", "dist: uniform, dtype: char, impl: cupy, p: 0.25",
        "dist: uniform, dtype: float32, impl: cupy, p: 1e-05", "dist: uniform, dtype: float32, impl: cupy, p: 0.25",
    ]
    assert loaded.specializations[3].meta["dtype"] == "float32"


def test_state_axis_gives_typed_values() -> None:
    seen: dict[str, Any] = {}

    @pb.axis.sweep(i=pb.axis.ints([3]), f=pb.axis.floats([2]), s=pb.axis.strings(["x"]),
                   d=pb.axis.dtypes(["float64"]))
    class Kinds(pb.Benchmark):
        def meta(self) -> dict[str, Any]:
            return {"algo": "k"}

        def run(self, state: pb.State) -> None:
            seen.update(state.axes)
            state.run(state.device.launch)

    ex = pb.Executor(["--json-out", "/dev/null", "--min-secs", "0", "--rounds", "1"], device=FakeDevice())
    ex.queue(Kinds())
    ex.run()
    assert seen == {"i": 3, "f": 2.0, "s": "x", "d": np.dtype(np.float64)}
    assert type(seen["i"]) is int and type(seen["f"]) is float


def test_an_undeclared_axis_fails_its_specialization_with_a_clear_message(tmp_path: Path) -> None:
    @pb.axis.sweep(block=pb.axis.ints([1]))
    class Asks(Plain):
        def run(self, state: pb.State) -> None:
            state.axis("blok")

    ex = executor(tmp_path)
    ex.queue(Asks())
    with pytest.raises(SystemExit):
        ex.main()
    error = json.loads((tmp_path / "r.json").read_text())["specializations"][0]["error"]
    assert error == "state.axis('blok'): the benchmark declares no such axis (its axes: block)"


def test_instances_may_declare_their_own_axes_and_benchmarks_without_axes_mix_in(tmp_path: Path) -> None:
    small, large = Plain(np.uint32), Plain(np.float16)
    small.axes = {"size": pb.axis.sizes(["1KiB", "2KiB"])}
    ex = executor(tmp_path, "--size", "4KiB")
    ex.queue(small)
    ex.queue(large)
    ex.queue(Plain(np.int16))
    doc = ex.run()
    assert names(doc) == ["size: 4096, type: uint32", "type: float16", "type: int16"]  # --size is the size axis
    assert small.sizes == [4096] and large.sizes == [4096]


def test_rounds_interleave_the_expanded_specializations(tmp_path: Path) -> None:
    bench = Sweep()
    bench.axes = {"block": pb.axis.ints([1, 2])}
    ex = executor(tmp_path, "--rounds", "2")
    ex.queue(bench)
    ex.run()
    assert [s["block"] for s, _ in bench.seen] == [1, 2, 1, 2]


# --------------------------------------------------------------------------- natural order


@pytest.mark.parametrize(("unsorted", "expected"), [
    (["size: 1024", "size: 256", "size: 65536"], ["size: 256", "size: 1024", "size: 65536"]),
    (["p: 0.5", "p: 0.25", "p: 1e-05"], ["p: 1e-05", "p: 0.25", "p: 0.5"]),
    (["type: int16", "type: int8", "type: int64"], ["type: int8", "type: int16", "type: int64"]),
    (["x: 2", "x: -1", "x: -10"], ["x: -10", "x: -1", "x: 2"]),
    (["b: 10, a: 2", "b: 9, a: 30", "b: 9, a: 4"], ["b: 9, a: 4", "b: 9, a: 30", "b: 10, a: 2"]),
    (["op: sum", "op: add", "op: cumsum"], ["op: add", "op: cumsum", "op: sum"]),
])
def test_natural_key_orders_numbers_by_value(unsorted: list[str], expected: list[str]) -> None:
    assert sorted(unsorted, key=pb.natural_key) == expected


def test_natural_key_is_a_total_order_over_mixed_names() -> None:
    mixed = ["a", "1", "a1", "1a", "", "a-1", "-1", "a 1", "a: 1.5.2", "v1.10", "v1.9"]
    ordered = sorted(mixed, key=pb.natural_key)
    assert sorted(reversed(mixed), key=pb.natural_key) == ordered  # no ties between different names
    assert ordered.index("-1") < ordered.index("1") < ordered.index("1a")


def test_names_without_axes_sort_naturally_too(tmp_path: Path) -> None:
    class Ipt(Plain):
        def __init__(self, ipt: int) -> None:
            super().__init__()
            self.ipt = ipt

        def meta(self) -> dict[str, Any]:
            return {"algo": "sweep", "ipt": self.ipt}

    ex = executor(tmp_path, "--dry")
    for ipt in (16, 2, 1, 4):
        ex.queue(Ipt(ipt))
    assert names(ex.run()) == ["ipt: 1", "ipt: 2", "ipt: 4", "ipt: 16"]


# --------------------------------------------------------------------------- --axis and --size


def test_axis_replaces_the_declared_values(tmp_path: Path) -> None:
    bench = Sweep()
    ex = executor(tmp_path, "--axis", "block=[32:64:*2]", "--axis", "size=[1KiB:2KiB:+512]")
    ex.queue(bench)
    doc = ex.run()
    assert names(doc) == ["block: 32, size: 1024", "block: 32, size: 1536", "block: 32, size: 2048",
                          "block: 64, size: 1024", "block: 64, size: 1536", "block: 64, size: 2048"]
    assert {size for _, size in bench.seen} == {1024, 1536, 2048}


def test_axis_applies_to_every_benchmark_that_declares_it(tmp_path: Path) -> None:
    a, b = Sweep(), Sweep()
    b.axes = {"block": pb.axis.ints([1]), "impl": pb.axis.strings(["b"])}
    ex = executor(tmp_path, "--dry", "--axis", "block=7")
    ex.queue(a)
    ex.queue(b)
    assert names(ex.run()) == ["block: 7, impl: b", "block: 7, size: 256", "block: 7, size: 1024",
                               "block: 7, size: 4096"]


def test_settings_axis_from_the_program_and_the_command_line_wins(tmp_path: Path) -> None:
    ex = executor(tmp_path, "--dry", settings=pb.Settings(axis=["block=1"]))
    ex.queue(Sweep())
    assert names(ex.run())[0] == "block: 1, size: 256"
    ex = executor(tmp_path, "--dry", "--axis", "block=2", settings=pb.Settings(axis=["block=1"]))
    ex.queue(Sweep())
    assert {n.split(",")[0] for n in names(ex.run())} == {"block: 2"}


def test_size_is_the_size_axis_of_a_benchmark_that_declares_one(tmp_path: Path) -> None:
    bench = Sweep()
    ex = executor(tmp_path, "--size", "64KiB")
    ex.queue(bench)
    doc = ex.run()
    assert names(doc) == ["block: 128, size: 65536", "block: 256, size: 65536"]
    assert {size for _, size in bench.seen} == {65536}
    assert doc["context"]["settings"]["size"] == 65536


def test_size_from_settings_does_not_replace_a_size_axis(tmp_path: Path) -> None:
    ex = executor(tmp_path, "--dry", settings=pb.Settings(size=4096))
    ex.queue(Sweep())
    assert len(names(ex.run())) == 6  # only --size on the command line stands for the axis


def test_size_and_axis_size_together_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = executor(tmp_path, "--size", "1KiB", "--axis", "size=2KiB")
    ex.queue(Sweep())
    assert "--size and --axis size=... are both given" in usage_error(ex, capsys)


@pytest.mark.parametrize(("args", "message"), [
    (["--axis", "nosuch=1"], "--axis nosuch=...: no queued benchmark has an axis 'nosuch' (axes: block, size)"),
    (["--axis", "block=1", "--axis", "block=2"], "--axis block= is given twice"),
    (["--axis", "block=[1,2"], "--axis block=[1,2: unbalanced brackets"),
    (["--axis", "size=[2^10:2^8]"], "--axis size=[2^10:2^8]: STOP 2^8 is below START 2^10"),
    (["--axis", "=5"], "--axis '=5': write NAME=VALUE"),
])
def test_bad_axis_options_are_one_line_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    args: list[str], message: str) -> None:
    ex = executor(tmp_path, *args)
    ex.queue(Sweep())
    err = usage_error(ex, capsys)
    assert err.startswith("bench: error: ") and message in err
    assert not (tmp_path / "r.json").exists()  # nothing measured, nothing written


def test_help_lists_axis() -> None:
    text = pb.Executor([], device=FakeDevice()).help_text()
    assert "--axis NAME=VALUES" in text and "size=[2^16:2^28:4]" in text


# --------------------------------------------------------------------------- filters


def test_filter_selects_among_the_expanded_specializations(tmp_path: Path) -> None:
    ex = executor(tmp_path, "--filter", r"block: 256, size: (256|4096)$")
    ex.queue(Sweep())
    assert names(ex.run()) == ["block: 256, size: 256", "block: 256, size: 4096"]


def test_a_filter_matching_nothing_lists_the_expanded_names_in_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = executor(tmp_path, "--filter", "nothing", "--axis", "block=1", "--axis", "size=[1024,256]")
    ex.queue(Sweep())
    err = usage_error(ex, capsys)
    assert "matches none of: 'block: 1, size: 256', 'block: 1, size: 1024'" in err


# --------------------------------------------------------------------------- declarations


@pytest.mark.parametrize(("axes", "message"), [
    ({"block": [128, 256]}, "Bad.axes['block'] must be built with pb.axis"),
    ({"algo": pb.axis.ints([1])}, "'algo' is not an axis name"),
    ({"2x": pb.axis.ints([1])}, "'2x' is not an axis name"),
    ({"size": pb.axis.floats([1.5])}, "Bad.axes['size'] is the input size"),
    ({"size": pb.axis.ints([0, 4])}, "Bad.axes['size'] is the input size"),
    ({"type": pb.axis.strings(["x"])}, "'type' is both a meta() key and an axis"),
    ([("block", 1)], "Bad.axes must be a mapping"),
])
def test_bad_declarations_are_usage_errors_when_queued(axes: Any, message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    class Bad(Plain):
        pass

    bench = Bad()
    bench.axes = axes
    ex = pb.Executor([], device=FakeDevice(), prog="bench")
    ex.queue(bench)  # a bad definition is held until run(), which raises it
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("build", "message"), [
    (lambda: pb.axis.ints([]), "at least one value"),
    (lambda: pb.axis.ints([1, 1]), "axis value 1 is given twice"),
    (lambda: pb.axis.ints([1.5]), "whole numbers"),
    (lambda: pb.axis.ints([True]), "whole numbers"),
    (lambda: pb.axis.floats([float("nan")]), "finite"),
    (lambda: pb.axis.strings([""]), "non-empty strings"),
    (lambda: pb.axis.dtypes(["no such type"]), "NumPy dtypes"),
    (lambda: pb.axis.pow2(4, 2), "needs first <= last"),
    (lambda: pb.axis.pow2(0, 4, 0), "needs first <= last and step >= 1"),
    (lambda: pb.axis.pow2(-1, 4), "first must be a non-negative whole number"),
    (lambda: pb.axis.sizes(["1XB"]), "invalid size"),
])
def test_bad_axis_values_are_refused_where_they_are_built(build: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        build()


def test_sweep_declares_read_only_axes_in_order_and_checks_them_at_once() -> None:
    assert list(Sweep.axes) == ["block", "size"]
    with pytest.raises(TypeError):
        Sweep.axes["x"] = pb.axis.ints([1])  # type: ignore[index]
    assert "axes" not in vars(Plain)  # the decorator changed only its own class
    with pytest.raises(UsageError, match=r"Bad.axes\['size'\] is the input size"):
        @pb.axis.sweep(size=pb.axis.strings(["big"]))
        class Bad(Plain):
            pass
    with pytest.raises(UsageError, match="'algo' is not an axis name"):
        pb.axis.sweep(algo=pb.axis.ints([1]))(Plain)


def test_the_builders_values() -> None:
    assert pb.axis.pow2(16, 28, 4).values == (65536, 1048576, 16777216, 268435456)
    assert pb.axis.pow2(3, 3).values == (8,)
    assert pb.axis.sizes(["64KiB", 512]).values == (65536, 512)
    assert pb.axis.ints(np.array([1, 2], dtype=np.int64)).values == (1, 2)
    assert pb.axis.dtypes([np.float32, "int8"]).values == (np.dtype(np.float32), np.dtype(np.int8))


def test_the_example_program_sweeps_its_axes_without_a_gpu(tmp_path: Path) -> None:
    """examples/axes_sweep.py with --dry (no GPU, no CuPy): the product of its axes, in order."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "axes.json"
    done = subprocess.run([sys.executable, str(root / "examples" / "axes_sweep.py"), "--dry", "--json-out", str(out),
                           "--axis", "block=[256,64]", "--axis", "size=[2^16:2^28:*16]"],
                          capture_output=True, text=True, timeout=120, cwd=root,
                          env={"PYTHONPATH": str(root), "NO_COLOR": "1", "PATH": ""})
    assert done.returncode == 0, done.stderr
    got = [s.name for s in load_results(out).specializations]
    assert got == [f"block: {b}, size: {s}, type: int" for b in (64, 256) for s in (65536, 1048576, 16777216,
                                                                                    268435456)]
