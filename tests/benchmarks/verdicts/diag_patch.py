"""Run a suite with one monitoring read of the harness switched off, to find which read makes short
kernels' batches alternate between two states (h200_diag4.sh). Usage:

    python diag_patch.py VARIANT SUITE.py [suite options]

VARIANT: ``all`` (nothing switched off), ``no-stamp`` (`CupyDevice.clock_sample` returns None: no
stamp kernel before and after each batch), ``no-reasons`` (NVML clock-event reasons), ``no-power``
(NVML power), ``no-energy`` (NVML energy counter), ``stamp-only`` (every NVML read off, the stamp kept).
A diagnostic, not a benchmark: nothing in primbench reads it."""

from __future__ import annotations

import runpy
import sys

from primbench.backends.cupy_backend import CupyDevice


def _none(self: object) -> None:
    return None


PATCHES: dict[str, tuple[str, ...]] = {
    "all": (),
    "no-stamp": ("clock_sample",),
    "no-reasons": ("clock_event_reasons",),
    "no-power": ("power_watts",),
    "no-energy": ("energy_joules",),
    "stamp-only": ("clock_event_reasons", "power_watts", "energy_joules"),
}

if __name__ == "__main__":
    variant, suite, *rest = sys.argv[1:]
    for name in PATCHES[variant]:
        setattr(CupyDevice, name, _none)
    sys.argv = [suite, *rest]
    runpy.run_path(suite, run_name="__main__")
