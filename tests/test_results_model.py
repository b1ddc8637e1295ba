"""The typed results model (primbench.results): what the executor writes reads back equal,
keys and nesting as before the model, older versions through their upgrade steps, and bad
input refused in one line that names the file and the field."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

import primbench as pb
from primbench import results as model
from primbench.clocks import clock_record
from primbench.console import Reporter, make_console
from primbench.results import (
    KNOWN_VERSIONS,
    RESULTS_VERSION,
    UPGRADES,
    ResultsFileError,
    SettingsRecord,
    SmClock,
    ThermalRecord,
    load_results,
    parse_results,
    results_from_dict,
    upgrade,
)
from primbench.settings import Settings
from primbench.thermal import ThermalControl
from tests.compare_data import document, spec
from tests.fakes import FakeDevice
from tests.test_executor import Copy

ROOT = Path(__file__).resolve().parents[1]

pb.register_type(np.int32, "int")


def run(tmp_path: Path, *args: str, device: FakeDevice | None = None, custom: bool = False) -> tuple[dict, Path]:
    """A fake-device run of three specializations ("type: int" fails unless the run is dry);
    the document it returned and the results.json it wrote."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "results.json"
    argv = ["--json-out", str(out), "--csv-out", str(tmp_path / "results.csv"), "--min-secs", "0", *args]
    ex = pb.Executor(argv, device=device or FakeDevice(0.25, sm_clock_mhz=1700.0),
                     reporter=Reporter(make_console(open(tmp_path / "log.txt", "w"))))  # noqa: SIM115
    if custom:
        ex.get("extra_percent", 1.5, "a float option")
        ex.get("flag", True, "a bool option")
    ex.queue(Copy(np.int8))
    ex.queue(Copy(np.int64))
    ex.queue(Copy(np.int32, fail=True))
    report = ex.run()
    assert report.exit_code == (0 if "--dry" in args else 1)  # the failing specialization
    returned = dict(report)
    assert returned == json.loads(out.read_text())
    return returned, out


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("args", [
    ("--rounds", "3", "--output-batches"),
    ("--rounds", "1", "--spaces-per-indent", "0"),
    ("--dry",),
])
def test_a_run_written_reads_back_equal_and_writes_the_same_bytes(tmp_path: Path, args: tuple[str, ...]) -> None:
    written, path = run(tmp_path, *args, custom=True)
    loaded = load_results(path)
    assert loaded.to_dict() == written == loaded.as_written()
    assert results_from_dict(written) == loaded == parse_results(loaded.dumps())
    indent = 0 if "--spaces-per-indent" in args else 4
    assert loaded.dumps(indent) == path.read_text()  # read, then written again: the same file
    assert loaded.csv_text() == (tmp_path / "results.csv").read_text()
    assert loaded.version == RESULTS_VERSION and loaded.written_version == RESULTS_VERSION


def test_the_model_holds_rounds_batches_clock_failures_and_dry_runs(tmp_path: Path) -> None:
    _, path = run(tmp_path, "--rounds", "3", "--output-batches", custom=True)
    results = load_results(path)
    char, failed, _ = results.specializations
    assert (char.name, failed.name) == ("type: char", "type: int")
    assert [r.round for r in char.rounds] == [0, 1, 2] and char.between_rounds is not None
    assert char.between_rounds.count == 3 and char.cv_between_rounds_percent is not None
    assert char.batches is not None and {b.round for b in char.batches} == {0, 1, 2}
    assert len(char.batches) == char.batch_count == sum(r.batch_count or 0 for r in char.rounds)
    assert char.sm_clock is not None and char.sm_clock.average_mhz == pytest.approx(1700.0)
    assert char.sm_clock.below_expected and all(r.average_clock_mhz == pytest.approx(1700.0) for r in char.rounds)
    assert char.gpu_temp_start is not None and char.elapsed_gpu_secs == pytest.approx(
        sum(r.elapsed_secs.gpu for r in char.rounds if r.elapsed_secs is not None and r.elapsed_secs.gpu))
    assert failed.failed and failed.error == "RuntimeError: kernel exploded" and failed.bytes_per_second is None
    assert failed.rounds == () and failed.batches is None and failed.sm_clock is None
    assert results.general.thermal is not None and results.general.gpu == model.Gpu(
        name="Fake GPU", arch="sm_00", pci_bus_id="0000:00:00.0", uuid="GPU-fake")
    assert results.context.custom_settings == {"extra_percent": 1.5, "flag": True}
    assert results.settings.rounds == 3 and results.settings.output_batches is True
    assert results.summary is not None and results.summary.failures == 1
    dry = load_results(run(tmp_path / "dry", "--dry")[1])
    assert dry.settings.dry is True and all(s.bytes_per_second == 0 and s.rounds == () for s in dry.specializations)
    assert all(s.dry and s.gpu_seconds_per_call is None for s in dry.specializations)
    assert dry.settings.cache_size is None  # auto, unresolved: nothing ran


