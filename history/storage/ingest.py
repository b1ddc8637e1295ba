"""Ingest: results files into staged rows, and the one orchestration that every backend's
writer takes them through (`ingest_files`).

* Every file is read by the one loader, `primbench.results.load_results`; a file it rejects
  (or one whose date cannot be read) is named with its field and stores nothing.
* A run's identity is the SHA-256 of its canonical JSON (keys sorted, compact): the same run
  ingested twice, even re-indented or renamed, is stored once.
* Files are taken in chunks of a bounded size (`CHUNK_BYTES` of input): a chunk is parsed
  before the store is opened, so a writer holds the store only for the inserts, and dropped
  once written, so a batch of any size needs the memory of one chunk. A chunk's new runs go in
  one transaction; should that fail, each run is retried in a transaction of its own, so a file
  that cannot be stored is named and the others still are (each file stored whole or not at all).

A backend gives a `Writer` (`history.storage.contract.Store.writer`): it knows the stored
commits and run ids, renames short hashes, and writes `Rows` in one transaction. Nothing
else of ingest differs between a DuckDB file, a Parquet folder and a database server.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import hashlib
import json
import os
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from primbench.errors import UsageError
from primbench.formats import cpp_csv
from primbench.history.errors import HistoryError, HistoryWarning, one_line
from primbench.history.storage.schema import (
    BATCH_COLUMNS,
    COLUMNS,
    DATE_FLAG_KEY,
    EXTRA_LEFT_TO_DOCUMENT,
    JSON_COLUMNS,
    SCHEMA_VERSION,
    SPEC_COLUMNS,
    document_texts,
    has_documents_table,
)
from primbench.resultconfig import config_key
from primbench.results import Gpu, Results, ResultsFileError, Specialization, known, load_results
from primbench.signals import raise_received

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

_KNOWN_SPEC_KEYS = frozenset({
    "index", "name", "bytes_per_second", "items_per_second", "bytes_per_item", "items", "noise_timeout",
    "noise_percent", "meta", "elapsed_secs", "gpu_temp_celsius", "calls", "batches", "error", "sm_clock",
    "gpu_seconds_per_call", "dry",  # a column of its own; a dry run is never stored
})


#: The files a directory given to ingest is searched for (results.json of any format, CSVs).
RESULTS_PATTERNS = ("*.json", "*.csv")


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one input file."""

    path: str
    status: str  # "stored", "duplicate" (already in the store, or twice in this call) or "error"
    run_id: str | None = None
    specializations: int = 0
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "run_id": self.run_id,
                "specializations": self.specializations, "message": self.message}


@dataclass
class IngestReport:
    """The outcome of one ingest call, file by file."""

    target: str
    outcomes: list[FileOutcome] = field(default_factory=list)
    #: The runs stored with a date flag (`flag_dates`): each is warned of.
    date_flags: list[DateFlag] = field(default_factory=list)

    @property
    def stored(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "stored"]

    @property
    def duplicates(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "duplicate"]

    @property
    def errors(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "error"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "stored": len(self.stored),
            "duplicates": len(self.duplicates),
            "errors": len(self.errors),
            "files": [o.to_dict() for o in self.outcomes],
            "date_flags": [{"run_id": f.run_id, "path": f.path, "reason": f.reason} for f in self.date_flags],
        }


@dataclass(frozen=True)
class Overrides:
    """What ``history ingest --branch B --commit C`` says of every file of the call: its
    branch and commit, in place of what the file holds (a C++ file built in a detached
    checkout says ``DETACHED``; a CSV or an NVBench file says nothing). A run's identity is
    its file's, so a file ingested again with other overrides is still the run stored."""

    branch: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        for name in ("branch", "commit"):
            value = getattr(self, name)
            if value is not None and (not value.strip() or len(value) > 65536 or not value.isprintable()):
                raise UsageError(f"--{name} must be a non-empty line of text, got {value!r}")


_HEX = frozenset("0123456789abcdef")
#: The shortest abbreviation of a commit that is taken for it (git's default is 7).
MIN_SHORT_HASH = 7


def _is_hash(text: str) -> bool:
    return MIN_SHORT_HASH <= len(text) <= 64 and set(text.lower()) <= _HEX


