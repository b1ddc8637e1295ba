"""The results model: the results.json schema, its one writer, its one loader, and CSV.

The schema is the C++ primbench's 4.0.0, key for key. Later versions only add keys:

* 4.1.0 - ``context.general``: ``branch_source``, ``commit_source``, ``primbench_version``,
  ``python_version``, ``gpu.uuid``, ``gpu.serial``, ``cache_size`` in settings; per
  specialization ``error`` (a failed run, metrics null) and, with ``--output-batches``,
  ``batches[].kernel_calls`` and ``batches[].host_secs``.
* 4.2.0 - per specialization ``sm_clock`` (average SM clock over the measurement from
  ``%globaltimer``/``clock64``, the default clock, NVML clock-event reasons at start and
  end, ``below_expected``); ``context.general.thermal`` (effective temperature range and
  the time spent warming and cooling); ``min_clock_fraction`` in settings.
* 4.3.0 - rounds (`primbench.rounds`): ``rounds`` in settings; per specialization ``rounds``
  (one object per round: ``round``, ``gpu_ms_per_call``, ``bytes_per_second``,
  ``items_per_second``, ``noise_timeout``, ``noise_percent``, ``batches``, ``kernel_calls``,
  ``kernel_calls_per_batch``, ``elapsed_secs``, optional ``gpu_temp_celsius`` and
  ``sm_clock_mhz``) and ``between_rounds`` (``count``, ``cv_percent``: the spread of the
  rounds' time per call); ``batches[].round``. The C++ primbench's fields of a specialization cover
  every call of every round. A file without rounds is one measurement whose run-to-run
  variability is unknown, not zero.
* 4.4.0 - time per call, first class: per specialization ``gpu_seconds_per_call`` (the mean
  GPU time per call: GPU time over calls, every batch of every round) and ``time_per_call``
  (``mean``, ``median``, ``min``, ``q1``, ``q3`` in seconds, over the per-call times of the
  batches: each batch's GPU time over its calls); written by `time_per_call_fields`. Older
  files: the loader derives the mean from ``elapsed_secs.gpu / calls.kernel_calls`` and the
  other statistics from ``batches`` where the file holds them, else None. A specialization
  measured with the host timer (``state.run(fn, timer="host")``: host clock around a batch and
  one synchronization, for libraries on streams of their own) has ``"timer": "host"``; without
  the key its times are GPU event times, as in every older file.

The loader reads every version this project has written and rejects any other, naming the
file and the field (the habit of pyperf). `compare` and `history` read results only here.
"""

from __future__ import annotations

import gc
import io
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from primbench.errors import PrimbenchError
from primbench.measure import TIMERS

RESULTS_VERSION = "4.4.0"
KNOWN_VERSIONS = ("4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0")

CSV_HEADER = (
    "index",
    "name",
    "bytes_per_second",
    "gib_per_second",
    "items_per_second",
    "noise_timeout",
    "noise_percent",
    "gpu_seconds_per_call",  # results 4.4.0: appended after the C++ primbench's columns
)


class ResultsFileError(PrimbenchError):
    """A results file that cannot be read: names the file and the field."""

    def __init__(self, source: str, field: str | None, message: str) -> None:
        where = f"{source}: {field}: " if field else f"{source}: "
        super().__init__(where + message)
        self.source = source
        self.field = field


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Batch:
    """One measured batch: its GPU time and the calls it made."""

    batch_ms: float
    kernel_calls: int | None = None
    host_secs: float | None = None
    iterations_ms: tuple[float, ...] | None = None


