"""Terminal output of a benchmark run: colours per the ANSI-colour conventions, progress
lines, log messages. Colours are on only for a terminal; ``NO_COLOR``, ``FORCE_COLOR=0`` and
``CLICOLOR=0`` turn them off, ``CLICOLOR_FORCE`` or ``FORCE_COLOR`` (any other value) on (the
console is built with explicit settings, so all of them are handled here)."""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

from primbench.signals import held

if TYPE_CHECKING:
    from rich.console import Console

    from primbench.measure import Progress
    from primbench.results import Round, Specialization, Summary


def color_enabled(stream: IO[str] | None = None, env: Mapping[str, str] | None = None) -> bool:
    """NO_COLOR (any non-empty value) wins; then FORCE_COLOR: ``0`` or ``false`` off (as Node
    and chalk read it), any other non-empty value on (https://force-color.org); then
    CLICOLOR_FORCE (non-empty, not 0) on; then CLICOLOR=0 off (https://bixense.com/clicolors);
    then isatty."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    force = env.get("FORCE_COLOR", "")
    if force.strip().lower() in ("0", "false"):
        return False
    if force or env.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    if env.get("CLICOLOR", "").strip() == "0":
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """Rich exits 1 here, the code of a regression; let the CLI report the closed pipe (exit 2)."""
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    return _Console


def _sized_environ() -> dict[str, str]:
    """The environment Rich reads its size from, less a ``COLUMNS`` or ``LINES`` that is no
    positive whole number: Rich takes ``COLUMNS=0`` as a width of 0 and prints almost nothing."""
    env = dict(os.environ)
    for key in ("COLUMNS", "LINES"):
        value = env.get(key)
        if value is not None and not (value.strip().isdigit() and int(value) > 0):
            del env[key]
    return env


def make_console(stream: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A Rich console that follows `color_enabled`; a closed pipe raises BrokenPipeError."""
    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    color = color_enabled(target)
    return _console_class()(
        _environ=_sized_environ(),
        file=target,
        force_terminal=color,
        no_color=not color,
        color_system="auto" if color else None,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def si(value: float, unit: str) -> str:
    """``756.28 GB/s`` style: decimal prefixes, 2 decimals."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.2f} {unit}"


def _label(name: str) -> str:
    """A specialization name as Rich markup text: control characters gone, brackets literal."""
    from rich.markup import escape

    from primbench.textsafe import term_clean

    return escape(term_clean(name))


def duration(secs: float) -> str:
    """``5.716 µs`` style: the unit that keeps 1 to 3 digits before the point."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(secs) >= scale:
            return f"{secs / scale:.4g} {unit}"
    return f"{secs / 1e-9:.4g} ns"


def graph_note(record: Specialization) -> str:
    """``  graph 110 µs/call, saves 30 µs (21.4%)`` (results 4.6.0, `primbench.graph`), or why
    the capture was impossible; empty without --graph."""
    g = record.graph
    if g is None:
        return ""
    if not g.captured or g.seconds_per_call is None:
        return f"  [yellow]graph not captured: {_label(g.reason or 'unknown')}[/]"
    note = f"  graph {duration(g.seconds_per_call)}/call"
    if g.saved_seconds_per_call is not None:
        verb = "saves" if g.saved_seconds_per_call >= 0 else "costs"
        pct = f" ({abs(g.saved_percent):.1f}%)" if g.saved_percent is not None else ""
        note += f", {verb} {duration(abs(g.saved_seconds_per_call))}{pct}"
    return note


def _figures(bytes_per_second: float, items_per_second: float, per_call: float) -> str:
    """``1.08 TB/s  540.76 Gitems/s  248.1 µs/call``: the rates a benchmark declared (none for
    one that declares neither items nor bytes) and the GPU time per call, the default metric
    (`primbench.metrics.choose`) in bold."""
    from primbench.metrics import choose

    primary = choose(bytes_per_second, items_per_second).name
    parts = []
    for name, text in (("bytes_per_second", si(bytes_per_second, "B/s") if bytes_per_second > 0 else ""),
                       ("items_per_second", si(items_per_second, "items/s") if items_per_second > 0 else ""),
                       ("gpu_seconds_per_call", f"{duration(per_call)}/call")):
        if text:
            parts.append(f"[bold]{text}[/]" if name == primary else text)
    return "  ".join(parts)


class _Discard(io.TextIOBase):
    """A text stream that drops what is written: a quiet reporter's console."""

    def write(self, s: str) -> int:
        return len(s)

    def writable(self) -> bool:
        return True


#: The environment variable that asks for `log` messages where the output is not a terminal.
LOG_ENV = "PRIMBENCH_LOG"


def log_in_pipe(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``PRIMBENCH_LOG`` asks for log messages in a pipe or file (set, not 0)."""
    env = os.environ if env is None else env
    return env.get(LOG_ENV, "0") not in ("", "0")


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _uncut(method: Callable[Concatenate[Reporter, _P], _R]) -> Callable[Concatenate[Reporter, _P], _R]:
    """A `Reporter` method whose output a signal does not cut in the middle (`primbench.signals.held`): the
    signal is taken when the line is whole. An interrupt inside Rich's console, between entering its buffer
    and leaving it, left every later line in the buffer, the run's "terminated" line among them."""

    @functools.wraps(method)
    def whole(reporter: Reporter, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with held():
            return method(reporter, *args, **kwargs)

    return whole


class Reporter:
    """Progress of an executor run. The executor calls it; it only prints.

    `log` messages follow the C++ primbench's ``log()``: on a terminal each replaces the one
    before on a transient line (gone when the specialization's line is printed); in a pipe or
    a file, such as a CI log, nothing is written unless `logs` (default: ``PRIMBENCH_LOG`` set
    to anything but 0) asks for them, one persistent line each."""

    def __init__(self, console: Console | None = None, *, logs: bool | None = None) -> None:
        self.console = console or make_console()
        self._status: Any = None
        self._name = ""
        self._tolerance: float | None = None
        self._logs = log_in_pipe() if logs is None else logs

    @classmethod
    def quiet(cls) -> Reporter:
        """A reporter that prints nothing (the library's default: `primbench.bench`, the pytest fixture)."""
        return cls(make_console(cast("IO[str]", _Discard())))

    @property
    def live(self) -> bool:
        return self.console.is_terminal

    @_uncut
    def log(self, message: str) -> None:
        """A benchmark's progress message (`primbench.log`): transient on a terminal, else
        written only when asked (see the class)."""
        if self.live:
            from rich.markup import escape

            from primbench.textsafe import term_clean

            text = f"[grey50]{escape(term_clean(message))}[/]"
            if self._status is not None:
                self._status.update(f"{self._name}: {text}" if self._name else text)
            else:
                self._status = self.console.status(text)
                self._status.start()
        elif self._logs:
            self.console.print(f"  {message}", style="grey50", markup=False)

    @_uncut
    def header(self, algorithm: str, count: int, dry: bool, *, noise_tolerance_percent: float | None = None,
               profile: bool = False) -> None:
        self._tolerance = noise_tolerance_percent
        word = "specialization" if count == 1 else "specializations"
        mode = " (dry run)" if dry else " (profile: one call each)" if profile else ""
        self.console.print(f"[bold]{algorithm}[/]: {count} {word}{mode}")

    @_uncut
    def listing(self, names: list[str], excluded: Sequence[tuple[str, str]] = ()) -> None:
        """--list: the names, one per line; then each combination a constraint excluded, as a
        comment line ``# excluded: NAME: REASON`` (a script that reads names skips ``#`` lines)."""
        from primbench.textsafe import term_clean

        for name in names:
            self.console.print(term_clean(name), markup=False)
        for name, reason in excluded:
            self.console.print(term_clean(f"# excluded: {name}: {reason}"), markup=False)

    @_uncut
    def profiled(self, index: int, count: int, name: str) -> None:
        """--profile: a specialization's one call is done."""
        self._stop()
        self.console.print(f"[green]called[/] \\[{index + 1}/{count}] {_label(name)}  once")

    @_uncut
    def round_started(self, r: int, rounds: int, eta_secs: float | None = None) -> None:
        """A pass over every specialization begins (rounds are interleaved), with the time left."""
        self._stop()
        eta = f" (about {eta_secs:.0f} s left)" if eta_secs is not None else ""
        self.console.print(f"[bold]round {r + 1}/{rounds}[/]{eta}")

    @_uncut
    def note(self, message: str) -> None:
        """A line about what the harness does between measurements (warming, cooling)."""
        if self._status is not None:
            self._status.update(f"{self._name}: {message}")
        self.console.print(f"  {message}", style="grey50", markup=False)

    @_uncut
    def round_finished(self, index: int, count: int, rnd: Round) -> None:
        """A round of a specialization that has rounds to go: one dim line."""
        self._stop()
        host = rnd.elapsed_secs.host if rnd.elapsed_secs is not None else None
        self.console.print(
            f"  \\[{index + 1}/{count}] {self._name}  {duration(rnd.gpu_ms_per_call / 1000.0)}/call  "
            f"noise {rnd.noise_percent:.3f}%  {host or 0:.2f} s",
            style="grey50",
        )

    @_uncut
    def started(self, index: int, count: int, name: str) -> None:
        self._stop()  # a transient log line of the setup before it
        self._name = _label(name)
        if self.live:
            self._status = self.console.status(f"[{index + 1}/{count}] {name}: warming up")
            self._status.start()

    def batch(self, index: int, count: int, p: Progress) -> None:
        if self._status is None:  # nothing printed: nothing held, between a round's batches
            return
        per_call = p.last_batch_ms / 1000.0 / p.kernel_calls_per_batch if p.kernel_calls_per_batch else 0.0
        with held():
            self._status.update(
                f"[{index + 1}/{count}] {self._name}: batch {p.batch} (window {p.window_size}), "
                f"{duration(per_call)}/call, noise {p.noise_percent:.3f}%, {p.host_secs:.1f} s"
            )

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    @_uncut
    def finished(self, index: int, count: int, record: Specialization, extra: str = "") -> None:
        self._stop()
        tag = f"[{index + 1}/{count}]"
        name = _label(record.name)
        if record.error is not None:
            self.console.print(f"[red]FAILED[/] {tag} {name}: ", end="")
            self.console.print(record.error, markup=False)
            return
        if record.skipped is not None:
            self.console.print(f"[grey50]skipped[/] {tag} {name}: ", end="")
            self.console.print(record.skipped, markup=False)
            return
        if record.dry:
            self.console.print(f"[green]dry[/] {tag} {name}")
            return
        status = "[yellow]NOISY[/]" if record.noise_timeout else "[green]ok[/]   "
        spread = record.cv_between_rounds_percent
        rounds = f"  between rounds {spread:.2f}%" if spread is not None else ""
        noise_percent = record.noise_percent or 0.0
        noise = f"noise {noise_percent:.3f}%"
        if self._tolerance is not None and noise_percent >= self._tolerance:
            noise = f"[red]{noise}[/]"
        end = record.gpu_temp_end
        temp = f"  {end:.0f} °C" if end is not None else ""
        timer = "  host timer" if record.timer == "host" else ""
        energy = record.energy
        if energy is not None and energy.joules_per_call is not None:  # results 4.5.0 (primbench.energy)
            from primbench.metrics import METRICS

            timer += f"  {METRICS['joules_per_call'].format(energy.joules_per_call)}/call {energy.watts or 0:.0f} W"
            if energy.rounds_too_short:
                timer += " [yellow](too short for the energy counter)[/]"
            base = record.energy_baseline  # results 4.7.0: --energy-baseline
            if base is not None and base.net_joules_per_call is not None:
                timer += f" (net {METRICS['joules_per_call'].format(base.net_joules_per_call)})"
        timer += graph_note(record)
        figures = _figures(record.bytes_per_second or 0.0, record.items_per_second or 0.0,
                           record.gpu_seconds_per_call or 0.0)
        self.console.print(
            f"{status} {tag} {name}  {figures}  "
            f"{noise}{rounds}{temp}  "
            f"{record.kernel_calls_per_batch} calls x {record.batch_count} batches  "
            f"{record.elapsed_host_secs or 0.0:.2f} s{timer}{extra}"
        )

    @_uncut
    def summary(self, summary: Summary, count: int, failed: int, outputs: list[str], *, excluded: int = 0,
                graphs: tuple[int, int] | None = None) -> None:
        self._stop()
        timeouts = summary.noise_timeouts or 0
        host = summary.elapsed_secs.host if summary.elapsed_secs is not None else None
        gpu = summary.elapsed_secs.gpu if summary.elapsed_secs is not None else None
        parts = [
            f"{count} run",
            f"[red]{failed} failed[/]" if failed else "0 failed",
            f"[yellow]{timeouts} noise timeouts[/]" if timeouts else "0 noise timeouts",
            *([f"{summary.skipped} skipped"] if summary.skipped else []),
            *([f"{excluded} excluded by constraints"] if excluded else []),
            *([f"[yellow]{summary.throttled_batches} throttled batches discarded[/]"]
              if summary.throttled_batches else []),
            *([f"graph: {graphs[0]} replayed" + (f", [yellow]{graphs[1]} not captured[/]" if graphs[1] else "")]
              if graphs is not None else []),
            f"{host or 0.0:.2f} s host",
            f"{gpu or 0.0:.3f} s GPU",
        ]
        self.console.print("Summary: " + ", ".join(parts))
        for path in outputs:
            self.console.print(f"Wrote {path}", markup=False)

    @_uncut
    def error(self, message: str) -> None:
        self._stop()
        self.console.print("[red]error:[/] ", end="")
        self.console.print(message, markup=False)


_active: Reporter | None = None


def set_active(reporter: Reporter | None) -> None:
    global _active
    _active = reporter


def log(message: str) -> None:
    """A grey progress message (e.g. "Generating input data"): shows slow setup steps. As the
    C++ primbench's ``log()``: transient on a terminal, nothing in a pipe or file unless
    ``PRIMBENCH_LOG`` asks (`Reporter.log`). Outside a run it goes to stderr, a terminal's or
    one asked for."""
    if _active is not None:
        _active.log(message)
        return
    console = make_console(stderr=True)
    if console.is_terminal or log_in_pipe():
        console.print(message, style="grey50", markup=False)
