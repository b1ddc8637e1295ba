"""SIGTERM and SIGHUP are handled like Ctrl-C (primbench/signals.py): the run keeps every
specialization that finished, writes them, and exits 128 + the signal's number."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import primbench as pb
from primbench.signals import Terminated, terminate_as_interrupt
from tests.fakes import FakeDevice

ROOT = Path(__file__).resolve().parents[1]

pb.register_type(np.int8, "char")


class Kernel(pb.Benchmark):
    def __init__(self, n: int, kill_at: int | None = None) -> None:
        self.n, self.kill_at = n, kill_at

    def meta(self) -> dict[str, object]:
        return {"algo": "sig", "n": self.n}

    def run(self, state: pb.State) -> None:
        if self.n == self.kill_at:
            os.kill(os.getpid(), signal.SIGTERM)  # what `timeout` sends
        state.set_items(1000)
        state.run(state.device.launch)


def test_sigterm_keeps_the_finished_specializations_and_names_the_signal(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    ex = pb.Executor(["--json-out", str(out), "--rounds", "1", "--min-secs", "0"], device=FakeDevice(0.25))
    for n in range(6):
        ex.queue(Kernel(n, kill_at=4))
    with pytest.raises(Terminated) as caught:
        ex.run()
    assert caught.value.exit_code == 143
    doc = json.loads(out.read_text())
    assert [s["name"] for s in doc["specializations"]] == [f"n: {n}" for n in range(4)]
    assert ex.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


def test_outside_a_run_the_signals_keep_their_handlers() -> None:
    before = signal.getsignal(signal.SIGHUP)
    with terminate_as_interrupt():
        assert signal.getsignal(signal.SIGHUP) is not before
    assert signal.getsignal(signal.SIGHUP) is before


SCRIPT = textwrap.dedent("""
    import time, numpy as np, primbench as pb
    from tests.fakes import FakeDevice

    class Slow(pb.Benchmark):
        def __init__(self, n): self.n = n
        def meta(self): return {"algo": "sig", "n": self.n}
        def run(self, state):
            time.sleep(1.0)  # real time, so that `timeout` lands between specializations
            state.run(state.device.launch)

    ex = pb.Executor(device=FakeDevice(0.25))
    for n in range(12):
        ex.queue(Slow(n))
    ex.main()
""")


@pytest.mark.slow
def test_timeout_s_term_in_the_middle_of_a_run_keeps_what_finished(tmp_path: Path) -> None:
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    # 7 s: the imports finish well before it even on a loaded machine, the 12 s of sleeps after it
    done = subprocess.run(["timeout", "--preserve-status", "-s", "TERM", "7", sys.executable, str(script),
                           "--rounds", "1", "--min-secs", "0", "--json-out", str(tmp_path / "r.json")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 143, done.stderr
    assert "terminated (SIGTERM)" in done.stdout + done.stderr
    names = [s["name"] for s in json.loads((tmp_path / "r.json").read_text())["specializations"]]
    assert 1 <= len(names) < 12 and names == [f"n: {n}" for n in range(len(names))]


# A SIGTERM (or Ctrl-C) in the middle of a DuckDB query: DuckDB turns the KeyboardInterrupt that the
# handler raises into an error of its own, which a command that catches every Exception would report
# as a bad file (or an internal error) and then go on. Found by the fault campaign
# (tests/benchmarks/faults/campaign.py): `history ingest` ended by SIGTERM's default action, and once
# handled, with exit 2, "0 run(s) stored, 400 bad file(s)".
_INTERRUPTED_INGEST = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    import primbench.history.storage.duckdb_file as d
    real, sig = d.insert_rows, int(sys.argv[2])
    def interrupted(con, rows):
        real(con, rows)
        try:
            os.kill(os.getpid(), sig)
            time.sleep(5)  # the handler raises here
        except KeyboardInterrupt:
            raise RuntimeError("Query interrupted") from None  # what DuckDB raises instead
    d.insert_rows = interrupted
    from primbench.cli import main
    sys.argv = ["primbench", "history", "ingest", *sys.argv[4:], "--db", sys.argv[3]]
    main()
""")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupt_that_duckdb_swallows_still_ends_history_ingest_with_its_code(tmp_path: Path, sig: int,
                                                                                   code: int) -> None:
    from primbench.history.storage.contract import open_store
    from tests import history_data as hd

    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2))
    db = tmp_path / "h.duckdb"
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_INGEST, str(ROOT), str(int(sig)), str(db),
                           *map(str, files)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert "internal error" not in proc.stderr and "bad file" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    report = open_store(str(db)).ingest(files)  # rolled back: a re-ingest stores every run, once
    assert len(report.stored) == 3 and not report.errors


