"""Writing an output file so that nothing is lost: whole or not at all, with the user's
permissions, through symlinks; checking early that a path can be written; a fallback path.

`primbench.results` writes results.json and the CSV through `write_atomic`.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path


def current_umask() -> int:
    """The process's umask (read from /proc where it can be, else set and restored)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def resolve(path: str | os.PathLike[str]) -> Path:
    """The file a write to `path` should change: a symlink's target (followed to its end),
    so that the link itself stays; anything else as given."""
    p = Path(path)
    if p.is_symlink():
        return Path(os.path.realpath(p))
    return p


def _mode(target: Path) -> int:
    """An existing file keeps its permissions; a new one gets 0666 less the umask, as open() would."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` so that readers see the old file or the whole new one; return
    the file written (a symlink's target).

    ``/dev/null`` (and other non-regular targets such as pipes) are written directly."""
    return write_bytes_atomic(path, text.encode("utf-8"))


_OPEN_STREAM = re.compile(r"/(?:dev|proc/self)/fd/[0-9]+")


def is_direct(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names standard output, an open descriptor or the null device (``-``,
    ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/dev/null``, or a path to the file of
    descriptor 1): written directly, never refused as a special file."""
    text = os.fspath(path)
    return (text in (STDOUT, os.devnull, "/dev/stdout", "/dev/stderr") or bool(_OPEN_STREAM.fullmatch(text))
            or is_stdout(text))


def special_reason(path: str | os.PathLike[str]) -> str | None:
    """Why an existing `path` (followed through symlinks) is no place for an output file: a
    directory, a FIFO (a write would wait for a reader, maybe forever), a socket or a device;
    None for a regular file, a missing one, or one that `is_direct`."""
    if is_direct(path):
        return None
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe): writing it would wait for a reader"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    return None


def _write_direct(path: Path, data: bytes) -> None:
    """Write a non-regular file (standard output, a pipe): opened without waiting (a FIFO with no
    reader is ENXIO at once, not a hang), then written whole."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """`write_atomic` for bytes."""
    given = Path(path)
    if given.exists() and not given.is_file():  # /dev/stdout into a pipe: its target is no path
        _write_direct(given, data)
        return given
    target = resolve(path)
    if target.exists() and not target.is_file():
        _write_direct(target, data)
        return target
    directory = target.parent if str(target.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    mode = _mode(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    written = False  # the temporary file holds all of `data`, on disk
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        written = True
        os.replace(tmp, target)
    except BaseException as exc:
        # Interrupted (Ctrl-C, a signal) once the file was whole: rename it still, never discard it.
        if written and not isinstance(exc, OSError) and os.path.exists(tmp):
            try:
                os.replace(tmp, target)
            except OSError:
                pass
            else:
                _fsync_dir(directory)
                raise
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(directory)
    return target


def unwritable_reason(path: str | os.PathLike[str]) -> str | None:
    """Why `path` cannot be written (None if it can): its folder is created if missing, and a
    temporary file is made and removed there, which also catches a read-only file system and
    a path under a regular file (a permission check alone would not stop root)."""
    if str(path) == STDOUT:
        return None
    if why := special_reason(path):
        return why
    given = Path(path)
    if given.exists() and not given.is_file():  # /dev/stdout, /dev/null: written directly
        return None if os.access(given, os.W_OK) else "not writable"
    target = resolve(path)
    try:
        if target.exists() and not target.is_file():
            return None if os.access(target, os.W_OK) else "not writable"
        if target.is_dir():
            return "is a directory"
        directory = target.parent if str(target.parent) else Path(".")
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".check", dir=directory)
        try:
            os.write(fd, b"{}")
        finally:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def fallback_path(path: str | os.PathLike[str]) -> Path:
    """Where to put a file that could not be written to `path`: the temporary folder, under a
    name made of the original name, the time and the process id (never an existing file)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(path).name).strip("._") or "results"
    stem, dot, suffix = name.rpartition(".")
    stem, suffix = (stem, f".{suffix}") if dot and stem else (name, "")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    return Path(tempfile.gettempdir()) / f"primbench-{stem}-{stamp}-{os.getpid()}{suffix}"


__all__ = ["current_umask", "fallback_path", "is_direct", "resolve", "special_reason", "unwritable_reason",
           "write_atomic", "write_bytes_atomic"]


#: The path that means standard output (``--json-out -``, ``--markdown -``): the Unix habit.
STDOUT = "-"


def write_output(path: str | os.PathLike[str], text: str) -> str:
    """`text` to the file `path` (whole or not at all: `write_atomic`), or to standard output
    when `path` is ``-``; returns what was written to, for a message."""
    if str(path) == STDOUT:
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
        return "standard output"
    return str(write_atomic(path, text))


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """Whether writing `path` writes standard output: ``-``, or a path to the same file as file
    descriptor 1 (``/dev/stdout``, ``/proc/self/fd/1``)."""
    if not path:
        return False
    if str(path) == STDOUT:
        return True
    try:
        a, b = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
