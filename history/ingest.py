"""Ingest results files into the history store.

* Every file is read by the one loader, `primbench.results.load_results`; a file it rejects
  (or one whose date cannot be read) is named with its field and stores nothing.
* A run's identity is the SHA-256 of its canonical JSON (keys sorted, compact): the same run
  ingested twice, even re-indented or renamed, is stored once.
* All files are parsed before the store is opened, so the write lock is held only for the
  inserts. The new runs go in one transaction; should that fail, each file is retried in a
  transaction of its own, so a file that cannot be stored is named and the others still are.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from primbench.errors import UsageError
from primbench.formats import cpp_csv
from primbench.history.schema import SCHEMA_VERSION, one_line, rollback
from primbench.history.store import open_for_write, resolve_db
from primbench.resultconfig import config_key
from primbench.results import Gpu, Results, ResultsFileError, Specialization, known, load_results

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

RUN_COLUMNS = (
    "run_id", "algorithm", "branch", "commit", "date", "date_text", "branch_source", "commit_source", "host",
    "gpu_key", "gpu_name", "gpu_uuid", "gpu_serial", "gpu_pci_bus_id", "gpu_arch", "backend", "results_version",
    "primbench_version", "python_version", "general", "settings", "flags", "custom_settings",
    "specialization_count", "failures", "noise_timeouts", "document", "source_path", "ingested_at", "store_schema",
    "config_key",
)
SPEC_COLUMNS = (
    "run_id", "idx", "name", "algorithm", "meta", "bytes_per_second", "items_per_second", "bytes_per_item", "items",
    "noise_percent", "noise_timeout", "elapsed_host_secs", "elapsed_gpu_secs", "kernel_calls_per_batch",
    "ms_per_batch", "batch_count", "kernel_calls", "gpu_temp_start", "gpu_temp_end", "sm_clock_mhz",
    "sm_clock_fraction", "sm_clock_below_expected", "sm_clock", "error", "extra", "gpu_seconds_per_call",
)
BATCH_COLUMNS = ("run_id", "idx", "batch", "batch_ms", "kernel_calls", "host_secs", "iterations_ms")
COLUMNS = {"runs": RUN_COLUMNS, "specializations": SPEC_COLUMNS, "batches": BATCH_COLUMNS}

# Columns staged as JSON text that need an explicit cast (the rest cast implicitly).
_CASTS = {"iterations_ms": "CAST(CAST(iterations_ms AS JSON) AS DOUBLE[])"}

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


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[FileOutcome]]:
    """Files as given, and the ``*.json`` files under each directory and the results CSVs
    without a results.json beside them (`primbench.formats.cpp_csv.in_directory`; recursively,
    sorted, skipping hidden directories); a path that does not exist is an error outcome."""
    files: list[Path] = []
    errors: list[FileOutcome] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                f for pattern in RESULTS_PATTERNS for f in p.rglob(pattern)
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts[:-1])
                and (f.suffix != ".csv" or cpp_csv.in_directory(f))
            )
            if not found:
                errors.append(FileOutcome(str(p), "error",
                                          message="directory holds no .json results files and no results CSV"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            errors.append(FileOutcome(str(p), "error", message="no such file or directory"))
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
    """The fields of a specialization that the table has no column for (rounds, the spread
    between them, the time per call's statistics, a host timer), by their results.json names
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
                 if f.encode_name not in _KNOWN_SPEC_KEYS)


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

    def frames(self, keep: set[str] | None = None) -> dict[str, pd.DataFrame]:
        """One DataFrame per table, optionally only for the runs in `keep`."""
        import pandas as pd

        out = {}
        for table, cols in self.columns.items():
            df = pd.DataFrame(cols, columns=list(COLUMNS[table]))
            if keep is not None:
                df = df[df["run_id"].isin(keep)]
            out[table] = df
        return out


def _check_indexes(results: Results) -> None:
    """The store keys batches by the specialization's index: two specializations of one run
    may not share one."""
    seen: dict[int, int] = {}
    for i, s in enumerate(results.specializations):
        if s.index in seen:
            raise ResultsFileError(results.source, f"specializations[{i}].index",
                                   f"duplicate index {s.index} (also specializations[{seen[s.index]}]); the history "
                                   "keys each specialization's batches by its index")
        seen[s.index] = i


def insert_frames(con: duckdb.DuckDBPyConnection, frames: Mapping[str, pd.DataFrame]) -> None:
    """Insert staged rows (inside the caller's transaction). Table names are constants."""
    for table, df in frames.items():
        if df.empty:
            continue
        select = ", ".join(_CASTS.get(c, f'"{c}"') + (f' AS "{c}"' if c in _CASTS else "") for c in COLUMNS[table])
        con.register("_primbench_stage", df)
        try:
            con.execute(f"INSERT INTO {table} BY NAME SELECT {select} FROM _primbench_stage")
        finally:
            # in a transaction the INSERT aborted, unregistering fails too ("Current transaction is
            # aborted"): that error must not replace the INSERT's, which names the real cause
            with contextlib.suppress(Exception):
                con.unregister("_primbench_stage")


