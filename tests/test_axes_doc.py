"""docs/axes.md stays true to the code, as docs/cli.md does: every builder of `primbench.axis`
is documented with its real signature, and every ``--axis`` example and error in its tables is
what a benchmark program does with it."""

from __future__ import annotations

import inspect
import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench.axis import override
from primbench.benchmark import _format_value
from primbench.console import Reporter, make_console
from tests.fakes import FakeDevice

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "docs" / "axes.md").read_text(encoding="utf-8")
BUILDERS = ("ints", "pow2", "sizes", "floats", "strings", "dtypes", "sweep", "zipped", "constrain")


def _table(header: str) -> list[list[str]]:
    """The rows of the markdown table whose header row starts with `header`, cells unquoted."""
    lines = TEXT.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows.append([c[1:-1] if c.startswith("`") and c.endswith("`") else c for c in cells])
    return rows


EXAMPLES = _table("| `--axis` | axis built with | values |")
ERRORS = _table("| `--axis` | error |")


def test_the_tables_were_found() -> None:
    assert len(EXAMPLES) >= 15 and len(ERRORS) >= 15


@pytest.mark.parametrize("name", BUILDERS)
def test_every_builder_is_documented_with_its_signature(name: str) -> None:
    fn = getattr(pb.axis, name)
    params = ", ".join(
        f"**{p.name}" if p.kind is inspect.Parameter.VAR_KEYWORD
        else f"*{p.name}" if p.kind is inspect.Parameter.VAR_POSITIONAL
        else p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
        for p in inspect.signature(fn).parameters.values()
    )
    assert f"`pb.axis.{name}({params})`" in TEXT, f"docs/axes.md does not document pb.axis.{name}({params})"


def test_the_documented_builders_are_all_there_are() -> None:
    documented = set(re.findall(r"`pb\.axis\.(\w+)\(", TEXT))
    assert documented == set(BUILDERS)
    assert set(BUILDERS) <= set(pb.axis.__all__)
    public = {n for n in pb.axis.__all__ if callable(getattr(pb.axis, n)) and n[0].islower()}
    assert public - {"parse_override"} == set(BUILDERS)


_BASE = {"ints": pb.axis.ints([1]), "sizes": pb.axis.sizes([1]), "pow2": pb.axis.pow2(0, 0),
         "floats": pb.axis.floats([1.0]), "strings": pb.axis.strings(["a"]),
         "dtypes": pb.axis.dtypes([np.float32])}


@pytest.mark.parametrize(("spec", "builder", "values"), EXAMPLES, ids=[r[0] for r in EXAMPLES])
def test_every_example_gives_the_documented_values(spec: str, builder: str, values: str) -> None:
    name, _, body = spec.partition("=")
    axis = override(_BASE[builder], name, body)
    assert ", ".join(_format_value(axis.label(v)) for v in axis.values) == values


@pb.axis.sweep(block=pb.axis.ints([128]), n=pb.axis.ints([1]), size=pb.axis.pow2(10, 10), p=pb.axis.floats([0.5]),
               dist=pb.axis.strings(["uniform"]), dtype=pb.axis.dtypes([np.float32]))
class Everything(pb.Benchmark):
    """A benchmark with an axis of every kind the error table names."""

    def meta(self) -> dict[str, Any]:
        return {"algo": "doc"}

    def run(self, state: pb.State) -> None:
        state.run(state.device.launch)


@pytest.mark.parametrize(("spec", "message"), ERRORS, ids=[r[0] for r in ERRORS])
def test_every_documented_error_is_a_one_line_usage_error(spec: str, message: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    ex = pb.Executor(["--dry", "--json-out", "/dev/null", "--axis", spec], device=FakeDevice(),
                     reporter=Reporter(make_console(io.StringIO())), prog="bench")
    ex.queue(Everything())
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bench: error: --axis ")
    assert message in err


@pytest.mark.parametrize(("spec", "builder", "values"), EXAMPLES, ids=[r[0] for r in EXAMPLES])
def test_every_example_runs_in_a_program(spec: str, builder: str, values: str) -> None:
    """Through the executor too: the documented values become the specializations' names."""
    name = spec.partition("=")[0]
    bench = Everything()
    bench.axes = {name: _BASE[builder]}
    ex = pb.Executor(["--dry", "--json-out", "/dev/null", "--axis", spec], device=FakeDevice(),
                     reporter=Reporter(make_console(io.StringIO())))
    ex.queue(bench)
    doc = ex.run()
    names = [s["name"] for s in doc["specializations"]]
    shown = values.split(", ")
    expected = sorted(shown, key=lambda v: pb.natural_key(f"{name}: {v}"))  # run in natural order
    assert names == [f"{name}: {v}" for v in expected]
