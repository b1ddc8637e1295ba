"""Where a branch left its base: given by the caller, or git's merge base.

The results files know only the commit a run measured, not its ancestry. So the fork point
comes from one of two sources:

* `given`: the caller names it (``--fork-point SHA``), with its ancestors if it knows them;
* `from_git` (the merge base, when the command runs inside the repository):
  ``git merge-base BASE BRANCH`` gives the fork point and ``git rev-list --first-parent``
  its ancestors, newest first, so the base run "at or before the fork point" is the run of
  the nearest ancestor that was measured.

Without either (or with refs git does not know) the fork point is unknown and the caller
falls back to the base's latest run and says so.

`commit_order` asks git the same way for the order of a series' commits (each after its
ancestors), which the history follows rather than the dates a runner's clock wrote.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ForkPoint:
    """A fork point (None: unknown), its ancestors newest first, and where it came from."""

    commit: str | None
    ancestors: tuple[str, ...] = field(default=())  # the fork point first, then its first parents
    note: str = ""

    @property
    def commits(self) -> tuple[str, ...]:
        """The commits "at or before the fork point", nearest first: the ancestors where known,
        else the fork point alone (none when it is unknown)."""
        if self.ancestors:
            return self.ancestors
        return (self.commit,) if self.commit else ()


def given(commit: str | None, ancestors: Sequence[str] | None = None) -> ForkPoint:
    """A fork point the caller knows (``--fork-point``), with its ancestors when known."""
    return ForkPoint(commit, tuple(ancestors or ()), note="given")


def _git(args: list[str], cwd: str | None, stdin: str | None = None) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False,
                             input=stdin)
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


def _hash_like(commit: str) -> bool:
    return 7 <= len(commit) <= 64 and all(c in "0123456789abcdefABCDEF" for c in commit)


def commit_order(commits: Iterable[str], cwd: str | None = None) -> dict[str, int] | None:
    """Each of `commits` (hashes) with its place in git's history here, oldest first (``git
    rev-list --topo-order --reverse``: a commit after its ancestors), for ordering runs by
    commit rather than by a runner's clock; None when git is not there or does not know every
    one of them (a fake or foreign hash: the caller keeps the ingest order)."""
    wanted = {c for c in commits if c}
    if not wanted or not all(_hash_like(c) for c in wanted):
        return None
    listing = _git(["rev-list", "--topo-order", "--reverse", "--stdin"], cwd, stdin="\n".join(sorted(wanted)) + "\n")
    if listing is None:
        return None
    place = {sha: i for i, sha in enumerate(listing.split())}
    found: dict[str, int] = {}
    for c in wanted:
        full = place.get(c) if c in place else next((i for sha, i in place.items() if sha.startswith(c)), None)
        if full is None:
            return None
        found[c] = full
    return found
