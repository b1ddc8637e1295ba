"""The history's schema: its tables and their columns (every backend stores these), and the
DuckDB file's numbered migrations.

`TABLES` and `COLUMNS` are what every backend writes and every reader gets (a server backend
keeps the same tables, with its own migrations, in its module of `history.storage`).
`SCHEMA_VERSION` is the version of that layout, recorded in every run (``runs.store_schema``).

The DuckDB file's migrations:

DuckDB has no built-in schema version, so the store keeps a table of applied migrations,
``schema_migrations(version, description, applied_at)``. Each migration runs in one
transaction together with its row in that table: a store is always at exactly one version.
A store written by a newer primbench (a version above `SCHEMA_VERSION`) is refused with a
clear error rather than half-understood; an older one is migrated by any writer
(``ingest``, ``merge``, ``migrate``), and queries, which open the file read-only, ask for
``primbench history migrate``.

Never edit a released migration: add a new one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from primbench.history.errors import SchemaError, one_line

if TYPE_CHECKING:
    import datetime

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
#: The three tables every backend stores, with their columns in the order staged rows hold them.
COLUMNS = {"runs": RUN_COLUMNS, "specializations": SPEC_COLUMNS, "batches": BATCH_COLUMNS}
TABLES = ("runs", "specializations", "batches")
#: Each table's key: a row is stored once per key (the same run from two runners counts once).
KEYS = {"runs": ("run_id",), "specializations": ("run_id", "name"), "batches": ("run_id", "idx", "batch")}
#: The key of the stored ``runs.general`` that holds a run's date flag
#: (`history.storage.ingest.flag_dates`); the results document itself, and so the run's
#: identity, is never changed.
DATE_FLAG_KEY = "history_date_flag"
#: The JSON columns (DuckDB ``JSON``, a server's own JSON type: kept as written).
JSON_COLUMNS = frozenset({"general", "settings", "flags", "custom_settings", "document", "meta", "sm_clock", "extra"})


@dataclass(frozen=True)
class Migration:
    """SQL statements, then (optionally) a Python step on the connection, in one transaction;
    before it, optionally, `prepare`: work in transactions of its own, each of bounded size,
    that destroys nothing and may be interrupted and run again (it resumes), so that the one
    transaction is small however large the store (the documents' move of 6)."""

    version: int
    description: str
    statements: tuple[str, ...]
    apply: Callable[[duckdb.DuckDBPyConnection], object] | None = None
    prepare: Callable[[duckdb.DuckDBPyConnection], object] | None = None


_V1_TABLES = (
    """
    CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,          -- sha256 of the canonical JSON document (32 hex digits)
        algorithm VARCHAR NOT NULL,
        branch VARCHAR,                      -- context.general.branch_name (NULL if the file has none)
        "commit" VARCHAR,                    -- context.general.commit_hash
        date TIMESTAMPTZ NOT NULL,           -- context.general.date, as an instant
        date_text VARCHAR NOT NULL,          -- ... as written, with its UTC offset
        branch_source VARCHAR,
        commit_source VARCHAR,
        host VARCHAR,
        gpu_key VARCHAR NOT NULL,            -- the physical GPU: uuid, else serial, else name@pci_bus_id
        gpu_name VARCHAR,
        gpu_uuid VARCHAR,
        gpu_serial VARCHAR,
        gpu_pci_bus_id VARCHAR,
        gpu_arch VARCHAR,
        backend VARCHAR,
        results_version VARCHAR NOT NULL,
        primbench_version VARCHAR,
        python_version VARCHAR,
        general JSON,                        -- context.general, whole
        settings JSON,                       -- context.settings
        flags JSON,                          -- context.flags
        custom_settings JSON,                -- context.custom_settings
        specialization_count INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        noise_timeouts INTEGER NOT NULL,
        document JSON NOT NULL,              -- the whole results document, compact: rebuilds a Results
        source_path VARCHAR,                 -- the file it was ingested from
        ingested_at TIMESTAMPTZ NOT NULL,
        store_schema INTEGER NOT NULL        -- the store schema version that ingested it
    )
    """,
    """
    CREATE TABLE specializations (
        run_id VARCHAR NOT NULL,
        idx INTEGER NOT NULL,                -- the specialization's index in its file
        name VARCHAR NOT NULL,
        algorithm VARCHAR NOT NULL,          -- meta.algo, else the run's algorithm
        meta JSON,
        bytes_per_second DOUBLE,             -- NULL for a failed specialization
        items_per_second DOUBLE,
        bytes_per_item DOUBLE,
        items BIGINT,
        noise_percent DOUBLE,
        noise_timeout BOOLEAN,
        elapsed_host_secs DOUBLE,
        elapsed_gpu_secs DOUBLE,
        kernel_calls_per_batch BIGINT,
        ms_per_batch DOUBLE,
        batch_count BIGINT,
        kernel_calls BIGINT,
        gpu_temp_start DOUBLE,
        gpu_temp_end DOUBLE,
        sm_clock_mhz DOUBLE,                 -- sm_clock.average_mhz (results 4.2.0) when measured
        sm_clock_fraction DOUBLE,            -- sm_clock.fraction_of_default
        sm_clock_below_expected BOOLEAN,     -- sm_clock.below_expected: the clock fell well below default
        sm_clock JSON,
        error VARCHAR,
        extra JSON,                          -- keys this schema has no column for
        PRIMARY KEY (run_id, name)
    )
    """,
    """
    CREATE TABLE batches (
        run_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,               -- the specialization
        batch INTEGER NOT NULL,              -- position in the specialization's batches
        batch_ms DOUBLE NOT NULL,
        kernel_calls BIGINT,
        host_secs DOUBLE,
        iterations_ms DOUBLE[],
        PRIMARY KEY (run_id, name, batch)
    )
    """,
)

_V2_VIEWS = (
    """
    CREATE VIEW measurements AS
    SELECT r.branch, r."commit", r.date, r.gpu_key, r.gpu_name, r.host, r.run_id, s.*
        EXCLUDE (run_id)
    FROM specializations s JOIN runs r USING (run_id)
    """,
    """
    CREATE VIEW latest_runs AS
    SELECT * EXCLUDE (document) FROM runs
    QUALIFY row_number() OVER (PARTITION BY branch, algorithm, gpu_key ORDER BY date DESC, run_id) = 1
    """,
)

_V3_CONFIG = (
    "ALTER TABLE runs ADD COLUMN config_key VARCHAR",  # primbench.resultconfig.config_key: size=128MiB, ...
    """
    CREATE OR REPLACE VIEW measurements AS
    SELECT r.branch, r."commit", r.date, r.gpu_key, r.gpu_name, r.host, r.config_key, r.run_id, s.*
        EXCLUDE (run_id)
    FROM specializations s JOIN runs r USING (run_id)
    """,
    """
    CREATE OR REPLACE VIEW latest_runs AS
    SELECT * EXCLUDE (document) FROM runs
    QUALIFY row_number() OVER (PARTITION BY branch, algorithm, gpu_key, config_key ORDER BY date DESC, run_id) = 1
    """,
)


_V4_KEYS = (
    # 64-bit indexes: a results file may hold any whole number below 2**53 there
    "ALTER TABLE specializations ALTER idx TYPE BIGINT",
    # batches keyed by the specialization's index, not its name: a long name was copied into every row
    """
    CREATE TABLE batches_v4 (
        run_id VARCHAR NOT NULL,
        idx BIGINT NOT NULL,                 -- the specialization (specializations.idx of the same run)
        batch INTEGER NOT NULL,              -- position in the specialization's batches
        batch_ms DOUBLE NOT NULL,
        kernel_calls BIGINT,
        host_secs DOUBLE,
        iterations_ms DOUBLE[],
        PRIMARY KEY (run_id, idx, batch)
    )
    """,
    """
    INSERT INTO batches_v4
    SELECT b.run_id, s.idx, b.batch, b.batch_ms, b.kernel_calls, b.host_secs, b.iterations_ms
    FROM batches b JOIN specializations s USING (run_id, name)
    """,
    "DROP TABLE batches",
    "ALTER TABLE batches_v4 RENAME TO batches",
)


_V5_TIME = (
    "ALTER TABLE specializations ADD COLUMN gpu_seconds_per_call DOUBLE",  # elapsed_gpu_secs / kernel_calls
    """
    CREATE OR REPLACE VIEW measurements AS
    SELECT r.branch, r."commit", r.date, r.gpu_key, r.gpu_name, r.host, r.config_key, r.run_id, s.*
        EXCLUDE (run_id)
    FROM specializations s JOIN runs r USING (run_id)
    """,
)

#: GPU seconds per call of every stored specialization that lacks it and measured any call.
_FILL_TIME = ("UPDATE specializations SET gpu_seconds_per_call = elapsed_gpu_secs / kernel_calls "
              "WHERE gpu_seconds_per_call IS NULL AND kernel_calls > 0 AND elapsed_gpu_secs > 0")


def fill_time_per_call(con: duckdb.DuckDBPyConnection) -> None:
    """Set ``specializations.gpu_seconds_per_call`` where it is NULL, from the GPU time and the
    kernel calls of the whole measurement (what ingest stores). Runs inside the caller's
    transaction."""
    con.execute(_FILL_TIME)


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK that never raises: after a failed COMMIT DuckDB has already ended the
    transaction, and a second error would hide the first."""
    with contextlib.suppress(Exception):  # duckdb.Error: no transaction is active
        con.execute("ROLLBACK")


def _loads(text: Any) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def fill_config_keys(con: duckdb.DuckDBPyConnection) -> int:
    """Set ``runs.config_key`` where it is NULL, from the stored ``settings``, ``flags`` and
    ``custom_settings`` (the document's context where ``settings`` is missing), with
    `primbench.resultconfig.config_key`: the same function ingest uses. Returns the rows set.
    Runs inside the caller's transaction."""
    from primbench.resultconfig import config_key

    rows = con.execute(
        "SELECT run_id, settings, flags, custom_settings, "
        "CASE WHEN settings IS NULL THEN json_extract(document, '$.context') END FROM runs WHERE config_key IS NULL"
    ).fetchall()
    if not rows:
        return 0
    keys: dict[str, list[str]] = {"run_id": [], "config_key": []}
    for run_id, settings, flags, custom, context in rows:
        ctx = _loads(context) if settings is None else None
        if not isinstance(ctx, dict):
            ctx = {"settings": _loads(settings), "flags": _loads(flags), "custom_settings": _loads(custom)}
        keys["run_id"].append(run_id)
        keys["config_key"].append(config_key(ctx))
    import pandas as pd

    con.register("_primbench_config_keys", pd.DataFrame(keys))
    try:
        con.execute("UPDATE runs SET config_key = k.config_key FROM _primbench_config_keys k "
                    "WHERE runs.run_id = k.run_id")
    finally:
        con.unregister("_primbench_config_keys")
    return len(rows)


#: The fields of a specialization that ``specializations.extra`` leaves to the run's document:
#: the rounds (each a record of a dozen numbers: most of a results file; schema 6), the spread
#: between rounds and the time per call's statistics (schema 7), which no query reads and
#: `history.reader.Reader.results` rebuilds from the document.
EXTRA_LEFT_TO_DOCUMENT = ("rounds", "between_rounds", "time_per_call")

_V6_EXTRA = (
    # the rounds were stored twice, in the document and in extra: keep them in the document
    """
    UPDATE specializations
    SET extra = CASE WHEN CAST(json_merge_patch(extra, '{"rounds": null}') AS VARCHAR) = '{}' THEN NULL
                     ELSE json_merge_patch(extra, '{"rounds": null}') END
    WHERE json_exists(extra, '$.rounds')
    """,
)

#: `_V6_EXTRA` for some runs only: their key tested before the JSON is parsed.
_V6_EXTRA_OF = """
    UPDATE specializations
    SET extra = CASE WHEN extra IS NULL OR NOT coalesce(json_exists(extra, '$.rounds'), false) THEN extra
                     WHEN CAST(json_merge_patch(extra, '{{"rounds": null}}') AS VARCHAR) = '{{}}' THEN NULL
                     ELSE json_merge_patch(extra, '{{"rounds": null}}') END
    WHERE {runs}
    """

#: The DuckDB file's documents: out of the hot ``runs`` table, each written once, compressed
#: (`encode_document`), in parts of at most `DOCUMENT_PART_RUNS` documents
#: (``documents_00000``, ``documents_00001``, ...), read through the view ``documents``. DuckDB
#: rewrites the last, partly filled row group of a table it appends to at every checkpoint:
#: with every document in one table, an ingest rewrote them all (1.2 s at 10,000 runs); a part
#: of 500 is what an ingest rewrites at most. Queries read a document by its key
#: (`load_document`); `document_texts` gives them back as JSON text (merge, export).
DOCUMENT_PART_RUNS = 500
_DOCUMENT_PART = """
CREATE TABLE {name} (
    run_id VARCHAR PRIMARY KEY,          -- runs.run_id
    codec VARCHAR NOT NULL,              -- 'msgpack+zlib' or 'json+zlib' (encode_document)
    body BLOB NOT NULL                   -- the canonical JSON document, compressed
)
"""


def document_parts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables of the documents' parts, in order (empty: the store has none yet)."""
    rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                       "AND table_type = 'BASE TABLE' AND table_name LIKE 'documents\\_%' ESCAPE '\\' "
                       "ORDER BY table_name").fetchall()
    return [r[0] for r in rows]


def _documents_view(con: duckdb.DuckDBPyConnection, parts: Sequence[str]) -> None:
    con.execute("CREATE OR REPLACE VIEW documents AS " + " UNION ALL ".join(
        f"SELECT run_id, codec, body FROM {p}" for p in parts))


def _new_document_part(con: duckdb.DuckDBPyConnection, parts: list[str], *, view: bool = True) -> str:
    name = f"documents_{len(parts):05d}"
    con.execute(_DOCUMENT_PART.format(name=name))
    parts.append(name)
    if view:
        _documents_view(con, parts)
    return name


def insert_documents(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], texts: Sequence[str], *,
                     view: bool = True, codec: str | None = None) -> None:
    """Store each run's canonical JSON text (compressed) in the last part, a new part when it is
    full (and, with `view`, the view ``documents`` over the parts); inside the caller's transaction."""
    import pandas as pd

    parts = document_parts(con)
    done = 0
    while done < len(run_ids):
        held = 0
        if parts:
            row = con.execute(f"SELECT count(*) FROM {parts[-1]}").fetchall()
            held = int(row[0][0])
        if not parts or held >= DOCUMENT_PART_RUNS:
            _new_document_part(con, parts, view=view)
            held = 0
        take = min(DOCUMENT_PART_RUNS - held, len(run_ids) - done)
        encoded = [encode_document(t, codec or DOCUMENT_CODEC) for t in texts[done:done + take]]
        frame = pd.DataFrame({"run_id": list(run_ids[done:done + take]), "codec": [c for c, _ in encoded],
                              "body": [b for _, b in encoded]})
        con.register("_primbench_documents", frame)
        try:
            con.execute(f"INSERT INTO {parts[-1]} SELECT run_id, codec, CAST(body AS BLOB) FROM _primbench_documents")
        finally:
            with contextlib.suppress(Exception):  # an aborted transaction: keep the INSERT's error
                con.unregister("_primbench_documents")
        done += take


