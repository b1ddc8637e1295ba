"""The tuning set: the only series primbench's constants were chosen on (never the eval sets of
`compare_detectors.py`). Gaussian innovations (seed 1 in `compare_detectors.py`; seed 101 here),
Laplace innovations (heavy tails of another shape; seed 101) and AR(1) noise with phi 0.2 and
0.5 (seed 104), where the eval set has Student-t(5) innovations (seed 2) and AR(1) 0.3 (seed 3).

Run: ``python tests/benchmarks/changepoints/tune.py [series per row]``: false points per 100
flat series and the recall of a regression fixed 5-10 commits later, by n, printed (not
recorded: the record is `changepoints.txt`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from compare_detectors import Config, Score, primbench_tool, score  # noqa: E402
from generate import Noise, series  # noqa: E402


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    tool = primbench_tool()
    cfgs = [Config("flat", Noise(0.005)), Config("flat", Noise(0.01)), Config("burst2", Noise(0.01)),
            Config("flat", Noise(0.005, phi=0.2)), Config("flat", Noise(0.005, phi=0.5)),
            Config("fixed", Noise(0.01), 0.02), Config("fixed", Noise(0.01), 0.03),
            Config("fixed", Noise(0.005, phi=0.5), 0.03), Config("alternating3", Noise(0.01)),
            Config("step", Noise(0.01), 0.03), Config("flat", Noise(0.005, tails="laplace")),
            Config("flat", Noise(0.01, tails="laplace")), Config("fixed", Noise(0.01, tails="laplace"), 0.02)]
    for ci, cfg in enumerate(cfgs):
        cells = []
        for n in (30, 100, 1000):
            seed = 104 if cfg.noise.phi else 101
            rng = np.random.default_rng([seed, ci, n])
            acc = Score()
            for _ in range(count if n < 1000 else count // 2):
                s = series(cfg.kind, n, cfg.noise, rng, size=cfg.size)
                score(s, tool(s.values), acc)
            false = acc.points - acc.matched_points
            rec = "   -  " if not acc.truth else f"{acc.recall() * 100:5.1f}%"
            cells.append(f"n={n}: rec {rec} false/100 {false * 100 / acc.series:5.1f}")
        print(f"{cfg.label():<36}", "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
