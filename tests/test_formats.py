"""The readers of other harnesses' files (primbench/formats, issue 23): each committed sample
(tests/formats/README.md says where each came from) loads into the model, `compare` and
`history ingest` take it, one history holds four harnesses' runs of one kernel side by side,
and fuzzed variants load or are bad files named in one line."""

from __future__ import annotations

import copy
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from primbench.formats import FORMATS
from primbench.history.storage.ingest import full_commit
from primbench.results import RESULTS_VERSION, Results, ResultsFileError, load_results, parse_results, results_from_dict
from tests import fuzz
from tests.history_data import ingest, open_for_query

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "formats"
PRIMBENCH_H200 = ROOT / "tests" / "gpu_results" / "gpu-copy-run1.json"
ENV = {"NO_COLOR": "1", "CLICOLOR_FORCE": None, "COLUMNS": "200"}

#: sample -> (version, format, algorithm, names)
EXPECTED: dict[str, tuple[str, str, str, list[str]]] = {
    "cpp-4.0.0-seed.json": ("4.0.0", "primbench", "copy", ["type: char", "type: long long"]),
    "cpp-3.0.0.json": ("3.0.0", "cpp-legacy", "copy", ["type: char", "type: long long"]),
    "copy.csv": ("cpp-csv", "cpp-csv", "copy", ["type: char", "type: long long"]),
    "nvbench-copy-h200.json": ("nvbench-json 1.0.0", "nvbench", "copy", ["type: long long", "type: char"]),
    "nvbench-test_ref-excerpt.json": ("nvbench-json 1.0.0", "nvbench", "simple", ["device: 0", "device: 1"]),
    "gbench-rocprim-copy.json": ("gbench-json", "gbench", "copy", ["type: i8", "type: i64"]),
    "gbench-copy.json": ("gbench-json", "gbench", "copy", ["type: char", "type: long long"]),
    "pytest-benchmark-copy.json": ("pytest-benchmark-json 5.3.1", "pytest-benchmark", "copy",
                                   ["type: i8", "type: i64"]),
}


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=ENV)


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_every_sample_loads_into_the_model(sample: str) -> None:
    version, fmt, algorithm, names = EXPECTED[sample]
    results = load_results(SAMPLES / sample)
    assert (results.version, results.format, results.algorithm) == (version, fmt, algorithm)
    assert [s.name for s in results.specializations] == names
    for spec in results.specializations:
        assert not spec.failed and spec.meta.get("algo") == algorithm
    again = results_from_dict(results.as_written(), "again")  # what history keeps reads back
    assert [s.name for s in again.specializations] == names


def test_the_csv_marks_what_it_lacks_and_keeps_its_throughputs() -> None:
    csv = load_results(SAMPLES / "copy.csv")
    seed = load_results(SAMPLES / "cpp-4.0.0-seed.json")
    assert {"batches", "context", "date"} <= set(csv.lacks)
    for a, b in zip(csv.specializations, seed.specializations, strict=True):
        assert (a.name, a.bytes_per_second, a.items_per_second, a.noise_percent) == \
               (b.name, b.bytes_per_second, b.items_per_second, b.noise_percent)
        assert a.batches is None and a.gpu_seconds_per_call is None  # unknown, not invented
    assert csv.gpu.name is None and csv.date is not None  # dated by the file's modification time


def test_the_older_cpp_layout_maps_onto_the_4_0_0_document() -> None:
    old = load_results(SAMPLES / "cpp-3.0.0.json")
    seed = load_results(SAMPLES / "cpp-4.0.0-seed.json")
    assert old.gpu.name == seed.gpu.name and old.settings.size == seed.settings.size == 134217728
    assert old.settings.cache_size == 256 * 2**20  # what the C++ harness cleared, as for 4.0.0
    assert old.commit == "3f2a9c1" and old.general.temperature_type == "edge"
    assert old.context.custom_settings == {"extra_percent": 0}
    assert old.as_written() == json.loads((SAMPLES / "cpp-3.0.0.json").read_text())
    assert [s.bytes_per_second for s in old.specializations] == [s.bytes_per_second for s in seed.specializations]


def test_nvbench_summaries_and_jsonbin_samples_map_to_the_model() -> None:
    results = load_results(SAMPLES / "nvbench-copy-h200.json")
    spec = results.specializations[1]  # type: char
    assert results.gpu.name == "NVIDIA H200" and results.gpu.arch == "sm_90"
    assert spec.gpu_seconds_per_call == pytest.approx(0.0002479446310629375)
    assert spec.bytes_per_second == pytest.approx(1082642745072.6333)
    assert spec.noise_percent == pytest.approx(0.18504383989448378)
    assert spec.sm_clock is not None and spec.sm_clock.default_mhz == 1980.0
    assert spec.sm_clock.average_mhz == pytest.approx(1978.3529, rel=1e-6)
    assert spec.batches is not None and len(spec.batches) == spec.kernel_calls == 2017  # one sample, one batch
    assert results.specializations[0].noise_timeout  # 0.9 % over its max_noise of 0.5 %


