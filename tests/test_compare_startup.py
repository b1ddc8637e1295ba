"""compare's start-up: the functions of scipy.special it uses, without the array-API layer that
`scipy.special`'s package imports (issue 28: two tiny files in < 0.5 s of CPU)."""

from __future__ import annotations

import subprocess
import sys

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