# A SIGTERM before measuring began (options parsed, specializations selected, outputs checked) ended
# the process by the signal's default action, where Ctrl-C exits 130 (found looking into the fault
# campaign's SIGTERMs that ended the harness by the signal: tests/benchmarks/faults/campaign.py).
_EARLY = textwrap.dedent("""
    import os, signal, tempfile, primbench as pb
    from tests.fakes import FakeDevice

    real = tempfile.mkstemp
    def mkstemp(*a, **k):  # the first one: the check that --json-out can be written, before measuring
        tempfile.mkstemp = real
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **k)
    tempfile.mkstemp = mkstemp

    class K(pb.Benchmark):
        def meta(self): return {"algo": "sig"}
        def run(self, state):
            state.run(state.device.launch)

    ex = pb.Executor(device=FakeDevice(0.25))
    ex.queue(K())
    ex.main()
""")


def test_sigterm_before_measuring_exits_143(tmp_path: Path) -> None:
    script = tmp_path / "bench.py"
    script.write_text(_EARLY)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, str(script), "--rounds", "1", "--min-secs", "0", "--json-out",
                           str(tmp_path / "r.json")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 143, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr


# The same in a Parquet ingest, where the signal came while DuckDB read a pandas frame: DuckDB's error
# carries the Python traceback in its message, which `history ingest` printed as its error line
# (exit 143 all the same). Found by the fault campaign (1 of 110 kills into Parquet).
_INTERRUPTED_PARQUET = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    import duckdb
    import primbench.history.storage.duckdb_file as d
    def interrupted(con, table, frame):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            raise duckdb.InvalidInputException("Traceback: ... Terminated: SIGTERM") from None
    d.insert_frame = interrupted
    from primbench.cli import main
    sys.argv = ["primbench", "history", "ingest", *sys.argv[3:], "--shared", sys.argv[2], "--runner", "r"]
    main()
""")


def test_an_interrupt_inside_a_parquet_ingest_is_143_without_duckdbs_message(tmp_path: Path) -> None:
    from tests import history_data as hd

    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(2, specs=2))
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_PARQUET, str(ROOT), str(tmp_path / "shared"),
                           *map(str, files)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr, proc.stderr


def test_main_sets_its_handlers_before_anything_else_it_runs() -> None:
    """A SIGTERM in main's first steps (here: while it points closed standard streams at
    /dev/null) is handled, exit 143, not the signal's default action (-15): the fault
    campaign's phases (tests/benchmarks/faults/campaign.py, `Child.phase`)."""
    code = textwrap.dedent("""
        import os, signal, sys
        import primbench.stdio as stdio
        stdio.occupy_closed_streams = lambda: os.kill(os.getpid(), signal.SIGTERM)
        sys.argv = ["primbench", "--help"]
        from primbench.cli import main
        main()
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 143, (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr


def test_an_interrupt_raised_inside_a_finalizer_is_not_printed_as_a_traceback() -> None:
    """A signal whose handler runs inside a finalizer (here a generator closed as it is deleted; in the fault
    campaign, pandas code in one during `history merge`) raises where Python cannot pass the interrupt on:
    it printed "Exception ignored ... Traceback". Within `terminate_as_interrupt` that is dropped (the signal is
    recorded and ends the command anyway); another exception in a finalizer is still printed."""
    code = """
import os, signal
from primbench.signals import received, terminate_as_interrupt

def closing(error):
    try:
        yield 1
    finally:
        if error:
            raise ValueError("a finalizer's own fault")
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(1000))  # the handler runs here, inside the generator's close

with terminate_as_interrupt():
    g = closing(False)
    next(g)
    del g
    print("received", received())
    g = closing(True)
    next(g)
    del g
print("went on")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"received {int(signal.SIGTERM)}", "went on"]
    assert "Terminated" not in done.stderr and "SIGTERM" not in done.stderr, done.stderr
    assert "a finalizer's own fault" in done.stderr  # not an interrupt: Python's own report


