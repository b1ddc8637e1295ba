"""Ingest: what is stored, idempotency, atomicity per file, bad input named with its field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primbench.history.storage.duckdb_file import open_for_write
from primbench.history.storage.ingest import run_id_of
from primbench.history.storage.schema import SCHEMA_VERSION, load_document
from primbench.results import KNOWN_VERSIONS
from tests import history_data as hd
from tests.history_data import ingest, open_for_query


def _count(db: Path, table: str) -> int:
    with open_for_query(db) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_ingest_stores_runs_specializations_and_batches(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    doc = hd.document([1.0e12, 2.0e12], commit=hd.sha("c1"), batches=3, failed=["type: t1"])
    doc["specializations"][0]["future_key"] = {"x": 1}
    doc["specializations"][0]["between_rounds"] = {"count": 1, "cv_percent": None}
    f = hd.write(tmp_path / "r.json", doc)
    report = ingest([f], db)
    assert [o.status for o in report.outcomes] == ["stored"]
    with open_for_query(db) as con:
        run = con.execute('SELECT branch, "commit", date_text, gpu_key, gpu_uuid, gpu_serial, host, results_version, '
                          "specialization_count, failures, store_schema, settings->>'$.size', config_key "
                          "FROM runs").fetchone()
        assert run == ("main", hd.sha("c1"), "2026-01-01T08:00:00+01:00", hd.H200_A["uuid"], hd.H200_A["uuid"],
                       hd.H200_A["serial"], "runner-1", "4.1.0", 2, 1, SCHEMA_VERSION, "134217728", "size=128MiB")
        date = con.execute("SELECT date FROM runs").fetchone()[0]
        assert date.isoformat() == "2026-01-01T07:00:00+00:00"
        specs = con.execute("SELECT name, bytes_per_second, noise_percent, gpu_temp_start, gpu_temp_end, sm_clock_mhz, "
                            "error, extra, sm_clock_below_expected, sm_clock_fraction, "
                            "sm_clock->>'$.default_mhz' FROM specializations ORDER BY idx").fetchall()
        assert specs[0][:7] == ("type: t0", 1.0e12, 0.05, 41.0, 42.0, 1978.0, None)
        # extra: what the model reads and the table has no column for, but not what the document
        # alone keeps (schema 7: between_rounds, time_per_call); the document is kept as written
        assert specs[0][7] is None
        # the document apart from runs (issue 28), compressed, read back by its run's key
        stored = load_document(con, con.execute("SELECT run_id FROM runs").fetchone()[0])
        assert stored["specializations"][0]["future_key"] == {"x": 1} and stored == json.loads(f.read_text())
        assert stored["specializations"][0]["between_rounds"] == {"count": 1, "cv_percent": None}
        assert specs[0][8:] == (False, pytest.approx(1978 / 1980), "1980.0")
        assert specs[1][1] is None and specs[1][6] == "RuntimeError: boom"
        batches = con.execute("SELECT batch, batch_ms, kernel_calls, host_secs, iterations_ms FROM batches "
                              "ORDER BY batch").fetchall()
        assert len(batches) == 3 and batches[0] == (0, 11.35, 32, 0.012, [0.35] * 4)


def test_the_same_run_is_stored_once(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    doc = hd.document([1e12], commit=hd.sha("c1"))
    a = hd.write(tmp_path / "a.json", doc)
    b = hd.write(tmp_path / "copy" / "renamed.json", doc, indent=None)  # same run, other name and layout
    first = ingest([a, a, b], db)
    assert [o.status for o in first.outcomes] == ["stored", "duplicate", "duplicate"]
    again = ingest([a, tmp_path], db)  # the directory holds both
    assert {o.status for o in again.outcomes} == {"duplicate"} and len(again.outcomes) == 3
    assert _count(db, "runs") == 1 and _count(db, "specializations") == 1


def test_a_changed_run_is_a_new_run(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([hd.write(tmp_path / "a.json", hd.document([1e12], commit=hd.sha("c1")))], db)
    ingest([hd.write(tmp_path / "a.json", hd.document([1.01e12], commit=hd.sha("c1")))], db)
    assert _count(db, "runs") == 2


def test_bad_files_store_nothing_and_are_named_while_good_ones_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    good = hd.branch_series(tmp_path / "in", hd.noisy_levels(3, specs=2))
    bad_version = hd.document([1e12], commit=hd.sha("v"), version="9.0.0")
    hd.write(tmp_path / "in" / "zz-version.json", bad_version)
    bad_field = hd.document([1e12], commit=hd.sha("f"))
    bad_field["specializations"][0]["noise_percent"] = "low"
    hd.write(tmp_path / "in" / "zz-field.json", bad_field)
    no_date = hd.document([1e12], commit=hd.sha("d"))
    del no_date["context"]["general"]["date"]
    hd.write(tmp_path / "in" / "zz-date.json", no_date)
    (tmp_path / "in" / "zz-text.json").write_text("{not json")
    report = ingest([tmp_path / "in", tmp_path / "missing.json"], db)
    errors = {Path(o.path).name: o.message for o in report.errors}
    assert set(errors) == {"zz-version.json", "zz-field.json", "zz-date.json", "zz-text.json", "missing.json"}
    assert "context.results_version" in errors["zz-version.json"] and "9.0.0" in errors["zz-version.json"]
    assert "specializations[0].noise_percent" in errors["zz-field.json"]
    assert "context.general.date" in errors["zz-date.json"]
    assert "not valid JSON" in errors["zz-text.json"]
    assert "no such file" in errors["missing.json"]
    assert len(report.stored) == len(good) == 3
    assert _count(db, "runs") == 3 and _count(db, "specializations") == 6


def test_a_file_the_database_rejects_stores_nothing_and_the_others_are_stored(tmp_path: Path) -> None:
    """A file the loader accepts but the database refuses (here a unique index the test adds,
    which two failures with one message violate): the all-in-one transaction fails, and the
    per-file retry stores every other file whole."""
    db = tmp_path / "s.duckdb"
    good = hd.branch_series(tmp_path / "in", hd.noisy_levels(2, specs=3), batches=2)
    with open_for_write(db) as con:
        con.execute("CREATE UNIQUE INDEX one_failure_per_message ON specializations (error)")
    refused = hd.document([1e12, 2e12, 3e12], commit=hd.sha("refused"), batches=2, failed=["type: t1", "type: t2"])
    bad = hd.write(tmp_path / "in" / "refused.json", refused)
    report = ingest([*good, bad], db)
    assert [o.status for o in report.outcomes] == ["stored", "stored", "error"]
    assert report.errors[0].path == str(bad) and "not stored" in (report.errors[0].message or "")
    assert _count(db, "runs") == 2 and _count(db, "specializations") == 6 and _count(db, "batches") == 12
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM specializations WHERE run_id = ?",
                           [report.errors[0].run_id]).fetchone()[0] == 0


def test_empty_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    report = ingest([tmp_path / "empty"], tmp_path / "s.duckdb")
    assert report.errors and "no .json" in (report.errors[0].message or "")
    assert not (tmp_path / "s.duckdb").exists()  # nothing to store: the store is not even opened


def test_hidden_directories_are_skipped(tmp_path: Path) -> None:
    hd.write(tmp_path / "in" / "a.json", hd.document([1e12], commit=hd.sha("a")))
    hd.write(tmp_path / "in" / ".primbench" / "b.json", hd.document([1e12], commit=hd.sha("b")))
    report = ingest([tmp_path / "in"], tmp_path / "in" / ".primbench" / "h.duckdb")
    assert len(report.outcomes) == 1


def test_run_id_is_a_content_hash() -> None:
    assert run_id_of("{}") == run_id_of("{}") != run_id_of("[]")
    assert len(run_id_of("{}")) == 32


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=12),
       split=st.integers(min_value=0, max_value=12))
def test_any_order_and_repetition_of_files_stores_each_run_once(tmp_path: Path, picks: list[int], split: int) -> None:
    src = tmp_path / "src"
    if not src.exists():
        hd.branch_series(src, hd.noisy_levels(6, specs=2), batches=1)
    files = sorted(src.glob("*.json"))
    db = tmp_path / "h.duckdb"
    db.unlink(missing_ok=True)
    chosen = [files[i] for i in picks]
    for part in (chosen[:split], chosen[split:]):
        if part:
            ingest(part, db)
    distinct = len(set(picks))
    assert _count(db, "runs") == distinct
    assert _count(db, "specializations") == 2 * distinct
    assert _count(db, "batches") == 2 * distinct  # one batch per specialization


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_every_known_results_version_is_ingested(tmp_path: Path, version: str) -> None:
    doc = hd.document([1e12], commit=hd.sha(version), version=version)
    report = ingest([hd.write(tmp_path / "r.json", doc)], tmp_path / "s.duckdb")
    assert len(report.stored) == 1


def test_extra_names_the_fields_of_4_4_0_as_results_json_does(tmp_path: Path) -> None:
    """The time per call has a column; a host timer goes to extra under its JSON name; the time
    per call's statistics stay in the document alone (schema 7), as the document wrote them."""
    from primbench.results import time_per_call_fields

    db = tmp_path / "s.duckdb"
    doc = hd.document([1.0e12, 2.0e12], commit=hd.sha("t"), version="4.4.0")
    first, second = doc["specializations"]
    first.update(time_per_call_fields([2e-4, 3e-4], first["elapsed_secs"]["gpu"], first["calls"]["kernel_calls"]))
    first["timer"] = "host"
    ingest([hd.write(tmp_path / "r.json", doc)], db)
    with open_for_query(db) as con:
        rows = con.execute("SELECT extra, gpu_seconds_per_call FROM specializations ORDER BY idx").fetchall()
        stored = load_document(con, con.execute("SELECT run_id FROM runs").fetchone()[0])
    extra = json.loads(rows[0][0])
    assert set(extra) >= {"timer"} and extra["timer"] == "host" and "time_per_call" not in extra
    assert "gpu_seconds_per_call" not in extra and not any(k.startswith("written") for k in extra)
    assert stored["specializations"][0]["time_per_call"] == first["time_per_call"]
    assert rows[0][1] == pytest.approx(first["gpu_seconds_per_call"])
    assert rows[1][0] is None or "timer" not in json.loads(rows[1][0])  # GPU events: not written, not stored
    assert rows[1][1] == pytest.approx(second["elapsed_secs"]["gpu"] / second["calls"]["kernel_calls"])


