"""Writes tests/formats/nvbench-copy-h200.json (and its ``--jsonbin`` sample files in
nvbench-copy-h200.json-bin/): NVBench's JSON layout (json version 1.0.0, as NVIDIA/nvbench's
python/scripts/test_ref.json has it) holding the summaries NVBench wrote for the seed's copy
kernel on the lent H200 (128 MiB, char and long long), as this project recorded them in
tests/benchmarks/results/vs_tools_final/vs_tools.json. NVBench cannot run here (no GPU), so
this file is that measurement put back into NVBench's layout, not a file NVBench wrote; the
sample files are synthetic (seeded normal draws around the recorded mean and noise), there to
exercise the ``--jsonbin`` path. Run: ``python tests/formats/make/nvbench_copy_h200.py``."""

from __future__ import annotations

import array
import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
RECORDED = HERE.parents[0] / "benchmarks" / "results" / "vs_tools_final" / "vs_tools.json"
OUT = HERE / "nvbench-copy-h200.json"
HINTS = {"sample_size": "sample_size", "walltime": "duration", "time": "duration", "relative": "percentage",
         "bytes_per_second": "byte_rate", "utilization": "percentage", "item_rate": "item_rate",
         "sm_clock_rate/mean": "frequency", "scaling/percent": "percentage"}


def _hint(tag: str) -> str:
    for key, hint in HINTS.items():
        if key in tag:
            return hint
    return "duration"


def _summary(tag: str, value: float) -> dict[str, Any]:
    kind = "int64" if tag.endswith("sample_size") else "float64"
    shown = str(int(value)) if kind == "int64" else repr(float(value))
    return {"tag": tag, "name": tag.rsplit("/", 1)[-1], "hint": _hint(tag),
            "data": [{"name": "value", "type": kind, "value": shown}]}


def main() -> None:
    recorded = [e for e in json.loads(RECORDED.read_text()) if e["size"] == 128 * 2**20]
    bins = OUT.with_name(OUT.name + "-bin")
    bins.mkdir(exist_ok=True)
    states = []
    rng = random.Random(20261201)
    for i, entry in enumerate(recorded):
        tags = entry["nvbench"]["tags"]
        summaries = [_summary(tag, value) for tag, value in tags.items()]
        n = int(tags["nv/cold/sample_size"])
        mean, rel = tags["nv/cold/time/gpu/mean"], tags["nv/cold/time/gpu/stdev/relative"]
        samples = array.array("f", (max(0.0, rng.gauss(mean, mean * rel)) for _ in range(n)))
        (bins / f"{i}.bin").write_bytes(samples.tobytes())
        summaries.append({"tag": "nv/cold/sample_times", "name": "Times", "hint": "file/sample_times",
                          "data": [{"name": "filename", "type": "string", "value": f"{OUT.name}-bin/{i}.bin"},
                                   {"name": "size", "type": "int64", "value": str(n)}]})
        states.append({"name": f"Device=0 type={entry['type']}", "min_samples": 10, "min_time": 0.5,
                       "max_noise": 0.005, "skip_time": -1.0, "timeout": 15.0, "device": 0,
                       "type_config_index": i,
                       "axis_values": [{"name": "type", "type": "type", "value": entry["type"]}],
                       "summaries": summaries, "is_skipped": False})
    doc = {
        "meta": {"argv": ["nvbench_copy.py", "--json", OUT.name, "--jsonbin", OUT.name],
                 "version": {"json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"}}},
        "devices": [{"id": 0, "name": "NVIDIA H200", "sm_version": 900, "ptx_version": 900,
                     "sm_default_clock_rate": 1980000000, "number_of_sms": 132,
                     "global_memory_size": 150109880320, "l2_cache_size": 62914560}],
        "benchmarks": [{"name": "copy", "index": 0, "min_samples": 10, "min_time": 0.5, "max_noise": 0.005,
                        "skip_time": -1.0, "timeout": 15.0, "devices": [0],
                        "axes": [{"name": "type", "type": "type", "flags": "",
                                  "values": [{"input_string": e["type"], "description": ""} for e in recorded]}],
                        "states": states}],
    }
    OUT.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