def full_commit(commit: str | None, known: Iterable[str]) -> str | None:
    """`commit` as the one longer hash among `known` that it abbreviates (``3f2a9c1`` is
    ``3f2a9c1e…``, case aside), else `commit` itself: a short and the full hash of one commit
    are one commit in every series."""
    if commit is None or not _is_hash(commit):
        return commit
    short = commit.lower()
    longer = {k for k in known if k and len(k) > len(short) and _is_hash(k) and k.lower().startswith(short)}
    return longer.pop() if len(longer) == 1 else commit


# --------------------------------------------------------------------------- inputs


def escaped(text: str) -> str:
    """`text` (a path or a message naming one) as stored and shown: the bytes of a file name
    that is not UTF-8 (held by Python as surrogate escapes, ``os.fsdecode``) as ``\\xff``
    escapes, so every backend stores it and every terminal prints it."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no file name holds
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def unreadable_entries(directory: Path) -> list[FileOutcome]:
    """What a search of `directory` cannot see, each as an error outcome: a folder that cannot
    be listed (a locked one, mode 000), a symbolic link that leads nowhere (dangling, or a
    loop), and a results file that cannot be opened. Hidden
    folders are skipped, as the search skips them."""
    found: list[FileOutcome] = []

    def listing_failed(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else directory
        found.append(FileOutcome(escaped(os.fsdecode(where)), "error",
                                 message=f"unreadable directory entry skipped: cannot list it "
                                         f"({exc.strerror or type(exc).__name__})"))

    for root, dirs, names in os.walk(directory, onerror=listing_failed):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            entry = Path(root) / name
            try:
                info = entry.stat()
            except OSError as exc:
                why = ("a symbolic link that leads nowhere" if entry.is_symlink() else "cannot stat it")
                found.append(FileOutcome(escaped(str(entry)), "error",
                                         message=f"unreadable directory entry skipped: {why} "
                                                 f"({exc.strerror or type(exc).__name__})"))
                continue
            wanted = any(fnmatch.fnmatch(name, pattern) for pattern in RESULTS_PATTERNS)
            if wanted and stat.S_ISREG(info.st_mode) and not os.access(entry, os.R_OK):
                found.append(FileOutcome(escaped(str(entry)), "error",
                                         message="unreadable directory entry skipped: permission denied"))
    return found


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[FileOutcome]]:
    """Files as given, and the ``*.json`` files under each directory and the results CSVs
    without a results.json beside them (`primbench.formats.cpp_csv.in_directory`; recursively,
    sorted, skipping hidden directories); a path that does not exist is an error outcome, and
    so is every entry of a directory that cannot be read (`unreadable_entries`)."""
    files: list[Path] = []
    errors: list[FileOutcome] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            bad = unreadable_entries(p)
            unreadable = {o.path for o in bad}
            found = sorted(
                f for pattern in RESULTS_PATTERNS for f in p.rglob(pattern)
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts[:-1])
                and (f.suffix != ".csv" or cpp_csv.in_directory(f)) and escaped(str(f)) not in unreadable
            )
            errors.extend(bad)
            if not found and not bad:
                errors.append(FileOutcome(escaped(str(p)), "error",
                                          message="directory holds no .json results files and no results CSV"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            errors.append(FileOutcome(escaped(str(p)), "error", message="no such file or directory"))
    return files, errors


# --------------------------------------------------------------------------- rows


def document_of(results: Results) -> dict[str, Any]:
    """The document as its file holds it (a file of an older version before its upgrade):
    what a run's identity and the stored document are made of."""
    return results.as_written()