# A signal while a reader of a Parquet folder queried a part: DuckDB's error for the interrupt was taken
# for the part's fault, so the part was skipped (`history export` then wrote an export of the other parts,
# 0 of 12 runs, and recorded it in its manifest as whole) or moved aside as unreadable (`history
# quarantine`). Found by the fault campaign (export of parquet, a random SIGTERM). Here the n-th query of
# a part is interrupted: the signal's handler runs, and DuckDB's own error comes out instead.
_INTERRUPTED_READ = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    import primbench.history.storage.parquet as pq
    real, calls, nth = pq.literal, [0], int(sys.argv[2])
    def literal(path):
        calls[0] += 1
        if calls[0] != nth:
            return real(path)
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises here
        except KeyboardInterrupt:
            pass
        return real(path) + ".interrupted"  # DuckDB's own error follows (the file is not there)
    pq.literal = literal
    from primbench.cli import main
    sys.argv = ["primbench", "history", *sys.argv[3:]]
    main()
""")


@pytest.mark.parametrize("nth", [1, 2, 3, 4])
@pytest.mark.parametrize("command", ["export", "quarantine"])
def test_an_interrupted_read_of_a_parquet_part_neither_skips_nor_moves_it(tmp_path: Path, nth: int,
                                                                         command: str) -> None:
    from primbench.cli import main as cli_main
    from primbench.history.storage import parquet as pq
    from tests import history_data as hd

    files = hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2))
    shared = tmp_path / "shared"
    with pytest.raises(SystemExit) as done:
        sys_argv = sys.argv
        try:
            sys.argv = ["primbench", "history", "ingest", *map(str, files), "--shared", str(shared), "--runner", "r"]
            cli_main()
        finally:
            sys.argv = sys_argv
    assert done.value.code in (0, None)
    before = {t: pq.parts(shared, t) for t in ("runs", "specializations", "batches")}
    out = tmp_path / "export"
    args = ["export", "--db", str(shared), "--parquet", str(out)] if command == "export" else ["quarantine",
                                                                                            str(shared)]
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_READ, str(ROOT), str(nth), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, (proc.returncode, proc.stderr)
    assert "skipped" not in proc.stderr and "moved" not in proc.stdout, proc.stderr + proc.stdout
    assert {t: pq.parts(shared, t) for t in before} == before  # every part in place
    assert not pq.quarantined_parts(shared)
    assert not (out / "runs.parquet").exists()  # no export of part of the store


def test_held_signals_are_taken_by_the_handler_before_once_the_block_ends() -> None:
    """`held`: a SIGTERM inside the block does not interrupt it; at its end the handler in place before
    (`terminate_as_interrupt`'s) takes it, as if it had come then (recorded, raised as `Terminated`); a
    started `Deferred` around it keeps it pending instead."""
    from primbench.signals import Deferred, held, received

    done = []
    with terminate_as_interrupt(), pytest.raises(Terminated):
        with held():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("after the signal")  # the block runs to its end
        done.append("never")
    assert done == ["after the signal"]
    with terminate_as_interrupt():
        deferred = Deferred()
        deferred.start()
        with held():
            os.kill(os.getpid(), signal.SIGTERM)
        assert deferred.pending == signal.SIGTERM and received() is None  # the Deferred's: still waiting
        with pytest.raises(Terminated):
            deferred.stop()
    assert signal.getsignal(signal.SIGTERM) is not None


@pytest.mark.parametrize("hold", [True, False])
def test_a_signal_inside_a_progress_line_does_not_swallow_the_lines_after_it(
        monkeypatch: pytest.MonkeyPatch, hold: bool) -> None:
    """A SIGTERM that lands inside Rich's console between entering its buffer and leaving it (what a run
    killed by `timeout` met once in 30 under load: `test_timeout_s_term_in_the_middle_of_a_run_keeps_what_finished`)
    left the buffer entered, so the run's "terminated" line never reached the output. The reporter holds
    signals while it prints (`primbench.signals.held`): the line is whole, then the signal is taken, and
    the lines after it are written. Without the hold (the second case), they are lost."""
    import io

    from rich.console import Console

    import primbench.console as console_module
    from primbench.console import Reporter, make_console

    if not hold:
        monkeypatch.setattr(console_module, "held", contextlib.nullcontext)
    out = io.StringIO()
    reporter = Reporter(make_console(out))
    enter = Console._enter_buffer
    sent = []

    def enter_then_signal(self: Console) -> None:
        enter(self)
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # taken at the next bytecode: inside __enter__

    monkeypatch.setattr(Console, "_enter_buffer", enter_then_signal)
    with terminate_as_interrupt():
        with pytest.raises(Terminated):
            reporter.note("cooling")
        reporter.error("terminated (SIGTERM): writing the specializations that finished a round")
    text = out.getvalue()
    assert ("terminated (SIGTERM)" in text) is hold
    assert ("cooling" in text) is hold
