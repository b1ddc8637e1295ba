"""The CI recipe (examples/ci/benchmarks.yml): every primbench command and option it uses
exists, and its shell steps do what examples/ci/README.md says when run by bash as GitHub
would run them (`bash -eo pipefail`), on the H200 results files, with a stand-in for `gh`.

PyYAML is not a dependency: the workflow is read with a small line parser (steps, their
`id`, `env` and `run:` blocks, and the top-level `env`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from primbench.cli import app
from primbench.results import load_results

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "examples" / "ci" / "benchmarks.yml"
H200 = REPO / "tests" / "benchmarks" / "data" / "h200"
EXAMPLES_H200 = REPO / "examples" / "results" / "h200"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


# --------------------------------------------------------------------------- the parser


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], start: int, parent_indent: int) -> tuple[list[str], int]:
    """The lines of a block scalar (`|` or `>-`) after lines[start - 1], dedented; and the next index."""
    out: list[str] = []
    i = start
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > parent_indent):
        out.append(lines[i])
        i += 1
    while out and not out[-1].strip():
        out.pop()
    width = min((_indent(x) for x in out if x.strip()), default=0)
    return [x[width:] for x in out], i


def _mapping(lines: list[str], start: int, indent: int) -> tuple[dict[str, str], int]:
    """`key: value` lines indented more than `indent` (folded `>-` values joined by spaces)."""
    values: dict[str, str] = {}
    i = start
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        m = re.match(r"\s*([A-Za-z_][\w-]*):\s*(.*)$", lines[i])
        i += 1
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if value in (">-", ">", "|", "|-"):
            body, i = _block(lines, i, _indent(lines[i - 1]))
            value = " ".join(x.strip() for x in body) if value.startswith(">") else "\n".join(body)
        values[key] = value
    return values, i


def parse_workflow(text: str) -> tuple[dict[str, str], list[dict]]:
    """(top-level env, steps); each step: name, id, uses, if, env (dict), run (script or None)."""
    lines = [x.split(" #")[0].rstrip() if not x.lstrip().startswith("#") else "" for x in text.splitlines()]
    top_env: dict[str, str] = {}
    steps: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line == "env:":
            top_env, i = _mapping(lines, i + 1, 0)
            continue
        m = re.match(r"(\s*)- (name|uses|run|id):\s*(.*)$", line)
        if m and steps_section(lines, i):
            dash = len(m.group(1))
            step: dict = {"name": None, "id": None, "uses": None, "if": None, "env": {}, "run": None}
            lines[i] = " " * (dash + 2) + line[dash + 2:]
            key_indent = dash + 2
            i_step = i
            while i_step < len(lines) and (i_step == i or not lines[i_step].strip()
                                          or _indent(lines[i_step]) >= key_indent):
                km = re.match(r"\s*([\w-]+):\s*(.*)$", lines[i_step])
                if km and _indent(lines[i_step]) == key_indent:
                    key, value = km.group(1), km.group(2).strip()
                    if key == "run" and value in ("|", "|-"):
                        body, i_step = _block(lines, i_step + 1, key_indent)
                        step["run"] = "\n".join(body)
                        continue
                    if key == "env":
                        step["env"], i_step = _mapping(lines, i_step + 1, key_indent)
                        continue
                    if key == "with":
                        _, i_step = _mapping(lines, i_step + 1, key_indent)
                        continue
                    step[key] = value
                i_step += 1
            steps.append(step)
            i = i_step
            continue
        i += 1
    return top_env, steps


def steps_section(lines: list[str], i: int) -> bool:
    """Whether line i lies below a `steps:` key."""
    return any(x.strip() == "steps:" for x in lines[:i])


TOP_ENV, STEPS = parse_workflow(WORKFLOW.read_text(encoding="utf-8"))
BY_NAME = {s["name"]: s for s in STEPS}


def primbench_calls(script: str) -> list[list[str]]:
    """Each `primbench ...` command line of a shell script, as words (shell operators cut it)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    calls = []
    for line in joined.splitlines():
        for m in re.finditer(r"(?:^|[\s;&|(])primbench\s+([^|;&>)]*)", line):
            calls.append(shlex.split(m.group(1)))
    return calls


def split_command(words: list[str]) -> tuple[list[str], list[str]]:
    """(subcommand path, the rest) by walking the real command tree (a group has `commands`)."""
    path: list[str] = []
    cmd = typer.main.get_command(app)
    rest = list(words)
    while hasattr(cmd, "commands") and rest and rest[0] in cmd.commands:
        path.append(rest[0])
        cmd = cmd.commands[rest.pop(0)]
    return path, rest


ALL_CALLS = [(s["name"], words) for s in STEPS if s["run"] for words in primbench_calls(s["run"])]


