"""Settings, flags and the command-line options of a benchmark program.

Every option of the C++ primbench keeps its name and meaning, and its default except the
thermal range, the cache size and rounds (docs/cpp-differences.md says why); options that
Python needs in place of compile-time macros (cache size, device, branch and commit, no
test, no monitoring) are added. A custom option takes both spellings, ``--my_opt`` (C++)
and ``--my-opt``. Values given on the command line override the values of a
`Settings` object passed by the program, which override the defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from primbench.errors import UsageError
from primbench.rounds import DEFAULT_ROUNDS

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

_SIZE_RE = re.compile(r"^\s*(\d+)\s*(B|KiB|MiB|GiB|TiB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kib": KiB, "mib": MiB, "gib": GiB, "tib": 1024 * GiB}


#: ``--cache-size auto`` clears this many times the GPU's L2 cache before each cold call, as NVBench does
#: (measured on an H200: tests/benchmarks/loop/README.md).
AUTO_CACHE_L2_MULTIPLE = 1
#: What ``auto`` clears where the device does not report its L2 size.
FALLBACK_CACHE_SIZE = 256 * MiB


def effective_cache_size(setting: int | None, l2_cache_bytes: int | None) -> int:
    """The bytes to clear before each cold call: `setting` where given, else (``auto``)
    the L2 size times `AUTO_CACHE_L2_MULTIPLE`, or `FALLBACK_CACHE_SIZE` where it is unknown."""
    if setting is not None:
        return setting
    if l2_cache_bytes and l2_cache_bytes > 0:
        return int(l2_cache_bytes) * AUTO_CACHE_L2_MULTIPLE
    return FALLBACK_CACHE_SIZE


def parse_cache_size(text: str | int) -> int | None:
    """``auto`` (None) or a size as `parse_size` reads it."""
    if isinstance(text, str) and text.strip().lower() == "auto":
        return None
    return parse_size(text)


def parse_size(text: str | int) -> int:
    """Bytes from ``"128MiB"``, ``"64 KiB"``, ``"1GiB"`` or a plain number of bytes."""
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(str(text))
    if not m:
        raise UsageError(
            f"invalid size {text!r}: give a whole number of bytes, optionally with a "
            "B, KiB, MiB, GiB or TiB suffix (e.g. 128MiB)"
        )
    return int(m.group(1)) * _SIZE_UNITS[(m.group(2) or "b").lower()]


class flags(enum.Flag):
    """Executor flags. ``sync``: the benchmarked function synchronizes, so the stream is
    not blocked around each call (blocking would deadlock until its timeout)."""

    none = 0
    sync = enum.auto()


@dataclass
class Settings:
    """All options of a benchmark program; written verbatim to ``context.settings``."""

    size: int = 128 * MiB
    hot: bool = False
    seed: int = 42
    json_out: str = "results.json"
    csv_out: str = ""
    filter: str = ""
    dry: bool = False
    min_gpu_ms_per_batch: float = 2
    min_secs: float = 1
    noise_timeout_secs: float = 10
    batch_window_size: int = 10
    noise_tolerance_percent: float = 1
    min_gpu_temp: float | None = None  # None: auto (see primbench.thermal)
    max_gpu_temp: float | None = None  # None: auto
    max_warming_secs: float = 60
    max_cooling_secs: float = 60
    output_batches: bool = False
    spaces_per_indent: int = 4
    stream_blocking_timeout_secs: float = 10
    # Python additions (compile-time macros and build-time facts in the C++ harness).
    cache_size: int | None = None  # None: auto (the L2 size; see effective_cache_size)
    device: int | None = None
    no_test: bool = False
    no_monitoring: bool = False
    branch: str = ""
    commit: str = ""
    min_clock_fraction: float = 0.9
    rounds: int = DEFAULT_ROUNDS
    axis: list[str] = field(default_factory=list)  # --axis NAME=SPEC, repeatable (primbench.axis)
    graph: bool = False  # --graph: also capture each function into a CUDA graph and time its replay (primbench.graph)
    energy_baseline: bool = False  # --energy-baseline: empty calls after each round, subtracted (primbench.energy)
    # --devices: the GPUs of one host, one worker process each (primbench.workers); results 4.8.0.
    devices: str = ""  # "", "all" or "0,1,3"
    replicate: bool = False  # --replicate: every specialization on every GPU (else sharded)
    worker_timeout_secs: float | None = None  # None: auto (primbench.workers.silence_limit)
    results_per_gpu: bool = False  # --results-per-gpu: NAME.gpuN.json per GPU instead of one NAME.json
    # --processes: worker processes on one GPU, one after another (primbench.processes); results 4.9.0.
    processes: int = 1
    # --runs: that many sets of --processes workers, one set after another (primbench.processes); results 4.11.0.
    runs: int = 1

    def validate(self) -> None:
        """Raise UsageError for values that make no sense."""
        positive = ["min_gpu_ms_per_batch", "noise_tolerance_percent", "stream_blocking_timeout_secs"]
        if not self.size > 0:
            raise UsageError(f"--size must be greater than 0, got {self.size}")
        if self.min_secs > self.noise_timeout_secs:
            raise UsageError(f"--min-secs ({self.min_secs:g}) is above --noise-timeout-secs "
                             f"({self.noise_timeout_secs:g}): a specialization would always time out")
        non_negative = [
            "size", "min_secs", "noise_timeout_secs", "max_warming_secs", "max_cooling_secs",
            "cache_size", "spaces_per_indent",
        ]
        for name in positive:
            if not getattr(self, name) > 0:
                raise UsageError(f"--{_opt(name)} must be greater than 0, got {getattr(self, name)}")
        for name in non_negative:
            if getattr(self, name) is not None and not getattr(self, name) >= 0:
                raise UsageError(f"--{_opt(name)} must not be negative, got {getattr(self, name)}")
        self._validate_devices()
        self._validate_processes()
        if self.rounds < 1:
            raise UsageError(f"--rounds must be at least 1, got {self.rounds}")
        if self.batch_window_size < 2:
            raise UsageError(f"--batch-window-size must be at least 2, got {self.batch_window_size}")
        if self.min_gpu_temp is not None and self.max_gpu_temp is not None and self.min_gpu_temp > self.max_gpu_temp:
            raise UsageError(
                f"--min-gpu-temp ({self.min_gpu_temp}) is above --max-gpu-temp ({self.max_gpu_temp})"
            )
        try:
            re.compile(self.filter)
        except re.error as exc:
            raise UsageError(f"--filter {self.filter!r} is not a valid regular expression: {exc}") from None

    def _validate_devices(self) -> None:
        if self.devices:
            device_list(self.devices, None)  # its syntax; the indexes are checked against the host's GPUs
            if self.device is not None:
                raise UsageError("--device and --devices exclude each other: give the GPUs in --devices")
            if self.results_per_gpu and self.json_out in ("-", "", "/dev/null"):
                raise UsageError(f"--results-per-gpu needs a file for --json-out (got {self.json_out!r}): "
                                 "it writes one beside it per GPU")
        elif self.replicate or self.results_per_gpu:
            option = "--replicate" if self.replicate else "--results-per-gpu"
            raise UsageError(f"{option} needs --devices: it places every specialization on every GPU given"
                             if self.replicate else f"{option} needs --devices: a run on one GPU writes one file")
        if self.worker_timeout_secs is not None and not self.worker_timeout_secs > 0:
            raise UsageError(f"--worker-timeout-secs must be greater than 0, got {self.worker_timeout_secs}")

    def _validate_processes(self) -> None:
        if self.processes < 1:
            raise UsageError(f"--processes must be at least 1, got {self.processes}")
        if self.runs < 1:
            raise UsageError(f"--runs must be at least 1, got {self.runs}")
        if self.runs > MAX_RUNS:
            raise UsageError(f"--runs {self.runs}: at most {MAX_RUNS}")
        if self.runs > 1 and self.processes == 1:
            raise UsageError(f"--runs {self.runs} needs --processes 2 or more: a run is a set of worker processes "
                             "(e.g. --processes 8 --runs 2)")
        if self.processes == 1:
            return
        if self.processes > MAX_PROCESSES:
            raise UsageError(f"--processes {self.processes}: at most {MAX_PROCESSES} (each is a CUDA context of "
                             "its own, alive while the others measure)")
        if self.devices:
            raise UsageError("--processes and --devices exclude each other: --processes runs its workers on one GPU")
        for option, on in (("--graph", self.graph), ("--energy-baseline", self.energy_baseline)):
            if on:
                raise UsageError(f"--processes and {option} exclude each other: its records are not merged "
                                 "across processes; run it without --processes")

    def to_json(self) -> dict[str, Any]:
        """The settings as written to results.json (integral floats as integers, like the C++ primbench);
        the ``--devices`` settings (results 4.8.0) only where given, so a run on one GPU writes what
        4.7.0 wrote."""
        return {k: _plain(v) for k, v in dataclasses.asdict(self).items()
                if k not in _WRITTEN_WHEN_GIVEN or v != _WRITTEN_WHEN_GIVEN[k]}


#: Settings written to results.json only when they differ from these (results 4.8.0).
_WRITTEN_WHEN_GIVEN: dict[str, Any] = {"devices": "", "replicate": False, "worker_timeout_secs": None,
                                       "results_per_gpu": False, "processes": 1, "runs": 1}
#: The most worker processes of ``--processes``.
MAX_PROCESSES = 64
#: The most sets of workers of ``--runs``.
MAX_RUNS = 16

#: What a benchmark program measures with when its command line gives none of `DESIGN_OPTIONS` (`default_design`):
#: two runs of 8 worker processes of 2 rounds over a quarter second each. Identical processes land in states that
#: rounds inside one cannot sample, and every worker of one run shares a state that only another run shows; two
#: such runs a side met issue 30's false-alarm and "unchanged" targets out of sample at 64 KiB-64 MiB on two suites
#: in about 1.1-1.3 s a specialization (tests/benchmarks/verdicts/README.md), and one ``--runs 2`` command stood in
#: for two commands (probe16.txt). ``PRIMBENCH_DESIGN=single`` (or any one of the options) keeps one process of
#: ``--rounds`` over ``--min-secs``, the C++ primbench's protocol.
DEFAULT_DESIGN: dict[str, Any] = {"processes": 8, "runs": 2, "rounds": 2, "min_secs": 0.25}
#: The options that shape a measurement's protocol, or exclude ``--processes``: one given keeps the C++ defaults.
DESIGN_OPTIONS = frozenset({"processes", "runs", "rounds", "min_secs", "min_gpu_ms_per_batch", "batch_window_size",
                            "devices", "replicate", "results_per_gpu", "graph", "energy_baseline", "dry"})
#: The environment variable that chooses the default protocol: ``processes`` (the default) or ``single``.
DESIGN_ENV = "PRIMBENCH_DESIGN"


def default_design(settings: Settings, given: frozenset[str], base: Settings, environ: Mapping[str, str]
                   ) -> tuple[Settings, frozenset[str]]:
    """A program's settings and given options with `DEFAULT_DESIGN` applied where its command line gave none of
    `DESIGN_OPTIONS`, its own base settings (``Executor(settings=...)``) left those at their defaults and
    `DESIGN_ENV` does not say ``single``; the design's options then count as given (a ``--processes`` worker,
    which reads the same command line, takes them as its parent's). Anything else as it was."""
    choice = str(environ.get(DESIGN_ENV, "") or "processes").strip().lower()
    if choice not in ("processes", "single"):
        raise UsageError(f"{DESIGN_ENV}={choice!r}: give 'processes' (the default: --processes 8 --runs 2 --rounds 2 "
                         "--min-secs 0.25 where no option of the protocol is given) or 'single' (one process)")
    defaults = Settings()
    if (choice == "single" or given & DESIGN_OPTIONS
            or any(getattr(base, f) != getattr(defaults, f) for f in DESIGN_OPTIONS)):
        return settings, given
    return dataclasses.replace(settings, **DEFAULT_DESIGN), given | frozenset(DEFAULT_DESIGN)


