"""The average-SM-clock check: the average SM clock over a measurement.

Before and after a specialization's batches, SM 0 reads a constant-rate timer and its own
cycle counter; cycles over elapsed time is the average clock over the whole measurement,
which an instantaneous NVML reading cannot give. It is compared with the device's default
SM clock, and NVML's clock-event (throttle) reasons at start and end are kept beside it.
"""

from __future__ import annotations

from typing import Any

from primbench.monitoring import NVML_THROTTLING


def average_clock_mhz(start: tuple[int, int], end: tuple[int, int]) -> float | None:
    """Average clock in MHz from two (timer ns, cycles) samples; None if time did not pass."""
    ns = end[0] - start[0]
    cycles = end[1] - start[1]
    if ns <= 0 or cycles < 0:
        return None
    return cycles / ns * 1e3


def clock_record(
    start: tuple[int, int] | None,
    end: tuple[int, int] | None,
    default_mhz: float | None,
    reasons_start: list[str] | None,
    reasons_end: list[str] | None,
    min_fraction: float,
) -> dict[str, Any] | None:
    """The ``sm_clock`` object of a specialization (results 4.2.0), or None without samples."""
    if start is None or end is None:
        return None
    avg = average_clock_mhz(start, end)
    fraction = avg / default_mhz if (avg is not None and default_mhz) else None
    throttled = sorted((set(reasons_start or []) | set(reasons_end or [])) & NVML_THROTTLING)
    return {
        "average_mhz": avg,
        "default_mhz": default_mhz,
        "fraction_of_default": fraction,
        "below_expected": bool(fraction is not None and fraction < min_fraction),
        "clock_event_reasons": {"start": reasons_start, "end": reasons_end},
        "throttle_reasons": throttled,
    }
