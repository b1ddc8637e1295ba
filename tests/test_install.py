"""Issue 15, item 4: primbench is not on PyPI, so the README installs from a clone or from the
repository URL. This builds the wheel that both of those install, puts it into a fresh venv and
runs the command line from there.

The venv gets primbench's own dependencies (Typer, NumPy, Rich) from the environment running the
tests (a path file), so the test needs no index beyond the build backend, which pip fetches for
the build as it does for any ``pip install .``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _run(*args: str | Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PRIMBENCH_DEBUG")}
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, env=env,
                          **kw)  # type: ignore[call-overload]


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", ROOT)
    if built.returncode != 0 and re.search(r"No matching distribution|Could not find a version|"
                                           r"NewConnectionError|Temporary failure in name resolution", built.stderr):
        pytest.skip(f"the build backend (hatchling) cannot be fetched here: {built.stderr.strip()[-200:]}")
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("primbench-*.whl")
    with zipfile.ZipFile(wheel) as z:
        z_names = set(z.namelist())
        top = sorted({n.split("/")[0] for n in z_names if not n.split("/")[0].endswith(".dist-info")})
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        scripts = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))).decode()
    # primbench is the only import name: compare/ and history/ of the repository are inside it
    assert top == ["primbench"]
    names = z_names
    assert "primbench/compare/core.py" in names and "primbench/history/storage/duckdb_file.py" in names
    assert "primbench/py.typed" in names
    assert "primbench = primbench.cli:main" in scripts
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"cuda12", "cuda13", "rocm", "compare", "history", "dev"} <= set(extras)
    for extra in extras:  # every extra of pyproject.toml, a history backend's driver's too
        assert f"Provides-Extra: {extra}" in metadata

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py, bin_dir = env_dir / "bin" / "python", env_dir / "bin"
    installed = _run(py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel)
    assert installed.returncode == 0, installed.stderr
    assert (bin_dir / "primbench").exists()  # the console script pip made from the entry point
    purelib = _run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    # its dependencies from the environment running the tests, after the venv's own packages
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "zz_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")

    code = ("import importlib.util, primbench, primbench.compare.core, primbench.history.storage.duckdb_file; "
            "print(primbench.__file__, primbench.compare.core.__file__); "
            "print(importlib.util.find_spec('compare'), importlib.util.find_spec('history'))")
    where = _run(py, "-c", code, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    files, tops = where.stdout.strip().splitlines()
    assert all(f.startswith(purelib) for f in files.split()), files  # the wheel's copies, not the checkout's
    assert tops == "None None"  # no top-level compare or history
    for args in (["--help"], ["compare", "--help"], ["-h"], ["--version"]):
        done = _run(bin_dir / "primbench", *args, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout.startswith("Usage: primbench" if args != ["--version"] else "primbench 0.1.0")
    module = _run(py, "-m", "primbench", "compare", "--help", cwd=tmp_path)
    assert module.returncode == 0 and "--fail-on" in module.stdout


def test_the_readme_installs_from_a_clone_or_the_repository_url() -> None:
    """No `pip install 'primbench[…]'` from an index: each platform, and analysis only, from a clone
    (`.[extra]`) and from the repository (`primbench[extra] @ git+…`)."""
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert not re.search(r"pip install 'primbench\[[a-z0-9,]+\]'(?! @)", install)
    for extras in ("cuda13", "cuda12", "rocm", "compare,history"):
        assert f"pip install '.[{extras}]'" in install, extras
        assert f"pip install 'primbench[{extras}] @ git+" in install, extras
    first = README.split("```bash\n", 1)[1].split("```", 1)[0]
    data = "tests/benchmarks/rounds/data/128MiB"
    assert first == ("python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && primbench compare "
                     f"{data}/aa-1.json {data}/planted-2.json\n"
                     'python -m pytest -q -m "not slow"\n')
    for name in ("aa-1.json", "planted-2.json"):  # the main job's files are committed
        assert (ROOT / "tests" / "benchmarks" / "rounds" / "data" / "128MiB" / name).is_file()
