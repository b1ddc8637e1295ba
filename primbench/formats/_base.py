"""The shared pieces of the readers: their error, their result, the formats tried."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from primbench.results_versions import KNOWN_VERSIONS

#: Every format the loader tries, in the words its error uses (primbench's own: every version it reads).
FORMATS: tuple[str, ...] = (
    f"primbench results.json {KNOWN_VERSIONS[0]}-{KNOWN_VERSIONS[-1]}",
    "C++ primbench results.json 3.0.0 and older",
    "C++ primbench CSV",
    "NVBench JSON",
    "Google Benchmark JSON",
    "pytest-benchmark JSON",
)


class FormatError(Exception):
    """A file recognised as one format that this reader cannot read: `field` names where."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Converted:
    """A foreign file as a results document: `document` is the JSON values of a results.json
    of `document_version` (the loader upgrades it, if older, and validates it); `version` is
    what `Results.version` says of the file (``"3.0.0"``, ``"cpp-csv"``,
    ``"nvbench-json 1.0.0"``, ...); `lacks` names what the format does not hold."""

    format: str
    version: str
    document: dict[str, Any]
    document_version: str = "4.4.0"
    lacks: tuple[str, ...] = field(default_factory=tuple)


def tried() -> str:
    """The list of formats for an error message."""
    return "formats tried: " + "; ".join(FORMATS)


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


#: `convert`'s `parsed` for bytes that are not JSON.
NOT_JSON: Any = _NotJson()