def device_list(text: str, count: int | None) -> list[int]:
    """The GPU indexes of ``--devices``: ``all`` (every one of `count`), or indexes separated by
    commas (``0,1,3``), each once and below `count` where it is known."""
    spec = text.strip()
    if spec.lower() == "all":
        if count is None:
            return []
        if count < 1:
            raise UsageError("--devices all: this host has no GPU")
        return list(range(count))
    out: list[int] = []
    for part in spec.split(","):
        item = part.strip()
        if not item.isdigit():
            raise UsageError(f"--devices {text!r}: give 'all' or GPU indexes separated by commas (e.g. 0,1,3)")
        index = int(item)
        if index in out:
            raise UsageError(f"--devices {text!r}: GPU {index} is given twice")
        if count is not None and index >= count:
            raise UsageError(f"--devices {text!r}: there is no GPU {index} (this host has {count}: 0-{count - 1})")
        out.append(index)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _opt(name: str) -> str:
    return name.replace("_", "-")


_HELP = {
    "size": "Bytes of input per specialization; suffixes KiB, MiB, GiB (default 128MiB)",
    "hot": "Skip clearing the GPU cache before each call (measure cache-warm performance)",
    "seed": "Seed for input generation",
    "json_out": "Where to write results.json (- for standard output, /dev/null to skip)",
    "csv_out": "Also write a CSV summary here (- for standard output)",
    "filter": "Only run specializations whose name matches this regular expression",
    "dry": "List the specializations and write zeroed results without running anything",
    "min_gpu_ms_per_batch": "Double the calls per batch until a batch takes at least this much GPU time (then "
    "lengthen batches, or shorten them by at most half, so that a round's window fills its --min-secs share)",
    "min_secs": "Run each specialization for at least this much wall time",
    "noise_timeout_secs": "Stop a specialization that is still noisy after this long, flagged noise_timeout",
    "batch_window_size": "Number of recent batches over which noise is measured",
    "noise_tolerance_percent": "Stop once the noise (coefficient of variation) is below this",
    "min_gpu_temp": "Warm the GPU to at least this temperature (°C) before each specialization, or abort "
    "after --max-warming-secs (default auto: no warming; on an H200 kernel times hold from the first batch)",
    "max_gpu_temp": "Let the GPU cool to at most this temperature (°C) before each specialization and batch "
    "(default auto: 10 °C below the GPU's slowdown temperature, else 80)",
    "max_warming_secs": "Abort if warming takes longer than this",
    "max_cooling_secs": "Abort if cooling takes longer than this",
    "output_batches": "Write per-batch GPU times to results.json",
    "spaces_per_indent": "Indentation of results.json (0 for compact)",
    "stream_blocking_timeout_secs": "Give up blocking the stream after this long (then pass flags.sync)",
    "cache_size": "Bytes written to clear the GPU cache before each cold call, suffixes as --size, or auto: "
                  "the GPU's L2 size (default auto; results.json records the bytes used)",
    "device": "Index of the GPU to run on (default: the current device)",
    "no_test": "Skip the benchmarks' test() checks",
    "no_monitoring": "Do not read temperatures or clocks; no warming or cooling",
    "branch": "Branch name for the results (else $PRIMBENCH_BRANCH, the CI's variables, git)",
    "min_clock_fraction": "Flag a specialization whose average SM clock is below this fraction of the default clock",
    "commit": "Commit hash for the results (else $PRIMBENCH_COMMIT, the CI's variables, git)",
    "rounds": "Measure each specialization this many times, each from a fresh run(state) with its own "
    "setup and warmup, interleaved across specializations; the budget (--min-secs, --noise-timeout-secs, "
    "--batch-window-size) is split between them. compare tests changes against the spread between rounds",
    "graph": "Also capture each specialization's function into a CUDA graph on the harness stream and time its "
    "replay beside the stream launches (results.json graph: both times and what the graph saves, or why the "
    "capture was impossible); a benchmark class can ask for it with graph = True",
    "energy_baseline": "After each round, run empty calls (the same cache clears, events and stream blocking, "
    "a function that launches nothing) for 2 s and read the energy counter around them: results.json "
    "energy_baseline gives their joules per call, the fixed part every call pays, and net_joules_per_call, "
    "the kernel's own energy (the round's joules per call less it)",
    "devices": "Run across several GPUs of this host, one worker process each with its own device, monitor and "
    "thermal control: all, or indexes such as 0,1,3. The specializations are sharded round-robin in their order "
    "(rounds stay interleaved within a worker); one results.json names each specialization's GPU. A worker that "
    "crashes, hangs or loses its device fails its specializations, the others go on, and the exit code is 1",
    "replicate": "With --devices: run every specialization on every GPU (one series per physical GPU in "
    "compare and history) instead of sharding them",
    "worker_timeout_secs": "With --devices: kill a worker that reports no progress for this long, failing "
    "its specializations (default auto: the stream-blocking timeout plus the warming, cooling and noise "
    "budgets, plus 60 s for setup)",
    "results_per_gpu": "With --devices: write one results file per GPU (NAME.gpuN.json beside --json-out, each "
    "with that GPU's specializations) instead of the default one results.json of the whole run",
    "processes": "Measure in this many worker processes on the one GPU, one after another, each with its own "
    "CUDA context, setup and rounds (--rounds each, default 8 with --processes, of batches of at least 0.5 ms, "
    "less where a round's share is too short for three of them, unless --min-gpu-ms-per-batch is given), "
    "--min-secs split between them; "
    "the workers import and open the device side by side, then measure in turn. Identical processes land in "
    "states up to 2-3 % apart on small kernels, which rounds inside one process cannot sample: compare takes each "
    "process as a run. 4 workers: a detectable change of about 2 % at 1-4 MiB; 8: about 0.8-1.9 %; 16: about "
    "0.5-0.8 % (0.3 % at 64 MiB; about 1.3 % where the sides ran at SM clocks 0.7 % apart), for about "
    "2.4-2.9 s a specialization of an 8-kernel suite "
    "(tests/benchmarks/verdicts/). A state every worker of one run shares does not show in their spread: at 4 MiB "
    "one --processes 16 run a side failed 9 of 20 identical pairs, two --processes 8 runs a side 0 of 20 "
    "(compare base/ head/ with both files); two --processes 8 --rounds 2 --min-secs 0.25 runs take about 1.1 s a "
    "specialization together at 1-4 MiB. One results.json; each round names its process",
    "runs": "With --processes: measure that many runs, each a fresh set of --processes workers started after the "
    "previous set has measured, into one results.json (each round names its process, numbered on through the "
    "runs; settings.runs says how many). A state every worker of one run shares does not show in their spread, "
    "only between runs: on an H100 one --processes 8 --rounds 2 --min-secs 0.25 run a side failed 7 of 30 "
    "identical pairs at 64 MiB, two separate runs a side 0-2 of 56 at 64 KiB-64 MiB (tests/benchmarks/verdicts/). "
    "compare takes each run's workers as a run",
    "axis": "Replace the values of a benchmark's axis, repeatable: NAME=VALUE, NAME=[V1,V2,...], "
    "NAME=[START:STOP:+STEP] (linear) or NAME=[START:STOP:*FACTOR] (geometric; a bare third part multiplies too), "
    "STOP included; numbers may be 2^N; size takes KiB, MiB, GiB (e.g. size=[2^16:2^28:4]). See docs/axes.md",
}


