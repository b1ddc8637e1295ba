"""Termination by signal, handled as Ctrl-C: SIGTERM (``timeout``, a CI cancel, ``docker stop``)
and SIGHUP (a closed terminal) raise `Terminated`, a KeyboardInterrupt, in the main thread while a
run measures, so that the executor keeps every specialization that finished, as it does on
Ctrl-C, and exits with 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

#: The signals handled like SIGINT (those this platform has).
SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


class Terminated(KeyboardInterrupt):
    """A run ended by `signum` (SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def exit_code(interrupt: KeyboardInterrupt, default: int) -> int:
    """128 + the signal's number for a `Terminated`, else `default` (130, Ctrl-C)."""
    return interrupt.exit_code if isinstance(interrupt, Terminated) else default


#: The signals that `terminate_as_interrupt` turned into an exception, in order (`received`),
#: since the outermost one began; and how many are active.
_RECEIVED: list[int] = []
_DEPTH = [0]


def received() -> int | None:
    """Within `terminate_as_interrupt`: the first signal it raised for, or None. So that a library
    that catches every Exception (DuckDB turns a KeyboardInterrupt raised inside a query into an
    error of its own) cannot make an interrupted command look finished, or failed."""
    return _RECEIVED[0] if _DEPTH[0] and _RECEIVED else None


def raise_received() -> None:
    """Raise the interrupt for the signal `received` where one came: KeyboardInterrupt for
    SIGINT, else `Terminated`. For an ``except Exception`` that would take a library's own error
    for an interrupt (DuckDB's "Query interrupted") as the data's fault and go on: skip a part,
    move it aside, try the next file. Nothing where no signal came (or outside
    `terminate_as_interrupt`)."""
    signum = received()
    if signum is None:
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _unraisable(previous: Callable[[UnraisableHookArgs], object]) -> Callable[[UnraisableHookArgs], None]:
    """A `sys.unraisablehook` that drops the interrupt a handler raised where Python cannot pass it on (in a
    finalizer: a generator closed, an object deleted), which it would print as "Exception ignored" with a
    traceback: the signal is recorded (`received`) and ends the command with its exit code anyway. Anything
    else goes to `previous`."""

    def hook(args: UnraisableHookArgs) -> None:
        if isinstance(args.exc_value, KeyboardInterrupt) and received() is not None:
            return
        previous(args)

    return hook


def _install(signals: tuple[int, ...], handler: Callable[[int, FrameType | None], None]) -> dict[int, object]:
    """`handler` for each of `signals` that can be set here; the handlers it replaced, for `_restore`."""
    previous: dict[int, object] = {}
    for sig in signals:
        try:
            previous[sig] = signal.signal(sig, handler)
        except (OSError, ValueError):  # not settable here
            continue
    return previous


def _restore(previous: dict[int, object]) -> None:
    """The handlers `_install` replaced (one set outside Python, which it reads as None: the default)."""
    for sig, old in previous.items():
        signal.signal(sig, old if old is not None else signal.SIG_DFL)  # type: ignore[arg-type]


@contextmanager
def terminate_as_interrupt(*, interrupt: bool = False) -> Iterator[None]:
    """Within: `SIGNALS` raise `Terminated` (and, with `interrupt`, SIGINT KeyboardInterrupt, as
    Python's own handler does), each recorded for `received`; the handlers before are restored
    after. An interrupt raised inside a finalizer is not printed (`_unraisable`). Outside the main
    thread (where Python cannot set a handler) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        _RECEIVED.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    if not _DEPTH[0]:
        _RECEIVED.clear()
    _DEPTH[0] += 1
    previous: dict[int, object] = {}
    hook = sys.unraisablehook
    sys.unraisablehook = _unraisable(hook)
    try:
        previous = _install((*SIGNALS, *((signal.SIGINT,) if interrupt else ())), handler)
        yield
    finally:
        _restore(previous)
        sys.unraisablehook = hook
        _DEPTH[0] -= 1


@contextmanager
def held() -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP wait; at its end the first that came is raised again
    (`signal.raise_signal`), so that the handler in place before (`terminate_as_interrupt`'s, a started
    `Deferred`'s, Python's) takes it exactly as it would have, a moment later. For output an interrupt
    must not cut: a console left inside its own buffer (Rich's, entered and never left) drops every
    line after it, the "terminated" line among them. Outside the main thread nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def wait(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous = _install((signal.SIGINT, *SIGNALS), wait)
    try:
        yield
    finally:
        _restore(previous)
        if pending:
            signal.raise_signal(pending[0])


class Deferred:
    """While started: SIGINT, SIGTERM and SIGHUP are only recorded, so that what is being written
    (the results of a run) is written whole; `stop` restores the handlers and raises the first
    signal that came (KeyboardInterrupt, or `Terminated`). Outside the main thread nothing is
    deferred. A second signal during the write does not end it either: the write finishes first."""

    def __init__(self) -> None:
        self.pending: int | None = None
        self._previous: dict[int, object] = {}
        self._started = False

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.pending is None:
            self.pending = signum

    def start(self) -> None:
        if self._started or threading.current_thread() is not threading.main_thread():
            return
        self._started = True
        self._previous = _install((signal.SIGINT, *SIGNALS), self._handler)

    def restore(self) -> None:
        """The handlers as they were, without raising what came (see `stop`)."""
        _restore(self._previous)
        self._previous = {}
        self._started = False

    def stop(self) -> None:
        """Restore the handlers; raise the signal that came while deferred, if one did."""
        self.restore()
        if self.pending is not None:
            signum, self.pending = self.pending, None
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(signum)
