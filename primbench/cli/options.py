"""What `primbench compare` and `primbench history` share: parsing of fractions and
probabilities, and the help of the options both have (imports nothing heavy)."""

from __future__ import annotations

import re
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin

import typer
from typer.core import TyperCommand

try:  # Typer's runtime coercion (private, 0.2x): without it, Typer coerces every value itself
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice, coerce_cli_path
except ImportError:  # pragma: no cover - another Typer
    RuntimeParam = None  # type: ignore[assignment, misc]

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


# --------------------------------------------------------------------------- options without pydantic
# Typer coerces every option that is not a bool flag through a pydantic TypeAdapter, built when the
# command's options are parsed: importing pydantic and building the adapters is 0.1-0.15 s of a
# `primbench compare`, more than half of its own start-up. `PlainOptionsCommand` coerces the plain
# values (text, a plain number, an Enum member by name, a path) itself, to the very values Typer's
# adapters give, and hands anything else (and every value it does not accept: for Typer's own
# message) to Typer's coercion.

_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT_TEXT = re.compile(r"[0-9]+")
#: What `_plain_value` returns for a value it leaves to Typer.
_TYPERS = object()


def _plain_value(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """`value` coerced as Typer's adapter for `annotation` (with the option's `info`) would, or
    `_TYPERS` where it is not one of the plain cases."""
    if get_origin(annotation) is list and isinstance(value, (list, tuple)):
        (item,) = get_args(annotation)
        out = [_plain_value(item, info, v, param, ctx) for v in value]
        return _TYPERS if any(v is _TYPERS for v in out) else out
    if annotation in (str, bool):
        return value if isinstance(value, annotation) else _TYPERS
    if annotation in (int, float) and info.min is None and info.max is None and not info.clamp:
        if isinstance(value, annotation) and not isinstance(value, bool):
            return value
        if annotation is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and (_FLOAT_TEXT if annotation is float else _INT_TEXT).fullmatch(value):
            return annotation(value)
        return _TYPERS
    if annotation is int and not info.clamp and isinstance(value, (int, str)) and not isinstance(value, bool):
        if isinstance(value, str) and not _INT_TEXT.fullmatch(value):
            return _TYPERS
        number = int(value)
        in_range = (info.min is None or number >= info.min) and (info.max is None or number <= info.max)
        return number if in_range else _TYPERS  # Typer's message for a value out of range
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(value, choices=tuple(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            return _TYPERS
    if (isinstance(annotation, type) and issubclass(annotation, Path) and info.path_type is None
            and isinstance(value, str) and value):
        # Typer's path adapter converts the text with pydantic (Path(value)), then checks it
        return coerce_cli_path(annotation(value), info, path_type=annotation, param=param, ctx=ctx)
    return _TYPERS


if RuntimeParam is not None:
    class _PlainRuntimeParam(RuntimeParam):
        """Typer's runtime parameter that coerces plain values itself (`_plain_value`), everything
        else as Typer does (`typer._coercion.build_runtime_param`, made when first needed)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            got = _plain_value(self.annotation, self.parameter_info, value, param, ctx)
            if got is _TYPERS:
                return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)
            return got


def coerce_plainly(params: list[Any]) -> None:
    """Give each of a command's (or group's) parameters whose coercion Typer has not built yet
    `_PlainRuntimeParam`; with another Typer whose parameters are built differently, nothing."""
    if RuntimeParam is None:
        return
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if (getattr(param, "_runtime_param", False) is None and descriptor is not None
                and descriptor.file_annotation is None):
            param._runtime_param = _PlainRuntimeParam(parameter_info=descriptor.parameter_info,
                                                      annotation=descriptor.annotation)


class PlainOptionsCommand(TyperCommand):
    """A Typer command whose plain option values are coerced without pydantic (`coerce_plainly`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        coerce_plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)
