"""Every third-party library a module imports is declared where its users install it
(pyproject.toml): the harness and the CLI in the dependencies, compare in the ``compare``
extra, history in the ``history`` extra (a backend's driver in the extra of the backend's name:
``history/storage/<name>.py``'s in ``<name>``), GPU runtimes and monitoring in each GPU extra.

Imports are read from the source, at the top of a module and inside functions alike, and so
are the names handed to `history.deps.require` and `importlib.import_module`."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The distribution that installs each imported top-level module (where the two differ, or
#: several distributions provide one module: any of them).
DISTRIBUTIONS = {"pynvml": {"nvidia-ml-py"}, "cupy": {"cupy-cuda12x", "cupy-cuda13x", "cupy-rocm-7-0"},
                 "cupy_backends": {"cupy-cuda12x", "cupy-cuda13x", "cupy-rocm-7-0"}}
GPU_EXTRAS = ("cuda12", "cuda13", "rocm")
#: The GPU libraries, and the extras that must each install them.
GPU_MODULES = {"cupy": GPU_EXTRAS, "cupy_backends": GPU_EXTRAS, "pynvml": ("cuda12", "cuda13"), "amdsmi": ("rocm",)}
FIRST_PARTY = {"primbench", "compare", "history", "tests"}
#: Modules that only their host loads, which brings the import: pytest loads the plugin.
HOSTED = {"primbench/pytest_plugin.py": {"pytest"}, "compare/pytest_baseline.py": {"pytest"}}


def _project() -> dict[str, list[str]]:
    """'dependencies' and each extra -> the distribution names it lists (lower case)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> list[str]:
        return [re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements]  # type: ignore[union-attr]

    return {"dependencies": names(project["dependencies"]),
            **{extra: names(reqs) for extra, reqs in project["optional-dependencies"].items()}}


def _imports(path: Path) -> set[str]:
    """The third-party top-level modules `path` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in ("require", "import_module"):
                names = [node.args[0].value]
        found |= {n.split(".")[0] for n in names}
    return {m for m in found if m not in sys.stdlib_module_names and m not in FIRST_PARTY and m != "__future__"}


def _layer(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    if parts[0] in ("compare", "history"):
        return parts[0]
    return "gpu" if parts[:2] in (("primbench", "backends"),) or path.name.startswith("monitoring") else "core"


def _used() -> dict[str, dict[str, set[str]]]:
    """layer -> imported module -> the files that import it."""
    used: dict[str, dict[str, set[str]]] = {}
    for package in ("primbench", "compare", "history"):
        for path in (ROOT / package).rglob("*.py"):
            if path.relative_to(ROOT).parts[:2] in (("primbench", "compare"), ("primbench", "history")):
                continue  # the symbolic links, should a glob follow them: read as compare/ and history/
            for module in _imports(path) - HOSTED.get(str(path.relative_to(ROOT)), set()):
                used.setdefault(_layer(path), {}).setdefault(module, set()).add(str(path.relative_to(ROOT)))
    return used


def _backend(file: str) -> str:
    """A history backend's module (``history/storage/<name>.py``) may import its driver from
    the extra of its own name (``<name>``); '' for any other file."""
    parts = Path(file).parts
    return parts[2].removesuffix(".py") if parts[:2] == ("history", "storage") and len(parts) == 3 else ""


def _installs(module: str, listed: list[str]) -> bool:
    return bool(DISTRIBUTIONS.get(module, {module.lower()}) & set(listed))


def test_every_import_is_declared_where_its_users_install_it() -> None:
    deps, used = _project(), _used()
    missing = []
    for layer, modules in used.items():
        for module, files in sorted(modules.items()):
            if layer == "gpu" and module in GPU_MODULES:
                ok = all(_installs(module, deps[extra]) for extra in GPU_MODULES[module])
            else:
                extra = deps[layer] if layer in ("compare", "history") else []
                ok = _installs(module, deps["dependencies"] + extra) or all(
                    _installs(module, deps.get(_backend(f), [])) for f in files)
            if not ok:
                missing.append(f"{module} ({layer}: {', '.join(sorted(files))})")
    assert not missing, "imported but not declared: " + "; ".join(missing)


def test_history_installs_what_compare_needs() -> None:
    """``history compare`` runs compare's statistics: the history extra carries compare's."""
    deps = _project()
    assert set(deps["compare"]) <= set(deps["history"])
    assert {"primbench"} <= set(deps["dev"])


def test_the_scan_sees_the_known_libraries() -> None:
    """The scan is not vacuous: it finds each kind of import the project makes."""
    used = _used()
    # require("duckdb") included; history's SciPy comes through compare's statistics (`compare.stats.scipy_special`,
    # the compare layer, whose packages the history extra carries: test_history_installs_what_compare_needs)
    assert {"duckdb", "pandas", "matplotlib"} <= set(used["history"])
    assert "scipy" in used["compare"] and {"typer", "rich", "numpy"} <= set(used["core"])
    assert {"cupy", "pynvml", "amdsmi"} <= set(used["gpu"])
    assert not _installs("duckdb", _project()["compare"])  # a check that can fail: duckdb is history's alone


def test_install_advice_names_the_packages_of_each_extra_never_primbench_from_an_index() -> None:
    """Issue 22: primbench is not on PyPI, so `pip install 'primbench[…]'` fails today (and would
    install a stranger's package if someone registered the name): a missing dependency names
    the packages of its extra, which must be the extra's packages in pyproject.toml."""
    import re
    import tomllib

    from primbench.errors import EXTRA_PACKAGES, MissingDependencyError, install_advice

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra, packages in EXTRA_PACKAGES.items():
        declared = tuple(re.split(r"[<>=!~ \[;]", p, maxsplit=1)[0] for p in extras[extra])
        assert declared == packages, extra
        advice = install_advice(extra)
        assert f"`pip install {' '.join(packages)}`" in advice and f"'.[{extra}]'" in advice
    message = str(MissingDependencyError("scipy", "compare", "primbench compare"))
    assert "`pip install scipy`" in message and "'primbench[" not in message