def existing_run_ids(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> set[str]:
    if not run_ids:
        return set()
    rows = con.execute("SELECT run_id FROM runs WHERE list_contains(?, run_id)", [list(run_ids)]).fetchall()
    return {r[0] for r in rows}


# --------------------------------------------------------------------------- ingest


#: Called with (files done, files in all) while files are read: a progress bar's update.
Progress = Callable[[int, int], None]


def stage_files(paths: Iterable[str | os.PathLike[str]], progress: Progress | None = None,
                overrides: Overrides = Overrides()) -> tuple[Staged, list[FileOutcome], dict[str, str]]:
    """Load and stage every file (no store needed). Returns the staged rows, an outcome per
    input (errors and in-call duplicates final; staged files provisionally "stored"), and
    run id -> path of the staged runs. `progress` is told of every file read."""
    files, outcomes = expand_paths(paths)
    staged = Staged()
    seen: dict[str, str] = {}
    now = _dt.datetime.now(_dt.UTC)
    for done, f in enumerate(files):
        if progress is not None:
            progress(done, len(files))
        path = str(f)
        try:
            results = load_results(f)
            if known(results.settings.dry) is True or any(s.dry for s in results.specializations):
                raise ResultsFileError(path, "context.settings.dry",
                                       "a dry run (--dry): nothing was measured, its zeros are not stored")
            canonical = canonical_json(document_of(results))
            run_id = run_id_of(canonical)
            count = len(results.specializations)
            if run_id in seen:
                outcomes.append(FileOutcome(path, "duplicate", run_id, count, f"same run as {seen[run_id]}"))
                continue
            staged.add(results, path, now, canonical, overrides)
        except ResultsFileError as exc:
            outcomes.append(FileOutcome(path, "error", message=str(exc)))
            continue
        except Exception as exc:  # one bad file never stops the others (e.g. a value json cannot write back)
            outcomes.append(FileOutcome(path, "error", message=f"{path}: cannot be stored ({one_line(exc)})"))
            continue
        seen[run_id] = path
        outcomes.append(FileOutcome(path, "stored", run_id, count))
    if progress is not None:
        progress(len(files), len(files))
    return staged, outcomes, seen


def ingest(paths: Iterable[str | os.PathLike[str]], db: str | os.PathLike[str] | None = None, *,
           wait_secs: float | None = None, progress: Progress | None = None,
           overrides: Overrides = Overrides()) -> IngestReport:
    """Store the results files (and the results files under directories) in the DuckDB store;
    `progress` is told of every file read. One commit is one commit however it is spelt: a
    short hash becomes the full hash it abbreviates, and runs stored under a short hash get
    the full one when it arrives (`unify_commits`)."""
    target = resolve_db(db)
    staged, outcomes, by_id = stage_files(paths, progress, overrides)
    report = IngestReport(str(target))
    if not by_id:
        report.outcomes = outcomes
        return report
    with open_for_write(target, wait_secs=wait_secs) as con:
        unify_commits(con, staged)
        present = existing_run_ids(con, list(by_id))
        new = [r for r in by_id if r not in present]
        failed: dict[str, str] = {}
        if new:
            failed = _insert_atomically(con, staged, new)
    report.outcomes = [_final(o, present, failed) for o in outcomes]
    return report


def stored_commits(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The distinct commit hashes of the stored runs."""
    return [r[0] for r in con.execute('SELECT DISTINCT "commit" FROM runs WHERE "commit" IS NOT NULL').fetchall()]


def unify_commits(con: duckdb.DuckDBPyConnection, staged: Staged) -> None:
    """Short hashes as full ones: the staged runs' against the store's (`Staged.unify_commits`),
    and the stored runs' short hashes that a staged full hash completes (in one transaction)."""
    stored = stored_commits(con)
    staged.unify_commits(stored)
    new = {c for c in staged.columns["runs"]["commit"] if c}
    renames = {old: full for old in stored if (full := full_commit(old, new)) != old}
    if not renames:
        return
    try:
        con.execute("BEGIN TRANSACTION")
        for old, full in renames.items():
            con.execute('UPDATE runs SET "commit" = ? WHERE "commit" = ?', [full, old])
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise


def _insert_atomically(con: duckdb.DuckDBPyConnection, staged: Staged, new: list[str]) -> dict[str, str]:
    """All new runs in one transaction; on failure, one transaction per run. Returns run id -> error."""
    try:
        con.execute("BEGIN TRANSACTION")
        insert_frames(con, staged.frames(set(new)))
        con.execute("COMMIT")
        return {}
    except Exception:
        rollback(con)
    failed = {}
    for run_id in new:
        try:
            con.execute("BEGIN TRANSACTION")
            insert_frames(con, staged.frames({run_id}))
            con.execute("COMMIT")
        except Exception as exc:  # the first error of this run's own transaction: the real cause
            rollback(con)
            failed[run_id] = one_line(exc)
    return failed


def _final(outcome: FileOutcome, present: set[str], failed: Mapping[str, str]) -> FileOutcome:
    if outcome.status != "stored" or outcome.run_id is None:
        return outcome
    if outcome.run_id in present:
        return FileOutcome(outcome.path, "duplicate", outcome.run_id, outcome.specializations,
                           "already in the store")
    if outcome.run_id in failed:
        return FileOutcome(outcome.path, "error", outcome.run_id, 0,
                           f"{outcome.path}: not stored: {failed[outcome.run_id]}")
    return outcome
