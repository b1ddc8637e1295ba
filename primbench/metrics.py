"""The one registry of metrics: what each measured quantity is called, its unit, which way
is better and how it is printed. The terminal, markdown, charts and the report all read it.

A metric's *name* is the field of a specialization in results.json (and the column of the
history store) that holds it. The three a user chooses between with ``--metric`` are
``time`` (GPU seconds per call, lower is better), ``bytes`` and ``items`` (per second,
higher is better), ``energy`` (the board's joules per call, lower is better: results 4.5.0,
`primbench.energy`) and ``graph`` (the CUDA-graph replay's GPU seconds per call, lower is
better: results 4.6.0, `primbench.graph`); the others are diagnostics a series can follow.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHOICES", "METRICS", "Metric", "by_name", "choose", "format_value"]


@dataclass(frozen=True)
class Metric:
    """One measured quantity."""

    name: str  # the results.json field and history column
    label: str  # what a table header or chart axis calls it
    unit: str  # the SI base unit shown, without prefix ("B/s", "s", "%")
    higher_is_better: bool | None  # None: neither direction is better
    si_prefixes: bool = True  # 1.2e9 B/s prints as 1.20 GB/s; False prints the number as is

    def format(self, value: float | None) -> str:
        """``756.28 GB/s``, ``4.83 µs``, ``0.05 %``; ``–`` for a missing value."""
        return format_value(value, self.unit, si_prefixes=self.si_prefixes)

    def scale_for(self, values: list[float]) -> tuple[float, str]:
        """A common (divisor, unit with prefix) for a chart axis holding `values`."""
        if not self.si_prefixes or not values:
            return 1.0, self.unit
        top = max(abs(v) for v in values)
        for prefix, scale in _PREFIXES:
            if top >= scale:
                return scale, f"{prefix}{self.unit}"
        return 1.0, self.unit


_PREFIXES = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0), ("m", 1e-3), ("µ", 1e-6), ("n", 1e-9))

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("bytes_per_second", "bandwidth", "B/s", True),
        Metric("items_per_second", "throughput", "items/s", True),
        Metric("gpu_seconds_per_call", "GPU time per call", "s", False),
        Metric("noise_percent", "noise", "%", False, si_prefixes=False),
        Metric("ms_per_batch", "time per batch", "ms", None, si_prefixes=False),
        Metric("elapsed_gpu_secs", "GPU time", "s", None),
        Metric("elapsed_host_secs", "host time", "s", None),
        Metric("gpu_temp_start", "GPU temperature at start", "°C", None, si_prefixes=False),
        Metric("gpu_temp_end", "GPU temperature at end", "°C", None, si_prefixes=False),
        Metric("sm_clock_mhz", "average SM clock", "MHz", True, si_prefixes=False),
        Metric("sm_clock_fraction", "SM clock / default", "", True, si_prefixes=False),
        Metric("joules_per_call", "energy per call", "J", False),  # results 4.5.0 (primbench.energy)
        Metric("watts", "average power", "W", None),
        Metric("graph_seconds_per_call", "graph replay time per call", "s", False),  # results 4.6.0 (primbench.graph)
    )
}

#: What ``--metric`` accepts, and the field each choice reads.
CHOICES: dict[str, str] = {"time": "gpu_seconds_per_call", "bytes": "bytes_per_second", "items": "items_per_second",
                           "energy": "joules_per_call", "graph": "graph_seconds_per_call"}


def by_name(name: str) -> Metric:
    """The metric of a field name or a ``--metric`` choice; KeyError names the known ones."""
    key = CHOICES.get(name, name)
    try:
        return METRICS[key]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join([*CHOICES, *METRICS])}") from None


def choose(bytes_per_second: float | None, items_per_second: float | None) -> Metric:
    """The default metric of a specialization: bytes/s where bytes are declared, then
    items/s, otherwise GPU time per call."""
    if (bytes_per_second or 0) > 0:
        return METRICS["bytes_per_second"]
    if (items_per_second or 0) > 0:
        return METRICS["items_per_second"]
    return METRICS["gpu_seconds_per_call"]


def format_value(value: float | None, unit: str, *, si_prefixes: bool = True) -> str:
    """``756.28 GB/s`` style: decimal SI prefixes from T down to n, 2 decimals."""
    if value is None:
        return "–"
    if not si_prefixes:
        return f"{value:.2f} {unit}".rstrip()
    if value == 0:
        return f"0.00 {unit}"
    for prefix, scale in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value / 1e-9:.2f} n{unit}"