def test_the_model_holds_what_results_4_4_0_added(tmp_path: Path) -> None:
    _, path = run(tmp_path, "--rounds", "2", "--output-batches", "--max-gpu-temp", "85")
    results = load_results(path)
    char = results.specializations[0]
    calls = char.kernel_calls
    assert char.elapsed_gpu_secs is not None and calls
    assert char.gpu_seconds_per_call == char.written_seconds_per_call == pytest.approx(char.elapsed_gpu_secs / calls)
    assert char.time_per_call is not None and char.time_per_call.mean == char.gpu_seconds_per_call
    assert char.time_per_call.min == pytest.approx(0.25e-3) and char.timer == "events" and not char.dry
    assert [r.gpu_seconds_per_call for r in char.rounds] == [r.gpu_ms_per_call / 1000 for r in char.rounds]
    failed = results.specializations[1]
    assert failed.failed and failed.gpu_seconds_per_call is None and failed.time_per_call is None
    thermal = results.general.thermal
    assert thermal is not None and thermal.start_gpu_temp is not None and thermal.highest_gpu_temp is not None
    # the limits applied, as numbers: 85 as given, the minimum's auto as the floor it used
    assert results.settings.max_gpu_temp == 85 and results.settings.min_gpu_temp == thermal.min_gpu_temp == 0
    assert isinstance(results.settings.cache_size, int) and results.settings.cache_size > 0
    assert results.settings.axis == ()


def test_the_optional_keys_of_4_4_0_are_typed_and_written_back_as_they_were() -> None:
    doc = document([{**spec("type: char", 1e12), "timer": "host"}, {**spec("type: int", 1e12), "dry": True}],
                   version=RESULTS_VERSION, settings={"axis": ["size=[1:4]"], "cache_size": None})
    doc["context"]["general"]["thermal"] = {"min_gpu_temp": 0, "min_mode": "auto", "max_gpu_temp": 79,
                                            "max_mode": "auto", "warming_secs": 0, "cooling_secs": 0.5,
                                            "start_gpu_temp": 41, "highest_gpu_temp": None}
    results = results_from_dict(doc)
    host, dry = results.specializations
    assert host.timer == "host" and not host.dry and dry.dry and dry.timer == "events"
    assert results.settings.axis == ("size=[1:4]",) and results.settings.cache_size is None
    thermal = results.general.thermal
    assert thermal is not None and thermal.start_gpu_temp == 41 and thermal.highest_gpu_temp is None
    assert results.to_dict() == doc  # "timer": "events" and "dry": false are never written; these were
    older = results_from_dict(old_document("4.3.0")).general.thermal
    assert older is None or older.start_gpu_temp is msgspec.UNSET


def test_the_report_holds_the_model_and_its_results_are_built_from_it(tmp_path: Path) -> None:
    ex = pb.Executor(["--json-out", str(tmp_path / "r.json"), "--min-secs", "0"], device=FakeDevice(0.25),
                     reporter=Reporter(make_console(open(tmp_path / "log.txt", "w"))))  # noqa: SIM115
    ex.queue(Copy(np.int8))
    report = ex.run()
    assert report.model is not None and report.model == load_results(tmp_path / "r.json")
    assert dict(report) == report.model.to_dict()
    (char,) = report.results
    assert char.specialization is report.model.specializations[0]
    assert char.seconds_per_call == char.specialization.gpu_seconds_per_call
    assert char.seconds_per_call_by_round == tuple(r.gpu_seconds_per_call for r in char.specialization.rounds)