def canonical_json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def run_id_of(canonical: str) -> str:
    """A run's identity: the first 32 hex digits of the SHA-256 of its canonical JSON."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def parse_date(results: Results) -> tuple[_dt.datetime, str]:
    """``context.general.date`` as a UTC instant (no offset: taken as UTC), and as written."""
    text = results.general.date
    if not text:
        raise ResultsFileError(results.source, "context.general.date",
                               "missing: history orders runs by date (ISO 8601 with offset)")
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise ResultsFileError(results.source, "context.general.date",
                               f"not an ISO 8601 date: {text!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    try:
        return when.astimezone(_dt.UTC), text
    except (OverflowError, ValueError):
        raise ResultsFileError(results.source, "context.general.date",
                               f"{text!r} lies outside the dates that can be stored") from None


def _json(value: Any) -> str | None:
    """A value (a record of the model as its JSON object) as compact JSON text."""
    if value is None:
        return None
    return json.dumps(msgspec.to_builtins(value), separators=(",", ":"), ensure_ascii=False)


def gpu_key(gpu: Gpu) -> str:
    """What tells physical GPUs apart: NVML/AMD SMI UUID, else serial, else name and PCI bus id."""
    for value in (gpu.uuid, gpu.serial):
        if value not in (None, ""):
            return str(value)
    name = str(gpu.name or "unknown GPU")
    return f"{name}@{gpu.pci_bus_id}" if gpu.pci_bus_id else name


def _extra(spec: Specialization) -> dict[str, Any] | None:
    """The fields of a specialization that the table has no column for (the spread between
    rounds, the time per call's statistics, a host timer; not the rounds, which stay in the
    document alone: `schema.EXTRA_LEFT_TO_DOCUMENT`), by their results.json names
    (`_json` writes them); None when it has none."""
    out = {}
    for name, encode_name, default in _extra_fields(type(spec)):
        value = getattr(spec, name)
        if (value is not None and value is not msgspec.UNSET and value != ()
                and not (default is not msgspec.NODEFAULT and value == default)):
            out[encode_name] = value
    return out or None


@functools.cache
def _extra_fields(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """(attribute, results.json name, default) of the fields of `cls` without a column: read
    once per class (msgspec evaluates the annotations on every call)."""
    return tuple((f.name, f.encode_name, f.default) for f in msgspec.structs.fields(cls)
                 if f.encode_name not in _KNOWN_SPEC_KEYS and f.encode_name not in EXTRA_LEFT_TO_DOCUMENT)


class Rows:
    """Rows for the three tables, column by column, in `history.storage.schema.COLUMNS` order
    (what a `Writer` writes). JSON columns hold JSON text, ``batches.iterations_ms`` too."""

    def __init__(self, columns: Mapping[str, Mapping[str, list[Any]]]) -> None:
        self.columns = {table: {c: list(columns[table][c]) for c in COLUMNS[table]} for table in COLUMNS}

    @property
    def run_ids(self) -> list[str]:
        return list(self.columns["runs"]["run_id"])

    def count(self, table: str) -> int:
        return len(self.columns[table]["run_id"])

    def frame(self, table: str) -> pd.DataFrame:
        """One table's rows as a DataFrame (what DuckDB inserts from)."""
        import pandas as pd

        return pd.DataFrame(self.columns[table], columns=list(COLUMNS[table]))

    def records(self, table: str) -> Iterable[tuple[Any, ...]]:
        """One table's rows as tuples, in its columns' order (Python values, None for NULL)."""
        return zip(*(self.columns[table][c] for c in COLUMNS[table]), strict=True)


