"""False change points (steps and drifts) per 100 series on the eval set's flat and burst rows:
the count the issue's first target is stated in (``changepoints.txt`` shows series with any
point). The same series as `compare_detectors.py` (same seeds and case indices), for this
checkout's primbench and for main at ec89fec (loaded from git by `versions.py`).

Run: ``python tests/benchmarks/changepoints/false_points.py`` (about a minute); writes
``false_points.txt``. ``CP_FRESH=1``: the first fresh evaluation (``false_points-fresh.txt``);
``CP_FRESH=2``: the second, this checkout's `analyse_many` on each block of 100 series together
beside main at aa0c92a (``false_points-fresh2.txt``); ``CP_FRESH=3``: the third, seeds 9301 / 9302,
this checkout's and main at abbe481's `analyse_many` on each block (``false_points-fresh3.txt``);
``CP_FRESH=4``: the fourth, seeds 9401 / 9402, beside main at 07dc46a (``false_points-fresh4.txt``);
``CP_FRESH=5``: the fifth, seeds 9501 / 9502, beside main at 8bca0be (``false_points-fresh5.txt``);
``CP_FRESH=6``: the sixth, seeds 9601 / 9602, beside main at 98cdbcf (``false_points-fresh6.txt``);
``CP_FRESH=7``: the seventh, seeds 9701 / 9702, beside main at 2db5c8a (``false_points-fresh7.txt``).
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

from compare_detectors import (  # noqa: E402
    BEFORE,
    EVAL_SEEDS,
    FRESH,
    FRESH2,
    FRESH3,
    FRESH4,
    FRESH5,
    FRESH6,
    FRESH7,
    Config,
    ar1_configs,
    configs,
)
from generate import series  # noqa: E402
from versions import load  # noqa: E402

from primbench.history.changepoints import Changes, analyse, analyse_many, clear_cache  # noqa: E402

#: Series per cell: 100 (the first 100 are `compare_detectors.py`'s series), or in the fresh
#: run 1,000, in blocks of 100 (the count per 100 series, and its rate over all 1,000).
BLOCKS = 10 if FRESH else 1


def alone(fn: Callable[..., Any]) -> Callable[[list[np.ndarray]], list[Changes]]:
    """`fn` (an `analyse`) on each series of a block alone."""
    def run(block: list[np.ndarray]) -> list[Changes]:
        out = []
        for values in block:
            clear_cache()
            out.append(fn(values))
        return out
    return run


def count(fn: Callable[[list[np.ndarray]], list[Changes]], cfgs: list[Config], seed: int) -> list[str]:
    """False points per block of 100 series, each block given to `fn` whole."""
    lines = []
    for ci, cfg in enumerate(cfgs):
        if cfg.kind not in ("flat", "burst2", "burst3"):
            continue
        cells = []
        for n in (30, 100, 1000):
            rng = np.random.default_rng([seed, ci, n])
            blocks = []
            for _ in range(BLOCKS):
                block = [series(cfg.kind, n, cfg.noise, rng, size=cfg.size).values for _ in range(100)]
                blocks.append(sum(len(c.points) + len(c.drifts) for c in fn(block)))
            if BLOCKS == 1:
                cells.append(f"n={n}: {blocks[0]:2d}")
            else:
                over = sum(b > 1 for b in blocks)
                cells.append(f"n={n}: {blocks[0]:2d} | {sum(blocks) / BLOCKS:4.1f} max {max(blocks):2d} "
                             f"over 1 in {over:2d}/{BLOCKS}")
        lines.append(f"  {cfg.label():<34} " + "  ".join(cells))
    return lines


def main() -> None:
    out = ["False change points per 100 series (steps + drifts; bursts are not change points), eval set "
           f"(false_points.py; seeds {EVAL_SEEDS[0]} t5, {EVAL_SEEDS[1]} AR(1))"]
    if FRESH:
        out.append("per cell: the first 100 series (compare_detectors.py's) | the mean over 10 blocks of 100 "
                   "(1,000 series), the most in one block, blocks with more than 1")
    rev = BEFORE if FRESH else "ec89fec"
    old = load(rev)
    tools: list[tuple[str, Callable[[list[np.ndarray]], list[Changes]]]] = [
        ("this checkout, each block of 100 together (analyse_many, noise pooled)", analyse_many) if FRESH2
        else ("this checkout", alone(analyse))]
    if old is not None:
        tools.append((f"main at {rev}, each block of 100 together (its analyse_many)", old.analyse_many) if FRESH3
                     else (f"main at {rev}", alone(old.analyse)))
    for name, fn in tools:
        out.append(f"{name}:")
        out += count(fn, configs("t5"), EVAL_SEEDS[0])
        out += count(fn, ar1_configs(), EVAL_SEEDS[1])
    name = ("false_points-fresh7.txt" if FRESH7 else "false_points-fresh6.txt" if FRESH6
            else "false_points-fresh5.txt" if FRESH5
            else "false_points-fresh4.txt" if FRESH4
            else "false_points-fresh3.txt" if FRESH3
            else "false_points-fresh2.txt" if FRESH2
            else "false_points-fresh.txt" if FRESH else "false_points.txt")
    (HERE / name).write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
