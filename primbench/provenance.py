"""Where a run comes from: branch and commit (with the source of each), host and date.

Python has no compile-time macros, so branch and commit are resolved at run time, first
match wins: the explicit option, ``PRIMBENCH_BRANCH`` / ``PRIMBENCH_COMMIT``, the usual
variables of CI systems, then git in the benchmark's directory (``DETACHED`` when HEAD is
detached). The chosen source is recorded next to each value.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

# (variable, CI system) in the order they are tried. GitHub's HEAD_REF is set only for
# pull requests, where REF_NAME would be "123/merge".
BRANCH_VARIABLES = (
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",  # GitLab
    "BUILDKITE_BRANCH",
    "CIRCLE_BRANCH",
    "BITBUCKET_BRANCH",
    "BUILD_SOURCEBRANCHNAME",  # Azure Pipelines
    "BRANCH_NAME",  # Jenkins multibranch
    "GIT_BRANCH",  # Jenkins git plugin
)
COMMIT_VARIABLES = (
    "GITHUB_SHA",
    "CI_COMMIT_SHA",
    "BUILDKITE_COMMIT",
    "CIRCLE_SHA1",
    "BITBUCKET_COMMIT",
    "BUILD_SOURCEVERSION",
    "GIT_COMMIT",
)


@dataclass(frozen=True)
class Resolved:
    value: str | None
    source: str  # "option", "env:NAME", "git" or "none"


def _git(args: list[str], cwd: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def resolve_branch(option: str, env: Mapping[str, str], cwd: str) -> Resolved:
    if option:
        return Resolved(option, "option")
    for name in ("PRIMBENCH_BRANCH", *BRANCH_VARIABLES):
        if env.get(name):
            return Resolved(env[name], f"env:{name}")
    if _git(["rev-parse", "--git-dir"], cwd) is None:
        return Resolved(None, "none")
    branch = _git(["symbolic-ref", "-q", "--short", "HEAD"], cwd)
    return Resolved(branch or "DETACHED", "git")


def resolve_commit(option: str, env: Mapping[str, str], cwd: str) -> Resolved:
    if option:
        return Resolved(option, "option")
    for name in ("PRIMBENCH_COMMIT", *COMMIT_VARIABLES):
        if env.get(name):
            return Resolved(env[name], f"env:{name}")
    commit = _git(["rev-parse", "HEAD"], cwd)
    return Resolved(commit, "git") if commit else Resolved(None, "none")


def host_name() -> str:
    return socket.gethostname()


def now_iso() -> str:
    """Local time with its UTC offset, to the second, as the C++ primbench writes ``date``."""
    return _dt.datetime.now().astimezone().replace(microsecond=0).isoformat()


def provenance(branch_option: str, commit_option: str, cwd: str,
               env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``context.general`` keys for branch and commit, with their sources."""
    env = os.environ if env is None else env
    branch = resolve_branch(branch_option, env, cwd)
    commit = resolve_commit(commit_option, env, cwd)
    out: dict[str, str] = {}
    if branch.value is not None:
        out["branch_name"] = branch.value
    if commit.value is not None:
        out["commit_hash"] = commit.value
    out["branch_source"] = branch.source
    out["commit_source"] = commit.source
    return out
