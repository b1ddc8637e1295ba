"""False change points (steps and drifts) per 100 series on the eval set's flat and burst rows:
the count the issue's first target is stated in (``changepoints.txt`` shows series with any
point). The same series as `compare_detectors.py` (same seeds and case indices), for this
checkout's primbench and for main at ec89fec (loaded from git by `versions.py`).

Run: ``python tests/benchmarks/changepoints/false_points.py`` (about a minute); writes
``false_points.txt``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from compare_detectors import Config, ar1_configs, configs  # noqa: E402
from generate import series  # noqa: E402
from versions import load  # noqa: E402

from primbench.history.changepoints import analyse, clear_cache  # noqa: E402


def count(fn: Callable[..., Any], cfgs: list[Config], seed: int) -> list[str]:
    lines = []
    for ci, cfg in enumerate(cfgs):
        if cfg.kind not in ("flat", "burst2", "burst3"):
            continue
        cells = []
        for n in (30, 100, 1000):
            rng = np.random.default_rng([seed, ci, n])
            batch = [series(cfg.kind, n, cfg.noise, rng, size=cfg.size) for _ in range(100)]
            points = 0
            for s in batch:
                clear_cache()
                c = fn(s.values)
                points += len(c.points) + len(c.drifts)
            cells.append(f"n={n}: {points:2d}")
        lines.append(f"  {cfg.label():<34} " + "  ".join(cells))
    return lines


def main() -> None:
    out = ["False change points per 100 series (steps + drifts; bursts are not change points), eval set "
           "(false_points.py)"]
    old = load("ec89fec")
    tools: list[tuple[str, Callable[..., Any]]] = [("this checkout", analyse)]
    if old is not None:
        tools.append(("main at ec89fec", old.analyse))
    for name, fn in tools:
        out.append(f"{name}:")
        out += count(fn, configs("t5"), 2)
        out += count(fn, ar1_configs(), 3)
    (HERE / "false_points.txt").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
