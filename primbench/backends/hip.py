"""HIP specifics of the CuPy backend (CuPy's ROCm builds), and the CUDA/ROCm selection check.

Everything here is plain Python over answers of CuPy's runtime module (``cupy.cuda.runtime``,
passed in as `rt`) or over the file system, so it is tested with fakes on a machine without
ROCm. Imported only by the backend: ``import primbench`` never loads it.

* The spin kernel's timeout and the clock check's time base read ``wall_clock64()``, a
  constant-rate counter whose rate the device reports as ``hipDeviceAttributeWallClockRate``
  (kHz). CuPy's ROCm build has no named constant for it, so it is asked by HIP's number.
* ``context.general.backend`` as the C++ primbench writes it for HIP: ``hip_version`` (with the git
  hash where the ROCm install says it), runtime and driver versions as ``major.minor.patch``,
  and the compiler (the clang behind hiprtc).
* The backend follows the installed CuPy build (``cupy.cuda.runtime.is_hip``). When CuPy
  cannot start, `mismatch_message` says whether it is the wrong build for this machine
  (a CUDA wheel on a ROCm machine or the reverse), from what the machine shows: device
  nodes, driver files and tools. The probe is injectable for tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from primbench.errors import DeviceError

#: ``hipDeviceAttributeWallClockRate`` in HIP's ``hipDeviceAttribute_t`` (hip_runtime_api.h):
#: ``hipDeviceAttributeAmdSpecificBegin`` (10000) + 17, the enumerator after
#: ``hipDeviceAttributeFineGrainSupport`` (10016; so in HIP 5.2's header too, which lacks the
#: wall-clock one). ROCm 7 appends ``hipDeviceAttributeNumberOfXccs`` (10018) after it.
HIP_DEVICE_ATTRIBUTE_WALL_CLOCK_RATE = 10017

#: The ROCm release CuPy's ROCm wheel for the ``[rocm]`` extra is built for.
ROCM_RELEASE_OF_WHEEL = "7.0"


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


# ----- clocks


def wall_clock_rate_hz(rt: Any, index: int) -> float:
    """Ticks per second of ``wall_clock64()`` on device `index` (the attribute is in kHz)."""
    try:
        khz = int(rt.deviceGetAttribute(HIP_DEVICE_ATTRIBUTE_WALL_CLOCK_RATE, index))
    except Exception as exc:
        raise DeviceError(
            f"HIP does not report the wall-clock rate of device {index} (hipDeviceAttributeWallClockRate: "
            f"{type(exc).__name__}: {exc}); the stream-blocking timeout and the clock check need it "
            "(ROCm 5.2 and older lack it)"
        ) from None
    if khz <= 0:
        raise DeviceError(f"HIP reports a wall-clock rate of {khz} kHz for device {index}; expected a positive rate")
    return khz * 1e3


def wall_ticks_to_ns(ticks: int, rate_hz: float) -> int:
    """``wall_clock64()`` ticks as nanoseconds (exact for the integral kHz rates HIP reports)."""
    khz = round(rate_hz / 1e3)
    if khz * 1e3 == rate_hz:
        return ticks * 1_000_000 // khz
    return int(ticks * 1e9 / rate_hz)


# ----- identity and versions


def gfx_arch(props: dict[str, Any]) -> str:
    """The gfx name of a HIP device: ``gfx90a`` from ``gcnArchName`` "gfx90a:sramecc+:xnack-".

    HIP before 6.0 also had the integer ``gcnArch`` (906 for gfx906); used when the name is
    missing. "gfx?" when neither says.
    """
    name = _text(props.get("gcnArchName", b"")).strip().split(":")[0].strip()
    if name.startswith("gfx"):
        return name
    number = props.get("gcnArch")
    if isinstance(number, int) and number > 0:
        return f"gfx{number}"
    return "gfx?"


def format_hip_version(version: int) -> str:
    """HIP's integer version (``major * 10**7 + minor * 10**5 + patch``) as "6.4.43482"."""
    if version < 10_000_000:
        return str(version)
    return f"{version // 10_000_000}.{version // 100_000 % 100}.{version % 100_000}"


def hip_githash(rocm_path: str | os.PathLike[str] | None) -> str | None:
    """``HIP_VERSION_GITHASH`` from ``<rocm>/include/hip/hip_version.h``, where it is."""
    if not rocm_path:
        return None
    try:
        text = (Path(rocm_path) / "include" / "hip" / "hip_version.h").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r'#define\s+HIP_VERSION_GITHASH\s+"([^"]*)"', text)
    return (m.group(1) or None) if m else None


Runner = Callable[[list[str]], str]


def _run(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True).stdout


def clang_version(rocm_path: str | os.PathLike[str] | None, run: Runner = _run) -> str | None:
    """The version of ROCm's clang (the compiler inside hiprtc), as ``clang --version`` says it.

    "19.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.4.0 25133 c7fe45cf…)".
    """
    if not rocm_path:
        return None
    for rel in ("lib/llvm/bin/clang", "llvm/bin/clang"):
        clang = Path(rocm_path) / rel
        if not clang.exists():
            continue
        try:
            out = run([str(clang), "--version"])
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"clang version\s+(.+)", out)
        if m:
            return m.group(1).strip()
    return None


