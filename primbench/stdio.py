"""Standard streams that fail: closed at start (``>&-``), a closed pipe (``| head -1``), a full
device (``> /dev/full``). What fails is recorded, never a traceback; the caller says it in one
line on stderr (where it still can) and exits 2.

Light on purpose: the harness uses it, and importing the harness imports no CLI library."""

from __future__ import annotations

import os
import sys
from typing import IO, Any

#: Standard streams that were closed when the process started (``stdout``, ``stderr``).
closed_at_start: set[str] = set()


def occupy_closed_streams() -> None:
    """A standard stream closed at start (``>&-``) gets /dev/null opened *read-only* on its
    descriptor: no file opened later takes descriptor 1 or 2 (where a print would land in it),
    and every write fails with EBADF, as on a closed descriptor, so it is reported, never lost
    silently. `sys.stdout` / `sys.stderr` (None then) become text streams on it."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False))  # noqa: SIM115
        except OSError:
            continue
        closed_at_start.add(name)


def silence(stream: Any) -> None:
    """Point a failed standard stream's descriptor at /dev/null, so that the interpreter's last
    flush of what is still buffered does not fail a second time ("Exception ignored …")."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass


def describe_stream(stream: Any, name: str) -> str:
    """``stdout (/dev/full)``: the stream and, where the OS says, the file behind it; ``stdout
    (closed)`` for one closed at start."""
    if name in closed_at_start:
        return f"{name} (closed)"
    try:
        fd = stream.fileno()
        target = os.readlink(f"/proc/self/fd/{fd}")
    except (AttributeError, OSError, ValueError):
        return name
    return f"{name} ({target})" if target.startswith("/") else name


class GuardedStream:
    """A text stream that records its first failed write or flush (OSError: EPIPE, ENOSPC, EIO,
    EBADF; or text its encoding cannot hold) instead of raising it, silences the descriptor and
    drops what follows: progress output that fails must not stop a run from writing its results."""

    def __init__(self, target: IO[str], name: str) -> None:
        self.target = target
        self.name = name
        self.failure: OSError | UnicodeEncodeError | None = None
        self._where = name

    def _failed(self, exc: OSError | UnicodeEncodeError) -> None:
        if self.failure is None:
            self.failure = exc
            self._where = describe_stream(self.target, self.name)  # before it points at /dev/null
            silence(self.target)

    def write(self, text: str) -> int:
        if self.failure is None:
            try:
                self.target.write(text)
            except (OSError, UnicodeEncodeError) as exc:
                self._failed(exc)
        return len(text)

    def flush(self) -> None:
        if self.failure is None:
            try:
                self.target.flush()
            except (OSError, UnicodeEncodeError) as exc:
                self._failed(exc)

    def message(self) -> str | None:
        """The one line for the failure (None if none)."""
        if self.failure is None:
            return None
        if isinstance(self.failure, UnicodeEncodeError):
            char = self.failure.object[self.failure.start:self.failure.start + 1]
            encoding = getattr(self.target, "encoding", None) or self.failure.encoding
            return (f"cannot write to {self._where}: its encoding {encoding!r} cannot hold {char!r}; "
                    "set PYTHONIOENCODING=utf-8 or a UTF-8 locale")
        reason = self.failure.strerror or str(self.failure)
        return f"cannot write to {self._where}: {reason}"

    def __getattr__(self, attr: str) -> Any:  # isatty, fileno, encoding, ...
        return getattr(self.target, attr)


def say(message: str) -> None:
    """One line on stderr, if it can still be written."""
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, UnicodeError, AttributeError):
        silence(sys.stderr)  # nowhere to say it: the exit code must say it (not Python's 120)
