"""What the short-regression scan's tuning scripts share (`tune_scan.py`, `tune_scan5.py`): one
cell (blocks of 100 generated series of one case analysed together, scored) and the run over the
variants named on the command line, printed as their records are. Each script brings its own
module of `history.changepoints` (the commit its method was frozen at), its cases and seeds."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from types import ModuleType

import numpy as np
from compare_detectors import Config, Score, score
from generate import series
from versions import load

#: The n a run covers (``CP_NS``) and the cases it runs (``CP_ONLY``: those whose label holds it).
NS = tuple(int(n) for n in os.environ.get("CP_NS", "30,100,1000").split(","))
ONLY = os.environ.get("CP_ONLY", "")


def frozen_module(default: str) -> ModuleType:
    """`history.changepoints` as at the commit ``CP_FROZEN`` names (default `default`, where a
    script's variants' switches were; ``CP_FROZEN=""``: this checkout's module)."""
    rev = os.environ.get("CP_FROZEN", default)
    if not rev:
        from primbench.history import changepoints
        return changepoints
    module = load(rev)
    if module is None:
        raise SystemExit(f"error: git cannot show history/changepoints.py at {rev}")
    return module


def seeds(tune: dict[str, int], scratch: int) -> dict[str, int]:
    """The tuning seeds by noise, or with ``CP_SCRATCH`` the scratch seed for every noise."""
    return dict.fromkeys(tune, scratch) if os.environ.get("CP_SCRATCH") else tune

#: How many blocks of 100 series a cell runs: (its blocks at n = 30 and 100, n, what it reports).
Blocks = Callable[[int, int, str], int]


def cell(cp: ModuleType, cfg: Config, blocks: int, n: int, seed: int, ci: int, what: str,
         count: Blocks) -> tuple[Score, float]:
    """One case at `n` commits, scored, and the detector's milliseconds per series."""
    rng = np.random.default_rng([seed, ci, n])
    acc = Score()
    seconds = 0.0
    for _ in range(count(blocks, n, what)):
        batch = [series(cfg.kind, n, cfg.noise, rng, size=cfg.size) for _ in range(100)]
        cp.clear_cache()
        t = time.perf_counter()
        found = cp.analyse_many([b.values for b in batch])
        seconds += time.perf_counter() - t
        for b, c in zip(batch, found, strict=True):
            score(b, ([p.index for p in c.points], [(d.start, d.end) for d in c.drifts]), acc)
    return acc, seconds / acc.series * 1e3


def run(cp: ModuleType, names: Sequence[str], variant: Callable[[str], None],
        cases: Sequence[tuple[Config, int, str]], seeds: dict[str, int], ns: Sequence[int], only: str,
        count: Blocks) -> None:
    """Every variant of `names` (set by `variant`) on every case whose label holds `only`."""
    for name in names:
        variant(name)
        print(f"== variant {name!r} ==", flush=True)
        for ci, (cfg, blocks, what) in enumerate(cases):
            if only not in cfg.label():
                continue
            seed = seeds["ar" if cfg.noise.phi else cfg.noise.tails]
            cells = []
            for n in ns:
                acc, ms = cell(cp, cfg, blocks, n, seed, ci, what, count)
                if what == "fp":
                    cells.append(f"n={n}: {100 * acc.points / acc.series:4.2f}/100 of {acc.series:4d}")
                elif what == "any":
                    cells.append(f"n={n}: {100 * acc.series_with_points / acc.series:4.1f}% of {acc.series:4d}")
                else:
                    cells.append(f"n={n}: {100 * acc.recall():5.1f}% {100 * acc.precision():5.1f}% of {acc.series:3d}")
                if n == 1000:
                    cells[-1] += f" {ms:5.1f} ms"
            print(f"  {what:6} {cfg.label():<34} " + "  ".join(cells), flush=True)