#: The rules a program's specialization names and their order follow (``--naming``,
#: ``Executor(naming=...)``; `primbench.benchmark.name_for`): ``primbench`` (the default) keeps
#: every meta key and orders names naturally; ``cpp`` builds the C++ primbench's names and
#: orders them as it sorts its queue, by plain string comparison, so that a port's names,
#: indexes and CSV rows match its C++ twin's files. The default stays primbench's: the names
#: of every run and history made so far keep their series.
NAMINGS = ("primbench", "cpp")
DEFAULT_NAMING = "primbench"

NAMING_HELP = ("How specialization names are built and ordered: primbench (every meta key, natural order) or cpp "
              "(the C++ primbench's: without lvl, algo and cfg: default, rocprim:: and common:: stripped, sorted "
              "as strings), so a port's names match its C++ twin's files (default: the program's, else primbench)")

#: Options that run the program in another mode than measuring (``--help`` is one too).
MODES = {
    "list": "Print the names of the specializations (after --filter), one per line, and exit; "
    "nothing runs and nothing is written",
    "profile": "Call each specialization's function once after its setup, inside an NVTX range named after "
    "the specialization that holds only that call, with no cache clear, stream blocking, warming or other "
    "harness kernel: for Nsight Compute (ncu --nvtx --nvtx-include 'NAME/'); nothing is timed or written",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


@dataclass
class CustomOption:
    """An option a benchmark program registered with ``Executor.get``."""

    name: str
    default: Any
    help: str
    type: type = field(init=False)

    def __post_init__(self) -> None:
        self.type = type(self.default)


def _bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def build_parser(prog: str, custom: list[CustomOption]) -> argparse.ArgumentParser:
    """The argument parser of a benchmark program: every setting, then the custom options."""
    parser = _Parser(
        prog=prog,
        add_help=False,
        argument_default=argparse.SUPPRESS,
        description="A primbench benchmark program. Results go to results.json (and --csv-out).",
        allow_abbrev=False,
    )
    parser.add_argument("-h", "--help", action="store_true", help="Show this message and exit")
    group = parser.add_argument_group("primbench options")
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        flag = "--" + _opt(f.name)
        default = getattr(defaults, f.name)
        text = _HELP[f.name].replace("%", "%%")  # argparse formats help with %: a bare "% a" printed its dict
        if str(f.type) == "bool":
            group.add_argument(flag, dest=f.name, action="store_true", help=text)
            continue
        if f.name == "axis":
            group.add_argument(flag, dest=f.name, action="append", metavar="NAME=VALUES", help=text)
            continue
        conv: Any
        if f.name == "size":
            conv = parse_size
        elif f.name == "cache_size":
            conv = parse_cache_size
        else:
            conv = {"int": int, "int | None": int, "float": float, "float | None": float}.get(str(f.type), str)
        shown = "" if f.name in ("size", "cache_size") or default in ("", None) else f" (default {default!r})"
        if f.name in DEFAULT_DESIGN:  # `default_design`
            shown = (f" (default {DEFAULT_DESIGN[f.name]!r} where no option of the protocol is given, else "
                     f"{default!r}; {DESIGN_ENV}=single: {default!r})")
        group.add_argument(flag, dest=f.name, type=conv, metavar=f.name.upper(), help=text + shown)
    # What to do instead of measuring: not settings of a measurement, so not in `Settings` (and
    # never in results.json, which neither writes).
    for mode, text in MODES.items():
        group.add_argument("--" + mode, dest="mode:" + mode, action="store_true", help=text)
    # How names are built: the program's choice (Executor(naming=...)), not a setting of the
    # measurement; the names it gives are what results.json records.
    group.add_argument("--naming", dest="naming", choices=NAMINGS, help=NAMING_HELP)
    if custom:
        cgroup = parser.add_argument_group("benchmark options")
        for opt in custom:
            help_text = f"{opt.help} (default {opt.default!r})"
            flags_ = custom_flags(opt.name)
            if opt.type is bool:  # a bare flag, as in the C++ primbench (--no-NAME turns it off)
                cgroup.add_argument(*flags_, dest="custom:" + opt.name, action=argparse.BooleanOptionalAction,
                                    help=help_text)
            elif isinstance(opt.default, list | tuple):  # several values: --sizes 1 2 4
                item = type(opt.default[0]) if opt.default else str
                cgroup.add_argument(*flags_, dest="custom:" + opt.name, nargs="+",
                                    type=_bool if item is bool else item, metavar=opt.name.upper(), help=help_text)
            else:
                cgroup.add_argument(*flags_, dest="custom:" + opt.name, type=opt.type, metavar=opt.name.upper(),
                                    help=help_text)
    return parser


def custom_flags(name: str) -> tuple[str, ...]:
    """The spellings of a custom option: ``executor.get("my_opt")`` is ``--my_opt`` in the C++
    primbench and ``--my-opt`` in primbench's style; both are taken."""
    spellings = ["--" + name.replace("_", "-"), "--" + name, "--" + name.replace("-", "_")]
    return tuple(dict.fromkeys(spellings))


class Parsed(NamedTuple):
    """What `parse_args` reads from a command line."""

    settings: Settings
    custom: dict[str, Any]
    modes: frozenset[str]
    given: frozenset[str]
    naming: str | None  # --naming, where given


def parse_args(
    prog: str,
    argv: list[str],
    base: Settings,
    custom: list[CustomOption],
    *,
    allow_unknown: bool,
) -> Parsed:
    """Parse `argv` over `base`. Returns the settings, the custom values, the modes asked
    for (``help``, ``list``, ``profile``: see `MODES`), the names of the settings given on
    the command line and ``--naming``. With `allow_unknown` (before every custom option is
    registered), options the parser does not know yet are skipped."""
    parser = build_parser(prog, custom)
    try:
        if allow_unknown:
            ns, _ = parser.parse_known_args(argv)
        else:
            ns = parser.parse_args(argv)
    except UsageError:
        raise
    except argparse.ArgumentTypeError as exc:  # pragma: no cover - argparse wraps these
        raise UsageError(str(exc)) from None
    values = vars(ns)
    modes = {"help"} if values.pop("help", False) else set()
    naming = values.pop("naming", None)
    custom_values = {opt.name: opt.default for opt in custom}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key.startswith("custom:"):
            custom_values[key[len("custom:"):]] = value
        elif key.startswith("mode:"):
            if value:
                modes.add(key[len("mode:"):])
        else:
            changes[key] = value
    settings = dataclasses.replace(base, **changes)
    return Parsed(settings, custom_values, frozenset(modes), frozenset(changes), naming)