class Batches(Sequence[Batch]):
    """A specialization's batches, stored as columns (one tuple per field); the `Batch`
    objects are built only when indexed or iterated. `compare` reads the columns directly.

    Loading 10,000 specializations of 30 batches each builds no Batch at all."""

    __slots__ = ("batch_ms", "host_secs", "iterations_ms", "kernel_calls")

    def __init__(self, batch_ms: Sequence[float], kernel_calls: Sequence[int | None] | None = None,
                 host_secs: Sequence[float | None] | None = None,
                 iterations_ms: Sequence[tuple[float, ...] | None] | None = None) -> None:
        n = len(batch_ms)
        none = (None,) * n
        self.batch_ms: tuple[float, ...] = tuple(batch_ms)
        self.kernel_calls: tuple[int | None, ...] = none if kernel_calls is None else tuple(kernel_calls)
        self.host_secs: tuple[float | None, ...] = none if host_secs is None else tuple(host_secs)
        self.iterations_ms: tuple[tuple[float, ...] | None, ...] = (
            none if iterations_ms is None else tuple(iterations_ms))
        if not n == len(self.kernel_calls) == len(self.host_secs) == len(self.iterations_ms):
            raise ValueError("batch columns of different lengths")

    @classmethod
    def of(cls, batches: Iterable[Batch]) -> Batches:
        """From Batch objects."""
        items = tuple(batches)
        return cls([b.batch_ms for b in items], [b.kernel_calls for b in items], [b.host_secs for b in items],
                   [b.iterations_ms for b in items])

    def __len__(self) -> int:
        return len(self.batch_ms)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        return Batch(self.batch_ms[index], self.kernel_calls[index], self.host_secs[index],
                     self.iterations_ms[index])

    def __iter__(self) -> Iterator[Batch]:
        return map(Batch, self.batch_ms, self.kernel_calls, self.host_secs, self.iterations_ms)

    def _columns(self) -> tuple[tuple[Any, ...], ...]:
        return self.batch_ms, self.kernel_calls, self.host_secs, self.iterations_ms

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Batches):
            return self._columns() == other._columns()
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._columns())

    def __repr__(self) -> str:
        return f"Batches({list(self)!r})"


@dataclass(frozen=True)
class Round:
    """One round of a specialization (results 4.3.0): a fresh ``run(state)``, measured alone."""

    gpu_ms_per_call: float
    bytes_per_second: float
    items_per_second: float
    noise_percent: float
    noise_timeout: bool
    batch_count: int | None = None
    kernel_calls: int | None = None
    gpu_temp_start: float | None = None
    gpu_temp_end: float | None = None
    sm_clock_mhz: float | None = None

    @property
    def gpu_seconds_per_call(self) -> float:
        """The round's mean GPU time per call in seconds (the ``time`` metric)."""
        return self.gpu_ms_per_call / 1000.0


@dataclass(frozen=True)
class TimePerCall:
    """GPU time per call in seconds over the per-call times of a specialization's batches
    (each batch's GPU time over its calls, every round): `mean` is GPU time over calls;
    quartiles interpolate linearly (NumPy's default). None where a file cannot give it."""

    mean: float | None
    median: float | None = None
    min: float | None = None
    q1: float | None = None
    q3: float | None = None


@dataclass(frozen=True)
class Specialization:
    """One measured (or failed) specialization of a results file."""

    index: int
    name: str
    meta: Mapping[str, Any]
    bytes_per_second: float | None
    items_per_second: float | None
    bytes_per_item: float | None
    items: int | None
    noise_timeout: bool
    noise_percent: float | None
    elapsed_host_secs: float | None
    elapsed_gpu_secs: float | None
    kernel_calls_per_batch: int | None
    ms_per_batch: float | None
    batch_count: int | None
    kernel_calls: int | None
    gpu_temp_start: float | None = None
    gpu_temp_end: float | None = None
    batches: Batches | None = None
    error: str | None = None
    rounds: tuple[Round, ...] = ()
    gpu_seconds_per_call: float | None = None  # results 4.4.0; derived for older files
    time_per_call: TimePerCall | None = None
    timer: str = "events"  # "host": timed on the host clock (results.json "timer"; absent: events)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def algorithm(self) -> str:
        return str(self.meta.get("algo", ""))