def test_nvbench_without_its_sample_files_still_reads_and_a_wrong_size_is_an_error(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "nvbench-copy-h200.json", tmp_path / "n.json")
    alone = load_results(tmp_path / "n.json")
    assert all(s.batches is None for s in alone.specializations)
    bins = tmp_path / "nvbench-copy-h200.json-bin"
    shutil.copytree(SAMPLES / "nvbench-copy-h200.json-bin", bins)
    assert all(s.batches for s in load_results(tmp_path / "n.json").specializations)
    (bins / "1.bin").write_bytes((bins / "1.bin").read_bytes()[:-4])
    with pytest.raises(ResultsFileError, match=r"holds 2016 samples, the summary says 2017"):
        load_results(tmp_path / "n.json")


def test_google_benchmark_repetitions_are_rounds_and_rocprim_names_are_normalised() -> None:
    results = load_results(SAMPLES / "gbench-rocprim-copy.json")
    spec = results.specializations[0]
    raw = json.loads((SAMPLES / "gbench-rocprim-copy.json").read_text())
    mean = next(b for b in raw["benchmarks"] if b.get("aggregate_name") == "mean")
    cv = next(b for b in raw["benchmarks"] if b.get("aggregate_name") == "cv")
    assert spec.gpu_seconds_per_call == pytest.approx(mean["real_time"] * 1e-9)
    assert spec.noise_percent == pytest.approx(cv["real_time"] * 100)
    assert len(spec.rounds) == 3 and spec.timer == "events"  # manual time: the benchmark's own timer
    assert spec.meta["cfg"] == "default_config" and "cfg" not in spec.name


@pytest.mark.parametrize(("name", "expected"), [
    ('{"lvl":"device","algo":"radix_sort","key_type":"int","value_type":"rocprim::half","cfg":"default_config"}'
     "/manual_time", ("radix_sort", "key_type: i32, value_type: half")),
    ('{"lvl":"block","algo":"scan","type":"unsigned long long","cfg":{"bs":256,"ipt":4,"method":'
     '"rocprim::block_scan_algorithm::using_warp_scan"}}/iterations:100/manual_time',
     ("scan", "cfg: { bs: 256, ipt: 4, method: block_scan_algorithm::using_warp_scan }, type: u64")),
    ("BM_memcpy/1024", ("BM_memcpy", "1024")),
    ("BM_memcpy", ("BM_memcpy", "BM_memcpy")),
    ("copy/size:1024/type:i8/real_time", ("copy", "size: 1024, type: i8")),
])
def test_gbench_names(name: str, expected: tuple[str, str]) -> None:
    doc = {"context": {"date": "2026-01-01T00:00:00+00:00", "executable": "b"},
           "benchmarks": [{"name": name, "run_name": name, "run_type": "iteration", "iterations": 10,
                           "real_time": 5.0, "cpu_time": 5.0, "time_unit": "us"}]}
    results = parse_results(json.dumps(doc))
    assert (results.algorithm, results.specializations[0].name) == expected


def test_pytest_benchmark_means_and_rounds() -> None:
    results = load_results(SAMPLES / "pytest-benchmark-copy.json")
    raw = json.loads((SAMPLES / "pytest-benchmark-copy.json").read_text())
    spec, stats = results.specializations[0], raw["benchmarks"][0]["stats"]
    assert spec.gpu_seconds_per_call == stats["mean"] and spec.timer == "host"
    assert spec.time_per_call is not None and spec.time_per_call.median == stats["median"]
    assert spec.batches is not None and len(spec.batches) == stats["rounds"]  # --benchmark-save-data
    assert results.commit is None and results.branch is None  # "unversioned" outside a repository


def test_a_file_of_no_known_format_names_every_format_tried(tmp_path: Path) -> None:
    for text in ('{"benchmarks": 3, "what": 1}', "hello, world\n", "a;b;c\n1;2;3\n"):
        f = tmp_path / "x.json"
        f.write_text(text)
        with pytest.raises(ResultsFileError) as info:
            load_results(f)
        message = str(info.value)
        assert "\n" not in message and all(name in message for name in FORMATS), message
        assert f"primbench results.json 4.0.0-{RESULTS_VERSION}" in message  # the versions this checkout reads
        r = invoke("compare", str(f), str(f))
        assert r.exit_code == 2 and "formats tried" in r.stderr


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_compare_and_ingest_take_every_format(tmp_path: Path, sample: str) -> None:
    path = str(SAMPLES / sample)
    r = invoke("compare", path, path)
    assert r.exit_code == 0, r.output
    r = invoke("history", "ingest", path, "--db", str(tmp_path / "s.duckdb"))
    assert r.exit_code == 0, r.output
    assert "1 run(s) stored" in r.stderr + r.stdout