# --------------------------------------------------------------------------- the schema as before


SPEC = ["index", "name", "bytes_per_second", "items_per_second", "bytes_per_item", "items", "noise_timeout",
        "noise_percent", "meta", "elapsed_secs", "gpu_temp_celsius", "calls", "batches", "sm_clock", "rounds",
        "between_rounds", "gpu_seconds_per_call", "time_per_call", "throttled_batches"]  # 4.5.0: throttled_batches
FAILED = ["index", "name", "bytes_per_second", "items_per_second", "bytes_per_item", "items", "noise_timeout",
          "noise_percent", "meta", "elapsed_secs", "calls", "error"]
ROUND = ["round", "gpu_ms_per_call", "bytes_per_second", "items_per_second", "noise_timeout", "noise_percent",
         "batches", "kernel_calls", "kernel_calls_per_batch", "elapsed_secs", "gpu_temp_celsius", "sm_clock_mhz",
         "throttled_batches", "wall_secs"]
SM_CLOCK = ["average_mhz", "default_mhz", "fraction_of_default", "below_expected", "clock_event_reasons",
            "throttle_reasons"]
GENERAL = ["algorithm", "specialization_count", "library_build_type", "gpu", "backend", "thermal", "host_name",
           "date", "branch_name", "commit_hash", "branch_source", "commit_source", "primbench_version",
           "python_version"]
THERMAL = ["min_gpu_temp", "min_mode", "max_gpu_temp", "max_mode", "warming_secs", "cooling_secs", "start_gpu_temp",
           "highest_gpu_temp"]
TIME_PER_CALL = ["mean", "median", "min", "q1", "q3"]


def test_the_json_keeps_the_keys_nesting_and_order_of_the_schema(tmp_path: Path) -> None:
    doc, _ = run(tmp_path, "--rounds", "3", "--output-batches", "--branch", "b", "--commit", "c", custom=True)
    assert list(doc) == ["context", "specializations", "summary"]
    assert list(doc["context"]) == ["results_version", "general", "settings", "flags", "custom_settings"]
    assert list(doc["context"]["general"]) == GENERAL
    assert list(doc["context"]["general"]["thermal"]) == THERMAL
    # results 4.8.0's --devices settings are written only when given: a run on one GPU writes what 4.7.0 wrote
    when_given = ("devices", "replicate", "worker_timeout_secs", "results_per_gpu", "processes", "runs")
    assert list(doc["context"]["settings"]) == [f.name for f in dataclasses.fields(Settings)
                                                if f.name not in when_given]
    char, failed, long_long = doc["specializations"]
    assert list(char) == list(long_long) == SPEC and list(failed) == FAILED
    assert failed["elapsed_secs"] is None and failed["calls"] is None and failed["bytes_per_item"] is None
    assert list(char["rounds"][0]) == ROUND and list(char["sm_clock"]) == SM_CLOCK
    assert list(char["batches"][0]) == ["batch_ms", "iterations_ms", "kernel_calls", "host_secs", "round"]
    assert list(char["between_rounds"]) == ["count", "cv_percent"]
    assert list(char["time_per_call"]) == TIME_PER_CALL and "timer" not in char  # GPU events: no key
    assert list(char["sm_clock"]["clock_event_reasons"]) == ["start", "end"]
    assert list(doc["summary"]) == ["noise_timeouts", "failures", "elapsed_secs", "skipped", "throttled_batches"]
    one, _ = run(tmp_path / "one", "--rounds", "1")  # one round: batches carry no round
    assert "batches" not in one["specializations"][0]
    assert one["specializations"][0]["between_rounds"] == {"count": 1, "cv_percent": None}
    dry, _ = run(tmp_path / "dry", "--dry")
    assert list(dry["specializations"][0]) == [*SPEC[:10], "calls", "dry"]
    assert dry["specializations"][0]["dry"] is True and dry["context"]["settings"]["cache_size"] is None
    assert dry["specializations"][0]["bytes_per_second"] == 0  # an integer, as the dry record always wrote


