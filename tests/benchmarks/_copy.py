"""Shared by the GPU benchmark scripts: the copy example loaded from examples/, NVBench's output read."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_example() -> dict:
    return runpy.run_path(str(ROOT / "examples" / "copy_benchmark.py"), run_name="copy_example")


def nvbench_values(data: dict) -> dict[str, float]:
    """NVBench's JSON output (``--json``) as summary tag -> value, e.g. ``nv/cold/time/gpu/mean``."""
    tags: dict[str, float] = {}
    for b in data["benchmarks"]:
        for st in b["states"]:
            for s in st.get("summaries") or []:
                for d in s.get("data", []):
                    if d.get("name") == "value":
                        tags[s["tag"]] = float(d["value"])
    return tags
