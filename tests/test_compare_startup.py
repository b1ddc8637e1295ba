"""compare's start-up: the functions of scipy.special it uses, without the array-API layer that
`scipy.special`'s package imports (issue 28: two tiny files in < 0.5 s of CPU)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primbench.compare import stats

_CHECK = """
import sys
from primbench.compare import stats
sp = stats.scipy_special()
light = "scipy.special" not in sys.modules
heavy = sorted(m for m in ("numpy.f2py", "numpy.testing", "scipy._lib.array_api_compat.numpy") if m in sys.modules)
got = {name: getattr(sp, name) for name in stats.SPECIAL_FUNCTIONS}
import scipy.special as real
same = all(got[name] is getattr(real, name) for name in stats.SPECIAL_FUNCTIONS)
print(light, heavy, same, real.polygamma(1, 2.5), sp.stdtr(3.0, -1.5) == real.stdtr(3.0, -1.5))
"""


def test_scipy_special_is_scipys_own_functions_without_the_array_api_layer() -> None:
    out = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "True", "scipy.special's package was imported"
    assert out[1] == "[]", f"the array-API chain was imported: {out[1]}"
    assert out[2] == "True", "a function is not scipy.special's own object"
    assert out[-1] == "True"


def test_scipy_special_in_process_has_every_function() -> None:
    import scipy.special as real

    sp = stats.scipy_special()
    for name in stats.SPECIAL_FUNCTIONS:
        assert getattr(sp, name) is getattr(real, name), name


# ---------------------------------------------------------------- numpy's median and quantile, without numpy.ma

_FLOATS = st.one_of(st.floats(allow_nan=False, width=64), st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf]),
                    st.floats(min_value=-3, max_value=3).map(lambda v: round(v, 1)))


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and np.asarray(a).tobytes() == np.asarray(b).tobytes()


@settings(max_examples=400, deadline=None)
@given(st.lists(_FLOATS, min_size=1, max_size=40), st.integers(1, 5), st.booleans())
def test_median_of_is_numpys_median_bit_for_bit(values: list[float], rows: int, nan: bool) -> None:
    x = np.array(values * rows, dtype=float).reshape(rows, -1)
    if nan:
        x[-1, len(values) // 2] = np.nan
    with np.errstate(invalid="ignore"):
        for args in ((x, 1), (x[0], None), (x, None), (x[:, ::2], 1)):
            assert _same(stats.median_of(*args), np.median(*args)), args


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 3000), st.integers(1, 17), st.integers(0, 2**32 - 1), st.booleans())
def test_median_of_one_partition_is_numpys_median(size: int, rows: int, seed: int, ties: bool) -> None:
    """The path for arrays with no NaN and no zero (`stats._median_without_nan_or_zero`): large
    arrays, ties (the same value many times), infinities."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, size)) * rng.uniform(0.01, 100.0, size)
    if ties:
        x = np.ceil(np.abs(x)) * np.sign(x)
        x[0, : size // 3] = np.inf
    assert not (x == 0).any() and not np.isnan(x).any()
    with np.errstate(invalid="ignore"):
        for args in ((x, 1), (x[0], None), (x, None), (x[:, ::2], 1), (x.T, 0)):
            assert _same(stats.median_of(*args), np.median(*args)), args


@settings(max_examples=400, deadline=None)
@given(st.lists(_FLOATS, min_size=1, max_size=60),
       st.one_of(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5]), st.floats(0, 0.5)), st.booleans())
def test_quantiles_is_numpys_quantile_bit_for_bit(values: list[float], q: float, nan: bool) -> None:
    x = np.array(values, dtype=float)
    if nan:
        x[len(values) // 2] = np.nan
    at = np.array([q, 1 - q])
    with np.errstate(invalid="ignore"):
        assert _same(stats.quantiles(x, at), np.quantile(x, at))
