"""Issue 29's fault campaign, in the manner of SQLite's tests: fuzzed inputs for every results
reader, kill -9 and SIGTERM at random moments and at injected points, injected I/O errors,
concurrent writers with readers on every history backend, hostile names through every output.
It counts, per category: inputs, faults, clean exits, internal errors (a traceback or exit 3),
hangs, runs lost and runs duplicated.

    PYTHONPATH=. python tests/benchmarks/faults/campaign.py --size full > tests/benchmarks/faults/campaign.txt
    PYTHONPATH=. python tests/benchmarks/faults/campaign.py --size ci     # what tests/test_fault_campaign.py runs

Most trials run in a child made by ``os.fork()`` from a parent that has imported primbench
but opened no store (a fresh interpreter per trial would cost a second on this 2-core machine):
the child's standard streams are real files, pipes or ``/dev/full``; it dies by a real
SIGKILL or handles a real SIGTERM; the store it leaves is on disk; the parent then checks it
in another child. Each child has a time limit (past it: a hang, killed). A sample of the
fuzzed inputs also goes through ``python -m primbench`` in a fresh interpreter.

PostgreSQL: ``$PRIMBENCH_TEST_POSTGRES``, else a throw-away server (tests/backends/postgres.py),
else its cells are "n/a". ``--only fuzz,kills,...`` runs some categories.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import datetime as dt
import errno
import io
import json
import linecache
import os
import platform
import random
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests import fuzz  # noqa: E402
from tests import history_data as hd  # noqa: E402

FORMATS_DIR = ROOT / "tests" / "formats"
#: Where the history backends' code lies (before issue 28's layout, in history/ itself).
STORAGE = ROOT / "history" / "storage" if (ROOT / "history" / "storage").is_dir() else ROOT / "history"
#: The checkout has the readers of other harnesses (primbench/formats), or only primbench's own.
HAS_READERS = (ROOT / "primbench" / "formats").is_dir()
LIMIT = 60.0  # seconds a child may take before it counts as a hang
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: ingest's summary line, on stderr after the one line per bad file
SUMMARY = re.compile(r"[0-9]+ run\(s\) stored")
#: stderr lines that are a run's own progress, not an error message
PROGRESS = ("faults:", "ok ", "Summary", "Wrote", "interrupted", "terminated", "  ", "warning:", "note:")

SIZES: dict[str, dict[str, int]] = {
    # category -> count; "fuzz_json" through compare and ingest (tests/fuzz.py), "fuzz_foreign"
    # through the loader, a tenth through compare, batches through ingest
    "ci": {"fuzz_json": 60, "fuzz_foreign": 240, "fuzz_cli": 3, "kill_harness": 8, "kill_ingest": 4,
           "io_atomic": 8, "io_stdout": 12, "conc_trials": 1, "hostile": 4, "kill_command": 3, "kill_report": 2,
           "hostile_files": 3},
    "small": {"fuzz_json": 300, "fuzz_foreign": 700, "fuzz_cli": 10, "kill_harness": 50, "kill_ingest": 30,
              "io_atomic": 36, "io_stdout": 42, "conc_trials": 5, "hostile": 19, "kill_command": 10,
              "kill_report": 5, "hostile_files": 9},
    "full": {"fuzz_json": 3000, "fuzz_foreign": 7200, "fuzz_cli": 30, "kill_harness": 200, "kill_ingest": 110,
             "io_atomic": 120, "io_stdout": 126, "conc_trials": 34, "hostile": 20, "kill_command": 30,
             "kill_report": 20, "hostile_files": 30},
}


@dataclass
class Row:
    """One category's counts."""

    name: str
    inputs: int = 0
    faults: int = 0
    clean: int = 0
    internal: int = 0
    hangs: int = 0
    lost: int = 0
    duplicated: int = 0
    notes: list[str] = field(default_factory=list)
    secs: float = 0.0
    na: bool = False
    default_action: int = 0  # SIGTERMs not handled: the process ended by the signal (exit -15)
    before_main: int = 0  # SIGTERMs during a benchmark script's own setup, before Executor.main
    # exits by a signal's default action (SIGTERM -15, SIGHUP -1) told apart (`classify`):
    in_main: int = 0  # in primbench.cli.main before it set its handlers (primbench's own window)
    after_end: int = 0  # the command had printed its last line: the signal came after its end
    after_handlers: int = 0  # main had put the handlers back: the command was over, exiting

    def note(self, text: str) -> None:
        if len(self.notes) < 30:
            self.notes.append(text)

    def failed(self) -> bool:
        return bool(self.internal or self.hangs or self.lost or self.duplicated or self.notes)


# --------------------------------------------------------------------------- forked children


@dataclass
class Child:
    rc: int | None  # exit code, -N for a signal, None: it hung (and was killed)
    stdout: bytes
    stderr: bytes
    started: bool = True  # it reached primbench.cli.main (False: still in its imports)
    #: where a command run through `cli` was: "importing" (before primbench.cli.main), "main"
    #: (in main, before its signal handlers), "handled" (within them), "after" (handlers restored)
    phase: str = "importing"

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def error_lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]


def fork(fn: Callable[[], int], *, cwd: Path | None = None, stdout: str = "file", env: dict[str, str] | None = None,
         kill_after: tuple[float, int] | None = None, limit: float = LIMIT) -> Child:
    """Run `fn` in a forked child (its return value the exit code) with its stdout a file
    (``file``), ``/dev/full`` (``full``), a pipe whose reader is closed (``closed-pipe``) or a
    closed descriptor (``closed``); stderr a file. `kill_after`: (seconds, signal) sent by the
    parent."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        r = w = -1
        if stdout == "closed-pipe":
            r, w = os.pipe()
            os.close(r)
        elif stdout == "pty-hung-up":  # a terminal whose other side is gone: writes fail with EIO
            r, w = os.openpty()
            os.close(r)
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                os.setpgid(0, 0)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                if cwd is not None:
                    os.chdir(cwd)
                os.environ.update(env or {})
                if stdout == "file":
                    os.dup2(out.fileno(), 1)
                elif stdout == "full":
                    fd = os.open("/dev/full", os.O_WRONLY)
                    os.dup2(fd, 1)
                elif stdout in ("closed-pipe", "pty-hung-up"):
                    os.dup2(w, 1)
                elif stdout == "closed":
                    os.close(1)
                os.dup2(err.fileno(), 2)
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=False) \
                    if stdout != "closed" else None
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
                code = fn()
            except SystemExit as done:
                code = _exit_code(done)
            except BaseException:  # what the interpreter would print: an uncaught exception
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
                code = 1
            code = _shutdown(code)
            os._exit(code)
        if w >= 0:
            os.close(w)
        started = time.monotonic()
        killed = False
        rc: int | None = None
        while True:
            done_pid, status = os.waitpid(pid, os.WNOHANG)
            if done_pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            now = time.monotonic() - started
            if kill_after is not None and not killed and now >= kill_after[0]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, kill_after[1])
                killed = True
            if now > limit:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.005)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # anything the child left behind
        out.seek(0)
        err.seek(0)
        mark = MARKS / str(pid)
        started = mark.exists()
        phase = "importing"
        for name in ("main", "handled", "after"):
            if (MARKS / f"{pid}.{name}").exists():
                phase = name
            (MARKS / f"{pid}.{name}").unlink(missing_ok=True)
        mark.unlink(missing_ok=True)
        return Child(rc, out.read(), err.read(), started, phase)


def _exit_code(done: SystemExit) -> int:
    if done.code is None:
        return 0
    if isinstance(done.code, int):
        return done.code
    with contextlib.suppress(BaseException):
        print(done.code, file=sys.stderr)
    return 1


def _shutdown(code: int) -> int:
    """The interpreter's last flush of stdout (a failure there: 'Exception ignored', exit 120)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            sys.stderr.write(f"Exception ignored on flushing sys.stdout: {exc!r}\n")
        code = 120
    with contextlib.suppress(BaseException):
        if sys.stderr is not None:
            sys.stderr.flush()
    return code


#: Where a child notes that it has imported primbench.cli and is calling main (`Child.started`).
MARKS = Path(tempfile.mkdtemp(prefix="primbench-campaign-marks-"))


def cli(args: list[str]) -> Callable[[], int]:
    def run() -> int:
        from primbench.cli import main

        _mark_phases()
        (MARKS / str(os.getpid())).touch()
        (MARKS / f"{os.getpid()}.main").touch()
        sys.argv = ["primbench", *args]
        main()
        return 0
    return run


