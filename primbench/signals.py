"""Termination by signal, handled as Ctrl-C: SIGTERM (``timeout``, a CI cancel, ``docker stop``)
and SIGHUP (a closed terminal) raise `Terminated`, a KeyboardInterrupt, in the main thread while a
run measures, so that the executor keeps every specialization that finished, as it does on
Ctrl-C, and exits with 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

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


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within: `SIGNALS` raise `Terminated`; the handlers before are restored after. Outside the
    main thread (where Python cannot set a handler) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {}
    for sig in SIGNALS:
        try:
            previous[sig] = signal.signal(sig, handler)
        except (OSError, ValueError):  # not settable here
            continue
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
