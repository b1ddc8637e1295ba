from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

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


# --------------------------------------------------------------------------- PostgreSQL (history backend)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server's URL: $PRIMBENCH_TEST_POSTGRES, else a throw-away server started
    with initdb and pg_ctl (`tests.postgres_server`); skipped, saying why, when neither is there."""
    from tests import postgres_server as pg

    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("psycopg is not installed (pip install -e '.[postgres]')")
    if os.environ.get(pg.ENV):
        yield os.environ[pg.ENV]
        return
    found = pg.binaries()
    if found is None:
        pytest.skip(f"no PostgreSQL: set {pg.ENV} to a server URL, or install initdb and pg_ctl")
    server = pg.ThrowAwayServer(found)
    try:
        url = server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.skip(f"could not start a throw-away PostgreSQL server: {exc}")
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """An empty database of its own on the test server."""
    from tests import postgres_server as pg

    return pg.fresh_database(postgres_server)