# --------------------------------------------------------------------------- the parser works


def test_parser_reads_the_workflow() -> None:
    names = [s["name"] for s in STEPS]
    assert names[:1] == [None] and STEPS[0]["uses"].startswith("actions/checkout@")
    for name in ("Install primbench", "Run benchmarks", "Upload results", "Fetch the latest main results",
                 "Compare with main", "Ingest into history", "Fail on regression"):
        assert name in names
    assert TOP_ENV["BENCHMARKS"].split() == ["examples/copy_benchmark.py", "examples/memory_latency.py",
                                            "examples/branch_penalty.py", "examples/sync_benchmark.py"]
    assert BY_NAME["Compare with main"]["id"] == "compare"
    assert BY_NAME["Fetch the latest main results"]["env"] == {"GH_TOKEN": "${{ github.token }}"}
    assert primbench_calls('a || primbench compare b/ h/ --format markdown | tee -a "$X" || c=$?') == [
        ["compare", "b/", "h/", "--format", "markdown"]]


def test_workflow_triggers_and_permissions() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    assert re.search(r"^on:\n  push:\n    branches: \[main\]\n  pull_request:", text, re.M)
    assert re.search(r"^  actions: read\b", text, re.M)  # gh run list / download
    assert re.search(r"runs-on: \[self-hosted\b", text)
    assert "cuda13" in BY_NAME["Install primbench"]["run"]
    assert BY_NAME["Upload results"]["uses"].startswith("actions/upload-artifact@")


# --------------------------------------------------------------------------- commands and options exist


def missing(words: list[str]) -> list[str]:
    """What of `primbench WORDS` the real CLI lacks: an unknown subcommand, or options absent from
    `primbench <cmd> --help` (for `run`, only up to FILE: the rest belongs to the benchmark program)."""
    path, rest = split_command(words)
    group = typer.main.get_command(app)
    for name in path:
        group = group.commands[name]
    if hasattr(group, "commands") and rest and not rest[0].startswith("-"):
        return [f"command {rest[0]}"]
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert re.search(rf"Usage: \S+ {re.escape(' '.join(path))}", result.output)
    if path == ["run"]:
        rest = rest[:0]
    options = [w.split("=")[0] for w in rest if w.startswith("-")]
    return [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", result.output)]


def test_every_primbench_command_and_option_exists() -> None:
    assert {" ".join(split_command(w)[0]) for _, w in ALL_CALLS} == {
        "", "run", "compare", "history ingest", "history regressions"}  # "": primbench --version
    for step, words in ALL_CALLS:
        assert missing(words) == [], f"{step}: primbench {' '.join(words)}"


def test_the_check_catches_what_does_not_exist() -> None:
    assert missing(["compare", "b/", "h/", "--format", "markdown", "--no-such-option"]) == ["--no-such-option"]
    assert missing(["compare", "b/", "h/", "--form", "markdown"]) == ["--form"]  # no prefix matching
    assert missing(["history", "ingest", "r/", "--shared", "d", "--runners", "x"]) == ["--runners"]
    assert missing(["history", "ingestt", "r/"]) == ["command ingestt"]
    assert missing(["bench", "x"]) == ["command bench"]


def test_run_options_exist_in_every_benchmark_program() -> None:
    calls = [w for _, w in ALL_CALLS if split_command(w)[0] == ["run"]]
    assert calls
    options = {w for words in calls for w in words[2:] if w.startswith("--")}
    assert options == {"--json-out", "--branch", "--commit", "--output-batches"}
    for bench in TOP_ENV["BENCHMARKS"].split():
        help_text = subprocess.run([sys.executable, str(REPO / bench), "--help"], capture_output=True, text=True,
                                   check=True, timeout=120).stdout
        for option in options:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text), f"{bench}: no {option}"


def test_run_scripts_use_no_expressions() -> None:
    """`${{ }}` goes through env:, never into a script (runnable as is, and no injection)."""
    for step in STEPS:
        assert "${{" not in (step["run"] or ""), step["name"]


