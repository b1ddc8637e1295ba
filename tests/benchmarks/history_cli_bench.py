"""How long `primbench history ingest`, `plot` and `report` take on 1,000 runs x 100
specializations (1,000 commits of main), and how large the report is (issue 15, item 6).

Run: ``python tests/benchmarks/history_cli_bench.py`` (writes history_cli_bench.txt beside it;
about 3 minutes on the 2-core development machine). Every command runs as a new process
(``python -c 'from primbench.cli import main; main()' history …``), as a CI job runs it,
imports included. The synthetic history (`tests/history_data.py`): 1,000 commits, one run
each, 0.2 % run-to-run noise; three specializations have a planted step (-5 % at commit 700,
+4 % at 400, -3 % at 900) so the report has something to put first. Also timed in-process:
the chart's commit axis (`history.plots.commit_axis`, quadratic before: 0.3 s at 5k rows,
6.5 s at 20k) and a 100,000-row table rendered plain (piped) and capped (a terminal).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests import history_data as hd  # noqa: E402

RUNS = 1_000
SPECS = 100
SHIFTS = {3: (700, -0.05), 17: (400, 0.04), 42: (900, -0.03)}  # spec -> (commit, shift)


def make_files(directory: Path) -> None:
    levels = hd.noisy_levels(RUNS, specs=SPECS, cv=0.002, seed=5)
    for i, row in enumerate(levels):
        for spec, (at, shift) in SHIFTS.items():
            if i >= at:
                row[spec] *= 1 + shift
        doc = hd.document(row, commit=hd.sha(f"main-{i}"), date=hd.START + dt.timedelta(hours=i))
        (directory / f"run-{i:04d}.json").write_text(json.dumps(doc))


def cli(*args: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "from primbench.cli import main; main()", "history", *args],
                         capture_output=True, text=True, env=env, check=False)
    secs = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"history {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return secs, out.stdout


def axis_times() -> list[str]:
    import pandas as pd

    from primbench.history.plots import commit_axis

    lines = []
    for n in (5_000, 20_000, 100_000):
        t0 = pd.Timestamp("2026-01-01T00:00Z")
        frame = pd.DataFrame({"commit": [f"c{i}" for i in range(n)] * 2,
                              "date": [t0 + pd.Timedelta(minutes=i) for i in range(n)] * 2,
                              "gpu_key": ["A"] * n + ["B"] * n, "config_key": ["size=1MiB"] * (2 * n)})
        t = time.perf_counter()
        axis = commit_axis(frame)
        lines.append(f"  commit_axis of {2 * n:,} points ({n:,} commits, 2 series): {time.perf_counter() - t:.2f} s")
        assert len(axis) == n
    return lines


def table_times() -> list[str]:
    from rich.console import Console

    from primbench import tables
    from primbench.cli.history import SERIES_COLUMNS, _cell

    n = 100_000
    row = ("2026-01-01T00:00:00", "5e7a6787305f0d1c", "H200 5d6e1a0c", "size=128MiB", "copy", 1.1e12, 0.05, 1,
           "runner-1", 41.0, 1978.0)
    rows = [row] * n
    lines = []
    for label, terminal in (("piped (plain, every row)", False), ("a terminal (50 rows)", True)):
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=terminal, width=80, no_color=True)
        t = time.perf_counter()
        tables.render(rows, SERIES_COLUMNS, _cell, console=console)
        lines.append(f"  a {n:,}-row series table, {label}: {time.perf_counter() - t:.2f} s, "
                     f"{len(buf.getvalue()) / 2**20:.1f} MiB of text")
    return lines


def main() -> None:
    lines = [f"primbench history: ingest, plot and report on {RUNS:,} runs x {SPECS} specializations "
             "(tests/benchmarks/history_cli_bench.py)",
             f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
             f"every command a new process; load average at the start {os.getloadavg()[0]:.1f} "
             "(other work on the machine slows every figure below)", ""]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        files = tmp / "results"
        files.mkdir()
        make_files(files)
        db = str(tmp / "history.duckdb")
        secs, out = cli("ingest", str(files), "--db", db)
        lines.append(f"ingest {RUNS:,} files into a new store: {secs:.1f} s ({out.strip()})")
        size = Path(db).stat().st_size
        lines.append(f"  store: {size / 2**20:.1f} MiB")
        name = hd.spec_name(3)
        secs, _ = cli("plot", name, "--db", db, "-o", str(tmp / "one.png"))
        lines.append(f"plot one specialization ({RUNS:,} commits): {secs:.1f} s, "
                     f"{(tmp / 'one.png').stat().st_size / 1024:.0f} KiB")
        secs, _ = cli("plot", name, "--db", db, "--last", "100", "-o", str(tmp / "last.png"))
        lines.append(f"plot one specialization, --last 100: {secs:.1f} s")
        secs, out = cli("plot", "--db", db, "-o", str(tmp / "charts"))
        charts = list((tmp / "charts").glob("*.png"))
        lines.append(f"plot every specialization ({len(charts)} charts of {RUNS:,} commits): {secs:.1f} s, "
                     f"{sum(p.stat().st_size for p in charts) / 2**20:.1f} MiB in all")
        for extra in ([], ["--last", "200"]):
            report = tmp / "report.html"
            secs, out = cli("report", "--db", db, "--no-git", "-o", str(report), *extra)
            text = report.read_text(encoding="utf-8")
            first = text.index("<figure id='chart-0'")
            first_chart = text[first:first + 300].split("alt='", 1)[1].split("'", 1)[0]
            lines.append(f"report{' ' + ' '.join(extra) if extra else ''}: {secs:.1f} s, "
                         f"{report.stat().st_size / 2**20:.2f} MiB ({out.strip()}); first chart: {first_chart}")
        secs, out = cli("regressions", "--db", db)
        lines.append(f"regressions (table, piped): {secs:.1f} s: {out.splitlines()[0]}")
    lines.append("in-process:")
    lines += axis_times()
    lines += table_times()
    text = "\n".join(lines) + "\n"
    Path(__file__).with_suffix(".txt").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
