"""Put on PYTHONPATH by `h200_wall14.sh` for both of its modes, so that every process of a run (the parent and its
workers) imports `primbench.measure` at its start in both (the same import cost); with ``PRIMBENCH_OLDFIT=1`` (its
"before" runs) a round's window is filled as before 2f181f5, never shortening a sized batch
(`primbench.measure.MAX_SHRINK_FACTOR` 1); the old 0.5 ms batch floor is given on the command line."""

import os

import primbench.measure

if os.environ.get("PRIMBENCH_OLDFIT") == "1":
    primbench.measure.MAX_SHRINK_FACTOR = 1
