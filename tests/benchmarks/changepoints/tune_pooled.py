"""The pooled noise's tuning set (issue 24, third pass): primbench's `analyse` (each series
alone) beside `analyse_many` (each block of 100 series of one case together, their noise pooled:
`history.changepoints.NoisePrior`) on new tuning seeds only, never an eval set's: 7301 (Gaussian),
7302 (Student-t(5)), 7303 (Laplace), 7304 (AR(1) 0.3 and 0.5, Gaussian innovations).

Run: ``python tests/benchmarks/changepoints/tune_pooled.py [blocks of 100] [filter]``: recall,
precision and false points per 100 series, by n, printed (not recorded: the records are the
fresh evaluation's, ``changepoints-fresh2.txt`` and ``false_points-fresh2.txt``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from compare_detectors import Config, Score, score  # noqa: E402
from generate import Noise, series  # noqa: E402

from primbench.history.changepoints import analyse, analyse_many, clear_cache  # noqa: E402

SEEDS = {"normal": 7301, "t5": 7302, "laplace": 7303}
AR_SEED = 7304


def cases() -> list[Config]:
    out = []
    for tails in ("normal", "t5", "laplace"):
        half, one = Noise(0.005, tails=tails), Noise(0.01, tails=tails)
        out += [Config("flat", half), Config("flat", one), Config("burst2", one), Config("step", one, 0.03),
                Config("steps3", half), Config("alternating3", half), Config("steps3", one),
                Config("fixed", one, 0.03), Config("fixed", one, 0.02)]
    for phi in (0.3, 0.5):
        ar = Noise(0.005, phi=phi)
        out += [Config("flat", ar), Config("burst2", ar), Config("steps3", ar), Config("fixed", ar)]
    return out


def main() -> None:
    blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    for ci, cfg in enumerate(cases()):
        if only not in cfg.label():
            continue
        seed = AR_SEED if cfg.noise.phi else SEEDS[cfg.noise.tails]
        cells = []
        for n in (30, 100, 1000):
            rng = np.random.default_rng([seed, ci, n])
            alone, pooled = Score(), Score()
            for _ in range(blocks if n < 1000 else max(1, blocks // 2)):
                batch = [series(cfg.kind, n, cfg.noise, rng, size=cfg.size) for _ in range(100)]
                clear_cache()
                many = analyse_many([b.values for b in batch])
                for b, c in zip(batch, many, strict=True):
                    one = analyse(b.values)
                    score(b, ([p.index for p in one.points], [(d.start, d.end) for d in one.drifts]), alone)
                    score(b, ([p.index for p in c.points], [(d.start, d.end) for d in c.drifts]), pooled)
            parts = []
            for acc in (alone, pooled):
                rec = "  -  " if not acc.truth else f"{acc.recall() * 100:5.1f}"
                parts.append(f"{rec} {(acc.points - acc.matched_points) * 100 / acc.series:4.1f}")
            cells.append(f"n={n}: " + " | ".join(parts))
        print(f"{cfg.label():<34}", "   ".join(cells), flush=True)


if __name__ == "__main__":
    main()
