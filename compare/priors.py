"""What compare knows about run-to-run variation before it sees a file: measured priors.

One run per side cannot show how much a process moves a kernel beyond what its rounds show, nor
how much all kernels of a process move together. Both were measured on H200s
(`tests/benchmarks/variance/priors.py`, which recomputes these numbers and checks them), from the
tuning data and, since fd6fb8c, the A/A processes of the first and third evaluation suites too
(`tests/benchmarks/verdicts/h200/data`, `data3`: 20 more kernel kinds, two more H200s): on tuning data
alone the shared part was 1.6-2.3x too small at 4 MiB (4 df) and a floor at 64 MiB, where every
A/A set showed whole processes moving 0.6-1.1 % and 0.13-0.16 %
(`tests/benchmarks/verdicts/shift_calibration.txt`); and since the fourth evaluation
(`tests/benchmarks/verdicts/evaluate4.txt`, out of sample before it was pooled: whole identical
processes in two states 2.5-3.5 % apart at 64 KiB and 1 MiB on its H200) its A/A processes too,
with the measured A/A suite shifts themselves (`Component.shifts`), which compare tests a suite's
shift against beside the variance. Those suites are in-sample from then on; an evaluation of the
method needs a suite none of them has read. The values are
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

#: How unequally the kernels of a suite answer a change of the SM clock: the standard deviation,
#: across kernels, of d ln(time) / d ln(SM clock) about the suite's own. A kernel bound by memory
#: barely answers the SM clock (about 0), one bound by its SMs in full (about -1), so two kernels
#: differ by at most about 1 and a suite's spread about its centre is at most about half of that:
#: 0.5, from that bound, not fitted. Measured where it matters (tests/benchmarks/verdicts/
#: clock_regimes.txt): the H100 of the sixth evaluation ran each `--processes` run in one of two
#: clock regimes 0.7 % apart (about 1,977 and 1,991 MHz, every worker of a run in the same one);
#: the kernels' run means relative to the suite follow the regime with slopes whose SD is 0.54
#: (15 kernel-size cells, 8 runs each, the slopes' own noise included), and the regime accounts
#: for 72 % of the part the workers of one run share (calibration6.txt).
CLOCK_RESPONSE_SD = 0.5

#: The levels at which `Component.shifts` gives the measured A/A suite shifts' quantiles.
SHIFT_LEVELS: tuple[float, ...] = (0.5, 0.75, 0.9, 0.95, 0.975, 0.99, 1.0)


@dataclass(frozen=True)
class Component:
    """`common`: variance shared by every kernel of a process (the suite shift of an A/A pair, per
    side); `process`: variance a process adds to one kernel beyond its rounds and the shared part.
    Each with its degrees of freedom. `shifts`: how far identical processes moved apart as a whole,
    measured: the quantiles at `SHIFT_LEVELS` of |suite shift| (ln) over `shift_pairs` ordered A/A
    pairs of one run a side, pooled over every measured set (empty: not measured)."""

    common: float
    common_df: float
    process: float
    process_df: float
    shifts: tuple[float, ...] = ()
    shift_pairs: int = 0


@dataclass(frozen=True)
class SizeClass:
    name: str
    up_to: float  # bytes, inclusive
    rounds: Component
    single: Component


KIB, MIB = 1 << 10, 1 << 20

SIZE_CLASSES: tuple[SizeClass, ...] = (
    SizeClass("64 KiB", 256 * KIB,
              Component(0.0001313, 45, 6.463e-06, 38.41,
                        (0.01026, 0.01961, 0.02894, 0.03602, 0.03843, 0.03942, 0.04214), 342),
              Component(0.0001642, 45, 7.835e-05, 80.17,
                        (0.008998, 0.02683, 0.03251, 0.03788, 0.039, 0.04045, 0.0415), 342)),
    SizeClass("1 MiB", 2 * MIB,
              Component(7.465e-05, 46, 2.859e-06, 142.1,
                        (0.005543, 0.01494, 0.02312, 0.02778, 0.03086, 0.03255, 0.03582), 356),
              Component(9.421e-05, 46, 0.000108, 99.04,
                        (0.008173, 0.02006, 0.02685, 0.03185, 0.03408, 0.03682, 0.03993), 356)),
    SizeClass("4 MiB", 16 * MIB,
              Component(7.177e-05, 25, 1.041e-05, 50.26,
                        (0.006735, 0.01833, 0.02103, 0.02306, 0.02458, 0.02509, 0.02509), 188),
              Component(7.714e-05, 25, 3.963e-05, 154.3,
                        (0.007535, 0.01911, 0.02324, 0.02473, 0.02647, 0.02685, 0.02755), 188)),
    SizeClass("64 MiB", math.inf,
              Component(6.711e-07, 39, 7.479e-07, 17.56,
                        (0.0006146, 0.001047, 0.002721, 0.003218, 0.003765, 0.004073, 0.004449), 300),
              Component(5.543e-07, 39, 6.336e-06, 50.64,
                        (0.0004125, 0.001084, 0.002866, 0.003629, 0.004045, 0.004466, 0.004477), 300)),
)


def size_class(size: float | None) -> SizeClass:
    """The class of a run of `size` bytes (None: the largest class)."""
    if size is None or not size > 0:
        return SIZE_CLASSES[-1]
    for klass in SIZE_CLASSES:
        if size <= klass.up_to:
            return klass
    return SIZE_CLASSES[-1]
