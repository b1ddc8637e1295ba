"""How many files a history backend touches, counted (issue 25: "a new backend touches at most
5 files; show the PostgreSQL diff as the example, counted").

Every file of the checkout that git holds (tracked, or untracked and not ignored) is searched,
case-insensitively, for the backend's names (`NAMES`; the PostgreSQL backend: ``postgres``,
``psycopg``, ``PostgresStore``; ``postgres`` also matches ``postgresql``), and each file with
a hit is listed with its number of matching lines and classified:

* **the backend** (counted): every hit outside ``tests/benchmarks/``: what has to exist or
  change for the backend to be there, be installed, be tested and be documented. Each is
  given its role (`ROLES`); a hit no role covers is listed as ``NOT EXPECTED``, and counts;
* **its evaluations** (listed, not counted): the benchmarks under ``tests/benchmarks/`` that
  measure the backends, their recorded outputs and READMEs, and this count itself. None is
  needed for the backend to work or be tested; a new backend need not touch any of them.

From the repository's root (the folder: tests/benchmarks/storage_concurrency/)::

    python FOLDER/backend_files.py > FOLDER/backend_files.txt

tests/test_ratchets.py fails when a backend's count (`footprint`) is above `LIMIT`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: The names that mention a backend, by backend (its module in history/storage/).
NAMES: dict[str, str] = {"postgres": r"postgres|psycopg|PostgresStore"}
LIMIT = 5
EVALUATIONS = "tests/benchmarks/"
#: What each counted file is to its backend, by path (``{name}``: the backend's module name).
ROLES: dict[str, str] = {
    "history/storage/{name}.py": "the backend: its `Store` (declared as `BACKEND`), writer, migrations, reading",
    "pyproject.toml": "its extra (the driver), and `dev` with it",
    "tests/backends/{name}.py": "its test side: contract case, fixtures (its server), `SERVICE` for .ci/run, "
                                "its own tests",
    "docs/history.md": "its user documentation",
    "docs/architecture.md": "its row in the module table (tests/test_architecture.py wants every module there)",
}


def files(root: Path = ROOT) -> list[str]:
    """The files git holds: tracked, and untracked but not ignored (relative, sorted)."""
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                          capture_output=True, check=True)
    return sorted({f for f in done.stdout.decode().split("\0") if f and (root / f).is_file()})


def hits(name: str, root: Path = ROOT) -> dict[str, int]:
    """File -> number of its lines that mention the backend `name` (files with none left out)."""
    pattern = re.compile(NAMES[name], re.IGNORECASE)
    out = {}
    for f in files(root):
        try:
            text = (root / f).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary data (results files' Parquet, images): no source mentions a backend there
        n = sum(1 for line in text.splitlines() if pattern.search(line))
        if n:
            out[f] = n
    return out


def role(name: str, path: str) -> str | None:
    for where, what in ROLES.items():
        if path == where.format(name=name):
            return what
    return None


def footprint(name: str, root: Path = ROOT) -> list[str]:
    """The files counted for the backend `name`: every hit outside the evaluations."""
    return [f for f in hits(name, root) if not f.startswith(EVALUATIONS)]


def report(root: Path = ROOT) -> str:
    out = []
    for name in NAMES:
        found = hits(name, root)
        counted = [f for f in found if not f.startswith(EVALUATIONS)]
        evaluations = [f for f in found if f.startswith(EVALUATIONS)]
        out.append(f"# backend {name!r}: files whose text matches /{NAMES[name]}/i ({len(found)} files)")
        out.append("")
        verdict = "within" if len(counted) <= LIMIT else "OVER"
        out.append(f"the backend: {len(counted)} files ({verdict} the limit of {LIMIT})")
        for f in counted:
            out.append(f"  {f:<48} {found[f]:>4} lines  {role(name, f) or 'NOT EXPECTED: no role covers it'}")
        out.append("")
        out.append(f"its evaluations (not counted): {len(evaluations)} files")
        for f in evaluations:
            out.append(f"  {f:<60} {found[f]:>4} lines")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(report())
