"""The command-line documentation stays complete and current (the habit of sqlite-utils'
tests/test_docs.py): every command and option explains itself, docs/cli.md is exactly what
`primbench.cli.reference` generates, and every command is written about somewhere besides it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.cli.reference import ENV, WIDTH, cli_reference, command_tree, help_text, title

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
REGENERATE = "python -m primbench.cli.reference > docs/cli.md"

COMMANDS = list(command_tree(app))
IDS = [title(path) for path, _ in COMMANDS]


def _params(command: Any) -> list[tuple[str, str | None]]:
    """(the parameter as a user writes it, its help) of every option and argument but --help."""
    out = []
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        name = max(p.opts, key=len) if p.param_type_name == "option" else (p.metavar or p.name or "?")
        if name == "--help":
            continue
        out.append((name, getattr(p, "help", None)))
    return out


def test_the_tree_holds_every_command() -> None:
    assert {"primbench", "primbench run", "primbench compare", "primbench history",
            "primbench history ingest", "primbench history compare"} <= set(IDS)
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_command_has_help(path: tuple[str, ...], command: Any) -> None:
    assert (command.help or "").strip(), f"{title(path)} has no help text (give the function a docstring)"
    assert (command.get_short_help_str() or "").strip()


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_option_and_argument_has_help(path: tuple[str, ...], command: Any) -> None:
    missing = [name for name, text in _params(command) if not (text or "").strip()]
    assert not missing, f"{title(path)}: no help= for {', '.join(missing)}"


def test_help_is_rendered_deterministically() -> None:
    """The reference does not depend on the terminal it is generated in."""
    wide = CliRunner().invoke(app, ["compare", "--help"], env={**ENV, "COLUMNS": "250"}, color=True,
                              terminal_width=WIDTH, max_content_width=WIDTH)
    assert wide.exit_code == 0
    assert wide.output.rstrip() + "\n" == help_text(("compare",))
    assert "\x1b[" not in wide.output
    assert max(len(line) for line in help_text(("history", "compare")).splitlines()) <= WIDTH


def test_docs_cli_md_is_current() -> None:
    current = CLI_MD.read_text(encoding="utf-8") if CLI_MD.exists() else ""
    assert current == cli_reference(), (
        f"docs/cli.md is out of date with the commands' --help: regenerate it with `{REGENERATE}`"
    )


def test_docs_cli_md_has_every_help() -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    for path, _ in COMMANDS:
        assert f"## {title(path)}\n" in text
        assert help_text(path) in text


def _mention(path: tuple[str, ...]) -> re.Pattern[str]:
    """``primbench history compare`` written out (any spacing), not as part of a longer word."""
    words = ("primbench", *path)
    return re.compile(r"(?<![\w-])" + r"\s+".join(map(re.escape, words)) + r"(?![\w-])")


def _prose() -> dict[str, str]:
    """README.md and docs/*.md, except the generated reference."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in files
            if f.exists() and f != CLI_MD}


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=IDS)
def test_every_command_is_documented_besides_the_reference(path: tuple[str, ...]) -> None:
    prose = _prose()
    found = [name for name, text in prose.items() if _mention(path).search(text)]
    assert found, f"`{title(path)}` is mentioned in none of {', '.join(prose)}: describe it in README.md or docs/"


@pytest.mark.slow
def test_readme_compare_outputs_are_what_compare_prints() -> None:
    """Every ``$ primbench compare …`` block in README.md is real: replayed as a CI log shows it
    (`tests.transcripts`: full width, no colour), it prints what the README shows."""
    from tests.transcripts import blocks, run

    readme = [b for b in blocks((ROOT / "README.md").read_text(encoding="utf-8")) if b.startswith("$ primbench")]
    assert readme and readme[0].startswith("$ primbench compare")
    docs = [b for name in ("guide.md", "compare.md") for b in blocks((ROOT / "docs" / name).read_text(encoding="utf-8"))
            if "primbench compare" in b or "primbench history ingest" in b]
    assert len(readme) + len(docs) >= 4
    for block in readme + docs:
        assert run(block) == block, block.splitlines()[0]


def test_readme_starts_with_the_user_and_stays_short() -> None:
    """Issue 22: the two set-up commands, then the main job without a GPU, then benchmark my
    kernel, compare and CI, in that order; under 300 lines (the details are in docs/)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    order = ["## Without a GPU", "## Benchmark my kernel", "## Compare two runs", "## CI"]
    at = [next(i for i, h in enumerate(heads) if h.startswith(o)) for o in order]
    assert at == sorted(at) and at[0] == 0


@pytest.mark.slow
def test_readme_quick_start_runs_verbatim(tmp_path: Path) -> None:
    """The README's "Without a GPU" block, each line run as written from the repository root
    (in the venv running the tests; its /tmp/h.duckdb in the test's own folder): the install,
    then compare (exit 1: it finds the planted regressions), ingest and regressions (exit 0)."""
    import os
    import re
    import shlex
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Without a GPU.*?```bash\n(.*?)```", text, re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert lines[0].startswith("pip install -e ")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    expected = {"pip": 0, "compare": 1, "ingest": 0, "regressions": 0}
    for line in lines:
        # the store the README names in /tmp goes to this test's own folder: a store left there by
        # another checkout (another schema) or run must not decide this test
        words = [str(tmp_path / "h.duckdb") if w == "/tmp/h.duckdb" else w for w in shlex.split(line)]
        if words[0] == "pip":
            words = [sys.executable, "-m", "pip", *words[1:], "-q"]
        done = subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        kind = "pip" if "pip" in words[:3] else words[2] if words[1] == "history" else words[1]
        if kind == "pip" and done.returncode != 0 and re.search(r"(?i)network|resolve|connection|index", done.stderr):
            pytest.skip(f"no package index reachable: {done.stderr.strip()[-200:]}")
        assert done.returncode == expected[kind], (line, done.stdout[-500:], done.stderr[-500:])
