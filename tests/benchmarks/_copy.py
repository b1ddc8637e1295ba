"""Shared by the GPU benchmark scripts: the copy example loaded from examples/."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_example() -> dict:
    return runpy.run_path(str(ROOT / "examples" / "copy_benchmark.py"), run_name="copy_example")