#: The view over no part yet: the first write makes documents_00000 (`insert_documents`).
_V6_NO_DOCUMENTS = ("CREATE OR REPLACE VIEW documents AS SELECT CAST(NULL AS VARCHAR) AS run_id, "
                    "CAST(NULL AS VARCHAR) AS codec, CAST(NULL AS BLOB) AS body WHERE false")
_V6_DROP = (
    "DROP VIEW IF EXISTS latest_runs",
    "ALTER TABLE runs DROP COLUMN document",
    """
    CREATE VIEW latest_runs AS
    SELECT * FROM runs
    QUALIFY row_number() OVER (PARTITION BY branch, algorithm, gpu_key, config_key ORDER BY date DESC, run_id) = 1
    """,
)

DOCUMENT_CODECS = ("floats+xz", "msgpack+zlib", "json+zlib")
#: What `encode_document` writes (schema 7); the others are read as they are (schema 6 wrote
#: ``msgpack+zlib``) until migration 7 re-encodes them.
DOCUMENT_CODEC = DOCUMENT_CODECS[0]

#: ``floats+xz``: the MessagePack of the document with every float replaced by this extension
#: (no data), and the floats apart (`_encode_floats`).
_FLOAT_EXT = 1
_FLOATS_HEADER = 4  # bytes of the skeleton's length, little-endian, before it