class Staged:
    """Rows for the three tables, column by column (fast to turn into DataFrames)."""

    def __init__(self) -> None:
        self.columns: dict[str, dict[str, list[Any]]] = {
            table: {c: [] for c in cols} for table, cols in COLUMNS.items()
        }
        self.run_ids: list[str] = []

    def add(self, results: Results, path: str, ingested_at: _dt.datetime, canonical: str | None = None,
            overrides: Overrides = Overrides()) -> str:
        """Stage one loaded file (its canonical JSON if already made; its branch and commit as
        `overrides` say, where they say); return its run id."""
        if canonical is None:
            canonical = canonical_json(document_of(results))
        run_id = run_id_of(canonical)
        when, date_text = parse_date(results)
        general = results.general
        gpu = results.gpu
        backend = general.backend
        ok = [s for s in results.specializations if not s.failed and s.skipped is None]
        run = self.columns["runs"]
        values: dict[str, Any] = {
            "run_id": run_id,
            "algorithm": results.algorithm,
            "branch": overrides.branch if overrides.branch is not None else general.branch_name,
            "commit": overrides.commit if overrides.commit is not None else general.commit_hash,
            "date": when,
            "date_text": date_text,
            "branch_source": "ingest --branch" if overrides.branch is not None else general.branch_source,
            "commit_source": "ingest --commit" if overrides.commit is not None else general.commit_source,
            "host": general.host_name,
            "gpu_key": gpu_key(gpu),
            "gpu_name": gpu.name,
            "gpu_uuid": gpu.uuid,
            "gpu_serial": gpu.serial,
            "gpu_pci_bus_id": gpu.pci_bus_id,
            "gpu_arch": gpu.arch,
            "backend": known(backend.name) if backend is not None else None,
            "results_version": results.version,
            "primbench_version": general.primbench_version,
            "python_version": general.python_version,
            "general": _json(general),
            "settings": _json(results.settings),
            "flags": _json(results.context.flags),
            "custom_settings": _json(results.context.custom_settings),
            "specialization_count": len(results.specializations),
            "failures": sum(1 for s in results.specializations if s.failed),
            "noise_timeouts": sum(1 for s in ok if s.noise_timeout),
            "document": canonical,
            "source_path": path,
            "ingested_at": ingested_at,
            "store_schema": SCHEMA_VERSION,
            "config_key": config_key(results),
        }
        for key, value in values.items():
            run[key].append(value)
        spec_cols = self.columns["specializations"]
        batch_cols = self.columns["batches"]
        _check_indexes(results)
        for s in results.specializations:
            if s.skipped is not None:  # skipped by its benchmark: nothing measured, no point of a series
                continue
            clock = s.sm_clock
            extra = _extra(s)
            row: tuple[Any, ...] = (
                run_id, s.index, s.name, s.algorithm or results.algorithm, _json(s.meta), s.bytes_per_second,
                s.items_per_second, s.bytes_per_item, s.items, s.noise_percent,
                None if s.failed and s.noise_percent is None else s.noise_timeout,
                s.elapsed_host_secs, s.elapsed_gpu_secs, s.kernel_calls_per_batch, s.ms_per_batch, s.batch_count,
                s.kernel_calls, s.gpu_temp_start, s.gpu_temp_end,
                clock.average_mhz if clock else None,
                clock.fraction_of_default if clock else None,
                clock.below_expected if clock else None,
                _json(clock), s.error, _json(extra), s.gpu_seconds_per_call or None,
            )
            for key, cell in zip(SPEC_COLUMNS, row, strict=True):
                spec_cols[key].append(cell)
            for j, b in enumerate(s.batches or ()):
                for key, value in zip(
                    BATCH_COLUMNS,
                    (run_id, s.index, j, b.batch_ms, b.kernel_calls, b.host_secs,
                     None if b.iterations_ms is None else json.dumps(list(b.iterations_ms))),
                    strict=True,
                ):
                    batch_cols[key].append(value)
        self.run_ids.append(run_id)
        return run_id

    def unify_commits(self, stored: Iterable[str] = ()) -> None:
        """Each staged short hash as the full hash it abbreviates, among the staged runs and
        the `stored` commits (`full_commit`)."""
        commits = self.columns["runs"]["commit"]
        known = {c for c in commits if c} | set(stored)
        commits[:] = [full_commit(c, known) for c in commits]

    def rows(self, keep: Iterable[str] | None = None) -> Rows:
        """The staged rows, optionally only those of the runs in `keep`."""
        wanted = None if keep is None else set(keep)
        if wanted is None or wanted >= set(self.run_ids):
            return Rows(self.columns)
        out: dict[str, dict[str, list[Any]]] = {}
        for table, cols in self.columns.items():
            chosen = [i for i, r in enumerate(cols["run_id"]) if r in wanted]
            out[table] = {c: [values[i] for i in chosen] for c, values in cols.items()}
        return Rows(out)


def _check_indexes(results: Results) -> None:
    """The store keys batches by the specialization's index, and a run's specializations by
    their names: two specializations of one run may share neither (schema 7's specializations
    have no primary-key index to refuse a second row: this is what refuses it)."""
    seen: dict[int, int] = {}
    names: dict[str, int] = {}
    for i, s in enumerate(results.specializations):
        if s.index in seen:
            raise ResultsFileError(results.source, f"specializations[{i}].index",
                                   f"duplicate index {s.index} (also specializations[{seen[s.index]}]); the history "
                                   "keys each specialization's batches by its index")
        if s.skipped is None and s.name in names:
            raise ResultsFileError(results.source, f"specializations[{i}].name",
                                   f"duplicate name {s.name!r} (also specializations[{names[s.name]}]); the history "
                                   "keeps one specialization of a name per run")
        seen[s.index] = i
        if s.skipped is None:
            names[s.name] = i


# --------------------------------------------------------------------------- ingest


#: Called with (files done, files in all) while files are read: a progress bar's update.
Progress = Callable[[int, int], None]


