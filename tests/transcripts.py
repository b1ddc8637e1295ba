"""Shell transcripts in markdown (```` ``` ```` blocks of ``$ command`` lines, each followed by
what it prints) that are real: `run` replays a block in a scratch directory (``examples`` and
``tests`` linked from the repository) with bash, and returns the transcript it produces; the
tests compare it with the block. ``python -m tests.transcripts FILE...`` rewrites the runnable
blocks of FILE with what they print now (then read the diff before committing it).

A block is runnable when every command starts with one of `COMMANDS`, none needs a GPU
(`NEEDS_A_GPU`) and none names a path outside the scratch directory (``/srv/…``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BLOCK = re.compile(r"```\n(\$ [^\n]*\n.*?)```", re.S)
COMMANDS = ("primbench ", "mkdir ", "cp ", "echo ", "cat ", "rm ")
NEEDS_A_GPU = ("primbench run ",)  # shown from a real run on the H200, not replayable here
_SEP = "@@primbench-transcript@@"
#: The environment of a transcript: a CI log (full-width tables), no colour.
ENV = {"CI": "true", "NO_COLOR": "1", "COLUMNS": "", "PRIMBENCH_HISTORY_DB": ""}


def commands(block: str) -> list[str]:
    return [line[2:] for line in block.splitlines() if line.startswith("$ ")]


def runnable(block: str) -> bool:
    cmds = commands(block)
    return bool(cmds) and all(c.startswith(COMMANDS) and "/srv/" not in c and not c.startswith(NEEDS_A_GPU)
                              for c in cmds)


def blocks(text: str) -> list[str]:
    """The runnable transcript blocks of a markdown text."""
    return [b for b in BLOCK.findall(text) if runnable(b)]


def run(block: str, env: Mapping[str, str] | None = None) -> str:
    """Replay `block`'s commands in a fresh scratch directory; the transcript they produce."""
    cmds = commands(block)
    script = ["__rc=0"]
    for c in cmds:
        c = c.replace("echo $?", "echo $__rc")
        script.append(f"{c} 2>&1; __rc=$?; echo '{_SEP}'")
    full = {**os.environ, **ENV, **(env or {})}
    for key in ("CLICOLOR_FORCE", "FORCE_COLOR", "GITHUB_ACTIONS"):
        full.pop(key, None)
    full = {k: v for k, v in full.items() if v != ""}
    full["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("examples", "tests"):
            (Path(tmp) / name).symlink_to(REPO / name)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-c", "\n".join(script)], cwd=tmp, env=full,
                              capture_output=True, text=True, timeout=300)
    outputs = done.stdout.split(_SEP + "\n")
    return "".join(f"$ {c}\n{out}" for c, out in zip(cmds, outputs, strict=False))


def refresh(path: Path) -> int:
    """Rewrite the runnable blocks of `path` with what they print now; how many changed."""
    text = path.read_text(encoding="utf-8")
    changed = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal changed
        block = m.group(1)
        if not runnable(block):
            return m.group(0)
        new = run(block)
        changed += new != block
        return f"```\n{new}```"

    path.write_text(BLOCK.sub(replace, text), encoding="utf-8")
    return changed


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {refresh(Path(arg))} block(s) changed")
