"""Stores of results 4.4.0 files with rounds (`tests/benchmarks/history_scale/generate.py`'s),
and what the queries answer on a store: the store layout's tests (issue 28), on every backend."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from primbench.history.reader import Reader
from primbench.history.selector import Selector
from primbench.history.storage.ingest import document_of
from tests import history_data as hd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "benchmarks" / "history_scale"))
import generate  # noqa: E402


def rounds_files(directory: Path, runs: int = 12, specs: int = 6) -> list[Path]:
    """Results 4.4.0 files with rounds (and one with batches), on main and a feature branch."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for run in generate.plan(runs, features=1, per_feature=2):
        doc = generate.document(run, specs, batches=run.index == 3)
        out.append(hd.write(directory / f"{run.branch}-{run.index:03d}.json", doc))
    return out


def answers(reader: Reader) -> dict[str, Any]:
    """What the queries answer on a store, as plain values (without the time of the ingest,
    which differs between two stores by design)."""
    def rows(frame: Any) -> Any:
        return json.loads(frame.drop(columns=["ingested_at"], errors="ignore").to_json(
            orient="records", date_format="iso", double_precision=15))

    main = Selector(branch="main")
    run_ids = sorted(reader.runs(Selector())["run_id"])
    return {
        "runs": rows(reader.runs(Selector())),
        "branches": rows(reader.branches(Selector())),
        "series": rows(reader.series(main)),
        "series_time": rows(reader.series(main, metric="time")),
        "series_last": rows(reader.series(Selector(branch="feat-0"), last=2)),
        "regressions": rows(reader.regressions(main)),
        "gpu_key": reader.gpu_key(main),
        "documents": {r: document_of(reader.results(r)) for r in run_ids},
    }
