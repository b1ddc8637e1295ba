from __future__ import annotations

import importlib.util

import pytest

from tests.fakes import FakeDevice


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
    for name in ("PRIMBENCH_BRANCH", "PRIMBENCH_COMMIT", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "GITHUB_SHA"):
        monkeypatch.delenv(name, raising=False)
