"""The optional libraries of the history layer, imported on first use.

Without one of them, the command fails with `MissingDependencyError`, which names the
``history`` extra to install, instead of a bare ImportError deep inside a query."""

from __future__ import annotations

import importlib
from types import ModuleType

from primbench.errors import MissingDependencyError


def require(module: str) -> ModuleType:
    """`importlib.import_module(module)`, or MissingDependencyError naming the ``history`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(module.split(".")[0], "history", "primbench history") from None