def rocm_path(cupy_module: Any = None) -> str | None:
    """Where ROCm is: CuPy's answer, else ``$ROCM_PATH``, else /opt/rocm if it exists."""
    getter = getattr(getattr(cupy_module, "cuda", None), "get_rocm_path", None)
    if callable(getter):
        try:
            found = getter()
        except Exception:
            found = None
        if found:
            return str(found)
    env = os.environ.get("ROCM_PATH")
    if env:
        return env
    return "/opt/rocm" if os.path.isdir("/opt/rocm") else None


def hiprtc_version() -> str | None:
    """hiprtc's own version (CuPy exposes hiprtcVersion as ``nvrtc.getVersion`` on ROCm)."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        major, minor = nvrtc.getVersion()
    except Exception:
        return None
    return f"{major}.{minor}"


def backend_context(rt: Any, rocm: str | None, *, run: Runner = _run,
                    rtc_version: Callable[[], str | None] = hiprtc_version) -> dict[str, Any]:
    """``context.general.backend`` for HIP, as the C++ primbench writes it."""
    runtime = format_hip_version(int(rt.runtimeGetVersion()))
    driver = format_hip_version(int(rt.driverGetVersion()))
    githash = hip_githash(rocm)
    clang = clang_version(rocm, run)
    compiler = {"name": "clang", "version": clang} if clang else {"name": "hiprtc", "version": rtc_version() or runtime}
    return {
        "name": "hip",
        "hip_version": f"{runtime}-{githash}" if githash else runtime,
        "runtime_version": runtime,
        "driver_version": driver,
        "compiler": compiler,
    }


# ----- which CuPy build, on which machine


@dataclass
class PlatformProbe:
    """What the machine shows of each GPU platform. Replace `exists` and `which` in tests."""

    exists: Callable[[str], bool] = os.path.exists
    which: Callable[[str], str | None] = shutil.which

    #: Present only where the kernel driver is loaded (and, in a container, passed in).
    nvidia_driver: tuple[str, ...] = ("/dev/nvidiactl", "/proc/driver/nvidia/version")
    amd_driver: tuple[str, ...] = ("/dev/kfd",)
    #: Installed software that says which platform a machine is for.
    nvidia_tools: tuple[str, ...] = ("nvidia-smi",)
    amd_paths: tuple[str, ...] = ("/opt/rocm",)
    amd_tools: tuple[str, ...] = ("amd-smi", "rocm-smi", "rocminfo")

    def evidence(self) -> dict[str, dict[str, list[str]]]:
        """``{"cuda"|"rocm": {"driver": [...], "other": [...]}}``: the markers found."""
        return {
            "cuda": {
                "driver": [p for p in self.nvidia_driver if self.exists(p)],
                "other": [t for t in self.nvidia_tools if self.which(t)],
            },
            "rocm": {
                "driver": [p for p in self.amd_driver if self.exists(p)],
                "other": [p for p in self.amd_paths if self.exists(p)] + [t for t in self.amd_tools if self.which(t)],
            },
        }


def installed_cupy(distributions: Iterable[str] | None = None) -> str | None:
    """The name of the installed CuPy distribution (cupy-cuda13x, cupy-rocm-7-0, cupy), or None."""
    if distributions is None:
        from importlib import metadata

        distributions = (d.metadata["Name"] or "" for d in metadata.distributions())
    names = sorted({n.lower() for n in distributions if n and re.fullmatch(r"cupy(-.*)?", n.lower())})
    return names[0] if names else None


def cupy_build(distribution: str | None) -> str | None:
    """"rocm" or "cuda" from a CuPy distribution's name; None for a source build (plain "cupy")."""
    if not distribution:
        return None
    if distribution.startswith("cupy-rocm"):
        return "rocm"
    if distribution.startswith("cupy-cuda"):
        return "cuda"
    return None


_INSTALL = {
    "cuda": "pip install cupy-cuda13x nvidia-ml-py (CUDA 13 driver) or cupy-cuda12x nvidia-ml-py (CUDA 12)",
    "rocm": f"pip install cupy-rocm-7-0 amdsmi (CuPy's ROCm wheel needs ROCm {ROCM_RELEASE_OF_WHEEL})",
}
_PLATFORM = {"cuda": "NVIDIA/CUDA", "rocm": "AMD/ROCm"}
_DRIVER = {"cuda": "NVIDIA driver (/dev/nvidiactl)", "rocm": "AMD GPU driver (/dev/kfd)"}


def mismatch_message(build: str | None, probe: PlatformProbe | None = None,
                     distribution: str | None = None) -> str | None:
    """A clear error when CuPy is built for the other platform than this machine's, else None.

    It is a mismatch only when the platform CuPy is built for shows no driver here and the
    other platform shows itself (a driver, ROCm's directory or a vendor tool): a machine with
    both, or with neither, is left to CuPy's own error.
    """
    if build not in ("cuda", "rocm"):
        return None
    other = "rocm" if build == "cuda" else "cuda"
    ev = (probe or PlatformProbe()).evidence()
    if ev[build]["driver"]:
        return None
    seen = ev[other]["driver"] + ev[other]["other"]
    if not seen:
        return None
    dist = distribution or ("cupy-rocm-*" if build == "rocm" else "cupy-cuda*")
    return (
        f"the installed CuPy ({dist}) is a {build.upper()} build, but this is an {_PLATFORM[other]} machine "
        f"(found {', '.join(seen)}; no {_DRIVER[build]}): `pip uninstall {dist}` and "
        f"{_INSTALL[other]}"
    )


def import_failure(exc: BaseException) -> str:
    """The useful line of CuPy's import error (its banner ends with the original error)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip() and not set(ln.strip()) <= {"="}]
    return lines[-1] if lines else type(exc).__name__
