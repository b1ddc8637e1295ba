"""A run across the GPUs of one host (``--devices``, results 4.8.0): the placement of the
specializations, one worker process per GPU, watching the workers, and merging their files.

The parent is the benchmark program itself: it runs its own command line again once per GPU
(`worker_command`), each with `WORKER_ENV` naming the worker's GPU, the positions (in the
program's order) of the specializations it runs, the file it writes and the file it touches
at every round and batch (its heartbeat). A worker is an ordinary run on one device, with its
own monitor and thermal control; its rounds stay interleaved over its specializations.

The parent watches every worker: one that exits with a code other than 0 or 1 (it crashed, or
its device could not be opened) or whose heartbeat stops for longer than `silence_limit` (it
hangs, e.g. in a kernel that never ends; it is killed with its process group) fails the
specializations it did not write, with the reason; the others go on. `merge` builds one
`Results`: the specializations in the program's order (with ``--replicate``, each once per GPU in
the order of ``--devices``), each naming its GPU (``gpu``: index, UUID, serial), every GPU's
records once in ``context.devices``.

Why one file by default: a run is one document, as for one GPU: compare and history take it
as they take any other (`primbench.results.Results.per_gpu` splits it into one document per
physical GPU where a series must not mix GPUs), and a failed GPU is visible in it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from primbench.errors import DeviceError, PrimbenchError, UsageError
from primbench.plan import Queued
from primbench.records import failed_record
from primbench.results import DeviceRun, Results, Specialization, Summary, load_results
from primbench.settings import Settings

#: The environment variable that makes a benchmark program a worker (JSON: `WorkerRole`).
WORKER_ENV = "PRIMBENCH_WORKER"
#: Seconds a worker may take to open its device and set up before the first round, on top of
#: the budgets (`silence_limit`).
SETUP_GRACE_SECS = 60.0
#: How often the parent looks at its workers, seconds.
POLL_SECS = 0.1
#: How often, with --processes, the parent looks for a turn that ended and a waiting worker for its turn,
#: seconds. Every turn is handed over through these looks, one after another: at `POLL_SECS` (the parent)
#: and half of it (the worker) a handover waited about 75 ms on average, 1.2 s of a 16-worker run
#: (tests/benchmarks/turn_handover.txt; with the checkpoints paced too, turn_handover-both-8.txt and -24.txt).
#: A look is a few system calls a worker.
TURN_POLL_SECS = 0.005
#: How long interrupted workers get to write what they finished, seconds.
INTERRUPT_GRACE_SECS = 30.0


@dataclass(frozen=True)
class WorkerRole:
    """What a worker process runs: its GPU, the positions of its specializations in the
    program's order, the results file it writes and the heartbeat file it touches."""

    device: int | None  # None: the current device (--processes without --device)
    positions: tuple[int, ...]
    out: str
    heartbeat: str
    parent: int = 0  # the parent's process id: a worker whose parent is gone stops (`beat`)
    process: int | None = None  # --processes: this worker's place among them (primbench.processes)
    ready: str = ""  # --processes: the file it creates once its device is open, before it measures
    turn: str = ""  # --processes: the file whose existence is its turn to measure (`wait_turn`)
    measured: str = ""  # --processes: the file it creates once its results are written (`end_turn`)
    release: str = ""  # --processes: the file whose existence lets every worker exit (`end_turn`)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> WorkerRole | None:
        text = environ.get(WORKER_ENV)
        if not text:
            return None
        try:
            data = json.loads(text)
            device, process = data["device"], data.get("process")
            return cls(None if device is None else int(device), tuple(int(p) for p in data["positions"]),
                       str(data["out"]), str(data["heartbeat"]), int(data.get("parent", 0)),
                       None if process is None else int(process), str(data.get("ready", "")),
                       str(data.get("turn", "")), str(data.get("measured", "")), str(data.get("release", "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"${WORKER_ENV}: not a worker's role ({exc})") from None

    def to_env(self) -> str:
        return json.dumps({"device": self.device, "positions": list(self.positions), "out": self.out,
                           "heartbeat": self.heartbeat, "parent": self.parent, "process": self.process,
                           "ready": self.ready, "turn": self.turn, "measured": self.measured,
                           "release": self.release})

    @property
    def checkpoint(self) -> str:
        """Where the worker keeps what it has finished so far (every settled specialization): what
        the parent reads where the worker ended without writing `out` (a crash, a hang)."""
        path = Path(self.out)
        return str(path.with_name(f"{path.stem}.partial{path.suffix}"))

    def beat(self) -> None:
        """Touch the heartbeat: the parent knows the worker is making progress. A worker whose parent
        is gone (killed: nobody merges its file) stops here, as if interrupted."""
        if self.parent and os.getppid() != self.parent:
            raise KeyboardInterrupt(f"the parent process {self.parent} of this --devices worker is gone")
        with contextlib.suppress(OSError):
            os.utime(self.heartbeat)

    def wait_turn(self, sleep: Callable[[float], object] = time.sleep,
                  start: Mapping[str, float] | None = None) -> frozenset[str]:
        """A --processes worker's: say it is ready, then wait (beating) until the parent gives it
        its turn to measure. Returns the names of the specializations an earlier worker failed, which
        the parent wrote into the turn file (`primbench.processes.Turns`): the run's record of each is
        that failure whatever this worker measures, so it leaves them out. A worker of --devices
        measures at once, everything. `start`: when (``time.time()``) each step of its start ended
        (`primbench.processes.START_STEPS`), written into the ready file for the parent's log."""
        if not self.turn:
            return frozenset()
        signal_file(Path(self.ready), json.dumps(dict(start or {})))
        looks, beat_every = 0, round(POLL_SECS / TURN_POLL_SECS)  # the heartbeat as often as before
        while not os.path.exists(self.turn):
            if looks % beat_every == 0:
                self.beat()
            looks += 1
            sleep(TURN_POLL_SECS)
        self.beat()
        try:
            said = json.loads(Path(self.turn).read_text() or "[]")
        except (OSError, ValueError):  # an older parent's empty file, or one gone: nothing left out
            return frozenset()
        return frozenset(str(name) for name in said) if isinstance(said, list) else frozenset()

    def end_turn(self, sleep: Callable[[float], object] = time.sleep) -> None:
        """A --processes worker's, once its results file is written: say its turn is over (the parent
        gives the next worker its turn at once), then wait, beating, until the parent lets every worker
        exit. A process's exit (its interpreter's shutdown, its CUDA context torn down) took about 0.8 s
        on an H100 (tests/benchmarks/verdicts/h200/probe9): paid in the turn, as it was, it cost a run of
        8 workers 6 s, and beside another worker's turn it would run during a measurement. The parent
        does not wait for the exits (`leave`), so its folder may be gone before a worker looks again:
        that too lets it exit. A worker of --devices (or of an older parent: no `release`) exits at once."""
        if not self.measured or not self.release:
            return
        Path(self.measured).touch()
        folder = os.path.dirname(self.release)
        while not os.path.exists(self.release) and os.path.isdir(folder):
            self.beat()
            sleep(POLL_SECS / 2)

    def selected(self, selected: Sequence[Queued]) -> list[Queued]:
        if any(p >= len(selected) for p in self.positions):
            raise UsageError(f"${WORKER_ENV}: position {max(self.positions)} is not one of the "
                             f"{len(selected)} specializations selected")
        return [selected[p] for p in self.positions]


@dataclass
class CheckpointPace:
    """When a worker writes its checkpoint: once one more specialization has settled than it last wrote,
    and no sooner than `every` seconds after that write (0: at every one)."""

    every: float
    written: int = 0
    last: float = -math.inf

    def due(self, settled: int, now: float) -> bool:
        """Whether to write now, with `settled` specializations settled at `now` (seconds); if so, noted."""
        if settled <= self.written or now - self.last < self.every:
            return False
        self.written, self.last = settled, now
        return True


def placement(count: int, devices: Sequence[int], *, replicate: bool) -> dict[int, list[int]]:
    """The positions (of `count` specializations in the program's order) each GPU runs:
    round-robin over `devices` in their order (deterministic: an A/A pair of runs lands the
    same way), or every position on every GPU with `replicate`."""
    if replicate:
        return {d: list(range(count)) for d in devices}
    return {d: list(range(k, count, len(devices))) for k, d in enumerate(devices)}


def silence_limit(settings: Settings) -> float:
    """Seconds without a heartbeat after which a worker is taken to hang: ``--worker-timeout-secs``,
    else the longest a healthy worker can go between two batches — the stream-blocking timeout
    (a blocked batch), warming, cooling and one round's noise timeout — plus `SETUP_GRACE_SECS`."""
    if settings.worker_timeout_secs is not None:
        return settings.worker_timeout_secs
    return (settings.stream_blocking_timeout_secs + settings.max_warming_secs + settings.max_cooling_secs
            + settings.noise_timeout_secs + SETUP_GRACE_SECS)


def worker_command() -> list[str]:
    """The command line that started this program, to run it again as a worker."""
    return [sys.executable, *sys.orig_argv[1:]]


def not_restartable(argv0: str | None = None) -> str | None:
    """Why `worker_command` cannot start this program again (None where it can): a program read from
    standard input (``python - < bench.py``: ``sys.argv[0]`` is ``-``) or typed into an interactive
    interpreter (``''``) is not in its command line; a file, ``-m`` and ``-c`` are."""
    first = sys.argv[0] if argv0 is None else argv0
    if first == "-":
        return "was read from standard input"
    if first == "":
        return "runs in an interactive interpreter"
    return None


@dataclass
class Worker:
    """One worker as the parent sees it."""

    device: int | None
    positions: list[int]
    process: subprocess.Popen[bytes]
    out: Path
    heartbeat: Path
    log: Path
    rank: int | None = None  # --processes: its place among the workers (WorkerRole.process)
    ready: Path | None = None  # --processes: WorkerRole.ready
    turn: Path | None = None  # --processes: WorkerRole.turn
    measured: Path | None = None  # --processes: WorkerRole.measured
    error: str | None = None
    done: bool = False
    interrupted: bool = False
    finished: int = 0  # specializations in its checkpoint (`progress`)
    seen: float = 0.0  # the checkpoint's modification time when last read
    spawned: float = 0.0  # time.time() as the parent started it

    @property
    def checkpoint(self) -> Path:
        return self.out.with_name(f"{self.out.stem}.partial{self.out.suffix}")

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def wrote_results(self) -> bool:
        """A --processes worker's: it wrote its results and said its turn is over (`WorkerRole.end_turn`)."""
        return self.measured is not None and self.measured.exists()

    @property
    def label(self) -> str:
        """How the run's output names it: its GPU (--devices) or its process (--processes)."""
        return f"process {self.rank}" if self.rank is not None else f"GPU {self.device}"


@dataclass
class Workers:
    """The workers of a run, started by `start` in a folder of their files."""

    workers: list[Worker] = field(default_factory=list)
    release: Path | None = None  # --processes: WorkerRole.release

    def live(self) -> list[Worker]:
        return [w for w in self.workers if not w.done]

    def released(self) -> bool:
        """--processes: whether every turn is over and the workers may exit (the release file, which
        `primbench.processes.Turns` creates only then)."""
        return self.release is not None and self.release.exists()


def start(command: Sequence[str], places: Mapping[int, list[int]], folder: Path,
          environ: Mapping[str, str] | None = None) -> Workers:
    """One worker process per GPU of `places` (GPUs with no position start none), each in a
    process group of its own, its output to a log in `folder`."""
    roles = [WorkerRole(device, tuple(positions), str(folder / f"gpu{device}.json"), str(folder / f"gpu{device}.beat"),
                        os.getpid()) for device, positions in places.items() if positions]
    return _spawn(command, roles, folder, environ)


#: What ``--processes`` workers (every process of the default protocol, `primbench.settings.DEFAULT_DESIGN`) get in
#: their environment unless it is set: they hold one GPU side by side, and JAX takes 75 % of a GPU's memory at its
#: first use unless told not to, so the second worker of a JAX program would find too little left.
SHARED_GPU_ENV: dict[str, str] = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def start_processes(command: Sequence[str], count: int, device: int | None, positions: Sequence[int], folder: Path,
                    environ: Mapping[str, str] | None = None, first: int = 0) -> Workers:
    """`count` worker processes of the same specializations on one GPU (``--processes``), started
    side by side; each waits for its turn (`WorkerRole.wait_turn`, given by `primbench.processes.Turns`),
    and after it for the others' (`WorkerRole.end_turn`). Numbered from `first` (``--runs``: a later
    run's workers follow the earlier runs'); `folder` is this set's own."""
    release = folder / "release"
    environ = dict(os.environ if environ is None else environ)
    for name, value in SHARED_GPU_ENV.items():
        environ.setdefault(name, value)
    roles = [WorkerRole(device, tuple(positions), str(folder / f"process{k}.json"), str(folder / f"process{k}.beat"),
                        os.getpid(), k, str(folder / f"process{k}.ready"), str(folder / f"process{k}.turn"),
                        str(folder / f"process{k}.measured"), str(release))
             for k in range(first, first + count)]
    out = _spawn(command, roles, folder, environ)
    out.release = release
    return out


def _spawn(command: Sequence[str], roles: Sequence[WorkerRole], folder: Path,
           environ: Mapping[str, str] | None) -> Workers:
    out = Workers()
    base = dict(os.environ if environ is None else environ)
    for role in roles:
        Path(role.heartbeat).touch()
        log = Path(role.out).with_suffix(".log")
        spawned = time.time()
        with open(log, "wb") as sink:
            process = subprocess.Popen(list(command), env={**base, WORKER_ENV: role.to_env()}, stdin=subprocess.DEVNULL,
                                       stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        out.workers.append(Worker(role.device, list(role.positions), process, Path(role.out), Path(role.heartbeat), log,
                                  role.process, Path(role.ready) if role.ready else None,
                                  Path(role.turn) if role.turn else None,
                                  Path(role.measured) if role.measured else None, spawned=spawned))
    return out


def signal_file(path: Path, text: str) -> None:
    """`path` created holding `text`, written whole then renamed into place: the other side reads it the
    moment it exists (a worker's ready file, `primbench.processes.Turns`' turn file). Not
    `primbench.atomicfile.write_atomic`: its fsyncs make a file durable, and this is a signal in a
    temporary folder, on the path of every handover."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def _signal(worker: Worker, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(worker.process.pid, signum)


def _said(log: Path) -> str:
    """The last error line the worker printed (``PROG: error: ...``), else nothing."""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = [line.strip() for line in f.read().decode("utf-8", "replace").splitlines() if "error:" in line]
    except OSError:
        return ""
    return lines[-1].split("error:", 1)[1].strip() if lines else ""


def _exited(worker: Worker, code: int) -> None:
    worker.done = True
    if code in (0, 1) or (worker.interrupted and code in (130, 143, -signal.SIGINT)):
        return
    how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    said = _said(worker.log)
    worker.error = f"its worker {how}" + (f": {said}" if said else "")


def poll(workers: Workers, limit: float, now: Callable[[], float] = time.time) -> list[Worker]:
    """Look at every live worker once: one that exited is done (failed unless its code is 0 or
    1); one whose heartbeat is older than `limit` seconds is killed and failed. Returns the
    workers that ended at this look."""
    ended: list[Worker] = []
    for w in workers.live():
        code = w.process.poll()
        if code is not None:
            _exited(w, code)
            ended.append(w)
            continue
        try:
            silent = now() - w.heartbeat.stat().st_mtime
        except OSError:
            silent = 0.0
        if silent > limit and not w.interrupted:
            _signal(w, signal.SIGKILL)
            w.process.wait()
            w.done = True
            w.error = f"its worker made no progress for {silent:.0f} s (limit {limit:g} s: it hangs); killed"
            ended.append(w)
    return ended


def progress(workers: Workers) -> list[Worker]:
    """The live workers whose checkpoint holds more specializations than when last looked at
    (`Worker.finished` updated)."""
    moved: list[Worker] = []
    for w in workers.live():
        try:
            mtime = w.checkpoint.stat().st_mtime
            if mtime == w.seen:
                continue
            count = len(json.loads(w.checkpoint.read_bytes()).get("specializations", ()))
        except (OSError, ValueError, AttributeError):
            continue  # not there yet, or being replaced: the next look
        w.seen = mtime
        if count > w.finished:
            w.finished = count
            moved.append(w)
    return moved


def watch(workers: Workers, limit: float, on_end: Callable[[Worker], object],
          on_progress: Callable[[Worker], object] | None = None,
          on_poll: Callable[[], object] | None = None, every: float = POLL_SECS) -> KeyboardInterrupt | None:
    """Poll, a look `every` seconds, until every worker has ended (`on_end` called for each; `on_poll` after
    every look, e.g. to give a --processes worker its turn), or until the workers are released (every one has
    written its results: those still alive are left to exit on their own, `leave`). Ctrl-C, SIGTERM
    or SIGHUP is passed on to the workers (as SIGINT, SIGTERM), which write what they finished
    within `INTERRUPT_GRACE_SECS` (then they are killed); the interrupt is returned."""
    interrupted: KeyboardInterrupt | None = None
    deadline: float | None = None
    while workers.live():
        try:
            for w in poll(workers, limit):
                on_end(w)
            if on_progress is not None:
                for w in progress(workers):
                    on_progress(w)
            if on_poll is not None and deadline is None:
                on_poll()
            if deadline is None and workers.released():
                leave(workers)
                break
            if deadline is not None and time.monotonic() > deadline:
                for w in workers.live():
                    _signal(w, signal.SIGKILL)
            time.sleep(every)
        except KeyboardInterrupt as exc:
            if interrupted is None:
                interrupted = exc
                deadline = time.monotonic() + INTERRUPT_GRACE_SECS
            for w in workers.live():
                w.interrupted = True
                _signal(w, signal.SIGINT)
    return interrupted


def leave(workers: Workers) -> None:
    """Stop watching the live workers, which have written their results and been released: they exit
    on their own, their interpreters' shutdown and CUDA contexts' teardown (1.7-1.8 s for 16 workers on
    an H100, tests/benchmarks/verdicts/h200/probe10) no longer in the run's wall. A thread reaps them
    where the parent lives on (a library call); a parent that ends first leaves them to the system."""
    left = workers.live()
    for w in left:
        w.done = True
    if left:
        threading.Thread(target=lambda: [w.process.wait() for w in left], name="primbench-reaper",
                         daemon=True).start()


def worker_results(w: Worker) -> Results | None:
    """What the worker wrote (a partial file where it was interrupted), or None."""
    for path in (w.out, w.checkpoint):
        if path.is_file():
            try:
                return load_results(path)
            except PrimbenchError as exc:
                w.error = w.error or f"its results file cannot be read: {exc}"
                return None
    if w.error is None and not w.interrupted:
        w.error = "its worker wrote no results"
    return None


def keep_logs(workers: Workers, beside: str) -> dict[str, str]:
    """Each failed worker's output copied beside the results file `beside` (``NAME.gpuN.log``,
    ``NAME.processK.log``), since the workers' folder is removed: the worker's label (`Worker.label`)
    -> the copy. None where `beside` is no file."""
    out: dict[str, str] = {}
    target = Path(beside)
    if not beside or beside in ("-", os.devnull):
        return out
    for w in workers.workers:
        if w.failed and w.log.is_file():
            tag = f"process{w.rank}" if w.rank is not None else f"gpu{w.device}"
            copy = target.with_name(f"{target.stem}.{tag}.log")
            try:
                copy.write_bytes(w.log.read_bytes())
            except OSError:
                continue
            out[w.label] = str(copy)
    return out


@dataclass(frozen=True)
class Merged:
    """The run's one document, and which workers failed."""

    results: Results
    failed: tuple[Worker, ...]


def merge(workers: Workers, selected: Sequence[Queued], parent: Results, *, host_secs: float) -> Merged:
    """One document from the workers' files (`parent`: the parent's own results with no
    specialization, for the provenance and settings): the specializations in the program's
    order (each GPU's in `--devices` order where replicated), reindexed, each with its ``gpu``;
    a specialization a failed worker did not write is failed with the worker's reason."""
    entries: list[tuple[int, int, Specialization]] = []
    devices: list[DeviceRun] = []
    first: Results | None = None
    for order, w in enumerate(workers.workers):
        got = worker_results(w)
        first = first or got
        assert w.device is not None  # a --devices worker's
        gpu = got.general.gpu if got is not None else None
        run = DeviceRun(index=w.device, gpu=gpu, thermal=got.general.thermal if got else None,
                        specializations=len(w.positions), error=w.error)
        devices.append(run)
        ref = run.ref
        written = {s.name: s for s in got.specializations} if got is not None else {}
        for position in w.positions:
            q = selected[position]
            spec = written.get(q.name)
            if spec is None:
                if w.interrupted and w.error is None:
                    continue  # never ran: an interrupted run writes what finished
                spec = failed_record(0, q, DeviceError(f"GPU {w.device}: {w.error or 'not written by its worker'}"))
            entries.append((position, order, msgspec.structs.replace(spec, gpu=ref)))
    entries.sort(key=lambda e: (e[0], e[1]))
    records = tuple(msgspec.structs.replace(spec, index=i) for i, (_, _, spec) in enumerate(entries))
    base = first or parent
    general = msgspec.structs.replace(
        parent.general, gpu=next((d.gpu for d in devices if d.gpu is not None), None),
        backend=base.general.backend, monitoring=base.general.monitoring,
        temperature_type=base.general.temperature_type, thermal=next((d.thermal for d in devices if d.thermal), None),
        specialization_count=len(records))
    settings = parent.settings
    if first is not None:  # what the workers resolved: --cache-size auto, the thermal limits
        settings = msgspec.structs.replace(settings, cache_size=first.settings.cache_size,
                                           min_gpu_temp=first.settings.min_gpu_temp,
                                           max_gpu_temp=first.settings.max_gpu_temp)
    context = msgspec.structs.replace(parent.context, general=general, settings=settings, devices=tuple(devices))
    results = Results(context, records, Summary.of(records, host_secs))
    return Merged(results, tuple(w for w in workers.workers if w.failed))


__all__ = ["WORKER_ENV", "Merged", "Worker", "WorkerRole", "Workers", "keep_logs", "leave", "merge", "placement",
           "poll", "progress", "silence_limit", "start", "start_processes", "watch", "worker_command", "worker_results"]