def test_step_outputs_used_are_written() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    used = set(re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", text))
    assert used == {("base", "found"), ("compare", "code")}
    for step_id, output in used:
        step = next(s for s in STEPS if s["id"] == step_id)
        assert re.search(rf'echo "{output}=\$\w+" >> "\$GITHUB_OUTPUT"', step["run"])


# --------------------------------------------------------------------------- the steps, run by bash


def _bash(step: str, cwd: Path, env: dict[str, str], path_first: Path | None = None) -> subprocess.CompletedProcess:
    script = BY_NAME[step]["run"]
    full = {**os.environ, **TOP_ENV, **env, "NO_COLOR": "1"}
    full["PATH"] = os.pathsep.join(str(p) for p in (path_first, BIN) if p) + os.pathsep + os.environ["PATH"]
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_run_step_writes_one_results_file_per_benchmark(tmp_path: Path) -> None:
    """The real loop, with `--dry` appended to each primbench call (no GPU here)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    shim = tmp_path / "shim"
    shim.mkdir()
    _executable(shim / "primbench", f'#!/bin/sh\nexec "{BIN / "primbench"}" "$@" --dry\n')
    done = _bash("Run benchmarks", tmp_path, {"BRANCH": "feature/x", "COMMIT": "0123abcd" * 5}, shim)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert written == sorted(Path(b).stem + ".json" for b in TOP_ENV["BENCHMARKS"].split())
    for path in (tmp_path / "results").iterdir():
        results = load_results(path)
        assert (results.branch, results.commit) == ("feature/x", "0123abcd" * 5)
        assert results.general["branch_source"] == "option"
        assert results.settings["output_batches"] is True


def test_run_step_fails_when_a_benchmark_fails_but_runs_the_others(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    done = _bash("Run benchmarks", tmp_path, {"BENCHMARKS": "examples/nope.py examples/copy_benchmark.py",
                                              "BRANCH": "b", "COMMIT": "c"},
                 _shim_dir(tmp_path))
    assert done.returncode == 2  # primbench run: no such file
    assert "examples/nope.py: no such file" in done.stderr
    assert (tmp_path / "results" / "copy_benchmark.json").is_file()


def _shim_dir(tmp_path: Path) -> Path:
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    _executable(shim / "primbench", f'#!/bin/sh\nexec "{BIN / "primbench"}" "$@" --dry\n')
    return shim


FAKE_GH = """#!/bin/sh
# Stand-in for the GitHub CLI: `run list` prints $FAKE_RUNS; `run download ID ... --dir D`
# copies $FAKE_ARTIFACT_DIR into D when ID is $FAKE_GOOD_RUN, else fails like gh does.
echo "gh $*" >> "$FAKE_GH_LOG"
if [ "$1 $2" = "run list" ]; then printf '%s\\n' $FAKE_RUNS; exit 0; fi
if [ "$1 $2" = "run download" ]; then
  if [ "$3" != "$FAKE_GOOD_RUN" ]; then echo "no valid artifacts found to download" >&2; exit 1; fi
  while [ $# -gt 0 ]; do [ "$1" = "--dir" ] && dir=$2; shift; done
  mkdir -p "$dir" && cp "$FAKE_ARTIFACT_DIR"/*.json "$dir"/; exit 0
fi
exit 3
"""


def _github_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {"GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_REPOSITORY": "acme/kernels", "GITHUB_RUN_ID": "999",
           "GITHUB_WORKFLOW_REF": "acme/kernels/.github/workflows/benchmarks.yml@refs/pull/7/merge",
           "FAKE_GH_LOG": str(tmp_path / "gh.log"), "GH_TOKEN": "x", "RUNNER_NAME": "gpu runner 1"}
    for name in ("output", "summary.md", "gh.log"):
        (tmp_path / name).write_text("")
    return {**env, **extra}


def test_fetch_step_first_run_has_no_base(tmp_path: Path) -> None:
    shim = tmp_path / "gh-shim"
    shim.mkdir()
    _executable(shim / "gh", FAKE_GH)
    done = _bash("Fetch the latest main results", tmp_path, _github_env(tmp_path, FAKE_RUNS=""), shim)
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp_path / "output") == {"found": "false"}
    assert "::notice::No benchmark results from main yet" in done.stdout
    assert "No benchmark results from `main` yet" in (tmp_path / "summary.md").read_text()
    assert not (tmp_path / "base").exists()
    log = (tmp_path / "gh.log").read_text()
    assert ("gh run list --repo acme/kernels --workflow benchmarks.yml --branch main --event push --status completed"
            in log)


def test_fetch_step_takes_the_newest_main_run_with_results(tmp_path: Path) -> None:
    shim = tmp_path / "gh-shim"
    shim.mkdir()
    _executable(shim / "gh", FAKE_GH)
    artifact = tmp_path / "artifact"
    artifact.mkdir()
    shutil.copy(H200 / "aa-1.json", artifact / "copy_benchmark.json")
    env = _github_env(tmp_path, FAKE_RUNS="999 301 300 299", FAKE_GOOD_RUN="300", FAKE_ARTIFACT_DIR=str(artifact))
    done = _bash("Fetch the latest main results", tmp_path, env, shim)
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp_path / "output") == {"found": "true"}
    assert "base: results of run 300" in done.stdout
    assert sorted(p.name for p in (tmp_path / "base").iterdir()) == ["copy_benchmark.json"]
    downloads = [x for x in (tmp_path / "gh.log").read_text().splitlines() if "run download" in x]
    assert [x.split()[3] for x in downloads] == ["301", "300"]  # its own run (999) skipped; 299 never tried
    assert "--name benchmark-results --dir base" in downloads[-1]


def _compare(tmp_path: Path, base: Path, head: Path) -> tuple[subprocess.CompletedProcess, str, str]:
    (tmp_path / "base").mkdir()
    (tmp_path / "results").mkdir()
    shutil.copy(base, tmp_path / "base" / "copy_benchmark.json")
    shutil.copy(head, tmp_path / "results" / "copy_benchmark.json")
    done = _bash("Compare with main", tmp_path, _github_env(tmp_path))
    return done, _outputs(tmp_path / "output")["code"], (tmp_path / "summary.md").read_text()


def test_compare_step_records_a_regression_and_still_succeeds(tmp_path: Path) -> None:
    done, code, summary = _compare(tmp_path, H200 / "aa-1.json", H200 / "slow-2-1.json")
    assert done.returncode == 0, done.stderr
    assert code == "1"
    assert summary.startswith("### primbench compare")
    assert "| type: char | 1.08 TB/s | 1.06 TB/s | -1.86 % |" in summary
    assert "**🔴 regression**" in summary
    assert summary in done.stdout  # tee: the log shows it too


def test_compare_step_a_a_pair_passes(tmp_path: Path) -> None:
    done, code, summary = _compare(tmp_path, EXAMPLES_H200 / "copy-run1.json", EXAMPLES_H200 / "copy-run2.json")
    assert (done.returncode, code) == (0, "0")
    assert "0 regressions" in summary and "regression**" not in summary


def test_compare_step_bad_input_is_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done, code, _ = _compare(tmp_path, H200 / "aa-1.json", bad)
    assert (done.returncode, code) == (0, "2")
    assert "primbench compare: error:" in done.stderr


@pytest.mark.parametrize(("code", "message"), [("1", "found a regression"), ("2", "could not compare (exit 2")])
def test_gate_step_fails_with_the_compare_code(tmp_path: Path, code: str, message: str) -> None:
    done = _bash("Fail on regression", tmp_path, {"CODE": code})
    assert done.returncode == int(code)
    assert f"::error::primbench compare {message}" in done.stdout
    condition = "steps.compare.outputs.code != '' && steps.compare.outputs.code != '0'"
    assert BY_NAME["Fail on regression"]["if"] == condition


def test_ingest_step_writes_the_runners_parquet_parts(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    results = tmp_path / "results"
    results.mkdir()
    for name in ("copy-run1.json", "memory_latency.json", "branch_penalty.json"):
        shutil.copy(EXAMPLES_H200 / name, results / name)
    history = tmp_path / "history"
    env = _github_env(tmp_path, HISTORY_DIR=str(history))
    done = _bash("Ingest into history", tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "3 run(s) stored" in done.stdout
    assert "change point(s) on main" in done.stdout
    parts = sorted(p.relative_to(history).parts[:2] for p in history.rglob("*.parquet"))
    assert ("runs", "runner=gpu_runner_1") in parts  # the runner's name, made safe for a folder
    again = _bash("Ingest into history", tmp_path, env)  # a re-run of the job stores nothing twice
    assert "0 run(s) stored" in again.stdout and "3 already stored" in again.stdout
    listed = CliRunner().invoke(app, ["history", "runs", "--db", str(history), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert sorted(r["algorithm"] for r in json.loads(listed.output)) == ["branch_penalty", "copy", "memory_latency"]
    assert BY_NAME["Ingest into history"]["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"


def test_readme_shows_the_real_compare_output(tmp_path: Path) -> None:
    """examples/ci/README.md quotes compare's markdown for aa-1 vs slow-2-1: it must be what compare prints."""
    readme = (REPO / "examples" / "ci" / "README.md").read_text(encoding="utf-8")
    command = "$ primbench compare base/ results/ --format markdown\n"
    quoted = readme.split(command, 1)[1].split("$ echo $?\n", 1)
    assert quoted[1].startswith("1\n")
    (tmp_path / "base").mkdir()
    (tmp_path / "results").mkdir()
    shutil.copy(H200 / "aa-1.json", tmp_path / "base" / "copy_benchmark.json")
    shutil.copy(H200 / "slow-2-1.json", tmp_path / "results" / "copy_benchmark.json")
    done = subprocess.run([str(BIN / "primbench"), "compare", "base/", "results/", "--format", "markdown"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout == quoted[0]
