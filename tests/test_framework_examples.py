"""The framework examples without a GPU or their frameworks: --help and --dry run with CuPy,
PyTorch, Triton, Numba and JAX made unimportable, and list every specialization (each example
imports its framework inside run()). Their GPU tests: tests/test_gpu_frameworks.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from primbench.results import load_results

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = ("cupy", "torch", "triton", "numba", "jax", "jaxlib")

# Runs an example as its __main__ with the GPU frameworks unimportable.
_RUNNER = """
import runpy, sys
BLOCKED = set(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked: the example must not import it for --help or --dry")
        return None

sys.meta_path.insert(0, Blocker())
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""

EXAMPLES = {
    "numba_saxpy": ["impl: cupy, type: float", "impl: numba, type: float"],
    "triton_autotune": [
        f"block_size: {b}, num_warps: {w}, type: float" for b in (256, 1024, 4096) for w in (4, 8)
    ] + ["block_size: auto, num_warps: auto, type: float"],
    "torch_train_step": ["mode: compiled", "mode: eager"],
    "cuda_graph": ["kernels: 10, launch: graph", "kernels: 10, launch: stream"],
    "jax_host_timer": ["impl: cupy, timer: events, type: float", "impl: cupy, timer: host, type: float",
                       "impl: jax, timer: host, type: float"],
}


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIMBENCH_", "GITHUB_"))}
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-c", _RUNNER, ",".join(BLOCKED), str(ROOT / "examples" / f"{name}.py"),
                           *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False)


def test_the_blocker_blocks() -> None:
    """The check itself: an example that imports a blocked framework at the top fails."""
    done = subprocess.run([sys.executable, "-c", _RUNNER, "numpy", str(ROOT / "examples" / "cuda_graph.py"),
                           "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode != 0
    assert "numpy is blocked" in done.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_dry_lists_every_specialization_without_the_framework(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.json"
    done = run_example(name, "--dry", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    results = load_results(out)
    assert [s.name for s in results.specializations] == EXAMPLES[name]
    assert results.settings.dry is True


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_help_works_without_the_framework(name: str) -> None:
    done = run_example(name, "--help")
    assert done.returncode == 0, done.stderr
    assert "--min-secs" in done.stdout and "--json-out" in done.stdout


@pytest.mark.parametrize(("name", "option"), [("torch_train_step", "--tokens"), ("torch_train_step", "--width"),
                                              ("cuda_graph", "--kernels")])
def test_custom_options_are_listed(name: str, option: str) -> None:
    assert option in run_example(name, "--help").stdout


def test_options_reach_the_specializations(tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    done = run_example("cuda_graph", "--dry", "--kernels", "20", "--size", "64KiB", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    results = load_results(out)
    assert [s.name for s in results.specializations] == ["kernels: 20, launch: graph", "kernels: 20, launch: stream"]
    assert results.settings.size == 65536
    assert results.context.custom_settings == {"kernels": 20}


def test_the_graph_example_defaults_to_small_kernels(tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    assert run_example("cuda_graph", "--dry", "--json-out", str(out)).returncode == 0
    assert load_results(out).settings.size == 1 << 20
