"""What compare knows about run-to-run variation before it sees a file: measured priors.

One run per side cannot show how much a process moves a kernel beyond what its rounds show, nor
how much all kernels of a process move together. Both were measured on H200s from tuning data
only (`tests/benchmarks/variance/priors.py`, which recomputes these numbers and checks them):
variances of ln(time per call), each with the degrees of freedom it was estimated with, so that
a verdict carries their uncertainty (Satterthwaite). `rounds` is for runs measured in rounds
(the variance beyond the rounds' own); `single` for runs without rounds (C++ files, --rounds 1:
a run is one value, so its whole process-to-process variance).

A row's class is its run's ``--size`` (the bytes a benchmark is asked to work on), else the bytes
it moves per call, else the largest class (the quietest, so the least likely to hide noise as
signal is the widest; a row of unknown size with history uses history).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Component:
    """`common`: variance shared by every kernel of a process (the suite shift of an A/A pair, per
    side); `process`: variance a process adds to one kernel beyond its rounds and the shared part.
    Each with its degrees of freedom."""

    common: float
    common_df: float
    process: float
    process_df: float


@dataclass(frozen=True)
class SizeClass:
    name: str
    up_to: float  # bytes, inclusive
    rounds: Component
    single: Component


KIB, MIB = 1 << 10, 1 << 20

SIZE_CLASSES: tuple[SizeClass, ...] = (
    SizeClass("64 KiB", 256 * KIB,
              Component(9.135e-05, 25, 1.081e-06, 19.73), Component(0.0001522, 25, 5.752e-05, 12.75)),
    SizeClass("1 MiB", 2 * MIB,
              Component(4.733e-05, 25, 4e-08, 130.5), Component(8.623e-05, 25, 8.601e-05, 16.41)),
    SizeClass("4 MiB", 16 * MIB,
              Component(2.075e-05, 4, 2.595e-06, 32), Component(3.462e-05, 4, 7.313e-05, 12.47)),
    SizeClass("64 MiB", math.inf,
              Component(4e-08, 25, 4e-08, 7.135), Component(4e-08, 25, 7.713e-06, 6.649)),
)


def size_class(size: float | None) -> SizeClass:
    """The class of a run of `size` bytes (None: the largest class)."""
    if size is None or not size > 0:
        return SIZE_CLASSES[-1]
    for klass in SIZE_CLASSES:
        if size <= klass.up_to:
            return klass
    return SIZE_CLASSES[-1]
