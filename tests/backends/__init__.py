"""The test side of the history backends: one module here per backend, named as its module of
``history/storage/`` (``tests/backends/<name>.py``), found by name, never listed anywhere.

Each module holds, for its backend:

* ``CASE``: a `Case`, so that every contract test (tests/test_history_store_contract.py) and
  every test that runs on each backend (`cases`) runs on it;
* the fixtures its tests need (a server's, say): tests/conftest.py registers every module
  here as a plugin (`plugins`), so they are fixtures of every test;
* its own tests (``test_*``), collected by tests/test_backends.py (`own_tests`);
* optionally ``SERVICE``, a `Service` its tests need running (a server): ``.ci/run`` installs
  its Debian packages where it is missing and starts it for the whole run
  (``python -m tests.backends``), and the tests find it through the environment.

A new backend is its module in ``history/storage/`` and one module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pytest

    from primbench.history.storage.contract import Store


@dataclass(frozen=True)
class Case:
    """How the tests make an empty store of one backend: `name` is the id tests give it,
    `make(where, request)` a store that holds nothing yet, under the folder `where` (or on
    a server its fixtures give)."""

    name: str
    store: type[Store]
    make: Callable[[Path, pytest.FixtureRequest], Store]


class Service(Protocol):
    """Something a backend's tests need running for the whole test run (a database server)."""

    #: Debian packages that provide it (``.ci/run`` installs them where `available` is False).
    packages: tuple[str, ...]

    def available(self) -> bool:
        """Whether it can be started here (its programs are installed)."""

    def start(self) -> tuple[dict[str, str], str]:
        """Start it: the environment that points the tests at it, and what `stop` needs
        (a string). ``({}, "")`` when there is nothing to start (already pointed at one)."""

    def stop(self, state: str) -> None:
        """Stop what `start` started."""


def names() -> list[str]:
    """The backends' module names here, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def modules() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in names()]


def plugins() -> list[str]:
    """The modules, as pytest plugin names (their fixtures are every test's)."""
    return [f"{__name__}.{name}" for name in names()]


def cases() -> dict[str, Case]:
    """Every backend's `Case`, by its name, in the order of `names`."""
    found = [m.CASE for m in modules()]
    return {c.name: c for c in found}


def own_tests() -> dict[str, object]:
    """Every module's ``test_*`` functions, by name (a name two modules share is an error)."""
    out: dict[str, object] = {}
    for module in modules():
        for name, fn in vars(module).items():
            if name.startswith("test_") and callable(fn) and getattr(fn, "__module__", "") == module.__name__:
                if name in out:
                    raise RuntimeError(f"{module.__name__}.{name}: another backend's test has this name")
                out[name] = fn
    return out


def services() -> dict[str, Service]:
    """The `Service` of each module that has one, by module name."""
    return {m.__name__.rpartition(".")[2]: m.SERVICE for m in modules() if hasattr(m, "SERVICE")}
