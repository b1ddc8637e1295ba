"""What compare knows about run-to-run variation before it sees a file: measured priors.

One run per side cannot show how much a process moves a kernel beyond what its rounds show, nor
how much all kernels of a process move together. Both were measured on H200s
(`tests/benchmarks/variance/priors.py`, which recomputes these numbers and checks them), from the
tuning data and, since fd6fb8c, the A/A processes of the first and third evaluation suites too
(`tests/benchmarks/verdicts/h200/data`, `data3`: 20 more kernel kinds, two more H200s): on tuning data
alone the shared part was 1.6-2.3x too small at 4 MiB (4 df) and a floor at 64 MiB, where every
A/A set showed whole processes moving 0.6-1.1 % and 0.13-0.16 %
(`tests/benchmarks/verdicts/shift_calibration.txt`). Those suites are in-sample from then on; an
evaluation of the method needs a suite none of them has read. The values are
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
              Component(9.129e-05, 38, 4.83e-06, 36.27), Component(0.0001317, 38, 7.583e-05, 77.2)),
    SizeClass("1 MiB", 2 * MIB,
              Component(5.35e-05, 39, 1.353e-06, 137.8), Component(7.863e-05, 39, 0.0001451, 29.04)),
    SizeClass("4 MiB", 16 * MIB,
              Component(5.644e-05, 18, 6.83e-06, 42.11), Component(5.501e-05, 18, 4.042e-05, 84.31)),
    SizeClass("64 MiB", math.inf,
              Component(3.48e-07, 32, 3.138e-07, 12.27), Component(3.94e-07, 32, 6.484e-06, 47.69)),
)


def size_class(size: float | None) -> SizeClass:
    """The class of a run of `size` bytes (None: the largest class)."""
    if size is None or not size > 0:
        return SIZE_CLASSES[-1]
    for klass in SIZE_CLASSES:
        if size <= klass.up_to:
            return klass
    return SIZE_CLASSES[-1]