def stage_files(paths: Iterable[str | os.PathLike[str]], progress: Progress | None = None,
                overrides: Overrides = Overrides()) -> tuple[Staged, list[FileOutcome], dict[str, str]]:
    """Load and stage every file (no store needed). Returns the staged rows, an outcome per
    input (errors and in-call duplicates final; staged files provisionally "stored"), and
    run id -> path of the staged runs. `progress` is told of every file read."""
    files, outcomes = expand_paths(paths)
    staged, staged_outcomes, seen = stage_chunk(files, {}, _dt.datetime.now(_dt.UTC), overrides, progress, 0,
                                                len(files))
    if progress is not None:
        progress(len(files), len(files))
    return staged, outcomes + staged_outcomes, seen


def stage_chunk(files: Sequence[Path], seen: dict[str, str], now: _dt.datetime, overrides: Overrides,
                progress: Progress | None = None, done: int = 0, total: int = 0,
                ) -> tuple[Staged, list[FileOutcome], dict[str, str]]:
    """Load and stage `files` (a chunk of an ingest call): `seen` (run id -> path, updated
    here) holds the runs staged by the call's earlier chunks, so a run seen before is a
    duplicate. Returns the staged rows, an outcome per file, and run id -> path of the runs
    staged by this chunk; `progress` is told (done + i, total) before file i."""
    staged = Staged()
    outcomes: list[FileOutcome] = []
    mine: dict[str, str] = {}
    for i, f in enumerate(files):
        if progress is not None:
            progress(done + i, total)
        path = escaped(str(f))
        try:
            results = load_results(f)
            if known(results.settings.dry) is True or any(s.dry for s in results.specializations):
                raise ResultsFileError(path, "context.settings.dry",
                                       "a dry run (--dry): nothing was measured, its zeros are not stored")
            # a --devices run (results 4.8.0) is one run per physical GPU: its series key is that GPU's
            for part in results.per_gpu():
                canonical = canonical_json(document_of(part))
                run_id = run_id_of(canonical)
                count = len(part.specializations)
                if run_id in seen:
                    outcomes.append(FileOutcome(path, "duplicate", run_id, count, f"same run as {seen[run_id]}"))
                    continue
                staged.add(part, path, now, canonical, overrides)
                seen[run_id] = path
                mine[run_id] = path
                outcomes.append(FileOutcome(path, "stored", run_id, count))
            del results
        except ResultsFileError as exc:
            outcomes.append(FileOutcome(path, "error", message=escaped(str(exc))))
            continue
        except Exception as exc:  # one bad file never stops the others (e.g. a value json cannot write back)
            raise_received()  # but a signal a library turned into its own error does
            outcomes.append(FileOutcome(path, "error",
                                        message=escaped(f"{path}: cannot be stored ({one_line(exc)})")))
            continue
    return staged, outcomes, mine


#: How many bytes of input files one chunk of an ingest call holds at most (`ingest_files`):
#: a chunk is staged, written in one transaction and dropped before the next is read, so a
#: batch ingest's memory is bounded by a chunk's, not the batch's (a file larger than this is
#: a chunk of its own).
CHUNK_BYTES = 24 * 1024 * 1024


def chunks(files: Sequence[Path], limit: int = CHUNK_BYTES) -> Iterator[list[Path]]:
    """`files` in order, in runs of at most `limit` bytes (by their size on disk; at least one
    file each)."""
    chunk: list[Path] = []
    size = 0
    for f in files:
        try:
            n = f.stat().st_size
        except OSError:
            n = 0
        if chunk and size + n > limit:
            yield chunk
            chunk, size = [], 0
        chunk.append(f)
        size += n
    if chunk:
        yield chunk


class Writer(Protocol):
    """What a backend does for ingest and merge (`Store.writer` gives one, for one call):
    read what is stored, and write rows, each `write` in one transaction."""

    def commits(self) -> set[str]:
        """The distinct commit hashes of the stored runs."""
        ...

    def present(self, run_ids: Sequence[str]) -> set[str]:
        """Those of `run_ids` that are stored."""
        ...

    def rename_commits(self, renames: Mapping[str, str]) -> None:
        """Store each old commit hash as its new one (a short hash as the full one), in one
        transaction; a backend that never rewrites (Parquet parts) does nothing."""
        ...

    def newest_dates(self, branches: Sequence[str]) -> dict[str, _dt.datetime]:
        """For each of `branches` with stored runs, the date of its newest stored run among
        those not dated later than their own ingest (`DATE_TOLERANCE`: a clock that ran ahead
        does not make every later run look early)."""
        ...

    def write(self, rows: Rows) -> set[str]:
        """Write the rows in one transaction: all of them, or (on an error, raised after the
        rollback) none. Returns the run ids written; a run another writer stored meanwhile is
        left out, with its rows (so a run is stored once, whole)."""
        ...