@dataclass(frozen=True)
class Results:
    """A loaded results.json."""

    source: str
    version: str
    context: Mapping[str, Any]
    specializations: tuple[Specialization, ...]
    summary: Mapping[str, Any]

    @property
    def general(self) -> Mapping[str, Any]:
        return self.context.get("general", {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.context.get("settings", {})

    @property
    def algorithm(self) -> str:
        return str(self.general.get("algorithm", ""))

    @property
    def branch(self) -> str | None:
        return self.general.get("branch_name")

    @property
    def commit(self) -> str | None:
        return self.general.get("commit_hash")

    @property
    def date(self) -> str | None:
        return self.general.get("date")

    @property
    def gpu(self) -> Mapping[str, Any]:
        return self.general.get("gpu") or {}


# --------------------------------------------------------------------------- loader


MAX_FILE_BYTES = 1 << 30  # a results file larger than 1 GiB is refused unread
MAX_NAME_CHARS = 65536  # names, branches, commits, GPU names, algorithms, dates: 64 Ki characters at most


def load_results(path: str | os.PathLike[str]) -> Results:
    """Read and validate one results.json; raise ResultsFileError naming file and field.

    Only a regular file (or a link to one) of at most `MAX_FILE_BYTES` is read: a FIFO, a
    device such as /dev/zero or a socket is refused before it is opened."""
    source = str(path)
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise ResultsFileError(source, None, "is a directory, not a results file")
        if not stat.S_ISREG(info.st_mode):
            raise ResultsFileError(source, None, "is not a regular file (a FIFO, device or socket is not read)")
        if info.st_size > MAX_FILE_BYTES:
            raise ResultsFileError(source, None, f"is {info.st_size} bytes, over the limit of {MAX_FILE_BYTES}")
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ResultsFileError(source, None, f"is over the limit of {MAX_FILE_BYTES} bytes")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ResultsFileError(source, None, "no such file") from None
    except IsADirectoryError:
        raise ResultsFileError(source, None, "is a directory, not a results file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultsFileError(source, None, f"cannot be read ({exc})") from None
    return parse_results(text, source)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Parsing a results file allocates about a million dicts and lists, none of them in a
    reference cycle; the cyclic collector would walk them again and again for nothing (about
    a fifth of the time of loading a 35 MB file). Reference counting still frees garbage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_results(text: str, source: str = "<string>") -> Results:
    """Validate the text of a results.json."""
    with cyclic_gc_paused():
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            raise ResultsFileError(source, None, f"not valid JSON ({exc})") from None
        if _may_hold_surrogates(text):
            _check_surrogates(data, source)
        return results_from_dict(data, source)


# A \uD800-\uDFFF escape (json.loads pairs the valid ones and leaves a lone one in the string), or a
# surrogate in text that did not come from UTF-8: then every string is checked.
_SURROGATE = re.compile("[\ud800-\udfff]|" + r"\\u[dD][89abcdefABCDEF]")


def _may_hold_surrogates(text: str) -> bool:
    """Whether `text` has a surrogate escape or character (substring tests in C first: a regex
    over a 40 MB file costs half a second)."""
    if "\\ud" not in text and "\\uD" not in text and text.isascii():
        return False
    return _SURROGATE.search(text) is not None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_surrogates(value: Any, source: str) -> None:
    """Reject a lone surrogate anywhere (key or value): no UTF-8 output can carry it."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                raise ResultsFileError(source, at, "holds a lone surrogate (\\ud800-\\udfff), not text")
        elif isinstance(item, dict):
            for k, v in item.items():
                if not _encodable(k):
                    raise ResultsFileError(source, at, "holds a key with a lone surrogate (\\ud800-\\udfff)")
                stack.append((v, k if at == "$" else f"{at}.{k}"))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))


def _check_text(obj: Mapping[str, Any], key: str, source: str, where: str) -> None:
    """A string that names something (shown in every output, stored in every row) is at most
    `MAX_NAME_CHARS` long."""
    value = obj.get(key)
    if isinstance(value, str) and len(value) > MAX_NAME_CHARS:
        raise ResultsFileError(source, f"{where}.{key}",
                               f"is {len(value)} characters long, over the limit of {MAX_NAME_CHARS}")


def _check_date(general: Mapping[str, Any], source: str) -> None:
    """An ISO 8601 date must be an instant that exists in UTC too (datetime's years 1 to 9999)."""
    import datetime as _dt

    text = general.get("date")
    if not isinstance(text, str):
        return
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        return  # not ISO 8601: `history` names it; compare only shows it
    try:
        if when.tzinfo is not None:
            when.astimezone(_dt.UTC)
    except (OverflowError, ValueError):
        raise ResultsFileError(source, "context.general.date",
                               f"{text!r} lies outside the dates that can be stored (years 1 to 9999 in UTC)") from None


def _get(obj: Any, key: str, kind: type | tuple[type, ...], source: str, where: str,
         *, optional: bool = False) -> Any:
    if type(obj) is dict and type(kind) is type and type(value := obj.get(key)) is kind:
        return value  # the common case, checked fast; the checks below name what is wrong
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise ResultsFileError(source, where, "must be an object")
    if key not in obj:
        if optional:
            return None
        raise ResultsFileError(source, f"{where}.{key}", "missing")
    value = obj[key]
    if value is None and optional:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ResultsFileError(source, f"{where}.{key}", f"must be {_kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise ResultsFileError(source, f"{where}.{key}", f"must be {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _number(obj: Any, key: str, source: str, where: str, *, optional: bool = False,
            non_negative: bool = True) -> float | None:
    if type(obj) is dict:  # the common cases, checked fast
        value = obj.get(key)
        if type(value) is float and (0.0 if non_negative else -math.inf) <= value < math.inf:
            return value
        if type(value) is int and (0 if non_negative else -_FLOAT_INT) <= value < _FLOAT_INT:
            return float(value)
    value = _get(obj, key, (int, float), source, where, optional=optional)
    if value is None:
        return None
    if not _finite(value):
        raise ResultsFileError(source, f"{where}.{key}", f"must be finite, got {_short(value)}")
    if non_negative and value < 0:
        raise ResultsFileError(source, f"{where}.{key}", f"must not be negative, got {value}")
    return float(value)


_FLOAT_INT = 2**63  # integers below this in magnitude are finite as floats
_EXACT_INT = 2**53  # and below this, exactly so


def _finite(value: int | float) -> bool:
    """Whether a JSON number is a finite float (an integer too large for a float is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _short(value: int | float) -> str:
    text = str(value) if isinstance(value, float) else f"an integer of {len(str(abs(value)))} digits"
    return text


def _count(obj: Any, key: str, source: str, where: str, *, optional: bool = False) -> int | None:
    if type(obj) is dict and type(value := obj.get(key)) is int and 0 <= value < _EXACT_INT:
        return value  # the common case, checked fast
    value = _number(obj, key, source, where, optional=optional)
    if value is None:
        return None
    if not value.is_integer():
        raise ResultsFileError(source, f"{where}.{key}", f"must be a whole number, got {value}")
    return int(value)


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split("."))
    except ValueError:
        return ()


def results_from_dict(data: Any, source: str = "<dict>") -> Results:
    """Validate a parsed results.json document."""
    if not isinstance(data, Mapping):
        raise ResultsFileError(source, None, "must be a JSON object with context, specializations, summary")
    context = _get(data, "context", dict, source, "$")
    version = _get(context, "results_version", str, source, "context")
    if version not in KNOWN_VERSIONS:
        newer = _version_key(version) > _version_key(KNOWN_VERSIONS[-1])
        hint = "upgrade primbench to read it" if newer else "this primbench cannot read it"
        raise ResultsFileError(
            source, "context.results_version",
            f"unknown schema version {version!r} (known: {', '.join(KNOWN_VERSIONS)}); {hint}",
        )
    general = _get(context, "general", dict, source, "context")
    _get(general, "algorithm", str, source, "context.general")
    for key in ("algorithm", "branch_name", "commit_hash", "date", "host_name"):
        _check_text(general, key, source, "context.general")
    if isinstance(general.get("gpu"), Mapping):
        for key in ("name", "uuid", "serial", "pci_bus_id", "arch"):
            _check_text(general["gpu"], key, source, "context.general.gpu")
    _check_date(general, source)
    _get(context, "settings", dict, source, "context")
    raw_specs = _get(data, "specializations", list, source, "$")
    summary = _get(data, "summary", dict, source, "$", optional=True) or {}
    specs: list[Specialization] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_specs):
        spec = _specialization(raw, source, f"specializations[{i}]")
        if spec.name in seen:
            raise ResultsFileError(
                source, f"specializations[{i}].name",
                f"duplicate name {spec.name!r} (also specializations[{seen[spec.name]}])",
            )
        seen[spec.name] = i
        specs.append(spec)
    return Results(source, version, context, tuple(specs), summary)


def _specialization(raw: Any, source: str, where: str) -> Specialization:
    if not isinstance(raw, Mapping):
        raise ResultsFileError(source, where, "must be an object")
    name = _get(raw, "name", str, source, where)
    _check_text(raw, "name", source, where)
    index = _count(raw, "index", source, where)
    meta = _get(raw, "meta", dict, source, where)
    _check_text(meta, "algo", source, f"{where}.meta")
    error = _get(raw, "error", str, source, where, optional=True)
    failed = error is not None
    bps = _number(raw, "bytes_per_second", source, where, optional=failed)
    ips = _number(raw, "items_per_second", source, where, optional=failed)
    elapsed = _get(raw, "elapsed_secs", dict, source, where, optional=failed) or {}
    calls = _get(raw, "calls", dict, source, where, optional=failed) or {}
    temps = _get(raw, "gpu_temp_celsius", dict, source, where, optional=True) or {}
    raw_batches = _get(raw, "batches", list, source, where, optional=True)
    batches = None if raw_batches is None else _batches(raw_batches, source, f"{where}.batches")
    raw_rounds = _get(raw, "rounds", list, source, where, optional=True) or []
    rounds = _fast_rounds(raw_rounds)
    if rounds is None:
        rounds = tuple(_round(r, source, f"{where}.rounds[{k}]") for k, r in enumerate(raw_rounds))
    gpu_secs = _number(elapsed, "gpu", source, f"{where}.elapsed_secs", optional=True)
    per_batch = _count(calls, "kernel_calls_per_batch", source, f"{where}.calls", optional=True)
    kernel_calls = _count(calls, "kernel_calls", source, f"{where}.calls", optional=True)
    per_call, time_per_call = _time_per_call(raw, gpu_secs, kernel_calls, per_batch, batches, source, where)
    timer = _get(raw, "timer", str, source, where, optional=True) or "events"
    if timer not in TIMERS:
        raise ResultsFileError(source, f"{where}.timer", f"must be one of {', '.join(TIMERS)}, got {timer!r}")
    return Specialization(
        index=index or 0,
        name=name,
        meta=meta,
        bytes_per_second=bps,
        items_per_second=ips,
        bytes_per_item=_number(raw, "bytes_per_item", source, where, optional=True),
        items=_count(raw, "items", source, where, optional=True),
        noise_timeout=bool(_get(raw, "noise_timeout", bool, source, where, optional=failed)),
        noise_percent=_number(raw, "noise_percent", source, where, optional=failed),
        elapsed_host_secs=_number(elapsed, "host", source, f"{where}.elapsed_secs", optional=True),
        elapsed_gpu_secs=gpu_secs,
        kernel_calls_per_batch=per_batch,
        ms_per_batch=_number(calls, "ms_per_batch", source, f"{where}.calls", optional=True),
        batch_count=_count(calls, "batches", source, f"{where}.calls", optional=True),
        kernel_calls=kernel_calls,
        gpu_temp_start=_number(temps, "start", source, f"{where}.gpu_temp_celsius", optional=True,
                               non_negative=False),
        gpu_temp_end=_number(temps, "end", source, f"{where}.gpu_temp_celsius", optional=True,
                             non_negative=False),
        batches=batches,
        error=error,
        rounds=rounds,
        gpu_seconds_per_call=per_call,
        time_per_call=time_per_call,
        timer=timer,
        raw=raw,
    )


_TIME_KEYS = ("mean", "median", "min", "q1", "q3")


def _time_per_call(raw: Mapping[str, Any], gpu_secs: float | None, kernel_calls: int | None,
                   calls_per_batch: int | None, batches: Batches | None, source: str,
                   where: str) -> tuple[float | None, TimePerCall | None]:
    """``gpu_seconds_per_call`` and ``time_per_call`` (results 4.4.0), the one place they are
    read. A file without them: the mean is GPU time over calls, the other statistics come from
    its ``batches`` where it holds them (with --output-batches), else they are None."""
    mean = _number(raw, "gpu_seconds_per_call", source, where, optional=True)
    stats = _get(raw, "time_per_call", dict, source, where, optional=True)
    if stats is not None:
        values = {k: _number(stats, k, source, f"{where}.time_per_call", optional=True) for k in _TIME_KEYS}
        return (mean if mean is not None else values["mean"]), TimePerCall(**values)
    if mean is None and gpu_secs is not None and kernel_calls:
        mean = gpu_secs / kernel_calls
    if mean is None:
        return None, None
    per_call = _batch_per_call_secs(batches, calls_per_batch) if batches else None
    if per_call:
        derived = time_per_call_stats(per_call)
        return mean, TimePerCall(mean, derived["median"], derived["min"], derived["q1"], derived["q3"])
    return mean, TimePerCall(mean)


def _batch_per_call_secs(batches: Batches, calls_per_batch: int | None) -> list[float] | None:
    """Each batch's GPU seconds per call (a batch without its own count has `calls_per_batch`)."""
    out = []
    for ms, calls in zip(batches.batch_ms, batches.kernel_calls, strict=True):
        n = calls if calls is not None else calls_per_batch
        if not n:
            return None
        out.append(ms / 1000.0 / n)
    return out


_ROUND_FLOATS = ("gpu_ms_per_call", "bytes_per_second", "items_per_second", "noise_percent")


def _fast_rounds(raw: list[Any]) -> tuple[Round, ...] | None:
    """The rounds of a well-formed list (finite non-negative floats, a boolean timeout, whole
    counts, no temperatures or clock: what the harness writes without monitoring), checked
    column by column in C; None sends anything else through `_round`, which names the field."""
    if not raw or set(map(type, raw)) != {dict}:
        return None
    if any("gpu_temp_celsius" in r or "sm_clock_mhz" in r for r in raw):
        return None
    columns = [list(map(dict.get, raw, repeat(key))) for key in _ROUND_FLOATS]
    if not all(_plain_floats(c) for c in columns):
        return None
    timeouts: list[Any] = list(map(dict.get, raw, repeat("noise_timeout")))
    batches: list[Any] = list(map(dict.get, raw, repeat("batches")))
    calls: list[Any] = list(map(dict.get, raw, repeat("kernel_calls")))
    if set(map(type, timeouts)) != {bool} or set(map(type, batches)) != {int} or set(map(type, calls)) != {int}:
        return None
    if min(batches) < 0 or min(calls) < 0 or max(calls) >= _EXACT_INT:
        return None
    return tuple(map(Round, *columns, timeouts, batches, calls))


def _round(raw: Any, source: str, where: str) -> Round:
    temps = _get(raw, "gpu_temp_celsius", dict, source, where, optional=True) or {}
    return Round(
        gpu_ms_per_call=_number(raw, "gpu_ms_per_call", source, where) or 0.0,
        bytes_per_second=_number(raw, "bytes_per_second", source, where) or 0.0,
        items_per_second=_number(raw, "items_per_second", source, where) or 0.0,
        noise_percent=_number(raw, "noise_percent", source, where) or 0.0,
        noise_timeout=bool(_get(raw, "noise_timeout", bool, source, where)),
        batch_count=_count(raw, "batches", source, where, optional=True),
        kernel_calls=_count(raw, "kernel_calls", source, where, optional=True),
        gpu_temp_start=_number(temps, "start", source, f"{where}.gpu_temp_celsius", optional=True,
                               non_negative=False),
        gpu_temp_end=_number(temps, "end", source, f"{where}.gpu_temp_celsius", optional=True,
                             non_negative=False),
        sm_clock_mhz=_number(raw, "sm_clock_mhz", source, where, optional=True),
    )


_NONE = type(None)


def _plain_floats(values: list[Any]) -> bool:
    """Whether every value is a finite, non-negative float as json.loads makes it (checked in C:
    a NaN or an infinity makes the sum non-finite; an overflowing sum only sends the list
    through the validating path, which accepts it)."""
    return set(map(type, values)) == {float} and min(values) >= 0.0 and math.isfinite(sum(values))


def _fast_columns(raw: list[Any]) -> Batches | None:
    """The batches of a well-formed list, validated column by column; None when anything is
    unusual (an absent or mistyped field, an integer time, a mix of null and values), which
    `_batches` then checks batch by batch to name the field."""
    if not raw or set(map(type, raw)) != {dict}:
        return None
    ms: list[Any] = list(map(dict.get, raw, repeat("batch_ms")))
    if not _plain_floats(ms):
        return None
    calls_col: list[Any] = list(map(dict.get, raw, repeat("kernel_calls")))
    kinds = set(map(type, calls_col))
    calls: list[Any] | None = None
    if kinds != {_NONE}:
        if kinds != {int} or min(calls_col) < 0 or max(calls_col) >= 2**63:
            return None
        calls = calls_col
    host_col: list[Any] = list(map(dict.get, raw, repeat("host_secs")))
    host: list[Any] | None = None
    if set(map(type, host_col)) != {_NONE}:
        if not _plain_floats(host_col):
            return None
        host = host_col
    iters_col: list[Any] = list(map(dict.get, raw, repeat("iterations_ms")))
    kinds = set(map(type, iters_col))
    iters: list[Any] | None = None
    if kinds != {_NONE}:
        if not (kinds == {list} and all(not v or _plain_floats(v) for v in iters_col)):
            return None
        iters = list(map(tuple, iters_col))
    return Batches(ms, calls, host, iters)


def _batches(raw: list[Any], source: str, where: str) -> Batches:
    # 10,000 specializations x 30 batches must load fast: no Batch object is built here.
    fast = _fast_columns(raw)
    if fast is not None:
        return fast
    return Batches.of(_batch(b, source, f"{where}[{j}]") for j, b in enumerate(raw))


def _batch(raw: Any, source: str, where: str) -> Batch:
    """One batch, validated field by field (the path of lists `_fast_columns` turned down)."""
    ms = _number(raw, "batch_ms", source, where)
    iters = _get(raw, "iterations_ms", list, source, where, optional=True)
    if iters is not None:
        for k, v in enumerate(iters):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v) or v < 0:
                raise ResultsFileError(source, f"{where}.iterations_ms[{k}]", "must be a finite, non-negative number")
        iters = tuple(float(v) for v in iters)
    return Batch(
        batch_ms=float(ms or 0.0),
        kernel_calls=_count(raw, "kernel_calls", source, where, optional=True),
        host_secs=_number(raw, "host_secs", source, where, optional=True),
        iterations_ms=iters,
    )


# --------------------------------------------------------------------------- writers


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The `q` quantile of sorted values, interpolated linearly (NumPy's default method)."""
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def time_per_call_stats(per_call_secs: Sequence[float]) -> dict[str, float]:
    """mean, median, min, q1 and q3 of per-call times (the mean unweighted: see
    `time_per_call_fields` for the one written)."""
    ordered = sorted(per_call_secs)
    return {
        "mean": math.fsum(ordered) / len(ordered),
        "median": _quantile(ordered, 0.5),
        "min": ordered[0],
        "q1": _quantile(ordered, 0.25),
        "q3": _quantile(ordered, 0.75),
    }


def time_per_call_fields(per_call_secs: Sequence[float], gpu_secs: float, calls: int) -> dict[str, Any]:
    """The fields results 4.4.0 adds to a measured specialization: ``gpu_seconds_per_call``
    (GPU time over calls, every call of every round) and ``time_per_call`` (that mean, then
    median, min and quartiles of the batches' per-call times, in seconds)."""
    if not per_call_secs or calls <= 0:
        return {"gpu_seconds_per_call": None, "time_per_call": None}
    mean = gpu_secs / calls
    return {"gpu_seconds_per_call": mean, "time_per_call": {**time_per_call_stats(per_call_secs), "mean": mean}}


def dumps(document: Mapping[str, Any], spaces_per_indent: int = 4) -> str:
    """results.json text: `spaces_per_indent` 0 gives one compact line."""
    indent = spaces_per_indent if spaces_per_indent > 0 else None
    separators = None if indent else (",", ":")
    return json.dumps(document, indent=indent, separators=separators, allow_nan=False,
                      ensure_ascii=False) + "\n"


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one, with the
    user's umask (an existing file keeps its mode), through a symlink to its target
    (`primbench.atomicfile`). ``/dev/null`` and pipes are written directly."""
    from primbench.atomicfile import write_atomic as write

    write(path, text)


def write_json(document: Mapping[str, Any], path: str | os.PathLike[str], spaces_per_indent: int = 4) -> None:
    """The one writer of results.json."""
    write_atomic(path, dumps(document, spaces_per_indent))


def _g(value: float) -> str:
    """C++ stream formatting of a double: 6 significant digits, as the C++ primbench's CSV shows."""
    return f"{value:g}"


def csv_text(specializations: Iterable[Mapping[str, Any]]) -> str:
    """The C++ primbench's CSV: index, quoted name, throughputs and noise; then (results
    4.4.0) the mean GPU seconds per call."""
    out = io.StringIO()
    out.write(",".join(CSV_HEADER) + "\n")
    for spec in specializations:
        if spec.get("error") is not None:
            continue
        bps = float(spec["bytes_per_second"])
        name = '"' + str(spec["name"]).replace('"', '""') + '"'
        row = [
            str(spec["index"]),
            name,
            _g(bps),
            _g(bps / 2**30),
            _g(float(spec["items_per_second"])),
            "1" if spec["noise_timeout"] else "0",
            _g(float(spec["noise_percent"])),
            _g(float(per_call)) if (per_call := spec.get("gpu_seconds_per_call")) is not None else "",
        ]
        out.write(",".join(row) + "\n")
    return out.getvalue()


def write_csv(specializations: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """The one writer of the CSV summary."""
    write_atomic(path, csv_text(specializations))
