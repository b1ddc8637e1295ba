"""The import graph of primbench, compare and history has no cycles, and importing the harness
loads no analysis or GPU library (each layer is obvious from its imports)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("primbench", "compare", "history")


def _modules() -> dict[str, Path]:
    """Module name -> file; compare/ and history/ are primbench.compare and primbench.history."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if package != "primbench":
                name = "primbench." + name
            out[name.removesuffix(".__init__")] = path
    return out


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, at the top or inside functions alike."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
                    break
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    graph = _graph(_modules())
    assert len(graph) > 40
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_harness_imports_neither_compare_nor_history() -> None:
    graph = _graph(_modules())
    analysis = ("primbench.compare", "primbench.history", "primbench.cli")
    harness = [m for m in graph if not m.startswith(analysis)]
    assert "primbench.executor" in harness
    for module in harness:
        assert not {t for t in graph[module] if t.startswith(analysis[:2])}, module


def test_nothing_imports_compare_or_history_as_top_level_packages() -> None:
    """They are primbench.compare and primbench.history: the wheel has no top-level `compare`."""
    for path in _modules().values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            assert not [n for n in names if n.split(".")[0] in ("compare", "history")], path


def test_import_primbench_loads_no_heavy_module() -> None:
    code = ("import sys, primbench; heavy = [m for m in ('cupy', 'scipy', 'duckdb', 'pandas', 'matplotlib', "
            "'primbench.compare', 'primbench.history') if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_the_history_filters_become_sql_in_one_place() -> None:
    """How a GPU or a branch is matched is written once, in history/selector.py (it was written
    out in three modules, one of them without the short-uuid case)."""
    import re

    gpu = re.compile(r"IN\s*\(\s*[\w{}]*\.?gpu_key\s*,")  # also f"{alias}.gpu_key"
    branch = re.compile(r"coalesce\(\s*[\w{}]*\.?branch\s*,\s*''\s*\)\s*=\s*\?")
    found = {path.name for path in (ROOT / "history").glob("*.py")
             if gpu.search(path.read_text(encoding="utf-8")) or branch.search(path.read_text(encoding="utf-8"))}
    assert found == {"selector.py"}


def test_each_history_command_is_a_module_level_function_of_the_cli() -> None:
    import typer

    from primbench.cli import history

    app = typer.Typer()
    history.register(app)
    group = app.registered_groups[0].typer_instance
    assert group is not None
    registered = {c.name: c.callback for c in group.registered_commands}
    assert registered == dict(history.COMMANDS)
    assert set(typer.main.get_group(app).commands["history"].commands) == set(registered)  # type: ignore[attr-defined]
    for _, fn in history.COMMANDS:
        assert fn.__qualname__ == fn.__name__ and getattr(history, fn.__name__) is fn  # not a closure


def test_both_stores_implement_the_whole_interface() -> None:
    import inspect

    from primbench.history.storage.contract import Store, backends

    assert Store.__abstractmethods__ >= {"claims", "writer", "connect", "info", "migrate"}
    for kind in backends():
        assert issubclass(kind, Store) and not inspect.isabstract(kind)


def test_the_history_module_table_matches_the_code() -> None:
    """docs/architecture.md's table of what each history/ module holds names every module
    (history/*.py and history/storage/*.py) and nothing that is not there."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## history (`history/`", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {name for line in table for name in re.findall(r"`([\w/]+\.py)`", line.split("|")[1])}
    present = {str(p.relative_to(ROOT / "history")) for p in (ROOT / "history").rglob("*.py")
               if p.name != "__init__.py" and "vendor" not in p.parts}
    assert listed == present, (sorted(present - listed), sorted(listed - present))
    assert "storage/contract.py" in listed and len(listed) > 20