def short_hash_renames(stored: Iterable[str], staged: Staged) -> dict[str, str]:
    """Stored short hashes that a staged full hash completes: old -> full."""
    new = {c for c in staged.columns["runs"]["commit"] if c}
    return {old: full for old in stored if (full := full_commit(old, new)) is not None and full != old}


def write_atomically(writer: Writer, staged: Staged, new: Sequence[str]) -> tuple[set[str], dict[str, str]]:
    """All new runs in one transaction; should that fail, one transaction per run. Returns the
    run ids written and run id -> the database's reason for each run that was not."""
    try:
        return writer.write(staged.rows(new)), {}
    except Exception:  # the backend rolled back; find which run it was, one by one
        raise_received()  # interrupted (a DuckDB InterruptException): no retries
    written: set[str] = set()
    failed: dict[str, str] = {}
    for run_id in new:
        try:
            written |= writer.write(staged.rows([run_id]))
        except Exception as exc:  # the first error of this run's own transaction: the real cause
            raise_received()
            failed[run_id] = one_line(exc)
    return written, failed


#: How far past its ingest a run's date may lie before it is flagged (clocks drift; a run is
#: ingested after it ends, so a run dated later than that comes from a clock that is wrong).
DATE_TOLERANCE = _dt.timedelta(minutes=5)


@dataclass(frozen=True)
class DateFlag:
    """A staged run whose date a runner's clock got wrong, and why."""

    run_id: str
    path: str
    reason: str


def flag_dates(staged: Staged, newest: Mapping[str, _dt.datetime], keep: Iterable[str]) -> list[DateFlag]:
    """Flag each staged run of `keep` dated later than its ingest (beyond `DATE_TOLERANCE`) or
    earlier than the newest run already stored on its branch (`newest`, by branch): the reason
    goes into its stored ``general`` (under `DATE_FLAG_KEY`), and is returned for the warning.
    The order of runs is not touched: this is a flag, never a correction."""
    wanted = set(keep)
    runs = staged.columns["runs"]
    flags = []
    for i, run_id in enumerate(runs["run_id"]):
        if run_id not in wanted:
            continue
        when, ingested, branch = runs["date"][i], runs["ingested_at"][i], runs["branch"][i]
        reasons = []
        if when > ingested + DATE_TOLERANCE:
            reasons.append(f"dated {runs['date_text'][i]}, later than its ingest at "
                           f"{ingested.astimezone(_dt.UTC).isoformat(timespec='seconds')}")
        stored = newest.get(branch) if branch is not None else None
        if stored is not None and when < stored:
            reasons.append(f"dated {runs['date_text'][i]}, earlier than the newest run already stored on branch "
                           f"{branch!r} ({stored.astimezone(_dt.UTC).isoformat(timespec='seconds')})")
        if not reasons:
            continue
        reason = "; ".join(reasons)
        general = json.loads(runs["general"][i]) if runs["general"][i] else {}
        if isinstance(general, dict):
            general[DATE_FLAG_KEY] = reason
            runs["general"][i] = json.dumps(general, ensure_ascii=False, separators=(",", ":"))
        flags.append(DateFlag(run_id, runs["source_path"][i], reason))
    return flags