def test_the_producers_records_map_onto_the_model_field_for_field() -> None:
    """The executor converts these records (and the settings) into the model: a key the model
    lacks would be dropped, so each producer's keys must be the model's fields, in order."""
    assert list(SettingsRecord.__struct_fields__) == [f.name for f in dataclasses.fields(Settings)]
    clock = clock_record((0, 0), (1000, 1900), 1980.0, [], ["sw_thermal_slowdown"], 0.9)
    assert clock is not None and list(clock) == list(SmClock.__struct_fields__)
    assert json.loads(msgspec.json.encode(msgspec.convert(clock, SmClock))) == clock
    thermal = ThermalControl(FakeDevice(temperature=40.0), Settings()).record()
    assert list(thermal) == list(ThermalRecord.__struct_fields__)


def test_every_committed_results_file_loads_and_round_trips() -> None:
    """examples/results and the measured suites under tests/ (4.2.0 and 4.3.0): each loads, its
    document as written is the file, and the model writes it back unchanged but for what the
    upgrade steps add."""
    seen = set()
    for path in sorted(ROOT.glob("**/*.json")):
        if ".venv" in path.parts or "node_modules" in path.parts:
            continue
        raw = json.loads(path.read_text())
        if not (isinstance(raw, dict) and isinstance(raw.get("context"), dict)
                and raw["context"].get("results_version") in KNOWN_VERSIONS):
            continue  # not a primbench results.json (the C++ harness's older files: tests/test_formats.py)
        results = load_results(path)
        seen.add(results.version)
        assert results.as_written() == raw, path
        assert results.version == raw["context"]["results_version"], path
        again = results.to_dict()
        added = upgrade(copy.deepcopy(raw), results.version)["context"]["settings"]
        assert again["context"]["settings"] == added, path
        again["context"]["settings"] = raw["context"]["settings"]
        again["context"]["results_version"] = raw["context"]["results_version"]
        assert again == raw, path
    assert {"4.2.0", "4.3.0"} <= seen


# --------------------------------------------------------------------------- upgrades


def old_document(version: str) -> dict[str, Any]:
    """A document as `version` wrote it: without the keys later versions added."""
    doc = document([spec("type: char", 1e12, round_cv=None)], version=version)
    settings = doc["context"]["settings"]
    for key in ("cache_size", "device", "no_test", "no_monitoring", "branch", "commit"):
        settings.pop(key)
    for key in ("branch_source", "commit_source", "primbench_version", "python_version"):
        doc["context"]["general"].pop(key)
    return doc


def test_4_0_0_to_4_1_0_sets_the_cache_size_the_cpp_primbench_cleared() -> None:
    doc = old_document("4.0.0")
    before = copy.deepcopy(doc)
    up = UPGRADES["4.0.0"](doc)
    assert doc == before  # a step leaves its input as it is
    assert up["context"]["results_version"] == "4.1.0"
    assert up["context"]["settings"] == {**doc["context"]["settings"], "cache_size": 256 * 2**20}
    assert up["specializations"] == doc["specializations"] and up["summary"] == doc["summary"]
    kept = UPGRADES["4.0.0"]({**doc, "context": {**doc["context"], "settings": {"cache_size": 7}}})
    assert kept["context"]["settings"] == {"cache_size": 7}


def test_4_1_0_to_4_2_0_changes_only_the_version() -> None:
    doc = old_document("4.1.0")
    up = UPGRADES["4.1.0"](doc)
    assert up["context"]["results_version"] == "4.2.0" and doc["context"]["results_version"] == "4.1.0"
    assert {**up, "context": {**up["context"], "results_version": "4.1.0"}} == doc


