"""Where a branch left its base, from git (when the command runs inside the repository).

The results files know only the commit a run measured, not its ancestry. When git is at
hand, ``git merge-base BASE BRANCH`` gives the fork point and ``git rev-list --first-parent``
its ancestors, newest first, so the base run "at or before the fork point" is the run of
the nearest ancestor that was measured. Without git (or with unknown refs) the caller
falls back to the base's latest run and says so.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ForkPoint:
    commit: str | None
    ancestors: tuple[str, ...] = field(default=())  # the fork point first, then its first parents
    note: str = ""


def _git(args: list[str], cwd: str | None) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _resolve(ref: str, cwd: str | None) -> str | None:
    if ref.startswith("-"):
        return None
    for candidate in (ref, f"origin/{ref}"):
        sha = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{candidate}^{{commit}}"], cwd)
        if sha:
            return sha
    return None


def from_git(base: str, branch: str, cwd: str | None = None, depth: int = 500) -> ForkPoint:
    """The merge base of `base` and `branch` (local or origin/ refs) and its ancestors."""
    b, h = _resolve(base, cwd), _resolve(branch, cwd)
    if b is None or h is None:
        missing = " and ".join(r for r, s in ((base, b), (branch, h)) if s is None)
        return ForkPoint(None, note=f"git does not know {missing} here")
    merge_base = _git(["merge-base", b, h], cwd)
    if not merge_base:
        return ForkPoint(None, note=f"git finds no merge base of {base} and {branch}")
    listing = _git(["rev-list", "--first-parent", f"--max-count={depth}", merge_base], cwd) or merge_base
    return ForkPoint(merge_base, tuple(listing.split()), note="from git merge-base")