def test_compare_the_csv_against_the_json_of_one_run() -> None:
    r = invoke("compare", str(SAMPLES / "cpp-4.0.0-seed.json"), str(SAMPLES / "copy.csv"), "--format", "json")
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["specializations"]) == 2


def test_a_directory_of_csv_files_is_one_side(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "copy.csv", tmp_path / "copy.csv")
    r = invoke("compare", str(tmp_path), str(SAMPLES / "copy.csv"))
    assert r.exit_code == 0, r.output


def test_ingest_overrides_branch_and_commit(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    doc = json.loads((SAMPLES / "cpp-4.0.0-seed.json").read_text())
    doc["context"]["general"].update(branch_name="DETACHED", commit_hash="0123abc")
    f = tmp_path / "r.json"
    f.write_text(json.dumps(doc))
    r = invoke("history", "ingest", str(f), str(SAMPLES / "copy.csv"), "--db", str(db), "--branch", "main",
               "--commit", "0123abcdef")
    assert r.exit_code == 0, r.output
    with open_for_query(db) as con:
        rows = con.execute('SELECT branch, "commit", branch_source, commit_source FROM runs ORDER BY 1').fetchall()
    assert rows == [("main", "0123abcdef", "ingest --branch", "ingest --commit")] * 2
    r = invoke("history", "ingest", str(f), "--db", str(db), "--branch", " ")
    assert r.exit_code == 2 and "--branch" in r.stderr


def test_a_short_and_the_full_hash_are_one_commit(tmp_path: Path) -> None:
    full = "3f2a9c1e5d7b9a0c1e2f3a4b5c6d7e8f9a0b1c2d"
    assert full_commit("3f2a9c1", [full, "deadbeef" * 5]) == full
    assert full_commit("3F2A9C1", [full]) == full
    assert full_commit("3f2a", [full]) == "3f2a"  # shorter than git's 7: not taken for it
    assert full_commit("3f2a9c1", [full, full[:-1] + "e"]) == "3f2a9c1"  # ambiguous: kept
    assert full_commit("DETACHED", [full]) == "DETACHED"
    db = tmp_path / "s.duckdb"
    doc = json.loads((SAMPLES / "cpp-4.0.0-seed.json").read_text())
    for name, commit, date in (("short.json", "3f2a9c1", "2025-11-24T15:01:50+00:00"),
                               ("full.json", full, "2025-11-24T16:01:50+00:00")):
        d = copy.deepcopy(doc)
        d["context"]["general"].update(branch_name="main", commit_hash=commit, date=date)
        (tmp_path / name).write_text(json.dumps(d))
    ingest([tmp_path / "short.json"], db)  # the short hash first: renamed when the full one comes
    ingest([tmp_path / "full.json"], db)
    d = copy.deepcopy(doc)
    d["context"]["general"].update(branch_name="main", commit_hash="3f2a9c1e5", date="2025-11-24T17:01:50+00:00")
    (tmp_path / "later.json").write_text(json.dumps(d))
    ingest([tmp_path / "later.json"], db)  # a short hash after the full one: stored as the full one
    with open_for_query(db) as con:
        assert con.execute('SELECT DISTINCT "commit" FROM runs').fetchall() == [(full,)]
    r = invoke("history", "series", "type: char", "--db", str(db), "--format", "json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)) == 1  # one point: one commit


def test_one_history_holds_four_harnesses_side_by_side(tmp_path: Path) -> None:
    """The README's example: C++ CSV, NVBench, Google Benchmark and primbench runs of the copy
    kernel in one store, and one series query that shows them together."""
    db = str(tmp_path / "h.duckdb")
    commits = {"1a2b3c4": SAMPLES / "copy.csv", "5d6e7f8": SAMPLES / "nvbench-copy-h200.json",
               "9a8b7c6": SAMPLES / "gbench-copy.json", "0f1e2d3": PRIMBENCH_H200}
    for commit, sample in commits.items():
        r = invoke("history", "ingest", str(sample), "--db", db, "--branch", "main", "--commit", commit)
        assert r.exit_code == 0, r.output
    r = invoke("history", "series", "type: long long", "--db", db, "--per-run", "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert len(rows) == 4 and {row["commit"] for row in rows} == set(commits)
    assert all(row["algorithm"] == "copy" and row["metric"] == "bytes_per_second" for row in rows)
    with open_for_query(Path(db)) as con:
        versions = {v for (v,) in con.execute("SELECT results_version FROM runs").fetchall()}
    own = json.loads(PRIMBENCH_H200.read_text())["context"]["results_version"]  # the H200 file's schema
    assert versions == {"cpp-csv", "nvbench-json 1.0.0", "gbench-json", own}


def _mutated(doc: Any, rng: random.Random) -> bytes:
    """A sample's tree changed blindly (tests/fuzz.py's mutations), sometimes its bytes cut."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        place = fuzz.random_place(doc, rng)
        if place is None:
            break
        path, parent = place
        if rng.random() < 0.4 and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            fuzz._set(doc, path, rng.choice([fuzz._random_value(rng), fuzz.hostile_text(rng),
                                             rng.choice(fuzz.HOSTILE_NUMBERS)]))
    try:
        data = json.dumps(doc).encode("utf-8", "surrogatepass")
    except (RecursionError, ValueError):
        data = b"{"
    if rng.random() < 0.1:
        data = data[:rng.randrange(len(data) + 1)]
    return data


@pytest.mark.parametrize("sample", sorted(s for s in EXPECTED if s.endswith(".json")))
def test_fuzzed_variants_load_or_are_bad_files(tmp_path: Path, sample: str) -> None:
    rng = random.Random(sample)
    doc = json.loads((SAMPLES / sample).read_text())
    for i in range(60):
        f = tmp_path / f"{i}.json"
        f.write_bytes(_mutated(doc, rng))
        try:
            results = load_results(f)
        except ResultsFileError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(f))
            continue
        assert isinstance(results, Results)
        results.to_dict()


def test_fuzzed_csv_rows_load_or_are_bad_files(tmp_path: Path) -> None:
    rng = random.Random(23)
    lines = (SAMPLES / "copy.csv").read_text().splitlines()
    for i in range(80):
        mutated = list(lines)
        j = rng.randrange(len(mutated))
        cells = mutated[j].split(",")
        cells[rng.randrange(len(cells))] = rng.choice(["", "-1", "nan", "1e999", "x", '"', fuzz.hostile_text(rng)])
        mutated[j] = ",".join(cells)
        f = tmp_path / f"{i}.csv"
        f.write_text("\n".join(mutated) + "\n", encoding="utf-8", errors="surrogatepass")
        try:
            load_results(f)
        except ResultsFileError as exc:
            assert "\n" not in str(exc)


def test_a_directory_takes_a_csv_only_without_its_json_and_only_a_results_csv(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "cpp-4.0.0-seed.json", tmp_path / "run.json")
    shutil.copy(SAMPLES / "copy.csv", tmp_path / "run.csv")  # --csv-out beside --json-out: the same run
    shutil.copy(SAMPLES / "copy.csv", tmp_path / "other.csv")  # a CSV alone: a run of its own
    (tmp_path / "trace.csv").write_text("t,temp\n0,40\n")  # not a results file: not taken
    from primbench.compare.core import load_side

    assert sorted(Path(r.source).name for r in load_side(tmp_path)) == ["other.csv", "run.json"]
    report = ingest([tmp_path], tmp_path / "s.duckdb")
    assert sorted(Path(o.path).name for o in report.outcomes) == ["other.csv", "run.json"]
    assert not report.errors


def test_hostile_keys_and_names_in_a_foreign_file_stay_one_line(tmp_path: Path) -> None:
    doc = json.loads((SAMPLES / "nvbench-copy-h200.json").read_text())
    state = doc["benchmarks"][0]["states"][0]
    state["summaries"][0]["data"][0]["name"] = "value\n\x1b[2J"
    state["summaries"][0]["data"][0]["value"] = "not a number"
    state["summaries"][0]["data"][0]["type"] = "int64"
    state["summaries"][-1]["data"][0]["value"] = "x\ny.bin"
    f = tmp_path / "n.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError) as info:
        load_results(f)
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


def test_a_short_hash_becomes_the_full_one_of_a_shared_folder(tmp_path: Path) -> None:
    from primbench.history.storage.parquet import dataset_commits
    from tests.history_data import ingest_shared

    full = "3f2a9c1e5d7b9a0c1e2f3a4b5c6d7e8f9a0b1c2d"
    doc = json.loads((SAMPLES / "cpp-4.0.0-seed.json").read_text())
    for name, commit, date in (("full.json", full, "2025-11-24T15:01:50+00:00"),
                               ("short.json", "3f2a9c1", "2025-11-24T16:01:50+00:00")):
        d = copy.deepcopy(doc)
        d["context"]["general"].update(branch_name="main", commit_hash=commit, date=date)
        (tmp_path / name).write_text(json.dumps(d))
        ingest_shared([tmp_path / name], tmp_path / "shared", runner="r1")
    assert dataset_commits(tmp_path / "shared") == {full}