def test_4_2_0_to_4_3_0_records_one_round() -> None:
    doc = old_document("4.2.0")
    up = UPGRADES["4.2.0"](doc)
    assert up["context"]["results_version"] == "4.3.0"
    assert up["context"]["settings"] == {**doc["context"]["settings"], "rounds": 1}
    assert "rounds" not in up["specializations"][0]  # one measurement: its variability stays unknown
    assert "rounds" not in doc["context"]["settings"]


def test_4_3_0_to_4_4_0_changes_only_the_version_and_the_time_per_call_is_derived() -> None:
    doc = old_document("4.3.0")
    up = UPGRADES["4.3.0"](doc)
    assert up["context"]["results_version"] == "4.4.0" and doc["context"]["results_version"] == "4.3.0"
    assert {**up, "context": {**up["context"], "results_version": "4.3.0"}} == doc  # nothing invented
    char = results_from_dict(doc).specializations[0]
    raw = doc["specializations"][0]
    assert char.written_seconds_per_call is msgspec.UNSET and char.timer == "events" and not char.dry
    assert char.gpu_seconds_per_call == pytest.approx(raw["elapsed_secs"]["gpu"] / raw["calls"]["kernel_calls"])
    assert char.time_per_call == model.TimePerCall(mean=char.gpu_seconds_per_call)


def test_every_older_version_has_one_step_and_the_chain_reaches_the_current_one() -> None:
    assert list(UPGRADES) == list(KNOWN_VERSIONS[:-1]) and KNOWN_VERSIONS[-1] == RESULTS_VERSION
    for version in KNOWN_VERSIONS:
        up = upgrade(old_document(version), version)
        assert up["context"]["results_version"] == RESULTS_VERSION
        results = results_from_dict(old_document(version), "old.json")
        assert results.version == version and results.context.results_version == RESULTS_VERSION
        assert results.as_written() == old_document(version)
        assert results.settings.rounds == (1 if KNOWN_VERSIONS.index(version) < KNOWN_VERSIONS.index("4.3.0")
                                            else msgspec.UNSET)
        assert results.settings.cache_size == (256 * 2**20 if version == "4.0.0" else msgspec.UNSET)


def test_an_old_file_loads_through_the_steps_from_text_too(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old_document("4.0.0")))
    results = load_results(path)
    assert results.version == "4.0.0" and results.settings.cache_size == 256 * 2**20
    assert results.as_written() == json.loads(path.read_text())
    assert results.to_dict()["context"]["results_version"] == RESULTS_VERSION


# --------------------------------------------------------------------------- refused input


@pytest.mark.parametrize(("version", "expected"), [
    ("5.0.0", "unknown schema version '5.0.0' (known: 4.0.0, 4.1.0, 4.2.0, 4.3.0, 4.4.0, 4.5.0, 4.6.0, 4.7.0, "
              "4.8.0, 4.9.0, 4.10.0, 4.11.0); upgrade primbench to read it"),
    ("4.12.0", "unknown schema version '4.12.0'"),
    ("3.9.0", "this primbench cannot read it"),
    ("", "unknown schema version ''"),
    (4, "must be a string, got a number"),
    (None, "must be a string, got null"),
])
def test_unknown_versions_are_refused(tmp_path: Path, version: Any, expected: str) -> None:
    doc = document([spec("type: char", 1e12)], version=RESULTS_VERSION)
    doc["context"]["results_version"] = version
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    for call in (lambda: load_results(path), lambda: results_from_dict(doc, str(path))):
        with pytest.raises(ResultsFileError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"{path}: context.results_version: ") and expected in message
        assert "\n" not in message


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()
S0 = ("specializations", 0)
GENERAL_PATH = ("context", "general")


