"""The CI recipe (examples/ci/benchmarks.yml, the artifact mode; benchmarks-relative.yml and
run-interleaved.sh, the relative mode): every primbench command and option they use exists,
and their shell steps do what examples/ci/README.md says when run by bash as GitHub would run
them (`bash -eo pipefail`), on the H200 results files, with a stand-in for `gh` and a fake
benchmark program.

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
RELATIVE = REPO / "examples" / "ci" / "benchmarks-relative.yml"
INTERLEAVE = REPO / "examples" / "ci" / "run-interleaved.sh"
H200 = REPO / "tests" / "benchmarks" / "data" / "h200"
#: Runs with rounds (results 4.3.0): the suite at 128 MiB, an A/A run and a planted one.
ROUNDS = REPO / "tests" / "benchmarks" / "rounds" / "data" / "128MiB"
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
R_ENV, R_STEPS = parse_workflow(RELATIVE.read_text(encoding="utf-8"))
R_BY_NAME = {s["name"]: s for s in R_STEPS}
WORKFLOWS = {"benchmarks.yml": (WORKFLOW, STEPS), "benchmarks-relative.yml": (RELATIVE, R_STEPS)}


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


def calls_of(steps: list[dict]) -> list[tuple[str, list[str]]]:
    return [(s["name"], words) for s in steps if s["run"] for words in primbench_calls(s["run"])]


ALL_CALLS = calls_of(STEPS)
R_CALLS = calls_of(R_STEPS)


# --------------------------------------------------------------------------- the parser works


def test_parser_reads_the_workflow() -> None:
    names = [s["name"] for s in STEPS]
    assert names[:1] == [None] and STEPS[0]["uses"].startswith("actions/checkout@")
    for name in ("Install primbench", "Run benchmarks", "Upload results", "Fetch the latest main results",
                 "Compare with main", "Upload the comparison", "Comment on the pull request", "Ingest into history",
                 "Fail on regression"):
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
    assert re.search(r"^  pull-requests: write\b", text, re.M)  # gh pr comment
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
    options = [w.split("=")[0] for w in rest if w.startswith("-") and w != "--"]  # --: the end of the options
    return [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", result.output)]


def test_every_primbench_command_and_option_exists() -> None:
    assert {" ".join(split_command(w)[0]) for _, w in ALL_CALLS} == {
        "", "run", "compare", "history ingest", "history regressions"}  # "": primbench --version
    assert {" ".join(split_command(w)[0]) for _, w in R_CALLS} == {"", "run", "compare"}
    for step, words in ALL_CALLS + R_CALLS:
        assert missing(words) == [], f"{step}: primbench {' '.join(words)}"


def test_the_check_catches_what_does_not_exist() -> None:
    assert missing(["compare", "b/", "h/", "--format", "markdown", "--no-such-option"]) == ["--no-such-option"]
    assert missing(["compare", "b/", "h/", "--form", "markdown"]) == ["--form"]  # no prefix matching
    assert missing(["history", "ingest", "r/", "--shared", "d", "--runners", "x"]) == ["--runners"]
    assert missing(["history", "ingestt", "r/"]) == ["command ingestt"]
    assert missing(["bench", "x"]) == ["command bench"]
    # the pooled form: options first, then base files, --, head files
    assert missing(["compare", "--format", "markdown", "b1", "b2", "--", "h1", "h2"]) == []
    assert missing(["compare", "--formats", "markdown", "b1", "--", "h1"]) == ["--formats"]


def test_gitlab_snippets_use_commands_and_options_that_exist() -> None:
    """The GitLab CI snippets in examples/ci/README.md (artifact and relative mode) are not run here,
    but their primbench commands and options are checked like the workflows'."""
    readme = (REPO / "examples" / "ci" / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    assert len(blocks) == 2
    calls = [words for block in blocks for line in block.splitlines() if line.strip().startswith("- ")
             for words in primbench_calls(re.sub(r"\$\([^()]*\)", "X", line.strip()[2:]))]
    assert {" ".join(split_command(w)[0]) for w in calls} == {"run", "compare", "history ingest"}
    assert ["compare", "--format", "markdown", "runs/*/base-*.json", "--", "runs/*/head-*.json"] in calls
    for words in calls:
        assert missing(words) == [], f"primbench {' '.join(words)}"


def test_run_options_exist_in_every_benchmark_program() -> None:
    calls = [w for _, w in ALL_CALLS + R_CALLS if split_command(w)[0] == ["run"]]
    assert calls
    options = {w for words in calls for w in words[2:] if w.startswith("--")}
    assert options == {"--json-out", "--branch", "--commit", "--output-batches",
                       "--processes", "--rounds", "--min-secs"}
    assert '"$@" --json-out "$out"' in INTERLEAVE.read_text(encoding="utf-8")  # the option the script appends
    assert R_ENV["BENCHMARKS"] == TOP_ENV["BENCHMARKS"]
    for bench in TOP_ENV["BENCHMARKS"].split():
        help_text = subprocess.run([sys.executable, str(REPO / bench), "--help"], capture_output=True, text=True,
                                   check=True, timeout=120).stdout
        for option in options:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text), f"{bench}: no {option}"


