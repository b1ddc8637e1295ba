"""GPU tests of the library forms: `pb.bench`, the `gpubench` fixture, `--profile`, and README.md's
"Three ways in" snippets run as written. Without a GPU only the snippets' syntax is checked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import primbench as pb
from primbench.results import load_results

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
FAST = pb.Settings(min_secs=0.2, rounds=2)


def snippets() -> dict[str, str]:
    """The three python blocks of README.md's "Benchmark my kernel", by their bold lead-in."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Benchmark my kernel", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"\*\*(A [a-z ]+)\*\*.*?```python\n(.*?)```", section, re.S)
    return dict(found)


def test_the_readme_snippets_are_python():
    found = snippets()
    assert list(found) == ["A script", "A function call", "A pytest test"]
    for name, code in found.items():
        compile(code, name, "exec")


@pytest.mark.gpu
def test_bench_measures_a_cupy_kernel(out_dir):
    import cupy as cp

    x = cp.ones(1 << 24, dtype=cp.float32)
    y = cp.empty_like(x)
    result = pb.bench(lambda: cp.multiply(x, 2, out=y), items=x.size, bytes=x.nbytes + y.nbytes, settings=FAST,
                      name="multiply", json_out=out_dir / "gpu-bench.json")
    assert result.bytes_per_second is not None and result.bytes_per_second > 1e11
    assert result.seconds_per_call == pytest.approx((x.nbytes + y.nbytes) / result.bytes_per_second, rel=1e-6)
    assert result.rounds == 2 and result.sm_clock_mhz is not None
    assert [s.name for s in load_results(out_dir / "gpu-bench.json").specializations] == ["name: multiply"]
    assert float(y[0]) == 2.0


@pytest.mark.gpu
def test_bench_raises_for_a_synchronizing_function_without_sync():
    import cupy as cp

    x = cp.ones(1 << 20, dtype=cp.float32)
    with pytest.raises(pb.StreamBlockingTimeout):
        pb.bench(lambda: float(x.sum()), settings=pb.Settings(min_secs=0.1, rounds=1, stream_blocking_timeout_secs=2))
    assert pb.bench(lambda: float(x.sum()), sync=True, settings=FAST).seconds_per_call > 0


@pytest.mark.gpu
def test_the_fixture_measures_on_the_gpu_and_writes_the_session(pytester, monkeypatch, out_dir):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_kernels=snippets()["A pytest test"])
    path = out_dir / "gpu-fixture.json"
    result = pytester.runpytest("-p", "primbench.pytest_plugin", "-p", "no:cacheprovider", "--primbench-json",
                                str(path), "--primbench-options", "--min-secs 0.2 --rounds 2")
    result.assert_outcomes(passed=1)
    results = load_results(path)
    assert [s.name for s in results.specializations] == ["test: test_kernels.py::test_scale_bandwidth"]
    assert results.gpu.name


@pytest.mark.gpu
def test_the_readme_script_and_function_call_run(tmp_path, out_dir):
    script = tmp_path / "scale.py"
    script.write_text(snippets()["A script"])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, str(script), "--min-secs", "0.2", "--json-out",
                           str(out_dir / "gpu-readme-script.json")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert load_results(out_dir / "gpu-readme-script.json").specializations[0].bytes_per_second > 1e11
    namespace: dict[str, object] = {}
    exec(compile(snippets()["A function call"], "README.md", "exec"), namespace)
    result = namespace["result"]
    assert isinstance(result, pb.BenchResult) and result.bytes_per_second and result.bytes_per_second > 1e11


@pytest.mark.gpu
def test_profile_calls_once_and_writes_nothing(tmp_path):
    script = tmp_path / "scale.py"
    script.write_text(snippets()["A script"])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, str(script), "--profile"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "called [1/1] type: float  once" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scale.py"]
