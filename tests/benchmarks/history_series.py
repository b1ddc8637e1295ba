"""How long a series query takes on a store of 10,000 runs x 100 specializations.

Run: ``python tests/benchmarks/history_series.py`` (writes history_series.txt beside it).
Target: a series query over 10,000 runs in under 100 ms.
The store is built with the real ingest (10 calls of 1,000 files; 1,000,000 specialization
rows), then timed, 20 times each, median and max:

* ``open_store(db).series(Selector(branch="main", name=NAME))``: opening the file read-only,
  checking its schema, the query (10,000 rows back as a DataFrame), closing: what one CLI call
  costs;
* the same on an already open `Reader` (the query alone);
* `per_commit` of that series, `regressions` of that one specialization (change-point
  detection over 10,000 commits), ``runs(limit=50)`` and `branches`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from primbench.history.selector import Selector  # noqa: E402
from primbench.history.storage.contract import open_store  # noqa: E402
from primbench.history.trends import per_commit  # noqa: E402
from tests import history_data as hd  # noqa: E402
from tests.history_data import ingest, open_for_query  # noqa: E402

RUNS = 10_000
SPECS = 100
CHUNK = 1_000
REPS = 20


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    out = fn()  # warm: imports, first open
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000, max(times) * 1000, out


def main() -> None:
    lines = [
        f"primbench history: queries on {RUNS:,} runs x {SPECS} specializations (tests/benchmarks/history_series.py)",
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "history.duckdb"
        build = 0.0
        for chunk in range(RUNS // CHUNK):
            folder = tmp / f"chunk{chunk}"
            folder.mkdir()
            levels = hd.noisy_levels(CHUNK, specs=SPECS, cv=0.002, seed=chunk)
            for j, row in enumerate(levels):
                i = chunk * CHUNK + j
                doc = hd.document(row, commit=hd.sha(f"main-{i}"), date=hd.START + dt.timedelta(hours=i))
                (folder / f"run-{i:05d}.json").write_text(json.dumps(doc))
            t = time.perf_counter()
            report = ingest([folder], db)
            build += time.perf_counter() - t
            assert len(report.stored) == CHUNK and not report.errors
            for f in folder.iterdir():
                f.unlink()
        with open_for_query(db) as con:
            n_runs, n_specs = (con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                               for t in ("runs", "specializations"))
        lines.append(f"store: {n_runs:,} runs, {n_specs:,} specializations, {db.stat().st_size / 2**20:.0f} MiB; "
                     f"built by 10 ingest calls of 1,000 files in {build:.1f} s (the last into a store of 9,000 runs)")
        name = hd.spec_name(42)
        store, one = open_store(db), Selector(branch="main", name=name)
        med, mx, frame = timed(lambda: store.series(one))
        assert len(frame) == RUNS
        verdict = "under" if med < 100 else "OVER"
        lines.append(f"series of {name!r} on main incl. open/close: median {med:.1f} ms, max {mx:.1f} ms "
                     f"-> {len(frame):,} rows ({verdict} the 100 ms target)")
        with store.read() as reader:
            med, mx, _ = timed(lambda: reader.series(one))
            lines.append(f"  the same on an open connection (query only): median {med:.1f} ms, max {mx:.1f} ms")
            med, mx, _ = timed(lambda: per_commit(frame))
            lines.append(f"per_commit of that series: median {med:.1f} ms, max {mx:.1f} ms")
            med, mx, cps = timed(lambda: reader.regressions(one))
            lines.append(f"regressions for that specialization (10,000 commits): median {med:.1f} ms, "
                         f"max {mx:.1f} ms, {len(cps)} change points (flat series)")
            med, mx, _ = timed(lambda: reader.runs(limit=50))
            lines.append(f"runs(limit=50): median {med:.1f} ms, max {mx:.1f} ms")
            med, mx, _ = timed(lambda: reader.branches())
            lines.append(f"branches: median {med:.1f} ms, max {mx:.1f} ms")
    text = "\n".join(lines) + "\n"
    (Path(__file__).with_suffix(".txt")).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
