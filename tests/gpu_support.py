"""Shared by the GPU tests: loading an example program and running benchmarks to a results file."""

from __future__ import annotations

import runpy
from pathlib import Path

import primbench as pb

ROOT = Path(__file__).resolve().parents[1]


def example(name: str) -> dict:
    """The globals of examples/<name>.py, loaded without running its main()."""
    return runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name=name)


def run_benchmarks(benches: list[pb.Benchmark], json_out: Path, *args: str, settings: pb.Settings | None = None,
                   flags: pb.flags = pb.flags.none) -> pb.Report:
    """Run `benches` writing `json_out`; the report (a mapping over the written document), also when a
    specialization failed."""
    ex = pb.Executor(["--json-out", str(json_out), *args], settings=settings, flags=flags)
    for b in benches:
        ex.queue(b)
    report = ex.run()
    assert report.json_path == str(json_out)
    return report
