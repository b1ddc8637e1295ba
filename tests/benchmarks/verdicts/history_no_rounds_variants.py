"""Why runs without rounds judged with history are mostly inconclusive (`history_no_rounds14.txt`), and two repairs
tried (2026-12-07, after that file: in sample, descriptive; neither adopted).

With history, a side without rounds takes each kernel's own variance as history's run-to-run CV squared less the
size class's prior of the part a whole process shares (`priors.SizeClass.single.common`: 0.88 % at 4 MiB), floored at
0. On a GPU whose whole runs move less than that prior, most kernels' own part comes out 0, and a row with no own
variance on either side is "no variability to weigh change against" (inconclusive): data14's 4 MiB planted 5 % was
found 0/126 with history against 122/126 without. The variants, each through `history_no_rounds14.main`:

    python tests/benchmarks/verdicts/history_no_rounds_variants.py nocommon > history_no_rounds_variants-nocommon.txt
        (the single-run prior's common part set to the floor, (0.02 %)^2: history's CV kept whole as the kernel's)
    git apply tests/benchmarks/verdicts/history_no_rounds_floor.patch && \
        python tests/benchmarks/verdicts/history_no_rounds14.py > history_no_rounds_variants-floor.txt
    git checkout compare/core.py
        (history's CV less the prior's common, but never below the prior's own share of it,
        process / (process + common))
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from primbench.compare import priors  # noqa: E402


def main() -> None:
    if sys.argv[1:] != ["nocommon"]:
        raise SystemExit("usage: history_no_rounds_variants.py nocommon")
    priors.SIZE_CLASSES = tuple(dataclasses.replace(k, single=dataclasses.replace(k.single, common=4e-8))
                                for k in priors.SIZE_CLASSES)
    import history_no_rounds14
    history_no_rounds14.main()


if __name__ == "__main__":
    main()
