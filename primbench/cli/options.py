"""What `primbench compare` and `primbench history` share: parsing of fractions and
probabilities, and the help of the options both have (imports nothing heavy)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from primbench.compare.model import FailOn

THRESHOLD_HELP = "Smallest change of throughput that matters: 0.3% or 0.003."
ALPHA_HELP = "False-discovery rate across specializations, and the level of the equivalence test."
FAIL_ON_HELP = ("Exit 1 on: regression (any regression); change (any regression or improvement); inconclusive "
                "(any specialization that could not be judged); never. Combine with a comma: regression,inconclusive.")
FORMAT_HELP = "terminal, markdown or json."
MAX_ROWS_HELP = ("Rows in the table, regressions first, then improvements, inconclusive, removed, added, unchanged "
                 "(default: 100 in the terminal; markdown: as many as fit in a 65,536-character pull-request "
                 "comment, always); 0: no row limit. A note says what was left out; JSON has every row.")
CHANGED_ONLY_HELP = "Leave unchanged specializations out of the table (not out of JSON)."


def parse_fraction(text: str, option: str, *, allow_zero: bool = False, example: str = "0.005 or 0.5%",
                   allow_one: bool = False) -> float:
    """``0.5%`` or ``0.005`` -> 0.005; a bare number of 1 or more is refused as ambiguous."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number (write {example})", param_hint=option) from None
    if allow_one and raw.endswith("%") and value == 1:
        return value
    if not raw.endswith("%") and value >= 1:
        raise typer.BadParameter(f"{text} is a fraction of 1 or more; did you mean {text}%?", param_hint=option)
    if not (0 <= value < 1 if allow_zero else 0 < value < 1):
        raise typer.BadParameter(f"{text} must lie between 0 and 100 %", param_hint=option)
    return value


def parse_fail_on(text: str, option: str = "--fail-on",
                  allowed: tuple[str, ...] | None = None) -> frozenset[FailOn]:
    """``regression,inconclusive`` -> a frozenset of `compare.model.FailOn` (the one definition); empty for never."""
    from primbench.compare.model import parse_fail_on as parse

    try:
        chosen = parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None
    extra = sorted(f.value for f in chosen if allowed is not None and f.value not in allowed)
    if extra:
        raise typer.BadParameter(f"{', '.join(extra)} does not apply here (choose from {', '.join(allowed or ())})",
                                 param_hint=option)
    return chosen


def check_probability(value: float, option: str) -> float:
    """A level such as --alpha: strictly between 0 and 1."""
    if not 0 < value < 1:
        raise typer.BadParameter(f"{value} must lie between 0 and 1", param_hint=option)
    return value


class MetricChoice(StrEnum):
    """``--metric``: the choices of `primbench.metrics.CHOICES`."""

    time = "time"
    bytes = "bytes"
    items = "items"
    energy = "energy"
    graph = "graph"


METRIC_HELP = ("What to compare: time (GPU time per call, lower is better: a regression is the time going up), "
               "bytes (bytes/s), items (items/s), energy (the board's joules per call, lower is better; "
               "results 4.5.0) or graph (the CUDA-graph replay's time per call of a run with --graph, lower is "
               "better; results 4.6.0). Default: bytes/s where both sides declare bytes, else items/s, "
               "else time.")
