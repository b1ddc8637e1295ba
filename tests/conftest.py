from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests import backends
from tests.fakes import FakeDevice

# The tests drive one process of the C++ protocol unless they ask for the default one themselves
# (`primbench.settings.default_design`); subprocesses inherit it through their environment.
os.environ.setdefault("PRIMBENCH_DESIGN", "single")

#: Each history backend's test module (tests/backends/<name>.py): its fixtures (a server's) are every test's.
pytest_plugins = backends.plugins()


def _gpu_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any("gpu" in item.keywords for item in items) and not _gpu_available():
        skip = pytest.mark.skip(reason="no GPU: CuPy is not installed or sees no device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def fake_device() -> FakeDevice:
    return FakeDevice()


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain output in tests unless a test asks for colour; no CI variables leak in."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("CLICOLOR_FORCE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("PRIMBENCH_DEBUG", raising=False)
    for name in ("PRIMBENCH_BRANCH", "PRIMBENCH_COMMIT", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "GITHUB_SHA"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    """Where GPU tests write results: $PRIMBENCH_GPU_OUT (kept, e.g. tests/gpu_results/), else a temp dir."""
    env = os.environ.get("PRIMBENCH_GPU_OUT")
    if not env:
        return tmp_path
    path = Path(env)
    path.mkdir(parents=True, exist_ok=True)
    return path