def _mark_phases() -> None:
    """Note (in `MARKS`) when primbench.cli.main has set its signal handlers and when it has put
    them back (`Child.phase`), by wrapping `primbench.signals.terminate_as_interrupt`, which
    main looks up when it runs."""
    try:
        import primbench.signals as sg
    except ImportError:  # c16539c
        return
    real = getattr(sg, "terminate_as_interrupt", None)
    if real is None or getattr(real, "marked", False):
        return

    @contextlib.contextmanager
    def marked(*a: Any, **k: Any) -> Iterator[None]:
        outer = not getattr(marked, "depth", 0)
        marked.depth = getattr(marked, "depth", 0) + 1  # type: ignore[attr-defined]
        try:
            with real(*a, **k):
                if outer:
                    (MARKS / f"{os.getpid()}.handled").touch()
                yield
        finally:
            marked.depth -= 1  # type: ignore[attr-defined]
            if outer:
                (MARKS / f"{os.getpid()}.after").touch()
    marked.marked = True  # type: ignore[attr-defined]
    sg.terminate_as_interrupt = marked  # type: ignore[assignment]


def kill_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    if sig == signal.SIGKILL:
        time.sleep(10)


# --------------------------------------------------------------------------- injected points


POINTS = ["fsync:before", "fsync:after", "replace:before", "replace:after", "COMMIT:before", "COMMIT:after"]
#: DuckDB's checkpoint: it runs in DuckDB's C++ code when the writer closes its connection (the
#: ``con.close()`` of history/storage/duckdb_file.py): before it, after it, and during it (a
#: timer thread sends the signal 0-20 ms into the close, while DuckDB writes the checkpoint).
CHECKPOINTS = ["CHECKPOINT:before", "CHECKPOINT:during", "CHECKPOINT:after"]
#: The points each backend reaches in Python (DuckDB syncs in its own C++ code, at COMMIT and at
#: the checkpoint of close; PostgreSQL on the server, at COMMIT).
BACKEND_POINTS = {"duckdb": POINTS[4:], "parquet": POINTS, "postgresql": POINTS[4:]}
#: The signals the kills rotate through, and the exit codes that say primbench handled each
#: (130 + 13 and 128 + 1), or that it ended by the signal's default action.
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP)
HANDLED = {signal.SIGKILL: -9, signal.SIGTERM: 143, signal.SIGHUP: 129}
DEFAULT_ACTION = (-15, -1)
LANDED = (-9, 143, 129, 130, -15, -1)


def inject(point: str, sig: int, nth: int) -> None:
    """At the `nth` reach of `point` (``fsync``/``replace``: os.fsync and os.replace;
    ``COMMIT``: a line of the history storage that runs one, or psycopg's transaction exit;
    ``CHECKPOINT``: the DuckDB writer's close, `CHECKPOINTS`), send `sig` to this process
    before, during or after it."""
    what, when = point.split(":")
    seen = [0]

    def due() -> bool:
        seen[0] += 1
        return seen[0] == nth

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def hooked(*a: Any, **k: Any) -> Any:
            hit = due()
            if hit and when == "before":
                kill_self(sig)
            result = original(*a, **k)
            if hit and when == "after":
                kill_self(sig)
            return result
        return hooked

    if what == "fsync":
        os.fsync = wrap(os.fsync)
    elif what == "replace":
        os.replace = wrap(os.replace)
    else:
        with contextlib.suppress(ImportError):
            import psycopg

            psycopg.Transaction.__exit__ = wrap(psycopg.Transaction.__exit__)  # type: ignore[method-assign]
        storage = str(STORAGE)
        pending: list[Any] = []
        checkpoint = what == "CHECKPOINT"

        def reached(frame: Any) -> bool:
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            if checkpoint:
                return "con.close()" in line and frame.f_code.co_filename.endswith("duckdb_file.py")
            return f'"{what}' in line

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                if pending and pending[0] is frame:
                    pending.clear()
                    kill_self(sig)
                if reached(frame) and due():
                    if when == "during":
                        import threading

                        threading.Timer(random.uniform(0.0, 0.02), os.kill, (os.getpid(), sig)).start()
                        return local
                    if when == "before":
                        kill_self(sig)
                    pending.append(frame)
            return local

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            return local if os.path.realpath(frame.f_code.co_filename).startswith(storage) else None

        sys.settrace(tracer)


# --------------------------------------------------------------------------- fuzzing


def seeds() -> dict[str, bytes]:
    """One valid file per reader (only primbench's own JSON where the checkout has no others)."""
    if not HAS_READERS:
        return {"primbench-json": json.dumps(fuzz.seed_document(random.Random(1))).encode()}
    out = {
        "cpp-csv": (FORMATS_DIR / "copy.csv").read_bytes(),
        "nvbench": (FORMATS_DIR / "nvbench-copy-h200.json").read_bytes(),
        "gbench": (FORMATS_DIR / "gbench-copy.json").read_bytes(),
        "gbench-rocprim": (FORMATS_DIR / "gbench-rocprim-copy.json").read_bytes(),
        "pytest-benchmark": (FORMATS_DIR / "pytest-benchmark-copy.json").read_bytes(),
        "primbench-json": json.dumps(fuzz.seed_document(random.Random(1))).encode(),
    }
    cpp3 = json.loads((FORMATS_DIR / "cpp-3.0.0.json").read_bytes())
    for version in ("1.0.0", "2.0.0", "3.0.0"):
        doc = copy.deepcopy(cpp3)
        doc["context"]["results_version"] = version
        out[f"cpp-{version}"] = json.dumps(doc).encode()
    return out


def mutate(rng: random.Random, data: bytes) -> bytes:
    """A tree mutation of a JSON seed (as tests/fuzz.py), a cell mutation of a CSV one, and
    sometimes a byte one."""
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if doc is not None:
        for _ in range(rng.randint(1, 4)):
            place = fuzz.random_place(doc, rng)
            if place is None:
                break
            path, parent = place
            op = rng.randrange(4)
            if op == 0 and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif op == 1:
                fuzz._set(doc, path, fuzz._random_value(rng))
            elif op == 2 and isinstance(parent, list) and parent:
                parent.append(parent[path[-1]])
            elif op == 3 and isinstance(parent, dict):
                parent[fuzz.hostile_text(rng)] = parent.pop(path[-1])
        try:
            data = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
        except (RecursionError, ValueError):
            data = b"[" * 5000
    else:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8", "replace"))))
        for _ in range(rng.randint(1, 4)):
            r = rng.randrange(len(rows))
            if not rows[r]:
                continue
            c = rng.randrange(len(rows[r]))
            choice = rng.randrange(5)
            if choice == 0:
                rows[r][c] = fuzz.hostile_text(rng)
            elif choice == 1:
                rows[r][c] = str(rng.choice(fuzz.HOSTILE_NUMBERS))
            elif choice == 2:
                del rows[r][c]
            elif choice == 3:
                rows.append(list(rows[r]))
            else:
                rows[r].append(fuzz.hostile_text(rng))
        buf = io.StringIO()
        csv.writer(buf).writerows(rows)
        data = buf.getvalue().encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.08 and data:
        data = data[: rng.randrange(len(data))]
    elif roll < 0.16 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    elif roll < 0.2:
        data = b"\xef\xbb\xbf" + data
    return data