def test_run_scripts_use_no_expressions() -> None:
    """`${{ }}` goes through env:, never into a script (runnable as is, and no injection)."""
    for step in STEPS + R_STEPS:
        assert "${{" not in (step["run"] or ""), step["name"]


@pytest.mark.parametrize("workflow", list(WORKFLOWS))
def test_step_outputs_used_are_written(workflow: str) -> None:
    path, steps = WORKFLOWS[workflow]
    used = set(re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", path.read_text(encoding="utf-8")))
    assert used == ({("base", "found"), ("compare", "code")} if path == WORKFLOW else {("compare", "code")})
    for step_id, output in used:
        step = next(s for s in steps if s["id"] == step_id)
        assert re.search(rf'echo "{output}=\$\w+" >> "\$GITHUB_OUTPUT"', step["run"])


# --------------------------------------------------------------------------- the steps, run by bash


def _bash(step: str, cwd: Path, env: dict[str, str], path_first: Path | None = None,
          workflow: str = "benchmarks.yml") -> subprocess.CompletedProcess:
    by_name, top_env = (BY_NAME, TOP_ENV) if workflow == "benchmarks.yml" else (R_BY_NAME, R_ENV)
    script = by_name[step]["run"]
    full = {**os.environ, **top_env, **env, "NO_COLOR": "1"}
    full["PATH"] = os.pathsep.join(str(p) for p in (path_first, BIN) if p) + os.pathsep + os.environ["PATH"]
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_run_step_writes_two_results_files_per_benchmark(tmp_path: Path) -> None:
    """The real loop, with `--dry` appended to each primbench call (no GPU here)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    shim = tmp_path / "shim"
    shim.mkdir()
    _executable(shim / "primbench", f'#!/bin/sh\nexec "{BIN / "primbench"}" "$@" --dry\n')
    done = _bash("Run benchmarks", tmp_path, {"BRANCH": "feature/x", "COMMIT": "0123abcd" * 5}, shim)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert written == sorted(f"{Path(b).stem}-{k}.json" for b in TOP_ENV["BENCHMARKS"].split() for k in (1, 2))
    for path in (tmp_path / "results").iterdir():
        results = load_results(path)
        assert (results.branch, results.commit) == ("feature/x", "0123abcd" * 5)
        assert results.general.branch_source == "option"
        assert results.settings.output_batches is True
        # two runs a program of the thirteenth evaluation's design (tests/benchmarks/verdicts/README.md)
        assert (results.settings.processes, results.settings.rounds, results.settings.min_secs) == (8, 2, 0.25)


def test_run_step_fails_when_a_benchmark_fails_but_runs_the_others(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    done = _bash("Run benchmarks", tmp_path, {"BENCHMARKS": "examples/nope.py examples/copy_benchmark.py",
                                              "BRANCH": "b", "COMMIT": "c"},
                 _shim_dir(tmp_path))
    assert done.returncode == 2  # primbench run: no such file
    assert "examples/nope.py: no such file" in done.stderr
    written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert written == ["copy_benchmark-1.json", "copy_benchmark-2.json"]


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
if [ "$1 $2" = "pr comment" ]; then
  # As gh 2.58+: --edit-last edits the user's last comment; on a pull request without one it fails
  # unless --create-if-none (which needs --edit-last) is given. Comments: files in $FAKE_COMMENTS.
  shift 2; pr=$1; shift; body=; edit=false; create=false; repo=
  while [ $# -gt 0 ]; do
    case "$1" in
      --body-file) body=$2; shift;;
      --repo) repo=$2; shift;;
      --edit-last) edit=true;;
      --create-if-none) create=true;;
      *) echo "unknown flag: $1" >&2; exit 1;;
    esac; shift
  done
  case "$pr" in ''|*[!0-9]*) echo "not a pull request number: '$pr'" >&2; exit 1;; esac
  [ -n "$repo" ] || { echo "no --repo" >&2; exit 1; }
  [ -f "$body" ] || { echo "no body file: $body" >&2; exit 1; }
  if [ "$create" = true ] && [ "$edit" = false ]; then echo "--create-if-none requires --edit-last" >&2; exit 1; fi
  dir="$FAKE_COMMENTS/$repo/$pr"; mkdir -p "$dir"; last=$(ls "$dir" | sort -n | tail -1)
  if [ "$edit" = true ] && [ -n "$last" ]; then cp "$body" "$dir/$last"; echo "edited comment $last"; exit 0; fi
  if [ "$edit" = true ] && [ "$create" = false ]; then echo "no comments found for current user" >&2; exit 1; fi
  n=$(( ${last:-0} + 1 )); cp "$body" "$dir/$n"; echo "created comment $n"; exit 0
fi
if [ "$1 $2" = "run download" ]; then
  if [ "$3" != "$FAKE_GOOD_RUN" ]; then echo "no valid artifacts found to download" >&2; exit 1; fi
  while [ $# -gt 0 ]; do [ "$1" = "--dir" ] && dir=$2; shift; done
  mkdir -p "$dir" && cp "$FAKE_ARTIFACT_DIR"/*.json "$dir"/; exit 0
fi
exit 3
"""


def _github_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {"CI": "true", "GITHUB_ACTIONS": "true", "FAKE_COMMENTS": str(tmp_path / "comments"),
           "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
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
    done, code, summary = _compare(tmp_path, ROUNDS / "aa-1.json", ROUNDS / "planted-2.json")
    assert done.returncode == 0, done.stderr
    assert code == "1"
    assert summary.startswith("<!-- primbench-compare -->\n### primbench compare")
    assert "| ipt: 1, op: copy, type: char | 535.00 GB/s | 529.64 GB/s | -1.00 % |" in summary
    assert "**🔴 regression**" in summary
    assert summary == (tmp_path / "compare.md").read_text()  # the file the comment posts
    verdicts = json.loads((tmp_path / "compare.json").read_text())["summary"]["counts"]
    regressions = verdicts["regression"]  # the JSON of the same run, for the artifact
    assert regressions >= 1 and summary.count("**🔴 regression**") == regressions
    log = done.stdout  # the log: the full-width table (CI is set on GitHub's runners)
    plural = "" if regressions == 1 else "s"
    assert "Specialization" in log and "Detectable" in log and f"Summary: {regressions} regression{plural}," in log


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


def _comment(tmp_path: Path, shim: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in _github_env(tmp_path, PR="7").items() if k not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    return _bash("Comment on the pull request", tmp_path, env, shim)


def test_the_comment_is_created_once_then_updated(tmp_path: Path) -> None:
    """The first run of a pull request creates its comment, the next edits that one: a fake gh
    that checks the arguments as gh does (--edit-last fails without a comment unless
    --create-if-none)."""
    shim = tmp_path / "gh-shim"
    shim.mkdir()
    _executable(shim / "gh", FAKE_GH)
    _, code, _ = _compare(tmp_path, ROUNDS / "aa-1.json", ROUNDS / "planted-2.json")
    assert code == "1"
    first = _comment(tmp_path, shim)
    assert first.returncode == 0, first.stderr
    assert "created comment 1" in first.stdout
    comments = tmp_path / "comments" / "acme" / "kernels" / "7"
    assert [p.name for p in comments.iterdir()] == ["1"]
    posted = (comments / "1").read_text()
    assert posted.startswith("<!-- primbench-compare -->") and "**🔴 regression**" in posted
    assert re.search(r"\*\*[1-9]\d* regressions?, ", posted)
    for d in ("base", "results"):
        shutil.rmtree(tmp_path / d)
    _, code, _ = _compare(tmp_path, EXAMPLES_H200 / "copy-run1.json", EXAMPLES_H200 / "copy-run2.json")
    assert code == "0"
    second = _comment(tmp_path, shim)
    assert second.returncode == 0, second.stderr
    assert "edited comment 1" in second.stdout
    assert [p.name for p in comments.iterdir()] == ["1"]  # still one comment, now the new comparison
    assert "0 regressions" in (comments / "1").read_text()
    calls = [x for x in (tmp_path / "gh.log").read_text().splitlines() if x.startswith("gh pr comment")]
    assert calls == ["gh pr comment 7 --repo acme/kernels --body-file compare.md --edit-last --create-if-none"]
    condition = "github.event_name == 'pull_request' && steps.compare.outputs.code != ''"
    assert BY_NAME["Comment on the pull request"]["if"] == condition
    assert BY_NAME["Comment on the pull request"]["env"]["PR"] == "${{ github.event.pull_request.number }}"


def test_the_fake_gh_fails_as_gh_does_without_create_if_none(tmp_path: Path) -> None:
    """The command the README once documented (--edit-last alone) fails on a first comment."""
    shim = tmp_path / "gh-shim"
    shim.mkdir()
    gh = _executable(shim / "gh", FAKE_GH)
    (tmp_path / "c.md").write_text("x")
    env = {**os.environ, **_github_env(tmp_path)}
    done = subprocess.run([str(gh), "pr", "comment", "7", "--repo", "a/b", "--body-file", "c.md", "--edit-last"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "no comments found for current user" in done.stderr


def test_no_comment_when_compare_could_not_compare(tmp_path: Path) -> None:
    shim = tmp_path / "gh-shim"
    shim.mkdir()
    _executable(shim / "gh", FAKE_GH)
    done = _comment(tmp_path, shim)
    assert done.returncode == 0 and "no comparison to post" in done.stdout
    assert not (tmp_path / "comments").exists()


@pytest.mark.parametrize(("code", "message"), [("1", "found a regression"), ("2", "could not compare (exit 2")])
def test_gate_step_fails_with_the_compare_code(tmp_path: Path, code: str, message: str) -> None:
    done = _bash("Fail on regression", tmp_path, {"CODE": code})
    assert done.returncode == int(code)
    assert f"::error::primbench compare {message}" in done.stdout
    condition = "steps.compare.outputs.code != '' && steps.compare.outputs.code != '0'"
    assert BY_NAME["Fail on regression"]["if"] == condition


@pytest.mark.slow
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


def test_readme_transcripts_are_what_primbench_prints() -> None:
    """Every runnable ``$ …`` block of examples/ci/README.md (compare's markdown for the 128 MiB
    suite's aa-1 vs planted-2, the copy example's A/A pair, a broken file) is replayed
    (`tests.transcripts`) and must print what the page shows."""
    from tests.transcripts import blocks, run

    readme = (REPO / "examples" / "ci" / "README.md").read_text(encoding="utf-8")
    found = blocks(readme)
    assert len(found) >= 3
    assert any("$ primbench compare base/ results/ --format markdown\n<!-- primbench-compare -->" in b for b in found)
    for block in found:
        assert run(block) == block


# --------------------------------------------------------------------------- relative mode: the workflow


def test_relative_workflow_reads_and_triggers() -> None:
    text = RELATIVE.read_text(encoding="utf-8")
    assert re.search(r"^on:\n  pull_request:\n\n", text, re.M)  # pull requests only: main keeps the artifact mode
    assert re.search(r"^  contents: read$", text, re.M) and "actions: read" not in text  # no artifact of main needed
    assert re.search(r"runs-on: \[self-hosted\b", text)
    assert "if: github.event.pull_request.head.repo.full_name == github.repository" in text  # never for forks
    assert R_STEPS[0]["uses"].startswith("actions/checkout@")
    assert re.search(r"^        with:\n          path: head\n          fetch-depth: 2$", text, re.M)
    assert [s["name"] for s in R_STEPS[1:]] == ["Check out base", "Install primbench", "GPU", "Run interleaved",
                                                "Upload runs", "Compare base and head", "Fail on regression"]
    assert R_ENV["PAIRS"] == "${{ vars.BENCHMARK_PAIRS || 2 }}"  # 2 pairs unless a repository variable says
    assert R_BY_NAME["Upload runs"]["uses"].startswith("actions/upload-artifact@")
    assert R_BY_NAME["Upload runs"]["if"] == "always()"
    assert R_BY_NAME["Fail on regression"]["if"] == BY_NAME["Fail on regression"]["if"]
    assert "head/examples/ci/run-interleaved.sh base head \"$PAIRS\"" in R_BY_NAME["Run interleaved"]["run"]
    assert os.access(INTERLEAVE, os.X_OK)  # the workflow calls it directly


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def _pull_request_checkout(tmp_path: Path) -> dict[str, str]:
    """head/: a repository whose HEAD is the merge of a pull request into main, as actions/checkout leaves it."""
    head = tmp_path / "head"
    head.mkdir()
    _git(head, "init", "-q", "-b", "main")
    (head / "bench.txt").write_text("main 1\n")
    _git(head, "add", ".")
    _git(head, "commit", "-q", "-m", "main 1")
    _git(head, "checkout", "-q", "-b", "feature")
    (head / "feature.txt").write_text("feature\n")
    _git(head, "add", ".")
    _git(head, "commit", "-q", "-m", "feature")
    _git(head, "checkout", "-q", "main")
    (head / "bench.txt").write_text("main 2\n")
    _git(head, "commit", "-q", "-am", "main 2")
    main = _git(head, "rev-parse", "HEAD")
    feature = _git(head, "rev-parse", "feature")
    _git(head, "checkout", "-q", "--detach", main)
    _git(head, "merge", "-q", "--no-ff", "-m", "Merge feature into main", feature)
    return {"main": main, "feature": feature, "merge": _git(head, "rev-parse", "HEAD")}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_check_out_base_is_the_merges_first_parent(tmp_path: Path) -> None:
    commits = _pull_request_checkout(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "stale.json").write_text("{}")  # a self-hosted runner's workspace is reused
    done = _bash("Check out base", tmp_path, {}, workflow="benchmarks-relative.yml")
    assert done.returncode == 0, done.stderr
    assert _git(tmp_path / "base", "rev-parse", "HEAD") == commits["main"]  # the target branch, not the fork point
    assert (tmp_path / "base" / "bench.txt").read_text() == "main 2\n"
    assert not (tmp_path / "base" / "feature.txt").exists()
    assert not (tmp_path / "runs").exists()
    assert f"base: {commits['main'][:7]} main 2" in done.stdout
    assert "head: " in done.stdout and "Merge feature into main" in done.stdout
    again = _bash("Check out base", tmp_path, {}, workflow="benchmarks-relative.yml")  # a re-run of the job
    assert again.returncode == 0, again.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_check_out_base_refuses_a_head_that_is_not_a_merge(tmp_path: Path) -> None:
    commits = _pull_request_checkout(tmp_path)
    _git(tmp_path / "head", "checkout", "-q", "--detach", commits["feature"])
    done = _bash("Check out base", tmp_path, {}, workflow="benchmarks-relative.yml")
    assert done.returncode == 2
    assert "::error::head is not a merge commit" in done.stdout
    assert not (tmp_path / "base").exists()


# --------------------------------------------------------------------------- relative mode: run-interleaved.sh

# A benchmark program for the tests: it logs its run, then writes a real H200 results file (chosen per
# output file name by FAKE_SOURCES, a JSON object, else copy-run1.json) with the branch and commit it was
# given, and exits with FAKE_EXIT's code for that file name (else 0).
FAKE_BENCH = """import json, os, sys
from pathlib import Path
args = sys.argv[1:]
out = Path(args[args.index("--json-out") + 1])
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join([Path.cwd().name, os.environ["FAKE_VENV"], out.name, os.environ["PRIMBENCH_BRANCH"],
                        os.environ.get("PRIMBENCH_COMMIT", "-"), *args]) + "\\n")
source = json.loads(os.environ.get("FAKE_SOURCES", "{}")).get(out.name, os.environ["FAKE_DEFAULT_SOURCE"])
document = json.loads(Path(source).read_text())
document["context"]["general"]["branch_name"] = os.environ["PRIMBENCH_BRANCH"]
document["context"]["general"]["commit_hash"] = os.environ.get("PRIMBENCH_COMMIT", "-")
out.write_text(json.dumps(document))
sys.exit(json.loads(os.environ.get("FAKE_EXIT", "{}")).get(out.name, 0))
"""


def _side(root: Path, name: str) -> Path:
    """A checkout with the fake program (bench.py) and a venv whose bin/ holds `fakebench`, which runs it."""
    side = root / name
    (side / ".venv" / "bin").mkdir(parents=True)
    (side / "bench.py").write_text(FAKE_BENCH)
    _executable(side / ".venv" / "bin" / "fakebench",
                f'#!/bin/sh\nFAKE_VENV={name} exec "{sys.executable}" bench.py "$@"\n')
    return side


def _interleave(cwd: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "FAKE_LOG": str(cwd / "runs.log"),
            "FAKE_DEFAULT_SOURCE": str(EXAMPLES_H200 / "copy-run1.json"), **env}
    for name in ("PRIMBENCH_BRANCH", "PRIMBENCH_COMMIT", "BASE_BRANCH", "HEAD_BRANCH"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run(["bash", str(INTERLEAVE), *args], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=120)


def _log(cwd: Path) -> list[list[str]]:
    return [line.split() for line in (cwd / "runs.log").read_text().splitlines()]


@pytest.mark.parametrize("pairs", [1, 2, 3])
def test_interleaved_runs_alternate_base_and_head(tmp_path: Path, pairs: int) -> None:
    _side(tmp_path, "base")
    _side(tmp_path, "head")
    done = _interleave(tmp_path, ["base", "head", str(pairs), "runs/copy", "--", "fakebench", "--size", "1MiB"])
    assert done.returncode == 0, done.stderr
    expected = [(side, f"{side}-{i}.json") for i in range(1, pairs + 1) for side in ("base", "head")]
    log = _log(tmp_path)
    # each run in its own checkout, with that checkout's venv first on PATH, in the order base, head, base, head
    assert [(cwd, out) for cwd, venv, out, *_ in log] == expected
    assert all(cwd == venv for cwd, venv, *_ in log)
    out_dir = tmp_path / "runs" / "copy"
    for args, (_, out) in zip(log, expected, strict=True):
        assert args[5:] == ["--size", "1MiB", "--json-out", str(out_dir / out)]
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(out for _, out in expected)
    for _, out in expected:
        assert load_results(out_dir / out).algorithm == "copy"
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == ["run-interleaved"] * (2 * pairs)
    assert f"[1/{2 * pairs}] base 1 of {pairs} in {tmp_path / 'base'}: fakebench --size 1MiB --json-out" in done.stdout


def test_interleaved_runs_label_each_side_with_its_branch_and_commit(tmp_path: Path) -> None:
    """The CI's own variables (GITHUB_SHA: head's merge commit) must not label the base runs."""
    base, head = _side(tmp_path, "base"), _side(tmp_path, "head")
    commits = {}
    if shutil.which("git"):
        for side in (base, head):
            _git(side, "init", "-q")
            _git(side, "add", "bench.py")
            _git(side, "commit", "-q", "-m", side.name)
            commits[side.name] = _git(side, "rev-parse", "HEAD")
    env = {"BASE_BRANCH": "main", "HEAD_BRANCH": "feature/x", "GITHUB_SHA": "f" * 40, "GITHUB_HEAD_REF": "feature/x"}
    done = _interleave(tmp_path, ["base", "head", "1", "runs", "--", "fakebench"], **env)
    assert done.returncode == 0, done.stderr
    labels = {cwd: (branch, commit) for cwd, _, _, branch, commit, *_ in _log(tmp_path)}
    assert labels == {"base": ("main", commits.get("base", "unknown")),
                      "head": ("feature/x", commits.get("head", "unknown"))}
    results = load_results(tmp_path / "runs" / "base-1.json")
    assert (results.branch, results.commit) == ("main", commits.get("base", "unknown"))
    unlabelled = _interleave(tmp_path, ["base", "head", "1", "runs", "--", "fakebench"])
    assert unlabelled.returncode == 0
    assert [x[3] for x in _log(tmp_path)[2:]] == ["base", "head"]  # without BASE_BRANCH / HEAD_BRANCH


def test_interleaved_failure_runs_the_rest_and_exits_with_its_code(tmp_path: Path) -> None:
    _side(tmp_path, "base")
    _side(tmp_path, "head")
    out_dir = tmp_path / "runs"
    out_dir.mkdir()
    (out_dir / "base-2.json").write_text("an older run's file")
    done = _interleave(tmp_path, ["base", "head", "2", "runs", "--", "fakebench"],
                       FAKE_EXIT=json.dumps({"head-1.json": 1, "base-2.json": 2}))
    assert done.returncode == 2  # the last failure's code
    assert [x[2] for x in _log(tmp_path)] == ["base-1.json", "head-1.json", "base-2.json", "head-2.json"]
    assert "[2/4] head 1 failed with exit 1" in done.stderr
    assert "[3/4] base 2 failed with exit 2" in done.stderr
    assert load_results(out_dir / "base-2.json").algorithm == "copy"  # rewritten by its run, not the older file
    one = _interleave(tmp_path, ["base", "head", "2", "runs", "--", "fakebench"],
                      FAKE_EXIT=json.dumps({"head-2.json": 1}))
    assert one.returncode == 1


def test_interleaved_deletes_an_older_file_before_each_run(tmp_path: Path) -> None:
    _side(tmp_path, "base")
    _side(tmp_path, "head")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "head-1.json").write_text("an older run's file")
    done = _interleave(tmp_path, ["base", "head", "1", "runs", "--", "sh", "-c", 'test ! -e "$2"', "sh"])
    assert done.returncode == 0, done.stdout + done.stderr  # the file was gone when head 1 started
    assert not (tmp_path / "runs" / "head-1.json").exists()


def test_interleaved_interrupt_stops_at_once(tmp_path: Path) -> None:
    _side(tmp_path, "base")
    _side(tmp_path, "head")
    done = _interleave(tmp_path, ["base", "head", "2", "runs", "--", "fakebench"],
                       FAKE_EXIT=json.dumps({"head-1.json": 130}))
    assert done.returncode == 130
    assert [x[2] for x in _log(tmp_path)] == ["base-1.json", "head-1.json"]


@pytest.mark.parametrize(("args", "message"), [
    (["base", "head", "2", "runs", "fakebench"], "expected BASE_DIR HEAD_DIR PAIRS OUTDIR -- COMMAND"),
    (["base", "head", "2", "runs", "fakebench", "x"], "expected -- after OUTDIR, got 'fakebench'"),
    (["base", "head", "0", "runs", "--", "fakebench"], "PAIRS must be at least 1"),
    (["base", "head", "two", "runs", "--", "fakebench"], "PAIRS must be a positive whole number, got 'two'"),
    (["base", "nope", "2", "runs", "--", "fakebench"], "no such checkout: nope"),
])
def test_interleaved_bad_usage_is_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    _side(tmp_path, "base")
    _side(tmp_path, "head")
    done = _interleave(tmp_path, args)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: run-interleaved.sh BASE_DIR HEAD_DIR PAIRS OUTDIR -- COMMAND")
    assert f"run-interleaved.sh: error: {message}" in done.stderr
    assert not (tmp_path / "runs.log").exists()


# --------------------------------------------------------------------------- relative mode: the steps, run by bash


def _relative_checkouts(tmp_path: Path, base_programs: list[str], head_programs: list[str]) -> Path:
    """base/ and head/ with the given programs (empty files), head's copy of run-interleaved.sh, and in each
    .venv/bin a fake `primbench` that runs the fake benchmark program (whatever the arguments before --json-out)."""
    (tmp_path / "fake_bench.py").write_text(FAKE_BENCH)
    for side, programs in (("base", base_programs), ("head", head_programs)):
        (tmp_path / side / ".venv" / "bin").mkdir(parents=True)
        for program in programs:
            (tmp_path / side / program).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / program).write_text("")
        _executable(tmp_path / side / ".venv" / "bin" / "primbench",
                    f'#!/bin/sh\nFAKE_VENV={side} exec "{sys.executable}" "{tmp_path / "fake_bench.py"}" "$@"\n')
    (tmp_path / "head" / "examples" / "ci").mkdir(parents=True, exist_ok=True)
    shutil.copy2(INTERLEAVE, tmp_path / "head" / "examples" / "ci" / "run-interleaved.sh")
    return tmp_path / "head" / ".venv" / "bin"  # on PATH after the install step (GITHUB_PATH)


def test_run_interleaved_step_runs_each_program_in_pairs(tmp_path: Path) -> None:
    programs = ["examples/copy_benchmark.py", "examples/memory_latency.py"]
    head_bin = _relative_checkouts(tmp_path, programs, [*programs, "examples/new_benchmark.py"])
    env = {"BENCHMARKS": " ".join([*programs, "examples/new_benchmark.py"]), "PAIRS": "2",
           "BASE_BRANCH": "main", "HEAD_BRANCH": "feature/x", "FAKE_LOG": str(tmp_path / "runs.log"),
           "FAKE_DEFAULT_SOURCE": str(EXAMPLES_H200 / "copy-run1.json")}
    done = _bash("Run interleaved", tmp_path, env, head_bin, workflow="benchmarks-relative.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    runs = tmp_path / "runs"
    log = _log(tmp_path)
    assert [(cwd, venv, branch) for cwd, venv, _, branch, *_ in log] == [
        ("base", "base", "main"), ("head", "head", "feature/x")] * 4 + [("head", "head", "feature/x")]
    design = ["--processes", "8", "--rounds", "2", "--min-secs", "0.25", "--output-batches"]  # as benchmarks.yml
    assert [x[5:] for x in log] == [
        ["run", program, *design, "--json-out", str(runs / Path(program).stem / f"{side}-{i}.json")]
        for program in programs for i in (1, 2) for side in ("base", "head")
    ] + [["run", "examples/new_benchmark.py", *design, "--json-out", "../runs/new_benchmark/head-1.json"]]
    assert sorted(str(p.relative_to(runs)) for p in runs.rglob("*.json")) == sorted(
        [f"{Path(p).stem}/{side}-{i}.json" for p in programs for i in (1, 2) for side in ("base", "head")]
        + ["new_benchmark/head-1.json"])
    assert "::notice::examples/new_benchmark.py is new in this pull request" in done.stdout


def test_run_interleaved_step_fails_with_a_runs_code_after_all_runs(tmp_path: Path) -> None:
    programs = ["examples/copy_benchmark.py", "examples/memory_latency.py"]
    head_bin = _relative_checkouts(tmp_path, programs, programs)
    env = {"BENCHMARKS": " ".join(programs), "PAIRS": "1", "FAKE_LOG": str(tmp_path / "runs.log"),
           "FAKE_DEFAULT_SOURCE": str(EXAMPLES_H200 / "copy-run1.json"), "FAKE_EXIT": json.dumps({"base-1.json": 1})}
    done = _bash("Run interleaved", tmp_path, env, head_bin, workflow="benchmarks-relative.yml")
    assert done.returncode == 1
    assert len(_log(tmp_path)) == 4  # every program, both sides


def _as_code_change(source: Path, target: Path) -> None:
    """Copy a results file; a run whose slowdown was planted with the copy example's own option
    (``extra_percent``, 2 % more bytes) gets the option of the base (0), so that it stands for
    what it models, a change of the code: the option itself makes the sides not comparable."""
    try:
        document = json.loads(source.read_text())
    except ValueError:  # a broken file stays broken
        shutil.copy(source, target)
        return
    custom = document["context"].get("custom_settings") or {}
    if custom.get("extra_percent"):
        custom["extra_percent"] = 0.0
    target.write_text(json.dumps(document))


def _relative_compare(tmp_path: Path, sides: dict[str, list[Path]],
                      controls: int = 0) -> tuple[subprocess.CompletedProcess, str, str]:
    """runs/copy_benchmark/<side>-<i>.json from the given files, then the workflow's compare step.
    `controls`: as many more programs whose runs are identical on both sides (the H200 A/A copies aa-4..6
    under another algorithm name, control_1, ...), so that the change is not suite-wide."""
    for side, files in sides.items():
        for i, source in enumerate(files, 1):
            (tmp_path / "runs" / "copy_benchmark").mkdir(parents=True, exist_ok=True)
            _as_code_change(source, tmp_path / "runs" / "copy_benchmark" / f"{side}-{i}.json")
            for c in range(1, controls + 1):
                document = json.loads((H200 / f"aa-{3 + i}.json").read_text())
                document["context"]["general"]["algorithm"] = f"control_{c}"
                for spec in document["specializations"]:
                    spec["meta"]["algo"] = f"control_{c}"
                (tmp_path / "runs" / f"control_{c}").mkdir(parents=True, exist_ok=True)
                (tmp_path / "runs" / f"control_{c}" / f"{side}-{i}.json").write_text(json.dumps(document))
    done = _bash("Compare base and head", tmp_path, _github_env(tmp_path), workflow="benchmarks-relative.yml")
    return done, _outputs(tmp_path / "output")["code"], (tmp_path / "summary.md").read_text()


def test_relative_compare_step_one_pair_is_the_plain_compare(tmp_path: Path) -> None:
    """PAIRS=1 and one program: `compare --format markdown BASE -- HEAD` is today's two-file compare."""
    done, code, summary = _relative_compare(tmp_path, {"base": [ROUNDS / "aa-1.json"],
                                                       "head": [ROUNDS / "planted-2.json"]})
    assert done.returncode == 0, done.stderr
    assert code == "1"
    assert summary.startswith("<!-- primbench-compare -->\n### primbench compare")
    assert "| ipt: 1, op: copy, type: char | 535.00 GB/s | 529.64 GB/s | -1.00 % |" in summary


def test_relative_compare_step_without_runs_is_code_2(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    done = _bash("Compare base and head", tmp_path, _github_env(tmp_path), workflow="benchmarks-relative.yml")
    assert done.returncode == 0
    assert _outputs(tmp_path / "output")["code"] == "2"


def _compare_pools_repeats() -> bool:
    """Whether `primbench compare` takes several files per side (`BASE... -- HEAD...`): being added to the CLI."""
    result = CliRunner().invoke(app, ["compare", "--help"])
    return "repeat" in result.output.lower()


needs_pooled_compare = pytest.mark.skipif(not _compare_pools_repeats(),
                                          reason="primbench compare does not pool repeats (BASE... -- HEAD...) yet")


@needs_pooled_compare
def test_relative_compare_step_pools_the_pairs_planted_regression(tmp_path: Path) -> None:
    """Three pairs of the H200 copy: base aa-1..3, head the copy made to copy 2 % more bytes (slow-2-1..3);
    beside it three unchanged programs, so 2 of 8 specializations move (not a suite-wide shift)."""
    done, code, summary = _relative_compare(tmp_path, {"base": [H200 / f"aa-{i}.json" for i in (1, 2, 3)],
                                                       "head": [H200 / f"slow-2-{i}.json" for i in (1, 2, 3)]},
                                            controls=3)
    assert done.returncode == 0, done.stderr
    assert code == "1", summary
    assert summary.startswith("<!-- primbench-compare -->\n### primbench compare")
    assert "regression" in summary and summary in done.stdout


@needs_pooled_compare
def test_relative_compare_step_identical_sides_pass(tmp_path: Path) -> None:
    """The same two real runs of the copy example on both sides: nothing can have changed."""
    runs = [EXAMPLES_H200 / "copy-run1.json", EXAMPLES_H200 / "copy-run2.json"]
    done, code, summary = _relative_compare(tmp_path, {"base": runs, "head": runs})
    assert (done.returncode, code) == (0, "0"), summary + done.stderr
    assert "0 regressions" in summary


@needs_pooled_compare
def test_relative_compare_step_bad_input_is_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done, code, _ = _relative_compare(tmp_path, {"base": [H200 / "aa-1.json", H200 / "aa-2.json"],
                                                 "head": [H200 / "slow-2-1.json", bad]})
    assert (done.returncode, code) == (0, "2")
    assert "primbench compare: error:" in done.stderr


@needs_pooled_compare
def test_interleaved_runs_then_pooled_compare(tmp_path: Path) -> None:
    """run-interleaved.sh with the fake program writing the two real H200 runs of the copy example (pair 1:
    copy-run1, pair 2: copy-run2, on both sides), then the workflow's compare step on what it wrote: the
    whole relative mode but the GPU. Both sides hold the same runs, so it passes."""
    head_bin = _relative_checkouts(tmp_path, ["examples/copy_benchmark.py"], ["examples/copy_benchmark.py"])
    sources = {f"{side}-{i}.json": str(EXAMPLES_H200 / f"copy-run{i}.json")
               for i in (1, 2) for side in ("base", "head")}
    env = {"BENCHMARKS": "examples/copy_benchmark.py", "PAIRS": "2", "FAKE_LOG": str(tmp_path / "runs.log"),
           "FAKE_DEFAULT_SOURCE": "", "FAKE_SOURCES": json.dumps(sources)}
    ran = _bash("Run interleaved", tmp_path, env, head_bin, workflow="benchmarks-relative.yml")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = _bash("Compare base and head", tmp_path, _github_env(tmp_path), workflow="benchmarks-relative.yml")
    summary = (tmp_path / "summary.md").read_text()
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp_path / "output")["code"] == "0", summary + done.stderr
    assert summary.startswith("<!-- primbench-compare -->\n### primbench compare") and "0 regressions" in summary


def test_readme_cost_figures_come_from_the_h200_files() -> None:
    """examples/ci/README.md's cost of the two modes: T is the sum of summary.elapsed_secs.host of the
    committed H200 results of the programs in BENCHMARKS; every figure derived from it is written as computed."""
    readme = (REPO / "examples" / "ci" / "README.md").read_text(encoding="utf-8")
    files = {"copy_benchmark.py": "copy-run1.json", "memory_latency.py": "memory_latency.json",
             "branch_penalty.py": "branch_penalty.json", "sync_benchmark.py": "sync_benchmark.json"}
    assert set(files) == {Path(b).name for b in R_ENV["BENCHMARKS"].split()}
    total = warming = gpu = 0.0
    for program, name in files.items():
        document = json.loads((EXAMPLES_H200 / name).read_text(encoding="utf-8"))
        host = document["summary"]["elapsed_secs"]["host"]
        warm = document["context"]["general"]["thermal"]["warming_secs"]
        assert f"| `{program}` (`{name}`) | {host:.2f} s | {warm:.2f} s |" in readme
        total, warming, gpu = total + host, warming + warm, gpu + document["summary"]["elapsed_secs"]["gpu"]
    assert f"| **T** | **{total:.1f} s** | {warming:.1f} s |" in readme
    assert f"for {gpu:.1f} s of the {total:.1f} s" in readme
    for label, runs in (("artifact mode (1 × T)", 1), ("relative mode, N = 1 (2 × T)", 2),
                        ("relative mode, N = 2, the default (4 × T)", 4), ("relative mode, N = 3 (6 × T)", 6)):
        assert f"| {label} | {runs * total:.0f} s ({runs * total / 60:.1f} min) |" in readme
    second = json.loads((EXAMPLES_H200 / "copy-run2.json").read_text(encoding="utf-8"))
    assert f"took {second['summary']['elapsed_secs']['host']:.2f} s" in readme
    assert f"(200 + 60) × {total:.0f} s ≈ {260 * total / 3600:.1f} GPU-hours" in readme
    assert f"200 × {4 * total:.0f} s + 60 × {total:.0f} s ≈ {(800 + 60) * total / 3600:.1f} GPU-hours" in readme
    top = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")  # moved from README.md (issue 22)
    assert f"take {total:.0f} s per run: {4 * total / 60:.1f} minutes with N = 2 against\n{total / 60:.1f})" in top