@pytest.mark.parametrize(("path", "value", "expected"), [
    ((), [], "must be a JSON object with context, specializations, summary"),
    (("context",), _DELETE, "context: missing"),
    (("specializations",), {}, "specializations: must be a list, got an object"),
    ((*S0, "name"), _DELETE, "specializations[0].name: missing"),
    ((*S0, "index"), -1, "specializations[0].index: must not be negative, got -1"),
    ((*S0, "index"), 2**63, "specializations[0].index: must be finite"),
    ((*S0, "meta"), ["algo"], "specializations[0].meta: must be an object, got a list"),
    ((*S0, "bytes_per_second"), None, "specializations[0].bytes_per_second: is null, yet the specialization has no "
                                      "error"),
    ((*S0, "noise_timeout"), "no", "specializations[0].noise_timeout: must be a boolean, got a string"),
    ((*S0, "calls", "batches"), 1.5, "specializations[0].calls.batches: must be a whole number"),
    ((*S0, "gpu_temp_celsius", "end"), "hot", "specializations[0].gpu_temp_celsius.end: must be a number, got a "
                                              "string"),
    ((*S0, "rounds", 1, "noise_timeout"), 0, "specializations[0].rounds[1].noise_timeout: must be a boolean"),
    ((*S0, "rounds", 2, "gpu_ms_per_call"), _DELETE, "specializations[0].rounds[2].gpu_ms_per_call: missing"),
    ((*S0, "sm_clock"), {"below_expected": "yes"}, "specializations[0].sm_clock.below_expected: must be a boolean"),
    ((*S0, "between_rounds", "cv_percent"), -0.5, "specializations[0].between_rounds.cv_percent: must not be "
                                                  "negative, got -0.5"),
    ((*S0, "error"), 3, "specializations[0].error: must be a string, got a number"),
    ((*GENERAL_PATH, "algorithm"), _DELETE, "context.general.algorithm: missing"),
    ((*GENERAL_PATH, "gpu", "uuid"), 1, "context.general.gpu.uuid: must be a string, got a number"),
    ((*GENERAL_PATH, "thermal"), {"warming_secs": -1}, "context.general.thermal.warming_secs: must not be negative"),
    ((*GENERAL_PATH, "date"), "9999-12-31T23:59:59-08:00", "context.general.date: '9999-12-31T23:59:59-08:00' lies "
                                                           "outside the dates that can be stored"),
    (("context", "settings", "rounds"), 2.5, "context.settings.rounds: must be a whole number"),
    (("context", "custom_settings"), [1], "context.custom_settings: must be an object, got a list"),
    (("summary", "failures"), "none", "summary.failures: must be a number, got a string"),
])
def test_a_malformed_field_is_one_line_naming_file_and_field(tmp_path: Path, path: tuple[Any, ...], value: Any,
                                                            expected: str) -> None:
    base = document([spec("type: char", 1e12), spec("type: int", 2e12)], version=RESULTS_VERSION)
    base["specializations"][0]["sm_clock"] = {"below_expected": False}
    base["specializations"][0]["between_rounds"] = {"count": 3, "cv_percent": 0.1}
    base["context"]["general"]["thermal"] = {"warming_secs": 1.0}
    doc = value if not path else _set(base, path, value)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(doc))
    for call in (lambda: load_results(file), lambda: results_from_dict(doc, str(file))):
        with pytest.raises(ResultsFileError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"{file}: {expected}"), message
        assert "\n" not in message
    assert load_results(_write(tmp_path / "good.json", base)).specializations[0].sm_clock == SmClock()


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_what_msgspec_refuses_without_a_field_is_still_one_line(tmp_path: Path) -> None:
    text = json.dumps(document([spec("type: char", 1e12)], version=RESULTS_VERSION))
    for bad, expected in [
        (text[:-20], "not valid JSON"),
        (text.replace('"type: char"', '"type: \\udc80"'), "specializations[0].name: holds a lone surrogate"),
        (text.replace('"hot": false', '"hot": false, "x": [[1]]'), None),  # a key the model lacks: skipped
        (text.replace("1000000000000.0", "1e400", 1), "must be finite"),
    ]:
        if expected is None:
            assert parse_results(bad, "x.json").settings.hot is False
            continue
        with pytest.raises(ResultsFileError, match=re.escape(expected)) as info:
            parse_results(bad, "x.json")
        assert str(info.value).startswith("x.json: ") and "\n" not in str(info.value)
    deep = text.replace('"hot": false', '"hot": false, "x": ' + "[" * 3000 + "]" * 3000)
    try:  # skipped, or refused when the nesting is deeper than the interpreter's recursion limit allows
        assert parse_results(deep, "x.json").settings.hot is False
    except ResultsFileError as exc:
        assert str(exc) == "x.json: not valid JSON (nested too deeply)"
    with pytest.raises(ResultsFileError, match=r"^x\.json: cannot be read \('utf-8' codec can't decode byte 0xff"):
        parse_results(text.replace("type: char", "type: \xff").encode("latin-1"), "x.json")
    odd_key = text.replace('"hot": false', '"hot": false, "a\\nb": "\\ud800"')
    with pytest.raises(ResultsFileError) as info:
        parse_results(odd_key, "x.json")
    assert str(info.value) == 'x.json: context.settings["a\\nb"]: holds a lone surrogate (\\ud800-\\udfff), not text'