def ingest_files(writer: Callable[[], AbstractContextManager[Writer]], target: str,
                 paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
                 overrides: Overrides = Overrides(), chunk_bytes: int = CHUNK_BYTES) -> IngestReport:
    """Store the results files (and the results files under directories) through a backend's
    writer; `target` names the store in the report.

    The files are taken in chunks of at most `chunk_bytes` of input (`chunks`): each chunk is
    read and staged before the writer is opened, written (`write_atomically`: one transaction,
    else one per run, so each file is stored whole or not at all) and dropped before the next
    chunk is read; memory stays that of one chunk however many files a call takes. One commit
    is one commit however it is spelt: a short hash becomes the full hash it abbreviates, and
    stored runs under a short hash get the full one when it arrives (where the backend
    rewrites: `Writer.rename_commits`; a Parquet folder does not, so there a short hash of an
    earlier chunk stays as written, as it would from an earlier call). A run's date is flagged
    against the branch's newest run stored before this call (`flag_dates`), whichever chunk it is in."""
    files, errors = expand_paths(paths)
    report = IngestReport(target)
    outcomes: list[FileOutcome] = list(errors)
    seen: dict[str, str] = {}
    before: dict[str, _dt.datetime | None] = {}  # branch -> its newest stored run before this call
    now = _dt.datetime.now(_dt.UTC)
    done = 0
    for chunk in chunks(files, chunk_bytes):
        staged, chunk_outcomes, by_id = stage_chunk(chunk, seen, now, overrides, progress, done, len(files))
        done += len(chunk)
        if not by_id:
            outcomes.extend(chunk_outcomes)
            continue
        flags: list[DateFlag] = []
        with writer() as w:
            stored = w.commits()
            staged.unify_commits(stored)
            renames = short_hash_renames(stored, staged)
            if renames:
                w.rename_commits(renames)
            present = w.present(list(by_id))
            new = [r for r in by_id if r not in present]
            if new:
                branches = sorted({b for b in staged.columns["runs"]["branch"] if b is not None} - set(before))
                if branches:
                    newest = w.newest_dates(branches)
                    before.update({b: newest.get(b) for b in branches})
                known_dates = {b: d for b, d in before.items() if d is not None}
                flags = flag_dates(staged, known_dates, new)
            written, failed = write_atomically(w, staged, new) if new else (set(), {})
        report.date_flags.extend(f for f in flags if f.run_id in written)
        raced = set(new) - written - set(failed)  # stored by another writer between `present` and `write`
        outcomes.extend(final_outcome(o, present | raced, failed) for o in chunk_outcomes)
        del staged
    if progress is not None:
        progress(len(files), len(files))
    for flag in report.date_flags:
        warnings.warn(HistoryWarning(f"{flag.path}: run {flag.run_id[:10]} stored with its date flagged: "
                                     f"{flag.reason}"), stacklevel=2)
    report.outcomes = outcomes
    return report


@dataclass(frozen=True)
class MergeReport:
    """What a merge added: the runs of `source` that `target` lacked."""

    source: str
    target: str
    added_runs: int

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "added_runs": self.added_runs}


def rows_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> Rows:
    """The stored rows of `run_ids` on a DuckDB connection holding the store's tables, as a
    writer takes them (JSON columns and ``iterations_ms`` as JSON text)."""
    columns: dict[str, dict[str, list[Any]]] = {}
    apart = has_documents_table(con)  # a DuckDB file keeps them in their own table
    for table, cols in COLUMNS.items():
        select = ", ".join("NULL" if apart and c == "document"
                           else "CAST(CAST(iterations_ms AS JSON) AS VARCHAR)" if c == "iterations_ms"
                           else f'CAST("{c}" AS VARCHAR)' if c in JSON_COLUMNS else f'"{c}"' for c in cols)
        fetched = con.execute(f"SELECT {select} FROM {table} WHERE list_contains(?, run_id)",
                              [list(run_ids)]).fetchall()
        columns[table] = {c: [row[i] for row in fetched] for i, c in enumerate(cols)}
    if apart:
        texts = document_texts(con, run_ids)
        columns["runs"]["document"] = [texts.get(r) for r in columns["runs"]["run_id"]]
    return Rows(columns)


def merge_from(con: duckdb.DuckDBPyConnection, writer: Callable[[], AbstractContextManager[Writer]],
               source: str, target: str) -> MergeReport:
    """Write the runs of the store open on `con` that the writer's store lacks, in one
    transaction; a run another writer stores meanwhile is not counted."""
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    added: set[str] = set()
    with writer() as w:
        present = w.present(ids) if ids else set()
        new = [r for r in ids if r not in present]
        if new:
            try:
                added = w.write(rows_of(con, new))
            except Exception as exc:
                raise HistoryError(f"{target}: cannot merge {source} ({one_line(exc)})") from None
    return MergeReport(source, target, len(added))


def final_outcome(outcome: FileOutcome, present: set[str], failed: Mapping[str, str]) -> FileOutcome:
    """A staged file's outcome once the writer is done: stored, a duplicate, or an error."""
    if outcome.status != "stored" or outcome.run_id is None:
        return outcome
    if outcome.run_id in present:
        return FileOutcome(outcome.path, "duplicate", outcome.run_id, outcome.specializations,
                           "already in the store")
    if outcome.run_id in failed:
        return FileOutcome(outcome.path, "error", outcome.run_id, 0,
                           f"{outcome.path}: not stored: {failed[outcome.run_id]}")
    return outcome
