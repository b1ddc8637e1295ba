"""Correctness checks for ``state.test``: failures print the actual values, ready to paste."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from primbench.errors import BenchmarkAssertionError


def _as_list(values: Any) -> list[Any]:
    if hasattr(values, "get") and not isinstance(values, (dict, list, tuple)):
        values = values.get()  # a CuPy array: copy to the host
    return np.asarray(values).tolist()


def assert_equal(actual: Any, expected: Sequence[Any] | Any, *, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Check device or host values against `expected` (exactly, or within rtol/atol).

    On failure the message lists the actual values as a Python literal, so that a first
    run with placeholders (``[0, 0, 0]``) tells what to paste in."""
    got = _as_list(actual)
    want = np.asarray(expected).tolist()
    if np.shape(got) != np.shape(want):
        raise BenchmarkAssertionError(
            f"shape mismatch: expected {np.shape(want)}, got {np.shape(got)}; actual values: {got!r}"
        )
    ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=False) if (rtol or atol) else got == want
    if not ok:
        bad = [i for i, (g, w) in enumerate(zip(np.ravel(got), np.ravel(want), strict=True)) if g != w]
        raise BenchmarkAssertionError(
            f"values differ at {len(bad)} position(s), first at {bad[0] if bad else '?'}: "
            f"expected {want!r}; actual values: {got!r}"
        )
