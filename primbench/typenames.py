"""Display names for types: the Python form of the C++ primbench's PRIMBENCH_REGISTER_TYPE."""

from __future__ import annotations

from typing import Any

import numpy as np

_names: dict[np.dtype, str] = {}


def register_type(dtype: Any, name: str) -> None:
    """Show `dtype` as `name` in specialization names, e.g. ``register_type(np.int64, "long long")``."""
    _names[np.dtype(dtype)] = name


def type_name(dtype: Any) -> str:
    """The registered display name of `dtype`, else NumPy's name for it (``int64``)."""
    dt = np.dtype(dtype)
    return _names.get(dt, dt.name)


def registered_dtype(name: str) -> np.dtype[Any] | None:
    """The dtype registered under display name `name`, if any (the latest registered wins)."""
    found = [dt for dt, shown in _names.items() if shown == name]
    return found[-1] if found else None


def itemsize(dtype: Any) -> int:
    """Bytes per element of `dtype`."""
    return np.dtype(dtype).itemsize