def fuzz_inputs(row: Row, work: Path, n_json: int, n_foreign: int, n_cli: int, seed: int,
                stores: dict[str, str]) -> None:
    """tests/fuzz.py's campaign for primbench JSON; mutated seeds of every other reader."""
    from primbench.errors import EXIT_INTERNAL, PrimbenchError
    from primbench.results import Results

    if n_json:
        tally = fuzz.run_campaign(work / "json", n_json, seed)
        row.inputs += tally.inputs
        row.clean += tally.exits.get("0", 0) + tally.exits.get("1", 0) + tally.exits.get("2", 0)
        row.internal += len(tally.uncaught) + len(tally.internal)
        for line in (tally.uncaught + tally.internal + tally.injections)[:10]:
            row.note(f"primbench-json: {line}")
    rng = random.Random(seed + 1)
    seed_files = seeds()
    kinds = sorted(seed_files)
    base = work / "base.json"
    base.write_bytes(seed_files["primbench-json"])
    batch: list[Path] = []
    backends = list(stores)
    made = work / "foreign"
    made.mkdir(parents=True, exist_ok=True)
    for i in range(n_foreign):
        kind = kinds[i % len(kinds)]
        data = mutate(rng, seed_files[kind])
        path = made / f"{i % 400:03d}-{kind}.{'csv' if kind == 'cpp-csv' else 'json'}"
        path.write_bytes(data)
        row.inputs += 1
        try:
            Results.load(path)
            row.clean += 1
        except PrimbenchError:
            row.clean += 1
        except Exception as exc:
            row.internal += 1
            row.note(f"{kind} input {i}: load: {fuzz._where(exc)}")
        if i % 10 == 0:
            tally = fuzz.Tally()
            fmt = ["terminal", "markdown", "json"][i // 10 % 3]
            fuzz.invoke(tally, f"{kind} input {i} compare -f {fmt}",
                        ["compare", str(base), str(path), "-f", fmt, "--fail-on", "never", "--allow-mismatch"],
                        check_terminal=fmt == "terminal", check_markdown=fmt == "markdown")
            _take(row, tally)
        batch.append(path)
        if len(batch) == 20 and backends:
            name = backends[i // 20 % len(backends)]
            tally = fuzz.Tally()
            flag = "--shared" if name == "parquet" else "--db"
            fuzz.invoke(tally, f"{kind} ingest into {name}", ["history", "ingest", *map(str, batch), flag,
                                                              stores[name]])
            _take(row, tally)
            batch = []
    # a sample through a fresh interpreter, as CI runs it
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    for i in range(n_cli):
        kind = kinds[i % len(kinds)]
        path = work / f"cli-{i}-{kind}.{'csv' if kind == 'cpp-csv' else 'json'}"
        path.write_bytes(mutate(rng, seed_files[kind]))
        args = (["compare", str(base), str(path), "--allow-mismatch"] if i % 2 == 0 else
                ["history", "ingest", str(path), "--db", str(work / "cli.duckdb")])
        row.inputs += 1
        try:
            done = subprocess.run([sys.executable, "-m", "primbench", *args], env=env, capture_output=True,
                                  text=True, timeout=LIMIT)
        except subprocess.TimeoutExpired:
            row.hangs += 1
            row.note(f"cli {kind} {i}: hang")
            continue
        if done.returncode == EXIT_INTERNAL or "Traceback" in done.stderr or done.returncode not in (0, 1, 2):
            row.internal += 1
            row.note(f"cli {kind} {i}: exit {done.returncode}: {done.stderr.strip()[-200:]!r}")
        elif done.returncode == 2 and len(lines := [ln for ln in done.stderr.strip().splitlines()
                                                     if not SUMMARY.match(ln)]) > 1:
            row.note(f"cli {kind} {i}: exit 2 in {len(lines)} lines: {done.stderr.strip()[-300:]!r}")
        else:
            row.clean += 1


def _take(row: Row, tally: fuzz.Tally) -> None:
    row.internal += len(tally.uncaught) + len(tally.internal)
    for line in tally.uncaught + tally.internal + tally.injections:
        row.note(line)


# --------------------------------------------------------------------------- the harness

BENCH = '''
import os, primbench as pb
from tests.fakes import FakeDevice

class K(pb.Benchmark):
    def __init__(self, n): self.n = n
    def meta(self): return {"algo": "faults", "n": self.n}
    def run(self, state):
        state.set_items(1000)
        state.run(state.device.launch)

ex = pb.Executor(device=FakeDevice(0.25))
for n in range(int(os.environ.get("COUNT", "4"))):
    ex.queue(K(n))
open("main.started", "w").close()  # the script's own setup is done: from here primbench handles signals
ex.main()
'''
BENCH_CODE = compile(BENCH, "bench.py", "exec")


def bench(args: list[str], before: Callable[[], None] | None = None) -> Callable[[], int]:
    def run() -> int:
        if before is not None:
            before()
        sys.argv = ["bench.py", *args]
        exec(BENCH_CODE, {"__name__": "__main__"})
        return 0
    return run


def _spec_count(path: Path) -> int:
    try:
        return len(json.loads(path.read_bytes())["specializations"])
    except (OSError, ValueError, KeyError, TypeError):
        return -1


def kill_harness(row: Row, work: Path, trials: int, rng: random.Random, rotate: bool = True) -> None:
    """`python bench.py` on the fake device (as replay.py runs it), beside a complete
    results.json, killed (SIGKILL, SIGTERM or SIGHUP in turn; without `rotate` SIGKILL and
    SIGTERM, as parts 1-5) at a random moment or an injected point; the results.json after it
    must be a complete one (the old or the new), never a partial one."""
    d = work / "harness"
    d.mkdir(parents=True, exist_ok=True)
    (d / "tests").symlink_to(ROOT / "tests")
    args = ["--min-secs", "0", "--rounds", "2", "--json-out", "r.json"]
    first = fork(bench(args), cwd=d, stdout="file")
    if first.rc != 0 or _spec_count(d / "r.json") != 4:
        row.note(f"the first complete run failed: {first.rc} {first.err[-300:]!r}")
        return
    complete = (d / "r.json").read_bytes()
    started = time.monotonic()
    fork(bench(args), cwd=d)
    took = time.monotonic() - started  # a whole run: random kills fall within it
    (d / "r.json").write_bytes(complete)
    t = -1
    while row.faults < trials and t < 3 * trials:
        t += 1
        (d / "r.json").write_bytes(complete)
        (d / "r.partial.json").unlink(missing_ok=True)
        (d / "main.started").unlink(missing_ok=True)
        sig = SIGNALS[t % 3] if rotate else (signal.SIGKILL if t % 2 == 0 else signal.SIGTERM)
        if t % 4 < 2:  # at a random moment
            how, child = "random", fork(bench(args), cwd=d, kill_after=(rng.uniform(0.0, took), sig))
        else:
            point = rng.choice(POINTS[:4])
            nth = rng.choice([1, 1, 2])
            how = f"{point}#{nth}"
            def hook(p: str = point, n: int = nth, s: int = sig) -> None:
                inject(p, s, n)
            child = fork(bench(args, hook), cwd=d)
        row.inputs += 1
        killed = child.rc in LANDED
        row.faults += killed
        if child.rc is None:
            row.hangs += 1
            row.note(f"trial {t} ({how}, signal {sig}): hang")
            continue
        if "Traceback" in child.err or child.rc == 3:
            row.internal += 1
            row.note(f"trial {t} ({how}): exit {child.rc}: {child.err[-300:]!r}")
        elif child.rc == 0 or child.rc == HANDLED[signal.Signals(sig)]:
            row.clean += 1
        elif child.rc == -sig and (d / "r.json").read_bytes() != complete:
            row.clean += 1  # the run had written its results and was exiting: the signal came after the end
            row.after_end += 1
        elif child.rc == -sig and not (d / "main.started").exists():
            row.clean += 1  # during the script's own setup (its imports, Executor(), queue()), before primbench runs
            row.before_main += 1
        elif child.rc == -sig:  # not handled: ended by the signal's default action
            row.default_action += 1
            row.note(f"trial {t} ({how}): ended by {signal.Signals(sig).name}'s default action (exit {child.rc})")
        else:
            row.note(f"trial {t} ({how}, signal {int(sig)}): exit {child.rc}: {child.err[-200:]!r}")
        n = _spec_count(d / "r.json")
        if n != 4:
            row.lost += 1
            row.note(f"trial {t} ({how}, signal {int(sig)}, exit {child.rc}): results.json holds {n} "
                     "specializations, not a complete run's 4")
        if sig == signal.SIGTERM and child.rc == 143 and (d / "r.json").read_bytes() == complete \
                and _spec_count(d / "r.partial.json") < 0 and how == "random":
            pass  # terminated before any specialization finished: nothing to keep


# --------------------------------------------------------------------------- ingest


def make_runs(directory: Path, n: int, prefix: str) -> list[Path]:
    return hd.branch_series(directory, hd.noisy_levels(n, specs=4, seed=hash(prefix) % 997), batches=2,
                            prefix=prefix)


WHOLE = ("SELECT count(*) FROM runs r WHERE r.specialization_count <> "
         "(SELECT count(*) FROM specializations s WHERE s.run_id = r.run_id) OR 2 * r.specialization_count <> "
         "(SELECT count(*) FROM batches b WHERE b.run_id = r.run_id)")


@contextlib.contextmanager
def read_store(location: str) -> Iterator[Any]:
    """A DuckDB connection that reads the store at `location` (through `open_store`, or before
    it, `open_for_query` and `open_dataset`)."""
    try:
        from primbench.history.storage.contract import open_store
    except ImportError:  # c16539c
        if os.path.isdir(location):
            from primbench.history.shared import open_dataset

            con = open_dataset(location)
            try:
                yield con
            finally:
                con.close()
            return
        from primbench.history.access import open_for_query

        with open_for_query(location) as con:
            yield con
        return
    with open_store(location, wait_secs=120).read() as r:
        yield r.con


def one(con: Any, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def query_store(location: str, query: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """In a child: what `query` reads from a read-only connection to the store at `location`
    (or the error)."""
    def run() -> int:
        doc: dict[str, Any]
        try:
            with read_store(location) as con:
                doc = query(con)
        except Exception as exc:
            doc = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        sys.stdout.write(json.dumps(doc))
        return 0
    child = fork(run, limit=180)
    try:
        return dict(json.loads(child.stdout))
    except ValueError:
        return {"error": f"checker exit {child.rc}: {child.err[-300:]}"}


def check_store(location: str) -> dict[str, Any]:
    """In a child: the store's runs, distinct runs and runs not whole (or the error)."""
    return query_store(location, lambda con: {"runs": one(con, "SELECT count(*) FROM runs"),
                                              "distinct": one(con, "SELECT count(DISTINCT run_id) FROM runs"),
                                              "not_whole": one(con, WHOLE)})


def ingest_args(backend: str, location: str, files: list[Path]) -> list[str]:
    flag = ["--shared", location, "--runner", "r"] if backend == "parquet" else ["--db", location]
    return ["history", "ingest", *map(str, files), *flag]


def classify(row: Row, label: str, child: Child, sig: int, ended: re.Pattern[str] = SUMMARY) -> None:
    """Count a killed command run through `cli`: clean when it exited as it should (0: the
    kill missed; -9; 143 or 129: the signal handled); an exit by the signal's default action
    (-15, -1) is told apart by where the child was (`Child.phase`) and by its last line
    (`ended`): during its imports, in main before the handlers, after its end, after the
    handlers were put back (each counted clean and reported), or within the handlers (a
    finding: not handled)."""
    out = child.err + child.stdout.decode("utf-8", "replace")
    if child.rc is None:
        row.hangs += 1
        row.note(f"{label}: hang")
    elif "Traceback" in child.err or child.rc == 3:
        row.internal += 1
        row.note(f"{label}: exit {child.rc}: {child.err[-300:]!r}")
    elif child.rc == 0 or child.rc == HANDLED[signal.Signals(sig)]:
        row.clean += 1
    elif child.rc == -sig and ended.search(out):
        row.clean += 1
        row.after_end += 1
    elif child.rc == -sig and child.phase == "importing":
        row.clean += 1
        row.before_main += 1
    elif child.rc == -sig and child.phase == "after":
        row.clean += 1
        row.after_handlers += 1
    elif child.rc == -sig and child.phase == "main":
        row.in_main += 1
        row.note(f"{label}: ended by the signal's default action in primbench.cli.main before its handlers")
    elif child.rc == -sig:
        row.default_action += 1
        row.note(f"{label}: ended by the signal's default action (exit {child.rc}) within primbench's handlers")
    else:
        row.note(f"{label}: exit {child.rc}: {child.err.strip()[-200:]!r}")


def kill_ingest(row: Row, work: Path, backend: str, location: str, trials: int, rng: random.Random,
                rotate: bool = True) -> None:
    """`history ingest` of a few files per call, killed (SIGKILL, SIGTERM or SIGHUP in turn;
    without `rotate` SIGKILL and SIGTERM, as parts 1-5) at a random moment or an injected point
    (fsync, rename, COMMIT; the checkpoint of DuckDB's close); every 10 kills, and at the end, a
    re-ingest of every file: each run stored exactly once, whole."""
    # 3 fresh files per trial (as many trials as may be needed): every call writes, so that it can be
    # killed at its COMMIT (a pool that is all stored gives calls with nothing to commit)
    files = make_runs(work / f"in-{backend}", 3 * (3 * trials + 2), f"k{backend}")
    started = time.monotonic()
    fork(cli(ingest_args(backend, location, files[:3])))
    took = time.monotonic() - started  # one call: random kills fall within it
    stored: set[int] = set()
    t = -1
    points = BACKEND_POINTS[backend] + (CHECKPOINTS if backend == "duckdb" and rotate else [])
    while row.faults < trials and t < 3 * trials:
        t += 1
        sig = SIGNALS[(t + t // 3) % 3] if rotate else (signal.SIGKILL if t % 2 == 0 else signal.SIGTERM)
        pick = [3 * t + 3 + k for k in range(3)]  # the first three: the timing call below
        args = ingest_args(backend, location, [files[k] for k in pick])
        if t % 3 == 0:
            how, child = "random", fork(cli(args), kill_after=(rng.uniform(0.0, took), sig))
        else:
            point = rng.choice(points)
            nth = rng.choice([1, 1, 1, 2])
            how = f"{point}#{nth}"

            def hooked(p: str = point, n: int = nth, s: int = sig, a: list[str] = args) -> int:
                inject(p, s, n)
                return cli(a)()
            child = fork(hooked)
        row.inputs += 1
        row.faults += child.rc in LANDED
        stored.update(pick)
        classify(row, f"{backend} trial {t} ({how}, {signal.Signals(sig).name})", child, sig)
        if (t + 1) % 10 == 0:
            got = check_store(location)
            if "error" in got:
                row.note(f"{backend} after trial {t}: store unreadable: {got['error']}")
                row.lost += 1
                continue
            if got["runs"] != got["distinct"]:
                row.duplicated += got["runs"] - got["distinct"]
            if got["not_whole"]:
                row.lost += got["not_whole"]
                row.note(f"{backend} after trial {t}: {got['not_whole']} runs not whole")
    # the re-ingest: every run exactly once
    if backend == "parquet":
        quarantine = fork(cli(["history", "quarantine", location]))
        if quarantine.rc not in (0,):
            row.note(f"parquet quarantine: exit {quarantine.rc}: {quarantine.err[-200:]!r}")
    again = fork(cli(ingest_args(backend, location, files)), limit=300)
    if again.rc != 0:
        row.note(f"{backend} re-ingest: exit {again.rc}: {again.err[-300:]!r}")
    got = check_store(location)
    if "error" in got:
        row.note(f"{backend} final: {got['error']}")
        row.lost += len(files)
        return
    row.lost += max(0, len(files) - got["distinct"]) + got["not_whole"]
    row.duplicated += got["runs"] - got["distinct"]
    if got["distinct"] > len(files):
        row.note(f"{backend}: {got['distinct']} distinct runs for {len(files)} files")


# --------------------------------------------------------------------------- merge, export, report


#: What each killed command prints as its last line when it ended (`classify`'s `ended`).
ENDED = {"merge": re.compile(r"run\(s\) added"), "export": re.compile(r"Wrote .* rows of"),
         "report": re.compile(r"Wrote .*charts")}
#: Where each command is killed besides a random moment: what it reaches in Python.
COMMAND_POINTS = {"merge": POINTS[4:], "export": POINTS[2:4], "report": POINTS[:4]}


def store_counts(location: str) -> dict[str, Any]:
    """In a child: the rows of every table of the store at `location` (or the error)."""
    return query_store(location, lambda con: {t: one(con, f"SELECT count(*) FROM {t}")
                                              for t in ("runs", "specializations", "batches")})


def check_export(directory: Path, counts: dict[str, Any], whole: bool = False) -> str | None:
    """In a child: every ``<table>.parquet`` under its final name in `directory` is a whole
    Parquet file with the store's rows (`whole`: and every table is there); None, or what is not."""
    def run() -> int:
        import duckdb

        con = duckdb.connect()
        problems = []
        for table in sorted(counts):
            path = directory / f"{table}.parquet"
            if not path.exists():
                if whole:
                    problems.append(f"{table}.parquet missing")
                continue
            try:
                got = con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()
            except Exception as exc:
                problems.append(f"{table}.parquet unreadable: {str(exc)[:100]}")
                continue
            if not got or got[0] != counts[table]:
                problems.append(f"{table}.parquet holds {got[0] if got else None} rows, not {counts[table]}")
        sys.stdout.write(json.dumps(problems))
        return 0
    child = fork(run, limit=120)
    try:
        found = json.loads(child.stdout)
    except ValueError:
        return f"checker exit {child.rc}: {child.err[-200:]}"
    return "; ".join(found) or None


def _report_whole(path: Path) -> bool:
    try:
        return path.read_bytes().rstrip().endswith(b"</html>")
    except FileNotFoundError:
        return True  # none written yet: nothing half written
    except OSError:
        return False


def kill_commands(row: Row, work: Path, command: str, backend: str, location: str, source: str, trials: int,
                  rng: random.Random, make_target: Callable[[int], str] | None = None) -> None:
    """`history merge` (of the Parquet folder `source` into a fresh store of `backend` per trial,
    `make_target`), `history export` or `history report` (of the store at `location`, holding
    what `source` holds), killed (SIGKILL, SIGTERM, SIGHUP in turn) at a random moment or at a
    point it reaches (`COMMAND_POINTS`; DuckDB's checkpoint for a merge into a DuckDB file).
    A merge is one transaction: after a kill its target holds none or all of the source's
    runs, each whole; after a merge run again, all of them once. An export's files under their
    final names, and the report's HTML, are whole (the old or the new) after every kill, the
    store unchanged; at the end an export and a report that are not killed complete."""
    expected = store_counts(source if command == "merge" else location)
    if "error" in expected:
        row.note(f"{command} {backend}: the store to read is unreadable: {expected['error']}")
        return
    out = work / f"{command}-{backend}-out"
    out.mkdir(parents=True, exist_ok=True)

    def args_of(target: str) -> list[str]:
        if command == "merge":
            return ["history", "merge", source, "--db", target, "--wait-secs", "120"]
        if command == "export":
            return ["history", "export", "--db", location, "--parquet", str(out)]
        return ["history", "report", "--db", location, "-o", str(out / "r.html"), "--no-git", "--max-charts", "2"]

    timing_target = make_target(-1) if make_target else location
    started = time.monotonic()
    first = fork(cli(args_of(timing_target)), cwd=work, limit=300)
    took = time.monotonic() - started
    if first.rc != 0:
        row.note(f"{command} {backend}: the first, unkilled call failed: exit {first.rc}: {first.err[-300:]!r}")
        return
    points = COMMAND_POINTS[command] + (CHECKPOINTS if command == "merge" and backend == "duckdb" else [])
    t = -1
    while row.faults < trials and t < 3 * trials:
        t += 1
        sig = SIGNALS[(t + t // 3) % 3]
        target = make_target(t) if make_target else location
        args = args_of(target)
        if t % 3 == 0:
            how, child = "random", fork(cli(args), cwd=work, kill_after=(rng.uniform(0.0, took), sig), limit=300)
        else:
            point = rng.choice(points)
            nth = rng.choice([1, 1, 2]) if command != "merge" else 1
            how = f"{point}#{nth}"

            def hooked(p: str = point, n: int = nth, s: int = sig, a: list[str] = args) -> int:
                inject(p, s, n)
                return cli(a)()
            child = fork(hooked, cwd=work, limit=300)
        row.inputs += 1
        row.faults += child.rc in LANDED
        label = f"{command} {backend} trial {t} ({how}, {signal.Signals(sig).name})"
        classify(row, label, child, sig, ENDED[command])
        if command == "merge":
            _after_merge(row, label, target, source, expected, child)
        elif command == "export":
            problem = check_export(out, expected)
            if problem:
                row.lost += 1
                row.note(f"{label}: {problem}")
        elif not _report_whole(out / "r.html"):
            row.lost += 1
            row.note(f"{label}: r.html is not a whole report")
        if command != "merge" and (t + 1) % 10 == 0:
            got = store_counts(location)
            if got != expected:
                row.lost += 1
                row.note(f"{label}: the store it read changed: {got} against {expected}")
    if command == "export":
        done = fork(cli(args_of(location)), cwd=work, limit=300)
        problem = check_export(out, expected, whole=True) if done.rc == 0 else f"exit {done.rc}: {done.err[-200:]!r}"
        if problem:
            row.lost += 1
            row.note(f"{command} {backend}, unkilled at the end: {problem}")
    elif command == "report":
        done = fork(cli(args_of(location)), cwd=work, limit=300)
        if done.rc != 0 or not (out / "r.html").exists() or not _report_whole(out / "r.html"):
            row.lost += 1
            row.note(f"{command} {backend}, unkilled at the end: exit {done.rc}: {done.err[-200:]!r}")


def _after_merge(row: Row, label: str, target: str, source: str, expected: dict[str, Any], child: Child) -> None:
    """A killed merge's target: none or all of the source's runs, each whole; then a merge run
    again (not killed) must leave all of them, once."""
    got = check_store(target)
    runs = expected["runs"]
    if "error" not in got:
        if got["runs"] not in (0, runs) or got["not_whole"]:
            row.lost += 1
            row.note(f"{label}: a killed merge left {got['runs']} of {runs} runs ({got['not_whole']} not whole)")
    elif child.rc == 0:
        row.note(f"{label}: merged, then unreadable: {got['error']}")
    again = fork(cli(["history", "merge", source, "--db", target, "--wait-secs", "120"]), limit=300)
    got = check_store(target)
    if again.rc != 0 or "error" in got:
        row.lost += runs
        row.note(f"{label}: the merge again: exit {again.rc}: {(got.get('error') or again.err)[-200:]!r}")
        return
    row.lost += max(0, runs - got["distinct"]) + got["not_whole"]
    row.duplicated += got["runs"] - got["distinct"]


# --------------------------------------------------------------------------- hostile file names


#: File and folder names a CI checkout or artifact may hold: bytes that are not UTF-8 (Latin-1,
#: a cut sequence, an encoded surrogate, 0xff), control characters, a leading dash, a formula
#: prefix, bidi controls, spaces, a name of 250 bytes.
HOSTILE_FILE_NAMES = [b"run-\xff\xfe", b"caf\xe9", b"cut-\xc3(", b"sur-\xed\xa0\x80", b"-rf \n\r", b"\x1b[31mred",
                      b"\xe2\x80\xaeevil", b"=cmd|calc", b" lead space ", b"tab\there", b"\xff" * 240,
                      b"\x80\x81\x82", b"new\nline", b"quote\"'`", b"back\\slash"]


def hostile_files(row: Row, work: Path, trials: int, stores: dict[str, str], rng: random.Random) -> None:
    """Results files (and folders) with hostile names, the file names above, through `history
    ingest` (a folder, or the files one by one as arguments) into each backend in turn, with a
    broken file among them in every third trial: exit 0, or 2 with one line for the broken
    file; then `history runs` (table, CSV, JSON) shows every name escaped, and every good file's
    run is stored once (runs lost or duplicated otherwise)."""
    backends = sorted(stores)
    stored = dict.fromkeys(backends, 0)
    for t in range(trials):
        backend = backends[t % len(backends)]
        location = stores[backend]
        folder = os.fsencode(work / "hostile-files") + b"/" + rng.choice(HOSTILE_FILE_NAMES)[:60] + f"-{t}".encode()
        os.makedirs(folder, exist_ok=True)
        names = rng.sample(HOSTILE_FILE_NAMES, 3)
        paths = []
        broken = t % 3 == 2
        for k, name in enumerate(names):
            path = folder + b"/" + name + f"-{k}.json".encode()
            doc = hd.document([1e12 * (1 + k / 10)], commit=hd.sha(f"hf-{t}-{k}"), batches=2,
                              date=hd.START + dt.timedelta(hours=t, minutes=k))
            data = json.dumps(doc).encode()
            if broken and k == 1:
                data = data[: len(data) // 2]
            with open(path, "wb") as f:
                f.write(data)
            paths.append(os.fsdecode(path))
        given = [os.fsdecode(folder)] if t % 2 == 0 else paths
        flag = ["--shared", location, "--runner", "r"] if backend == "parquet" else ["--db", location]
        child = fork(cli(["history", "ingest", *given, *flag]), cwd=work)
        row.inputs += len(paths)
        row.faults += len(paths)
        label = f"trial {t} ({backend}, {'a folder' if t % 2 == 0 else 'files'}{', one broken' if broken else ''})"
        lines = [ln for ln in child.error_lines() if not SUMMARY.search(ln)]
        if child.rc is None:
            row.hangs += 1
            row.note(f"{label}: hang")
            continue
        if "Traceback" in child.err or child.rc == 3:
            row.internal += 1
            row.note(f"{label}: exit {child.rc}: {child.err[-300:]!r}")
        elif child.rc != (2 if broken else 0) or len(lines) != int(broken):
            row.note(f"{label}: exit {child.rc}, {len(lines)} error lines: {child.err[-300:]!r}")
        else:
            row.clean += len(paths)  # each file stored, or the broken one refused in one line
        stored[backend] += len(paths) - int(broken)
        for fmt in ("table", "csv", "json"):
            shown = fork(cli(["history", "runs", "-n", "0", "-f", fmt, "--db", location]), cwd=work)
            text = shown.stdout.decode("utf-8", "replace")
            why = None
            if shown.rc != 0 or "Traceback" in shown.err:
                why = f"exit {shown.rc}: {shown.err[-200:]!r}"
            elif b"\xff" in shown.stdout or "\ufffd" in text:
                why = "a name's raw bytes in the output"
            elif fmt == "table" and CONTROL.search(text.replace("\n", "")):
                why = "a control character on the terminal"
            elif fmt == "json":
                try:
                    json.loads(text)
                except ValueError:
                    why = "not JSON"
            elif fmt == "csv" and len({len(r) for r in csv.reader(io.StringIO(text, newline=""))}) > 1:
                why = "CSV rows of different widths"
            if why:
                row.note(f"{label}: history runs -f {fmt}: {why}")
    for backend in backends:
        got = check_store(stores[backend])
        if "error" in got:
            row.lost += stored[backend]
            row.note(f"{backend}: {got['error']}")
            continue
        if got["distinct"] != stored[backend]:
            row.note(f"{backend}: {got['distinct']} runs stored for {stored[backend]} good files")
        row.lost += max(0, stored[backend] - got["distinct"]) + got["not_whole"]
        row.duplicated += got["runs"] - got["distinct"]


# --------------------------------------------------------------------------- I/O errors


class FailingRaw(io.RawIOBase):
    """Standard output (descriptor 1) as a device that fails with `code` once `after` bytes went
    through; until the descriptor is pointed at /dev/null (what primbench does once it has
    reported the failure, so that the interpreter's last flush does not fail again). `flag`: a
    file made when a write failed (else no fault was injected: the output was shorter)."""

    def __init__(self, code: int, after: int, flag: Path) -> None:
        self.code, self.left, self.flag = code, after, flag
        self.null = os.stat(os.devnull).st_rdev

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def write(self, b: Any) -> int:
        n = len(b)
        st = os.fstat(1)
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == self.null:
            return n  # silenced: /dev/null takes everything
        if n > self.left:
            self.flag.touch()
            raise OSError(self.code, os.strerror(self.code))
        self.left -= n
        os.write(1, bytes(b))
        return n


def io_errors(row: Row, work: Path, n_atomic: int, n_stdout: int, db: str, rng: random.Random) -> None:
    """ENOSPC, EIO and EPIPE in the atomic writer (results.json, compare --markdown FILE, history
    report -o) and on stdout (a failing stream, /dev/full, a closed pipe, a closed descriptor):
    each must be one line on stderr and exit 2."""
    d = work / "io"
    d.mkdir(parents=True, exist_ok=True)
    (d / "tests").symlink_to(ROOT / "tests")
    gpu = ROOT / "tests" / "gpu_results"
    a, b = str(gpu / "gpu-copy-run1.json"), str(gpu / "gpu-copy-run2.json")
    codes = [errno.ENOSPC, errno.EIO, errno.EPIPE]

    def check(label: str, child: Child) -> None:
        row.inputs += 1
        row.faults += 1
        lines = child.error_lines()
        if child.rc is None:
            row.hangs += 1
            row.note(f"{label}: hang")
        elif "Traceback" in child.err or child.rc == 3:
            row.internal += 1
            row.note(f"{label}: exit {child.rc}: {child.err.strip()[-300:]!r}")
        elif child.rc != 2 or len(lines) != 1:
            row.note(f"{label}: exit {child.rc}, {len(lines)} error lines: {child.err.strip()[-200:]!r}")
        else:
            row.clean += 1

    for i in range(n_atomic):
        code = codes[i % 3]
        where = ["mkstemp", "write", "fsync", "replace"][i // 3 % 4]
        target = ["bench", "markdown", "report"][i // 12 % 3]

        def broken(c: int = code, w: str = where) -> None:
            import tempfile as tf

            def fail(*_a: Any, **_k: Any) -> Any:
                raise OSError(c, os.strerror(c))
            if w == "mkstemp":
                tf.mkstemp = fail
            elif w == "fsync":
                os.fsync = fail
            elif w == "replace":
                os.replace = fail
            else:
                import primbench.atomicfile as af
                real = os.fdopen

                def fdopen(fd: int, *x: Any, **k: Any) -> Any:
                    f = real(fd, *x, **k)
                    f.write = fail
                    return f
                proxy = type(sys)("os_proxy")  # os, but for its fdopen: the atomic writer's only
                proxy.__dict__.update(os.__dict__)
                proxy.__dict__["fdopen"] = fdopen
                af.__dict__["os"] = proxy

        if target == "bench":
            fn = bench(["--min-secs", "0", "--rounds", "1", "--json-out", "w.json"], broken)
        elif target == "markdown":
            def fn(x: Callable[[], None] = broken) -> int:
                x()
                return cli(["compare", a, b, "--markdown", "c.md", "--fail-on", "never"])()
        else:
            def fn(x: Callable[[], None] = broken) -> int:
                x()
                return cli(["history", "report", "--db", db, "-o", "r.html", "--no-git", "--max-charts", "1"])()
        check(f"atomic writer, {target}: {errno.errorcode[code]} at {where}", fork(fn, cwd=d))

    commands = [["compare", a, b, "--fail-on", "never"], ["compare", a, b, "-f", "markdown", "--fail-on", "never"],
                ["compare", a, b, "-f", "json", "--fail-on", "never"], ["history", "runs", "--db", db],
                ["history", "runs", "--db", db, "-f", "csv"], ["history", "info", "--db", db]]
    for i in range(n_stdout):
        args = commands[i % len(commands)]
        mode = i // len(commands) % 7
        if mode < 3:
            code, after = codes[mode], rng.choice([0, 0, 10, 100, 300])
            flag = d / "raised"
            flag.unlink(missing_ok=True)

            def fn(c: int = code, n: int = after, x: list[str] = args, f: Path = flag) -> int:
                sys.stdout = io.TextIOWrapper(io.BufferedWriter(FailingRaw(c, n, f)), encoding="utf-8")
                return cli(x)()
            child = fork(fn, cwd=d)
            if not flag.exists() and child.rc in (0, 1):
                continue  # the output was shorter than `after`: no fault
            check(f"stdout {errno.errorcode[code]} after {after} bytes: {' '.join(args[:2])}", child)
        else:
            how = ["full", "closed-pipe", "pty-hung-up", "closed"][mode - 3]
            check(f"stdout {how}: {' '.join(args[:2])}", fork(cli(args), cwd=d, stdout=how))


# --------------------------------------------------------------------------- concurrency


def concurrent(row: Row, work: Path, backend: str, make_location: Callable[[int], str], trials: int,
               rng: random.Random) -> None:
    """Per trial: a fresh store, 8 writers (forked children) ingesting 2 of 6 files each, one
    call per file, so every file is written by two or three writers at once; 2 readers
    alongside check that every run they see is whole; then each of the 6 runs must be stored
    exactly once, whole."""
    for t in range(trials):
        location = make_location(t)
        files = make_runs(work / f"conc-{backend}-{t}", 6, f"c{backend}{t}")
        plans = [[files[(w + k * 3) % 6] for k in range(2)] for w in range(8)]
        stop = work / f"stop-{backend}-{t}"

        def writer(mine: list[Path], w: int, location: str = location) -> int:
            try:
                from primbench.history.storage.contract import open_store
                from primbench.history.storage.parquet import ParquetStore
            except ImportError:  # c16539c: through the CLI
                return cli_writer(mine, w, location)
            for f in mine:
                store = ParquetStore(location, runner=f"w{w}") if backend == "parquet" else \
                    open_store(location, wait_secs=120)
                report = store.ingest([f])
                if report.errors:
                    print(report.errors, file=sys.stderr)
                    return 2
            return 0

        def cli_writer(mine: list[Path], w: int, location: str = location) -> int:
            for f in mine:  # one `history ingest` per file, as a CI job would
                args = ingest_args(backend, location, [f])
                if backend == "parquet":
                    args[-1] = f"w{w}"
                else:
                    args += ["--wait-secs", "120"]
                try:
                    cli(args)()
                except SystemExit as done:
                    if done.code not in (0, None):
                        return int(done.code) if isinstance(done.code, int) else 1
            return 0

        def reader(location: str = location, stop: Path = stop) -> int:

            bad = errors = reads = 0
            while not stop.exists():
                try:
                    with read_store(location) as con:
                        bad += one(con, WHOLE)
                        reads += 1
                except Exception as exc:
                    text = str(exc)
                    if not any(s in text for s in ("no history", "no such", "no runs/", "not created")):
                        errors += 1
                        print(text.splitlines()[0][:200], file=sys.stderr)
                time.sleep(0.05)
            print(json.dumps({"bad": bad, "errors": errors, "reads": reads}))
            return 0

        pids = []
        outs: list[tuple[int, Any, Any]] = []
        for role in [*(("w", w) for w in range(8)), ("r", 0), ("r", 1)]:
            o, e = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 - closed below
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    os.dup2(o.fileno(), 1)
                    os.dup2(e.fileno(), 2)
                    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
                    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
                    code = writer(plans[role[1]], role[1]) if role[0] == "w" else reader()
                except BaseException:
                    with contextlib.suppress(BaseException):
                        traceback.print_exc()
                code = _shutdown(code)
                os._exit(code)
            pids.append(pid)
            outs.append((pid, o, e))
        started = time.monotonic()
        codes: dict[int, int | None] = {}
        for pid in pids[:8]:
            codes[pid] = _wait(pid, started + 300)
        stop.write_text("")
        for pid in pids[8:]:
            codes[pid] = _wait(pid, time.monotonic() + 60)
        row.inputs += 1
        row.faults += 8
        trouble = []
        for pid, o, e in outs:
            o.seek(0)
            e.seek(0)
            err = e.read().decode("utf-8", "replace")
            out = o.read().decode("utf-8", "replace")
            if codes[pid] is None:
                row.hangs += 1
                trouble.append("hang")
            elif codes[pid] != 0 or "Traceback" in err:
                row.internal += "Traceback" in err
                trouble.append(f"exit {codes[pid]}: {err.strip()[-200:]!r}")
            elif pid in pids[8:]:
                doc = json.loads(out.strip().splitlines()[-1])
                if doc["bad"] or doc["errors"]:
                    trouble.append(f"reader: {doc}, {err.strip()[-200:]!r}")
            o.close()
            e.close()
        got = check_store(location)
        if "error" in got:
            trouble.append(got["error"])
            row.lost += 6
        else:
            row.lost += max(0, 6 - got["distinct"]) + got["not_whole"]
            row.duplicated += got["runs"] - got["distinct"]
        if trouble:
            row.note(f"{backend} trial {t}: {'; '.join(trouble)[:400]}")
        else:
            row.clean += 1


def _wait(pid: int, deadline: float) -> int | None:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


# --------------------------------------------------------------------------- hostile names


HOSTILE_NAMES = ["=cmd|' /C calc'!A0", "+SUM(A1)", "-2+3", "@HYPERLINK(x)", "a\rb", "a\nb\tc", "\x1b[2Jclear",
                 "\u202eevil\u202c", "\u2066iso\u2069", "x" * 5000, "<img src=x onerror=alert(1)>", "| pipe |",
                 "../../etc/passwd", "a/b\\c", "\x00nul", "\x9b31m", "ma\udcffin", "\u2028line", "é"]


def hostile(row: Row, work: Path, trials: int, rng: random.Random) -> None:
    """Results files whose specialization names, branch and algorithm are hostile, through
    compare (terminal, markdown, JSON), history runs/series (table, CSV, JSON), history report
    (HTML), history plot (chart file names) and Parquet part file names."""
    for t in range(trials):
        d = work / f"hostile-{t}"
        d.mkdir(parents=True)
        name = HOSTILE_NAMES[t % len(HOSTILE_NAMES)] if t < len(HOSTILE_NAMES) else \
            "".join(rng.choice(HOSTILE_NAMES) for _ in range(2))[:300]
        branch = rng.choice(["main", name])
        values = {name: 1e12, hd.spec_name(1): 2e12}
        paths = []
        for k in range(3):
            doc = hd.document(values, branch=branch, algorithm=name[:200] or "a", commit=hd.sha(f"h{t}-{k}"),
                              date=hd.START + dt.timedelta(hours=k))
            text = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogateescape")
            paths.append(d / f"h{k}.json")
            paths[-1].write_bytes(text)
        db, shared = str(d / "h.duckdb"), str(d / "shared")
        outcomes: list[tuple[str, Child, Callable[[Child], str | None]]] = []

        def terminal(c: Child) -> str | None:
            return "control character on the terminal" if CONTROL.search(c.stdout.decode("utf-8", "replace")
                                                                           .replace("\n", "")) else None

        def markdown(c: Child) -> str | None:
            s = c.stdout.decode("utf-8", "replace")
            return "raw markup in markdown" if ("\r" in s or "<img" in s or "\u2028" in s or "\x1b" in s) else None

        def as_json(c: Child) -> str | None:
            try:
                json.loads(c.stdout)
            except ValueError:
                return "not JSON" if c.rc == 0 else None
            return None

        def as_csv(c: Child) -> str | None:
            text = c.stdout.decode("utf-8", "replace")
            rows = list(csv.reader(io.StringIO(text, newline="")))
            if rows and any(len(r) != len(rows[0]) for r in rows):
                return "CSV rows of different widths"
            for r in rows[1:]:
                for cell in r:
                    if (cell and cell[0] in "=+@") or (cell[:1] == "-" and not re.fullmatch(r"-[0-9.eE+-]+", cell)):
                        return f"formula prefix in a CSV cell {cell[:20]!r}"
            return None

        def html(c: Child, d: Path = d) -> str | None:
            try:
                s = (d / "r.html").read_text(errors="replace")
            except OSError:
                return None if c.rc in (0, 2) else "no report"
            return "raw markup in the HTML report" if "<img src=x" in s or "\x1b" in s else None

        def names(c: Child, d: Path = d, shared: str = shared) -> str | None:
            for p in [*Path(d / "plots").rglob("*"), *Path(shared).rglob("*")]:
                n = p.name
                if CONTROL.search(n) or len(n.encode("utf-8", "surrogateescape")) > 255 or "\\" in n:
                    return f"hostile file name {n[:40]!r}"
            return None

        run = fork(cli(["history", "ingest", *map(str, paths), "--db", db]), cwd=d)
        if run.rc != 0:
            row.note(f"trial {t}: ingest exit {run.rc}: {run.err.strip()[-200:]!r}")
        run = fork(cli(["history", "ingest", *map(str, paths), "--shared", shared, "--runner", name[:100] or "r"]),
                   cwd=d)
        outcomes.append(("parts", run, names))
        base, head = str(paths[0]), str(paths[2])
        for fmt, check in (("terminal", terminal), ("markdown", markdown), ("json", as_json)):
            outcomes.append((f"compare -f {fmt}", fork(cli(["compare", base, head, "-f", fmt, "--fail-on", "never"]),
                                                       cwd=d), check))
        sel = ["--branch", branch]
        for fmt, check in (("table", terminal), ("csv", as_csv), ("json", as_json)):
            outcomes.append((f"history runs -f {fmt}", fork(cli(["history", "runs", "--db", db, "-f", fmt, *sel]),
                                                            cwd=d), check))
            outcomes.append((f"history series -f {fmt}", fork(cli(["history", "series", name, "--db", db, "-f", fmt,
                                                                   *sel]), cwd=d), check))
        outcomes.append(("history report", fork(cli(["history", "report", "--db", db, "-o", "r.html", "--no-git",
                                                     *sel, "--base", branch]), cwd=d, limit=120), html))
        outcomes.append(("history plot", fork(cli(["history", "plot", "--db", db, "-o", "plots", *sel]), cwd=d,
                                              limit=120), names))
        for label, c, verdict in outcomes:
            row.inputs += 1
            if c.rc is None:
                row.hangs += 1
                row.note(f"trial {t} {label}: hang")
            elif "Traceback" in c.err or c.rc == 3:
                row.internal += 1
                row.note(f"trial {t} {label} ({name[:30]!r}): exit {c.rc}: {c.err.strip()[-200:]!r}")
            elif c.rc not in (0, 1, 2):
                row.note(f"trial {t} {label}: exit {c.rc}")
            elif (why := verdict(c)) is not None:
                row.note(f"trial {t} {label} ({name[:30]!r}): {why}")
            else:
                row.clean += 1


# --------------------------------------------------------------------------- main


@contextlib.contextmanager
def postgres() -> Iterator[str | None]:
    """A server URL whose user may create databases, or None."""
    try:
        from tests.backends import postgres as pg
    except ImportError:  # c16539c: no PostgreSQL backend
        yield None
        return

    if base := os.environ.get(pg.ENV):
        yield base
        return
    found = pg.binaries()
    if found is None:
        yield None
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield None
        return
    server = pg.ThrowAwayServer(found, fsync=True)
    try:
        yield server.start()
    finally:
        server.stop()


def command_sections(work: Path, n: dict[str, int], rng: random.Random, backends: list[str],
                     location: Callable[[str, str], str | None], section: Callable[..., None],
                     pg_base: str | None) -> None:
    """The kills during `history merge` (into a DuckDB file and a PostgreSQL server), `export`
    and `report` (of each backend's store), on stores holding the same 12 runs."""
    files = make_runs(work / "cmd-in", 12, "cmd")
    source = str(location("parquet", "cmd-source"))
    fork(cli(ingest_args("parquet", source, files)))
    stores = {"parquet": source}
    for b in backends:
        if b != "parquet" and (loc := location(b, "cmd-" + b)):
            fork(cli(ingest_args(b, loc, files)))
            stores[b] = loc
    for b in ("duckdb", "postgresql"):
        def target(t: int, b: str = b) -> str:
            return str(location(b, f"merge-{b}-{t + 1}"))

        def merges(r: Row, b: str = b, target: Callable[[int], str] = target) -> None:
            kill_commands(r, work, "merge", b, "", source, n["kill_command"], rng, target)
        section(f"kill -9 / SIGTERM / SIGHUP, history merge into {b}", "commands", merges, na=b not in stores)
    for command, count in (("export", n["kill_command"]), ("report", n["kill_report"])):
        for b in backends:
            def killed(r: Row, b: str = b, command: str = command, count: int = count) -> None:
                kill_commands(r, work, command, b, stores[b], stores[b], count, rng)
            section(f"kill -9 / SIGTERM / SIGHUP, history {command} of {b}", "commands", killed,
                    na=b not in stores)


def table(rows: list[Row]) -> str:
    head = "| category | inputs / trials | faults | clean exits | internal errors | hangs | runs lost | " \
           "runs duplicated | other findings | seconds |"
    out = [head, "| " + " | ".join(["---"] * 10) + " |"]
    for r in rows:
        cells = ["n/a"] * 8 if r.na else [str(x) for x in (r.inputs, r.faults, r.clean, r.internal, r.hangs, r.lost,
                                                             r.duplicated, len(r.notes))]
        out.append(f"| {r.name} | " + " | ".join(cells) + f" | {r.secs:.0f} |")
    return "\n".join(out)


def run(size: str, seed: int, only: set[str] | None, log: Callable[[str], None]) -> list[Row]:
    n = SIZES[size]
    rng = random.Random(seed)
    rows: list[Row] = []
    backends = ["duckdb", "parquet", "postgresql"]
    with tempfile.TemporaryDirectory(prefix="primbench-campaign-") as tmp, postgres() as pg_base:
        work = Path(tmp)

        def location(backend: str, tag: str) -> str | None:
            if backend == "duckdb":
                return str(work / f"{tag}.duckdb")
            if backend == "parquet":
                (work / tag).mkdir(parents=True, exist_ok=True)
                return str(work / tag)
            if not pg_base:
                return None
            from tests.backends import postgres as pg

            return pg.fresh_database(pg_base)

        def section(name: str, key: str, fn: Callable[[Row], None], na: bool = False) -> None:
            if only is not None and key not in only:
                return
            row = Row(name, na=na)
            started = time.time()
            if not na:
                fn(row)
            row.secs = time.time() - started
            rows.append(row)
            log(f"{name}: {row.inputs} inputs, {row.faults} faults, {row.internal} internal, {row.hangs} hangs, "
                f"{row.lost} lost, {row.duplicated} duplicated, {len(row.notes)} findings, {row.secs:.0f} s"
                + (f"; {row.default_action} SIGTERM(s) not handled (ended by the signal, exit -15)"
                   if row.default_action else "")
                + (f"; {row.before_main} SIGTERM(s) before primbench's entry point ran (the script's own setup or"
                   " the child's imports; exit -15, nothing done yet)" if row.before_main else "")
                + (f"; {row.in_main} in primbench.cli.main before its handlers" if row.in_main else "")
                + (f"; {row.after_end} after the command's last line (the signal came after its end)"
                   if row.after_end else "")
                + (f"; {row.after_handlers} after main put the handlers back (the command over, exiting)"
                   if row.after_handlers else ""))
            for note in row.notes:
                log(f"  - {note}")

        def fuzz_stores() -> dict[str, str]:
            out = {}
            for b in backends:
                loc = location(b, "fuzz-" + b)
                if loc:
                    out[b] = loc
            return out

        def fuzzed(r: Row) -> None:
            fuzz_inputs(r, work / "fuzz", n["fuzz_json"], n["fuzz_foreign"], n["fuzz_cli"], seed, fuzz_stores())
            r.faults = r.inputs  # every input is a fault: a mutated file

        section("fuzzed inputs, every reader (compare, ingest)", "fuzz", fuzzed)
        section("kill -9 / SIGTERM / SIGHUP, harness (primbench run, fake device)", "harness",
                lambda r: kill_harness(r, work, n["kill_harness"], rng))
        for b in backends:
            loc = location(b, "kill-" + b)

            def kills(r: Row, b: str = b, loc: str | None = loc) -> None:
                kill_ingest(r, work, b, str(loc), n["kill_ingest"], rng)
            section(f"kill -9 / SIGTERM / SIGHUP, ingest into {b}", "kills", kills, na=loc is None)
        io_db = str(work / "io.duckdb")
        if only is None or "io" in only:
            fork(cli(["history", "ingest", *map(str, make_runs(work / "io-in", 4, "io")), "--db", io_db]))
        def injected(r: Row) -> None:
            io_errors(r, work, n["io_atomic"], n["io_stdout"], io_db, rng)
        section("injected I/O errors (atomic writer, stdout)", "io", injected)
        for b in backends:
            def make(t: int, b: str = b) -> str:
                return str(location(b, f"conc-{b}-{t}"))
            def writers(r: Row, b: str = b, make: Callable[[int], str] = make) -> None:
                concurrent(r, work, b, make, n["conc_trials"], rng)
            section(f"8 writers + 2 readers, {b}", "concurrency", writers, na=b == "postgresql" and not pg_base)
        def hostile_names(r: Row) -> None:
            hostile(r, work, n["hostile"], rng)
            r.faults = r.inputs  # every output checked is given a hostile name

        section("hostile names, every output", "hostile", hostile_names)
        if only is None or "commands" in only:
            command_sections(work, n, rng, backends, location, section, pg_base)
        if only is None or "hostile_files" in only:
            named = {b: loc for b in backends if (loc := location(b, "hf-" + b))}
            section("hostile file names (not UTF-8, control characters) through ingest", "hostile_files",
                    lambda r: hostile_files(r, work, n["hostile_files"], named, rng))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="ci")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--only", default=None,
                        help="comma-separated: fuzz,harness,kills,io,concurrency,hostile,commands,hostile_files")
    args = parser.parse_args()
    started = time.time()
    print(f"primbench fault campaign (tests/benchmarks/faults/campaign.py --size {args.size} --seed {args.seed}); "
          f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}", flush=True)
    rows = run(args.size, args.seed, set(args.only.split(",")) if args.only else None,
               lambda s: print(s, flush=True))
    print()
    print(table(rows))
    total = Row("total")
    for r in rows:
        for k in ("inputs", "faults", "clean", "internal", "hangs", "lost", "duplicated"):
            setattr(total, k, getattr(total, k) + getattr(r, k))
    print(f"\ntotal: {total.inputs} inputs/trials, {total.internal} internal errors, {total.hangs} hangs, "
          f"{total.lost} runs lost, {total.duplicated} duplicated, "
          f"{sum(len(r.notes) for r in rows)} other findings; {time.time() - started:.0f} s wall")
    import shutil

    shutil.rmtree(MARKS, ignore_errors=True)
    return 1 if any(r.failed() for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