def test_numpy_values_in_a_document_built_in_python_are_numbers() -> None:
    doc = document([spec("type: char", float(np.float64(1e12)))], version=RESULTS_VERSION)
    doc["specializations"][0]["bytes_per_second"] = np.float64(1.5e12)
    doc["specializations"][0]["items"] = np.int64(7)
    loaded = results_from_dict(doc).specializations[0]
    assert loaded.bytes_per_second == 1.5e12 and loaded.items == 7 and type(loaded.items) is int


def test_a_device_context_the_model_cannot_hold_fails_before_measuring(tmp_path: Path, capsys) -> None:
    class OddDevice(FakeDevice):
        def context(self) -> dict[str, Any]:
            return {**super().context(), "gpu": {"name": "Fake GPU", "multiprocessors": "many"}}

    dev = OddDevice(0.25)
    ex = pb.Executor(["--json-out", str(tmp_path / "r.json")], device=dev, reporter=Reporter(make_console()))
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as info:
        ex.main()
    assert info.value.code == 2 and dev.calls == 0 and not (tmp_path / "r.json").exists()
    err = capsys.readouterr().err.strip()
    assert err.endswith("the device's gpu record does not fit results.json: Expected `int | null`, got `str` - at "
                        "`$.multiprocessors`") and "\n" not in err


@pytest.mark.parametrize("version", ["4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0"])
def test_an_older_file_reads_as_its_whole_upgrade_does(version: str) -> None:
    """An older file the model decodes is upgraded in its context alone (its specializations
    are not decoded twice): the Results are those of upgrading the whole document."""
    before_rounds = KNOWN_VERSIONS.index(version) < KNOWN_VERSIONS.index("4.3.0")
    doc = document([spec("size: 1", 1e12, batches=[1.0, 1.1], round_cv=None if before_rounds else 0.001),
                    spec("size: 2", 2e12)], version=version)
    if version == "4.0.0":
        doc["context"]["settings"].pop("cache_size", None)
    data = json.dumps(doc).encode()
    fast = model.parse_results(data, "f.json")
    whole = model._upgraded(json.loads(data), data, version, "f.json")
    assert fast.version == version and fast.context.results_version == model.RESULTS_VERSION
    assert (fast.context, fast.specializations, fast.summary) == (whole.context, whole.specializations, whole.summary)
    if version == "4.0.0":
        assert fast.settings.cache_size == 256 * 2**20


def test_the_context_only_upgrades_change_the_context_alone() -> None:
    """`CONTEXT_ONLY_UPGRADES` lets an older file's specializations be read as the current model
    decodes them: every step from those versions must leave everything but the context as it is
    (the fast path of 100,000-specialization files, issue 28)."""
    from primbench.results import CONTEXT_ONLY_UPGRADES, UPGRADES

    assert set(UPGRADES) == set(KNOWN_VERSIONS[:-1])
    for version in sorted(CONTEXT_ONLY_UPGRADES):
        specs = [{"name": "k", "index": 0, "anything": [1, 2]}]
        summary = {"count": 1}
        doc = {"context": {"results_version": version, "settings": {}}, "specializations": specs, "summary": summary}
        out = UPGRADES[version](doc)
        assert out["specializations"] is specs and out["summary"] is summary, version
        assert set(out) == set(doc), version