def _float_groups(skeleton: Any, mark: object = None) -> list[tuple[Any, Any]]:
    """(container, key) of every float's place in `skeleton` (with `mark`: of every `mark`, the
    floats' placeholder), grouped by its path (object keys, ``[]`` for any list item) in the
    order each path first appears, within a group in document order: the order ``floats+xz``
    stores the floats in."""
    groups: dict[Any, list[tuple[Any, Any]]] = {}

    def found(value: Any) -> bool:
        return value is mark if mark is not None else type(value) is float

    def walk(node: Any, path: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if found(value):
                    groups.setdefault((path, key), []).append((node, key))
                elif isinstance(value, dict | list):
                    walk(value, (path, key))
            return
        sub = (path, "[]")  # one path for every item of a list (an object key "[]" shares it: the same both ways)
        for i, value in enumerate(node):
            if found(value):
                groups.setdefault(sub, []).append((node, i))
            elif isinstance(value, dict | list):
                walk(value, sub)

    if isinstance(skeleton, dict | list):
        walk(skeleton, ())
    return [place for group in groups.values() for place in group]


def _encode_floats(skeleton: Any) -> bytes:
    """``floats+xz`` before xz, of a document that this overwrites (each float replaced by its
    placeholder): the skeleton's length (4 bytes), the skeleton (the document's
    MessagePack, each float an extension of type 1 without data), then the floats as IEEE
    doubles, grouped by their path (`_float_groups`), byte-transposed: byte 0 of every float,
    then byte 1, ... (floats of one field share their sign, exponent and top bits, which
    compress; their low bits do not)."""
    import msgspec
    import numpy as np

    marker = msgspec.msgpack.Ext(_FLOAT_EXT, b"")
    floats = []
    for holder, key in _float_groups(skeleton):
        floats.append(holder[key])
        holder[key] = marker
    packed = msgspec.msgpack.encode(skeleton)
    planes = np.asarray(floats, dtype="<f8").view(np.uint8).reshape(-1, 8).T.tobytes()
    return len(packed).to_bytes(_FLOATS_HEADER, "little") + packed + planes


class _FloatMark:
    __slots__ = ()


_FLOAT_MARK = _FloatMark()


def _decode_floats(raw: bytes) -> Any:
    """The document `_encode_floats` wrote."""
    import msgspec
    import numpy as np

    size = int.from_bytes(raw[:_FLOATS_HEADER], "little")
    end = _FLOATS_HEADER + size

    def ext(code: int, data: memoryview) -> Any:
        if code != _FLOAT_EXT:
            raise SchemaError(f"a stored document holds the MessagePack extension {code}, which floats+xz never writes")
        return _FLOAT_MARK

    skeleton = msgspec.msgpack.Decoder(ext_hook=ext).decode(raw[_FLOATS_HEADER:end])
    places = _float_groups(skeleton, _FLOAT_MARK)
    planes = np.frombuffer(raw, dtype=np.uint8, offset=end)
    if planes.size != 8 * len(places):
        raise SchemaError(f"a stored document (floats+xz) holds {planes.size} bytes of floats for {len(places)} floats")
    values = planes.reshape(8, -1).T.copy().view("<f8").ravel().tolist()
    for (holder, key), value in zip(places, values, strict=True):
        holder[key] = value
    return skeleton


def encode_document(canonical: str, codec: str = DOCUMENT_CODEC) -> tuple[str, bytes]:
    """A run's canonical JSON document as (codec, compressed bytes): ``floats+xz``
    (`_encode_floats` under xz: the floats, most of a results file, stored as binary doubles
    grouped by field) when it gives the canonical text back exactly, else the text itself under
    zlib (an integer MessagePack cannot hold; and for `codec` ``json+zlib``). Schema 6 wrote
    ``msgpack+zlib`` (`codec`: what its migration still writes): the MessagePack of the
    document under zlib; still read."""
    import lzma
    import zlib

    import msgspec

    text = canonical.encode("utf-8")
    try:
        if codec == "msgpack+zlib":
            packed = msgspec.msgpack.encode(msgspec.json.decode(text))
            if _canonical(msgspec.msgpack.decode(packed)) == canonical:
                return codec, zlib.compress(packed, 9)
        elif codec == "floats+xz":
            raw = _encode_floats(msgspec.json.decode(text))
            if _canonical(_decode_floats(raw)) == canonical:
                return codec, lzma.compress(raw, preset=XZ_PRESET)
    except (msgspec.MsgspecError, OverflowError, ValueError, TypeError):
        pass
    return "json+zlib", zlib.compress(text, 9)


#: xz's preset for ``floats+xz``: 0 compresses these bytes as small as 6 does (within 0.2 %),
#: four times faster (3 ms for a document of 100 specializations).
XZ_PRESET = 0


def _canonical(document: Any) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode_document(codec: str, body: bytes) -> Any:
    """The document `encode_document` stored, as Python values (dicts, lists, numbers, text)."""
    import lzma
    import zlib

    import msgspec

    if codec == "floats+xz":
        return _decode_floats(lzma.decompress(body))
    if codec == "msgpack+zlib":
        return msgspec.msgpack.decode(zlib.decompress(body))
    if codec == "json+zlib":
        return json.loads(zlib.decompress(body))
    raise SchemaError(f"a stored document has the codec {codec!r}, which this primbench does not know")


def document_text(codec: str, body: bytes) -> str:
    """The stored document as its canonical JSON text (what the run's id was made from)."""
    import zlib

    if codec == "json+zlib":
        return zlib.decompress(body).decode("utf-8")
    return _canonical(decode_document(codec, body))


def has_documents_table(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store on `con` keeps its documents in a ``documents`` table (a DuckDB file
    at schema 6 or later) rather than in ``runs.document`` (the in-memory stores)."""
    rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
                       "AND table_name = 'documents'").fetchall()
    return bool(rows and rows[0][0])


def load_document(con: duckdb.DuckDBPyConnection, run_id: str) -> Any:
    """A stored run's document as Python values, by its key; None if no such run."""
    if has_documents_table(con):
        rows = con.execute("SELECT codec, body FROM documents WHERE run_id = ?", [run_id]).fetchall()
        return decode_document(rows[0][0], rows[0][1]) if rows else None
    found = con.execute("SELECT CAST(document AS VARCHAR) FROM runs WHERE run_id = ?", [run_id]).fetchall()
    return json.loads(found[0][0]) if found else None


def document_texts(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, str]:
    """The canonical JSON text of each stored run of `run_ids` (either layout)."""
    if has_documents_table(con):
        rows = con.execute("SELECT run_id, codec, body FROM documents WHERE list_contains(?, run_id)",
                           [list(run_ids)]).fetchall()
        return {r: document_text(c, b) for r, c, b in rows}
    rows = con.execute("SELECT run_id, CAST(document AS VARCHAR) FROM runs WHERE list_contains(?, run_id)",
                       [list(run_ids)]).fetchall()
    return dict(rows)


#: Documents moved per transaction by the migration (bounded memory for any store size: a
#: batch's text, about 110 MB, beside the vector of 2,048 documents DuckDB decompresses to read it).
_MOVE_BATCH = 512


def _moved(con: duckdb.DuckDBPyConnection) -> str:
    parts = document_parts(con)
    if not parts:
        return "SELECT CAST(NULL AS VARCHAR) AS run_id WHERE false"
    return " UNION ALL ".join(f"SELECT run_id FROM {p}" for p in parts)


def move_documents(con: duckdb.DuckDBPyConnection, *, commit: bool = True) -> int:
    """Copy every ``runs.document`` not yet copied into the documents' parts (compressed), and
    take the rounds out of those runs' ``specializations.extra`` (the document holds them), a
    batch of runs at a time, in storage order; returns the runs done. With `commit`, each batch in a
    transaction of its own (migration 6's `prepare`): nothing is dropped here, so an
    interruption leaves a store at version 5 whose documents are all still in ``runs``, and
    the next run resumes where this one stopped. Without, inside the caller's transaction (the
    migration's own, for the runs an older primbench stored meanwhile)."""
    done = 0
    moved = _moved(con)
    if not commit:  # the migration's own transaction: whatever prepare did not copy (few, or none)
        rows = con.execute(f"SELECT run_id, CAST(document AS VARCHAR) FROM runs WHERE run_id NOT IN ({moved}) "
                           "ORDER BY run_id").fetchall()
        for i in range(0, len(rows), _MOVE_BATCH):
            batch = rows[i:i + _MOVE_BATCH]
            ids = [r for r, _ in batch]
            insert_documents(con, ids, [t for _, t in batch], view=False, codec="msgpack+zlib")
            con.execute(_V6_EXTRA_OF.format(runs="list_contains(?, run_id)"), [ids])
            done += len(batch)
        return done
    # in storage order (rowid ranges): each batch reads its own stretch of runs.document, not all
    # of it; a batch copied before an interruption is skipped by its keys
    top = con.execute("SELECT coalesce(max(rowid), -1) FROM runs").fetchall()[0][0]
    for start in range(0, int(top) + 1, _MOVE_BATCH):
        con.execute("BEGIN TRANSACTION")
        try:
            rows = con.execute(f"SELECT run_id, CAST(document AS VARCHAR) FROM runs WHERE rowid >= ? AND rowid < ? "
                               f"AND run_id NOT IN ({_moved(con)}) ORDER BY run_id",
                               [start, start + _MOVE_BATCH]).fetchall()
            if rows:
                ids = [r for r, _ in rows]
                insert_documents(con, ids, [t for _, t in rows], view=False, codec="msgpack+zlib")
                con.execute(_V6_EXTRA_OF.format(runs="list_contains(?, run_id)"), [ids])
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise
        done += len(rows)
        del rows
    return done


def _documents_apart(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 6's transaction, after `move_documents` prepared it: the runs stored since,
    the view ``documents`` over the parts, ``runs.document`` dropped."""
    move_documents(con, commit=False)
    parts = document_parts(con)
    if parts:
        _documents_view(con, parts)
    else:
        con.execute(_V6_NO_DOCUMENTS)
    for statement in _V6_DROP:
        con.execute(statement)


#: Schema 7: ``specializations.extra`` without between_rounds and time_per_call, which the
#: document holds too (8.4 KB a run of 100 specializations, more than half of the rows' bytes);
#: no query reads them from extra (`history.queries.EXTRA_METRICS` reads energy and the graph
#: replay there).
_V7_PATCH = '{"between_rounds": null, "time_per_call": null}'
_V7_SPEC_TABLE = """
    CREATE TABLE specializations_v7 (
        run_id VARCHAR NOT NULL,
        idx BIGINT NOT NULL,
        name VARCHAR NOT NULL,
        algorithm VARCHAR NOT NULL,
        meta JSON,
        bytes_per_second DOUBLE,
        items_per_second DOUBLE,
        bytes_per_item DOUBLE,
        items BIGINT,
        noise_percent DOUBLE,
        noise_timeout BOOLEAN,
        elapsed_host_secs DOUBLE,
        elapsed_gpu_secs DOUBLE,
        kernel_calls_per_batch BIGINT,
        ms_per_batch DOUBLE,
        batch_count BIGINT,
        kernel_calls BIGINT,
        gpu_temp_start DOUBLE,
        gpu_temp_end DOUBLE,
        sm_clock_mhz DOUBLE,
        sm_clock_fraction DOUBLE,
        sm_clock_below_expected BOOLEAN,
        sm_clock JSON,
        error VARCHAR,
        extra JSON,
        gpu_seconds_per_call DOUBLE
    )
    """
_V7_SPECS = (
    # between_rounds and time_per_call were stored twice, in the document and in extra
    f"""
    UPDATE specializations
    SET extra = CASE WHEN CAST(json_merge_patch(extra, '{_V7_PATCH}') AS VARCHAR) = '{{}}' THEN NULL
                     ELSE json_merge_patch(extra, '{_V7_PATCH}') END
    WHERE json_exists(extra, '$.between_rounds') OR json_exists(extra, '$.time_per_call')
    """,
    # without the (run_id, name) primary key: its index was 8.9 KB a run, a quarter of the store,
    # and no query uses it; ingest keeps a run's names apart (`ingest._check_indexes`) and stores
    # a run once (by runs.run_id, still the key)
    "DROP VIEW IF EXISTS measurements",
    _V7_SPEC_TABLE,
    "INSERT INTO specializations_v7 SELECT * FROM specializations",
    "DROP TABLE specializations",
    "ALTER TABLE specializations_v7 RENAME TO specializations",
    # and batches without theirs (run_id, idx, batch): ingest numbers a run's batches itself
    """
    CREATE TABLE batches_v7 (
        run_id VARCHAR NOT NULL,
        idx BIGINT NOT NULL,
        batch INTEGER NOT NULL,
        batch_ms DOUBLE NOT NULL,
        kernel_calls BIGINT,
        host_secs DOUBLE,
        iterations_ms DOUBLE[]
    )
    """,
    "INSERT INTO batches_v7 SELECT * FROM batches",
    "DROP TABLE batches",
    "ALTER TABLE batches_v7 RENAME TO batches",
    """
    CREATE VIEW measurements AS
    SELECT r.branch, r."commit", r.date, r.gpu_key, r.gpu_name, r.host, r.config_key, r.run_id, s.*
        EXCLUDE (run_id)
    FROM specializations s JOIN runs r USING (run_id)
    """,
)

#: Migration 7 re-encodes a file's documents part by part into ``documents7_NNNNN`` (`prepare`,
#: each part a transaction of its own, resumable), which its transaction then puts in the old
#: parts' place: until then the store is at 6 with every document in its old codec.
_REENCODED = "documents7_"
_V7_DESCRIPTION = ("specializations.extra without between_rounds and time_per_call (kept once, in the run's "
                   "document); specializations and batches without their primary-key indexes")


def _reencode_part(con: duckdb.DuckDBPyConnection, part: str) -> None:
    """``documents7_<n>``: every document of `part` in `DOCUMENT_CODEC` (inside the caller's
    transaction)."""
    import pandas as pd

    target = _REENCODED + part.rsplit("_", 1)[1]
    con.execute(f"DROP TABLE IF EXISTS {target}")
    con.execute(_DOCUMENT_PART.format(name=target))
    rows = con.execute(f"SELECT run_id, codec, body FROM {part} ORDER BY rowid").fetchall()
    out: dict[str, list[Any]] = {"run_id": [], "codec": [], "body": []}
    for run_id, codec, body in rows:
        if codec != DOCUMENT_CODEC:
            codec, body = encode_document(document_text(codec, body))
        out["run_id"].append(run_id)
        out["codec"].append(codec)
        out["body"].append(body)
    del rows
    execute_on_frame(con, "_primbench_documents", pd.DataFrame(out),
                     f"INSERT INTO {target} SELECT run_id, codec, CAST(body AS BLOB) FROM _primbench_documents")


def _reencoded_whole(con: duckdb.DuckDBPyConnection, part: str) -> bool:
    """Whether ``documents7_<n>`` holds exactly `part`'s runs (a part written to after the
    prepare was interrupted is re-encoded again)."""
    target = _REENCODED + part.rsplit("_", 1)[1]
    if not _has_table(con, target):
        return False
    row = con.execute(f"SELECT (SELECT count(*) FROM {part}) = (SELECT count(*) FROM {target}) AND NOT EXISTS "
                      f"(SELECT run_id FROM {part} EXCEPT SELECT run_id FROM {target})").fetchone()
    return bool(row and row[0])


def reencode_documents(con: duckdb.DuckDBPyConnection) -> int:
    """Migration 7's `prepare`: each document part not yet re-encoded, in a transaction of its
    own (nothing is dropped: an interruption leaves a store at 6 that reads as before, and the
    next migrate resumes); returns the parts done."""
    done = 0
    for part in document_parts(con):
        if _reencoded_whole(con, part):
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            _reencode_part(con, part)
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise
        done += 1
    return done


def _documents_reencoded(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 7's transaction on a file, after its statements: each part replaced by its
    re-encoded copy (re-encoded here if `reencode_documents` did not finish it)."""
    parts = document_parts(con)
    for part in parts:
        if not _reencoded_whole(con, part):
            _reencode_part(con, part)
        con.execute(f"DROP TABLE {part}")
        con.execute(f"ALTER TABLE {_REENCODED}{part.rsplit('_', 1)[1]} RENAME TO {part}")
    if parts:
        _documents_view(con, parts)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tables runs, specializations, batches", _V1_TABLES),
    Migration(2, "views measurements (one row per specialization, with its run) and latest_runs", _V2_VIEWS),
    Migration(3, "runs.config_key (the settings that make a run another measurement), filled in for stored runs; "
                 "measurements and latest_runs with it", _V3_CONFIG, fill_config_keys),
    Migration(4, "specializations.idx 64-bit; batches keyed by (run_id, idx, batch) instead of the name", _V4_KEYS),
    Migration(5, "specializations.gpu_seconds_per_call (GPU time per call, the time metric), filled in for stored "
                 "runs; measurements with it", _V5_TIME, fill_time_per_call),
    Migration(6, "specializations.extra without the rounds (kept once, in the run's document)", _V6_EXTRA),
    Migration(7, _V7_DESCRIPTION, _V7_SPECS),
)
SCHEMA_VERSION = MIGRATIONS[-1].version

#: The DuckDB file's migrations: `MIGRATIONS` (the layout every in-memory store has, and a file
#: had up to 5), but its 6 also moves the documents out of ``runs`` into ``documents``,
#: compressed, so that an ingest's checkpoint no longer rewrites them (issue 28), and its 7
#: re-encodes them smaller (``floats+xz``, `encode_document`).
FILE_MIGRATIONS: tuple[Migration, ...] = (
    *MIGRATIONS[:5],
    Migration(6, "specializations.extra without the rounds (kept once, in the run's document); runs.document "
                 "moved to the documents' parts under the view documents (compressed, written once, read by run_id)",
              (), _documents_apart, move_documents),
    Migration(7, _V7_DESCRIPTION + "; the documents re-encoded (floats+xz: the floats apart, grouped by field, "
                 "under xz)", _V7_SPECS, _documents_reencoded, reencode_documents),
)
assert FILE_MIGRATIONS[-1].version == SCHEMA_VERSION

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
"""


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def stored_version(con: duckdb.DuckDBPyConnection) -> int:
    """The store's schema version: 0 for an empty file."""
    if not _has_table(con, "schema_migrations"):
        if _has_table(con, "runs"):
            raise SchemaError("this DuckDB file has a 'runs' table but no schema_migrations: not a primbench store")
        return 0
    row = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def too_new(version: int, latest: int, source: str) -> SchemaError:
    """The error for a store of a newer schema than this primbench knows."""
    return SchemaError(
        f"{source}: the history store has schema version {version}, newer than this primbench "
        f"understands (up to {latest}): it was written by a newer primbench; upgrade primbench to read it"
    )


def check_version(version: int, source: str = "store", latest: int = SCHEMA_VERSION) -> int:
    """For read-only use: a store must be exactly at this primbench's schema version."""
    if version > latest:
        raise too_new(version, latest, source)
    if version < latest:
        raise SchemaError(
            f"{source}: the history store has schema version {version}, older than this primbench's "
            f"{latest}: run `primbench history migrate --db {source}` (or any ingest) to upgrade it"
        )
    return version


def check_readable(con: duckdb.DuckDBPyConnection, source: str = "store",
                   migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """For read-only use: the store must be exactly at this primbench's schema version."""
    return check_version(stored_version(con), source, migrations[-1].version)


def migrate(con: duckdb.DuckDBPyConnection, *, source: str = "store",
            migrations: Sequence[Migration] = MIGRATIONS, target: int | None = None) -> list[int]:
    """Apply the pending migrations up to `target` (default: all); return the versions applied.

    Each migration and its schema_migrations row commit together or not at all."""
    latest = migrations[-1].version
    con.execute(_MIGRATIONS_TABLE)
    version = stored_version(con)
    if version > latest:
        raise too_new(version, latest, source)
    applied = []
    for m in migrations:
        if m.version <= version or (target is not None and m.version > target):
            continue
        if m.prepare is not None:
            try:
                m.prepare(con)
            except Exception as exc:
                rollback(con)
                raise SchemaError(
                    f"{source}: migration {m.version} ({m.description}) was interrupted while preparing; "
                    f"the store stays at version {version}, and the next migrate resumes: {one_line(exc)}"
                ) from exc
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in m.statements:
                con.execute(statement)
            if m.apply is not None:
                m.apply(con)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, current_timestamp)", [m.version, m.description]
            )
            con.execute("COMMIT")
        except Exception as exc:
            rollback(con)
            raise SchemaError(
                f"{source}: migration {m.version} ({m.description}) failed and was rolled back; "
                f"the store stays at version {version}: {one_line(exc)}"
            ) from exc
        version = m.version
        applied.append(m.version)
    return applied


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str, datetime.datetime]]:
    """(version, description, applied_at) of each applied migration."""
    if not _has_table(con, "schema_migrations"):
        return []
    return con.execute("SELECT version, description, applied_at FROM schema_migrations ORDER BY version").fetchall()


def execute_on_frame(con: duckdb.DuckDBPyConnection, name: str, frame: pd.DataFrame, sql: str) -> None:
    """Run `sql` on `con` with `frame` registered as the view `name`, unregistered after. In a
    transaction the statement aborted, unregistering fails too ("Current transaction is aborted"):
    that error must not replace the statement's, which names the real cause."""
    con.register(name, frame)
    try:
        con.execute(sql)
    finally:
        with contextlib.suppress(Exception):
            con.unregister(name)
