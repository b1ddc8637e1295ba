"""How large `primbench history report` is at 1,000 runs: main of the H200 1 MiB copy
(examples/results/h200/history), 500 commits of 2 runs each, made from a committed run with a
plain random walk of its values, and a 3 % step at commit 400. Writes the numbers to
tests/benchmarks/report_size.txt. Run: python tests/benchmarks/report_size.py"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from primbench.history.report import write_report
from primbench.history.selector import Selector
from tests.history_data import ingest

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "examples" / "results" / "h200" / "history" / "copy-1mib-ac43a54-1.json"
COMMITS, RUNS = 500, 2


def main() -> None:
    lines = [f"# python tests/benchmarks/report_size.py ({time.strftime('%Y-%m-%d')}, 2 shared cores)"]
    for specs in (2, 40):
        lines.append(measure(specs))
    vendor = sum(p.stat().st_size for p in (REPO / "history" / "vendor").glob("uPlot*"))
    lines.append(f"of which the inlined uPlot (JavaScript and CSS): {vendor:,} bytes")
    text = "\n".join(lines) + "\n"
    (Path(__file__).with_suffix(".txt")).write_text(text)
    print(text, end="")


def measure(specs: int) -> str:
    """The report of 1,000 runs of `specs` specializations (the copy's two, or copies of them
    under other names: ``type: t0``, …)."""
    rng = random.Random(22)
    template = json.loads(SOURCE.read_text())
    if specs > len(template["specializations"]):
        first = template["specializations"]
        made = []
        for i in range(specs):
            spec = json.loads(json.dumps(first[i % len(first)]))
            spec["name"], spec["index"] = f"type: t{i}", i
            spec["meta"] = {**spec.get("meta", {}), "type": f"t{i}"}
            made.append(spec)
        template["specializations"] = made
        template["context"]["general"]["specialization_count"] = specs
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for c in range(COMMITS):
            level = (0.97 if c >= 400 else 1.0) * (1 + rng.gauss(0, 0.002))
            for r in range(RUNS):
                doc = json.loads(json.dumps(template))
                general = doc["context"]["general"]
                general["commit_hash"] = f"{c:08x}" * 5
                general["date"] = f"2026-{1 + c // 50:02d}-{1 + c % 28:02d}T{c % 24:02d}:{r * 10:02d}:00+00:00"
                for spec in doc["specializations"]:
                    f = level * (1 + rng.gauss(0, 0.003))
                    for key in ("bytes_per_second", "items_per_second"):
                        spec[key] = spec[key] * f
                    for rnd in spec.get("rounds") or []:
                        for key in ("bytes_per_second", "items_per_second"):
                            rnd[key] = rnd[key] * f * (1 + rng.gauss(0, 0.002))
                path = Path(tmp) / f"run-{c:04d}-{r}.json"
                path.write_text(json.dumps(doc))
                files.append(path)
        db = Path(tmp) / "h.duckdb"
        start = time.perf_counter()
        result = ingest(files, db)
        assert not result.errors, result.errors
        ingested = time.perf_counter() - start
        start = time.perf_counter()
        report = write_report(db, Selector(branch="main"), Path(tmp) / "report.html")
        took = time.perf_counter() - start
        size = report.size_bytes
        return (f"{COMMITS * RUNS} runs ({COMMITS} commits x {RUNS}), {specs} specializations, 1 config, 1 GPU: "
                f"report {size:,} bytes ({size / 1024:.0f} KiB), {report.charts} charts, "
                f"{report.change_points} change points; written in {took:.1f} s (ingest {ingested:.1f} s)")


if __name__ == "__main__":
    main()
