"""Many machines, one history: each runner writes its own Parquet parts; readers see the union."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from primbench.history.errors import HistoryError
from primbench.history.selector import Selector as S
from primbench.history.storage.contract import open_store
from primbench.history.storage.duckdb_file import connect
from primbench.history.storage.parquet import FOLDER_MIGRATIONS, MIGRATIONS_TABLE, ParquetStore, runner_name
from primbench.history.storage.schema import SCHEMA_VERSION
from tests import history_data as hd
from tests.history_data import ingest_shared, merge, open_for_query

ROOT = Path(__file__).resolve().parents[1]


def test_runners_write_their_own_parts_and_queries_read_the_union(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    a = hd.branch_series(tmp_path / "a", hd.noisy_levels(12, specs=3, shifts={6: -0.05}, cv=0.002), batches=2)
    b = hd.branch_series(tmp_path / "b", hd.noisy_levels(4, specs=3, seed=5), branch="feat",
                         start=hd.START.replace(day=5))
    ra = ingest_shared(a, shared, runner="gpu-box-1")
    rb = ingest_shared([*b, a[0]], shared, runner="gpu box 2!")  # a[0] is already in the dataset
    assert len(ra.stored) == 12 and len(rb.stored) == 4 and len(rb.duplicates) == 1
    assert sorted(p.name for p in (shared / "runs").iterdir()) == ["runner=gpu-box-1", "runner=gpu_box_2"]
    assert not list(shared.rglob("*.tmp"))
    runs = open_store(shared).runs()
    assert len(runs) == 16
    assert set(open_store(shared).branches()["branch"]) == {"main", "feat"}
    assert len(open_store(shared).series(S(branch="main", name="type: t0"))) == 12
    cps = open_store(shared).regressions(S(branch="main"))
    assert set(cps["position"]) == {6}
    with open_for_query(shared) as con:
        assert con.execute("SELECT count(*) FROM batches").fetchone()[0] == 12 * 3 * 2


def test_the_same_run_written_by_two_runners_counts_once(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    files = hd.branch_series(tmp_path / "a", hd.noisy_levels(3, specs=2))
    # both runners check the dataset before either writes: both write the runs
    from primbench.history.storage import parquet as shared_mod

    ingest_shared(files, shared, runner="r1")
    original = shared_mod.dataset_run_ids
    shared_mod.dataset_run_ids = lambda directory: set()  # simulate the race
    try:
        ingest_shared(files, shared, runner="r2")
    finally:
        shared_mod.dataset_run_ids = original
    assert len(list((shared / "runs").glob("*/*.parquet"))) == 2
    assert len(open_store(shared).runs()) == 3
    with open_for_query(shared) as con:
        assert con.execute("SELECT count(*) FROM specializations").fetchone()[0] == 6


def test_merge_into_a_duckdb_store_is_idempotent(tmp_path: Path) -> None:
    shared, db = tmp_path / "shared", tmp_path / "h.duckdb"
    ingest_shared(hd.branch_series(tmp_path / "a", hd.noisy_levels(5, specs=2)), shared, runner="r1")
    assert merge(shared, db).added_runs == 5
    ingest_shared(hd.branch_series(tmp_path / "b", hd.noisy_levels(2, specs=2, seed=9), branch="x"), shared,
                  runner="r2")
    assert merge(shared, db).added_runs == 2
    assert merge(shared, db).added_runs == 0
    assert len(open_store(db).runs()) == 7
    with open_for_query(db) as con:
        assert con.execute("SELECT count(*) FROM specializations").fetchone()[0] == 14


@pytest.mark.slow
def test_runners_writing_at_the_same_moment_lose_nothing(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    groups = [hd.branch_series(tmp_path / f"g{i}", hd.noisy_levels(10, specs=5, seed=i), prefix=f"g{i}")
              for i in range(3)]
    at = time.time() + 1.5
    procs = []
    for i, files in enumerate(groups):
        code = textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from tests.history_data import ingest_shared
            files = {[str(f) for f in files]!r}
            while time.time() < {at!r}:
                time.sleep(0.001)
            for j in range(0, len(files), 2):
                ingest_shared(files[j:j + 2], {str(shared)!r}, runner="runner-{i}")
        """)
        procs.append(subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert len(open_store(shared).runs()) == 30
    with open_for_query(shared) as con:
        assert con.execute("SELECT count(*) FROM specializations").fetchone()[0] == 150
    # the three writers recorded the folder's migrations together: one part each, every one once
    versions = [v for v, _ in FOLDER_MIGRATIONS]
    assert sorted(p.name for p in (shared / MIGRATIONS_TABLE).iterdir()) == [f"{v:04d}.parquet" for v in versions]
    assert [m.version for m in open_store(shared).migrations()] == versions


def test_writers_migrating_at_once_record_each_migration_once(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    at = time.time() + 1.5
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from primbench.history.storage.parquet import ParquetStore
        while time.time() < {at!r}:
            pass
        print(",".join(map(str, ParquetStore({str(shared)!r}).migrate())))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(6)]
    recorded: list[int] = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        recorded += [int(v) for v in out.strip().split(",") if v]
    versions = [v for v, _ in FOLDER_MIGRATIONS]
    assert sorted(recorded) == versions  # each recorded by exactly one of the six
    assert [m.version for m in ParquetStore(shared).migrations()] == versions
    assert ParquetStore(shared).migrate() == []


def test_a_writer_killed_mid_migration_leaves_the_folder_at_the_migrations_before(tmp_path: Path) -> None:
    """SIGKILL while the part of migration 3 is being written (after its temporary, before the
    link): 1 and 2 are recorded, 3 is not, readers pass its temporary over, the next writer
    records 3 on."""
    shared = tmp_path / "shared"
    marker = tmp_path / "in-migration-3"
    code = textwrap.dedent(f"""
        import pathlib, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from primbench.history.storage import parquet
        real = parquet._fsync
        def fsync(path):
            real(path)
            if path.name.startswith(".0003.parquet."):
                pathlib.Path({str(marker)!r}).write_text("")
                time.sleep(120)
        parquet._fsync = fsync
        parquet.ParquetStore({str(shared)!r}).migrate()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not marker.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        assert marker.exists(), proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    store = ParquetStore(shared)
    assert [m.version for m in store.migrations()] == [1, 2]
    assert [p.name[:6] for p in (shared / MIGRATIONS_TABLE).glob(".*.tmp")] == [".0003."]
    store.ingest(hd.branch_series(tmp_path / "a", hd.noisy_levels(2)))  # a writer records the rest first
    versions = [v for v, _ in FOLDER_MIGRATIONS]
    assert [m.version for m in store.migrations()] == versions
    info = store.info()
    assert info["schema_version"] == SCHEMA_VERSION and info["runs"] == 2
    assert info["migrations"] == [str(m) for m in store.migrations()]


def test_a_folder_a_newer_primbench_migrated_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    ingest_shared(hd.branch_series(tmp_path / "a", hd.noisy_levels(2)), shared, runner="r1")
    con = connect(tmp_path / "tmp.duckdb", read_only=False)
    try:
        con.execute("COPY (SELECT 99 AS version, 'from the future' AS description, current_timestamp AS applied_at) "
                    "TO ? (FORMAT parquet)", [str(shared / MIGRATIONS_TABLE / "0099.parquet")])
    finally:
        con.close()
    more = hd.branch_series(tmp_path / "b", hd.noisy_levels(1), prefix="b")
    for act in (lambda: open_store(shared).runs(), ParquetStore(shared).migrate,
                lambda: ingest_shared(more, shared, runner="r2")):
        with pytest.raises(HistoryError, match="schema version 99, newer"):
            act()


def test_a_folder_written_before_migrations_were_recorded(tmp_path: Path) -> None:
    """Parts only, no schema_migrations/: read as before, its version from its parts; `migrate`
    records the migrations and changes no part."""
    shared = tmp_path / "shared"
    ingest_shared(hd.branch_series(tmp_path / "a", hd.noisy_levels(2)), shared, runner="r1")
    for f in (shared / MIGRATIONS_TABLE).iterdir():
        f.unlink()
    (shared / MIGRATIONS_TABLE).rmdir()
    before = sorted((p, p.stat().st_mtime_ns) for p in shared.rglob("*.parquet"))
    store = ParquetStore(shared)
    info = store.info()
    assert (info["schema_version"], info["migrations"], info["runs"]) == (SCHEMA_VERSION, [], 2)
    assert store.migrate() == [v for v, _ in FOLDER_MIGRATIONS]
    after = sorted((p, p.stat().st_mtime_ns) for p in shared.rglob("*.parquet") if MIGRATIONS_TABLE not in p.parts)
    assert after == before


def test_parts_from_a_newer_schema_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    ingest_shared(hd.branch_series(tmp_path / "a", hd.noisy_levels(2)), shared, runner="r1")
    part = next((shared / "runs").glob("*/*.parquet"))
    con = connect(tmp_path / "tmp.duckdb", read_only=False)
    try:
        con.execute("COPY (SELECT * REPLACE (99 AS store_schema) FROM read_parquet(?)) TO ? (FORMAT parquet)",
                    [str(part), str(part.with_name("part-future.parquet"))])
    finally:
        con.close()
    with pytest.raises(HistoryError, match="schema version 99, newer"):
        open_store(shared).runs()


def test_a_directory_that_is_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="not a primbench Parquet history"):
        open_store(tmp_path).runs()


def test_runner_names_are_safe_folder_names(monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner_name("ci/../../etc") == "ci_.._.._etc"
    assert runner_name("..") == "runner"
    monkeypatch.setenv("PRIMBENCH_RUNNER", "from-env")
    assert runner_name(None) == "from-env"


def test_parts_written_before_the_config_key_are_read_and_keyed(tmp_path: Path) -> None:
    """Parts of schema 2 have no runs.config_key: readers and merge fill it in from the settings."""
    shared = tmp_path / "shared"
    old = hd.branch_series(tmp_path / "a", hd.noisy_levels(3, specs=1), settings={"size": 1048576})
    new = hd.branch_series(tmp_path / "b", hd.noisy_levels(2, specs=1), prefix="b",
                           start=hd.START.replace(day=3))
    ingest_shared(old, shared, runner="old")
    con = connect(tmp_path / "scratch.duckdb", read_only=False)
    try:  # rewrite the old runner's runs part as a schema-2 writer wrote it
        for part in (shared / "runs" / "runner=old").glob("*.parquet"):
            con.execute("COPY (SELECT * EXCLUDE (config_key) REPLACE (2 AS store_schema) FROM read_parquet(?)) "
                        "TO ? (FORMAT parquet)", [str(part), str(part) + ".v2"])
            Path(str(part) + ".v2").replace(part)
            assert "config_key" not in {d[0] for d in con.execute(
                "SELECT * FROM read_parquet(?) LIMIT 0", [str(part)]).description}
    finally:
        con.close()
    runs = open_store(shared).runs()  # old parts alone
    assert list(runs["config_key"]) == ["size=1MiB"] * 3
    ingest_shared(new, shared, runner="new")  # old and new parts together
    runs = open_store(shared).runs()
    assert sorted(runs["config_key"]) == ["size=128MiB"] * 2 + ["size=1MiB"] * 3
    db = tmp_path / "merged.duckdb"
    assert merge(shared, db).added_runs == 5
    assert sorted(open_store(db).runs()["config_key"]) == ["size=128MiB"] * 2 + ["size=1MiB"] * 3
    assert len(open_store(db).series(S(branch="main", name="type: t0", config="size=1MiB"))) == 3


def test_parts_written_before_the_time_per_call_get_it_when_read_and_merged(tmp_path: Path) -> None:
    """Parts of schema 4 have no specializations.gpu_seconds_per_call: readers and merge compute
    it as ingest does, so --metric time reads them."""
    shared = tmp_path / "shared"
    ingest_shared(hd.branch_series(tmp_path / "a", hd.noisy_levels(3, specs=2)), shared, runner="old")
    con = connect(tmp_path / "scratch.duckdb", read_only=False)
    try:  # rewrite the parts as a schema-4 writer wrote them
        for part in (shared / "specializations" / "runner=old").glob("*.parquet"):
            con.execute("COPY (SELECT * EXCLUDE (gpu_seconds_per_call) FROM read_parquet(?)) TO ? (FORMAT parquet)",
                        [str(part), str(part) + ".v4"])
            Path(str(part) + ".v4").replace(part)
        for part in (shared / "runs" / "runner=old").glob("*.parquet"):
            con.execute("COPY (SELECT * REPLACE (4 AS store_schema) FROM read_parquet(?)) TO ? (FORMAT parquet)",
                        [str(part), str(part) + ".v4"])
            Path(str(part) + ".v4").replace(part)
    finally:
        con.close()
    def per_call(store: Any) -> tuple[list[float], list[float]]:
        """GPU seconds per call as read, and as the bytes of a call over its bytes/s."""
        time = store.series(S(branch="main"), metric="time")
        rate = store.series(S(branch="main"), metric="bytes")
        return time["value"].tolist(), [2 * 134217728 / v for v in rate["value"]]

    got, expected = per_call(open_store(shared))
    assert len(got) == 6 and got == pytest.approx(expected)
    db = tmp_path / "merged.duckdb"
    assert merge(shared, db).added_runs == 3
    got, expected = per_call(open_store(db))
    assert got == pytest.approx(expected)