def test_a_batch_ingested_in_chunks_stores_what_one_chunk_does(tmp_path: Path) -> None:
    """Chunked ingest (issue 28): a chunk of one file at a time gives the same rows, the same
    outcomes (an in-call duplicate, a bad file), the same date flags (against the branch's
    newest run before the call) and one commit for a short and a full hash in different chunks."""
    from primbench.history.storage.contract import open_store
    from primbench.history.storage.ingest import ingest_files

    full = hd.sha("c1")
    docs = [hd.document([1.0e12], commit=full[:8], date="2026-03-01T10:00:00+00:00"),
            hd.document([1.1e12], commit=hd.sha("c2"), date="2026-03-01T11:00:00+00:00"),
            hd.document([1.2e12], commit=full, date="2026-03-01T12:00:00+00:00"),
            hd.document([1.3e12], commit=hd.sha("c3"), date="2026-03-01T09:00:00+00:00")]  # earlier: no flag
    d = tmp_path / "in"
    files = [hd.write(d / f"r{i}.json", doc) for i, doc in enumerate(docs)]
    files.append(hd.write(d / "copy.json", docs[1], indent=None))
    (d / "zbad.json").write_text("{")
    answers = []
    for label, chunk in (("one", 1 << 30), ("many", 1)):
        store = open_store(tmp_path / f"{label}.duckdb")
        report = ingest_files(store.writer, "x", [d], chunk_bytes=chunk)
        outcomes = [(Path(o.path).name, o.status, o.run_id) for o in report.outcomes]
        with store.read() as r:
            runs = r.con.execute('SELECT run_id, "commit", general FROM runs ORDER BY run_id').fetchall()
            specs = r.con.execute("SELECT * EXCLUDE (run_id), run_id FROM specializations ORDER BY run_id").fetchall()
        answers.append((outcomes, runs, specs, [f.run_id for f in report.date_flags]))
    assert answers[0] == answers[1]
    outcomes, runs, _, flags = answers[0]
    assert [(n, s) for n, s, _ in outcomes] == [
        ("copy.json", "stored"), ("r0.json", "stored"), ("r1.json", "duplicate"),
        ("r2.json", "stored"), ("r3.json", "stored"), ("zbad.json", "error")]
    assert {c for _, c, _ in runs} == {full, hd.sha("c2"), hd.sha("c3")} and flags == []


def test_a_run_with_two_specializations_of_one_name_is_refused(tmp_path: Path) -> None:
    """Results 4.8.0 may measure one specialization on two GPUs (``--replicate``); the history
    keys a run's specializations by name, and schema 7 has no primary-key index to refuse the
    second row: ingest refuses the file, naming it, and stores nothing of it."""
    db = tmp_path / "s.duckdb"
    doc = hd.document([1e12, 2e12], commit=hd.sha("r"), version="4.8.0")
    first, second = doc["specializations"]
    second["name"], first["gpu"], second["gpu"] = first["name"], {"index": 0}, {"index": 1}
    report = ingest([hd.write(tmp_path / "r.json", doc)], db)
    assert [o.status for o in report.outcomes] == ["error"]
    assert "specializations[1].name: duplicate name 'type: t0'" in (report.outcomes[0].message or "")
    assert not db.exists()  # nothing stored: the file was refused before the store was opened
