"""The HIP backend without AMD hardware: CuPy-ROCm's runtime answers and AMD SMI are fakes.

Covered: the wall-clock rate attribute and the clock arithmetic, gfx names, version
formatting, ``context.general`` as the seed shows it for HIP, backend selection (the
backend follows the installed CuPy; a CUDA wheel on a ROCm machine or the reverse is named
as such), and that ``import primbench`` loads none of CuPy, AMD SMI or NVML.
"""

from __future__ import annotations

import importlib.machinery
import json
import stat
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import primbench
from primbench.backends import device_count, hip, open_backend, require_cupy
from primbench.backends.hip import (
    HIP_DEVICE_ATTRIBUTE_WALL_CLOCK_RATE,
    PlatformProbe,
    backend_context,
    clang_version,
    cupy_build,
    format_hip_version,
    gfx_arch,
    hip_githash,
    import_failure,
    installed_cupy,
    mismatch_message,
    rocm_path,
    wall_clock_rate_hz,
    wall_ticks_to_ns,
)
from primbench.clocks import average_clock_mhz, clock_record
from primbench.errors import DeviceError, MissingDependencyError
from tests.test_monitoring_amd import FakeAmdSmi, FakeGpu

SEED_CLANG = ("19.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.4.0 25133 "
              "c7fe45cf4b819c5991fe208aaa96edf142730f1d)")
HIP_6_4 = 60443482  # HIP_VERSION of the seed's ROCm 6.4.43482

# CuPy's own import error on a machine without ROCm (cupy-rocm-7-0 14.2.0, seen here).
CUPY_ROCM_IMPORT_ERROR = """
================================================================
Failed to import CuPy.

If you installed CuPy via wheels (cupy-cudaXXX or cupy-rocm-X-X), make sure that the package matches with the version of CUDA or ROCm installed.

On Linux, you may need to set LD_LIBRARY_PATH environment variable depending on how you installed CUDA/ROCm.
On Windows, try setting CUDA_PATH environment variable.

Check the Installation Guide for details:
  https://docs.cupy.dev/en/latest/install.html

Original error:
  ImportError: libamdhip64.so.7: cannot open shared object file: No such file or directory
================================================================
"""  # noqa: E501


# ----------------------------------------------------------------- fakes of CuPy's HIP runtime


class FakeHipRuntime:
    """``cupy.cuda.runtime`` of a ROCm build: HIP's numbers behind CUDA's names."""

    hostAllocPortable = 1
    hostAllocMapped = 2

    def __init__(self, devices: list[dict[str, Any]] | None = None, *, is_hip: bool = True,
                 runtime: int = HIP_6_4, driver: int = HIP_6_4, wall_khz: int = 100_000,
                 fail: Exception | None = None) -> None:
        self.is_hip = is_hip
        self.devices = devices if devices is not None else [mi210("0000:83:00.0")]
        self.runtime, self.driver, self.wall_khz, self.fail = runtime, driver, wall_khz, fail
        self.attribute_calls: list[tuple[int, int]] = []

    def getDeviceCount(self) -> int:
        if self.fail is not None:
            raise self.fail
        return len(self.devices)

    def getDevice(self) -> int:
        return 0

    def getDeviceProperties(self, index: int) -> dict[str, Any]:
        return self.devices[index]["props"]

    def deviceGetPCIBusId(self, index: int) -> str:
        return self.devices[index]["bus"]

    def runtimeGetVersion(self) -> int:
        return self.runtime

    def driverGetVersion(self) -> int:
        return self.driver

    def deviceGetAttribute(self, attrib: int, device: int) -> int:
        self.attribute_calls.append((attrib, device))
        if attrib == HIP_DEVICE_ATTRIBUTE_WALL_CLOCK_RATE:
            return self.wall_khz
        raise RuntimeError("hipErrorInvalidValue: invalid argument")


def mi210(bus: str) -> dict[str, Any]:
    return {"bus": bus, "props": {
        "name": b"AMD Instinct MI210", "gcnArchName": b"gfx90a:sramecc+:xnack-", "multiProcessorCount": 104,
        "l2CacheSize": 8 << 20, "totalGlobalMem": 64 << 30, "major": 9, "minor": 0, "clockInstructionRate": 100_000,
    }}


class _Ctx:
    def __enter__(self) -> _Ctx:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class FakeCupyDevice(_Ctx):
    def __init__(self, index: int) -> None:
        self.id = index

    def use(self) -> None:
        pass


class FakeStream(_Ctx):
    def __init__(self, non_blocking: bool = False) -> None:
        self.ptr = 0x5000
        self.synchronized = 0

    def synchronize(self) -> None:
        self.synchronized += 1


def fake_cupy(rt: FakeHipRuntime, rocm: Path | None) -> types.ModuleType:
    mod = types.ModuleType("cupy")
    mod.__version__ = "14.2.0"  # type: ignore[attr-defined]
    mod.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        runtime=rt, Device=FakeCupyDevice, Stream=FakeStream, get_rocm_path=lambda: str(rocm) if rocm else None)
    return mod


def rocm_tree(root: Path, *, clang_text: str | None = None, layout: str = "lib/llvm/bin/clang",
              githash: str = "0f2d60242") -> Path:
    """A ROCm install as far as the context reads it: hip_version.h and ROCm's clang."""
    hip_dir = root / "include" / "hip"
    hip_dir.mkdir(parents=True)
    (hip_dir / "hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 4\n#define HIP_VERSION_PATCH 43482\n"
        f'#define HIP_VERSION_GITHASH "{githash}"\n#define HIP_VERSION_BUILD_NAME ""\n')
    clang = root / layout
    clang.parent.mkdir(parents=True)
    text = clang_text if clang_text is not None else (
        f"AMD clang version {SEED_CLANG}\nTarget: x86_64-unknown-linux-gnu\nThread model: posix\n")
    clang.write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}EOF\n")
    clang.chmod(clang.stat().st_mode | stat.S_IXUSR)
    return root


@pytest.fixture
def with_fake_cupy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Install a fake ``cupy`` for the backend module, and leave no fake-bound module behind."""
    name = "primbench.backends.cupy_backend"
    before = sys.modules.get(name)
    pkg = sys.modules["primbench.backends"]
    had_attr = hasattr(pkg, "cupy_backend")
    before_attr = getattr(pkg, "cupy_backend", None)

    def install(mod: types.ModuleType | None) -> None:
        monkeypatch.setitem(sys.modules, "cupy", mod)
        sys.modules.pop(name, None)

    yield install
    if before is not None:
        sys.modules[name] = before
    else:
        sys.modules.pop(name, None)
    if had_attr:
        pkg.cupy_backend = before_attr  # type: ignore[attr-defined]
    elif hasattr(pkg, "cupy_backend"):
        delattr(pkg, "cupy_backend")


def probe(*present: str) -> PlatformProbe:
    """A machine that shows exactly these paths and tools."""
    shown = set(present)
    return PlatformProbe(exists=lambda p: p in shown, which=lambda t: f"/usr/bin/{t}" if t in shown else None)


# ----------------------------------------------------------------- import hygiene


def test_importing_primbench_loads_no_gpu_library() -> None:
    code = ("import sys, primbench, primbench.monitoring, primbench.thermal, primbench.clocks; "
            "print([m for m in sys.modules if m.split('.')[0] in ('cupy', 'cupy_backends', 'amdsmi', 'pynvml')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert primbench.__name__ == "primbench"


# ----------------------------------------------------------------- clocks


def test_wall_clock_rate_is_hips_attribute_in_khz() -> None:
    rt = FakeHipRuntime(wall_khz=100_000)
    assert wall_clock_rate_hz(rt, 3) == 100e6
    assert rt.attribute_calls == [(10017, 3)]  # hipDeviceAttributeWallClockRate


@pytest.mark.parametrize("khz", [0, -1])
def test_a_wall_clock_rate_that_is_not_positive_is_an_error(khz: int) -> None:
    with pytest.raises(DeviceError, match=f"wall-clock rate of {khz} kHz"):
        wall_clock_rate_hz(FakeHipRuntime(wall_khz=khz), 0)


def test_a_runtime_without_the_attribute_is_an_error() -> None:
    class OldHip(FakeHipRuntime):
        def deviceGetAttribute(self, attrib: int, device: int) -> int:
            raise RuntimeError("hipErrorInvalidValue")

    with pytest.raises(DeviceError, match=r"hipDeviceAttributeWallClockRate.*ROCm 5\.2 and older lack it"):
        wall_clock_rate_hz(OldHip(), 0)


@pytest.mark.parametrize(("ticks", "hz", "ns"), [
    (100, 100e6, 1000), (1, 25e6, 40), (2**62, 100e6, 2**62 * 10), (123_456_789, 1e9, 123_456_789),
    (3, 3e6 + 0.5, 999),  # a non-integral kHz rate: float arithmetic
])
def test_wall_ticks_to_ns(ticks: int, hz: float, ns: int) -> None:
    assert wall_ticks_to_ns(ticks, hz) == ns


def test_average_shader_clock_from_wall_ticks_and_cycles() -> None:
    """The average-SM-clock check on AMD: 100 MHz wall clock, 2 s between samples, 3.4e9 shader cycles → 1700 MHz."""
    rate = wall_clock_rate_hz(FakeHipRuntime(wall_khz=100_000), 0)
    start = (wall_ticks_to_ns(1_000_000_000, rate), 5_000)
    end = (wall_ticks_to_ns(1_200_000_000, rate), 5_000 + 3_400_000_000)
    assert end[0] - start[0] == 2 * 10**9
    assert average_clock_mhz(start, end) == pytest.approx(1700)


# ----------------------------------------------------------------- names and versions


@pytest.mark.parametrize(("props", "arch"), [
    ({"gcnArchName": b"gfx90a:sramecc+:xnack-"}, "gfx90a"),
    ({"gcnArchName": "gfx942:sramecc+:xnack-"}, "gfx942"),
    ({"gcnArchName": b"gfx1100"}, "gfx1100"),
    ({"gcnArchName": b"gfx1201"}, "gfx1201"),
    ({"gcnArchName": b"", "gcnArch": 906}, "gfx906"),
    ({}, "gfx?"),
])
def test_gfx_arch(props: dict[str, Any], arch: str) -> None:
    assert gfx_arch(props) == arch


@pytest.mark.parametrize(("value", "text"), [
    (60443482, "6.4.43482"), (70051831, "7.0.51831"), (70000000, "7.0.0"), (50231153, "5.2.31153"), (3, "3"),
])
def test_format_hip_version(value: int, text: str) -> None:
    assert format_hip_version(value) == text


def test_hip_githash(tmp_path: Path) -> None:
    assert hip_githash(rocm_tree(tmp_path / "rocm")) == "0f2d60242"
    assert hip_githash(tmp_path / "nowhere") is None
    assert hip_githash(None) is None
    assert hip_githash(rocm_tree(tmp_path / "nohash", githash="")) is None


def test_clang_version_from_either_layout(tmp_path: Path) -> None:
    assert clang_version(rocm_tree(tmp_path / "a")) == SEED_CLANG
    assert clang_version(rocm_tree(tmp_path / "b", layout="llvm/bin/clang")) == SEED_CLANG
    assert clang_version(tmp_path / "none") is None
    assert clang_version(None) is None


def test_clang_version_that_fails_or_says_nothing(tmp_path: Path) -> None:
    root = rocm_tree(tmp_path / "r")

    def failing(cmd: list[str]) -> str:
        raise subprocess.CalledProcessError(1, cmd)

    assert clang_version(root, failing) is None
    assert clang_version(root, lambda cmd: "no version here\n") is None


def test_backend_context_is_the_seeds(tmp_path: Path) -> None:
    ctx = backend_context(FakeHipRuntime(), str(rocm_tree(tmp_path / "rocm")))
    assert ctx == {
        "name": "hip",
        "hip_version": "6.4.43482-0f2d60242",
        "runtime_version": "6.4.43482",
        "driver_version": "6.4.43482",
        "compiler": {"name": "clang", "version": SEED_CLANG},
    }
    assert list(ctx) == ["name", "hip_version", "runtime_version", "driver_version", "compiler"]


def test_backend_context_without_rocm_tree_names_hiprtc() -> None:
    ctx = backend_context(FakeHipRuntime(runtime=70051831, driver=70051831), None, rtc_version=lambda: "7.0")
    assert ctx["hip_version"] == "7.0.51831" and ctx["compiler"] == {"name": "hiprtc", "version": "7.0"}
    ctx = backend_context(FakeHipRuntime(runtime=70051831), None, rtc_version=lambda: None)
    assert ctx["compiler"] == {"name": "hiprtc", "version": "7.0.51831"}


def test_rocm_path_prefers_cupys_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCM_PATH", "/env/rocm")
    assert rocm_path(fake_cupy(FakeHipRuntime(), tmp_path)) == str(tmp_path)
    assert rocm_path(fake_cupy(FakeHipRuntime(), None)) == "/env/rocm"
    assert rocm_path(None) == "/env/rocm"


# ----------------------------------------------------------------- the backend with fake CuPy-ROCm and AMD SMI


def hip_device(install: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, monitoring: bool = True,
               gpus: list[FakeGpu] | None = None, rt: FakeHipRuntime | None = None) -> Any:
    rt = rt or FakeHipRuntime([mi210("0000:c3:00.0"), mi210("0000:83:00.0")])
    install(fake_cupy(rt, rocm_tree(tmp_path / "rocm")))
    smi = FakeAmdSmi(gpus if gpus is not None else [
        FakeGpu("0000:83:00.0", uuid="uuid-83", serial="0x0000000000000083",
                sensors={"HOTSPOT": {"current": 47, "critical": 110}}),
        FakeGpu("0000:c3:00.0", uuid="uuid-c3", serial="0x00000000000000C3"),
    ])
    monkeypatch.setitem(sys.modules, "amdsmi", smi if monitoring else None)
    from primbench.backends.cupy_backend import CupyDevice

    return CupyDevice(1, monitoring=monitoring)


def test_context_general_for_hip_is_the_seeds(with_fake_cupy: Any, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    dev = hip_device(with_fake_cupy, tmp_path, monkeypatch)
    assert dev.backend_name == "hip" and dev.is_hip
    ctx = dev.context()
    json.dumps(ctx)  # JSON-ready
    gpu = ctx["gpu"]
    assert gpu["name"] == "AMD Instinct MI210" and gpu["arch"] == "gfx90a"
    assert gpu["pci_bus_id"] == "0000:83:00.0"
    # The physical identity from AMD SMI, of the GPU at HIP device 1's address (AMD SMI's second).
    assert gpu["uuid"] == "uuid-83" and gpu["serial"] == "0x0000000000000083"
    backend = ctx["backend"]
    assert {k: backend[k] for k in ("name", "hip_version", "runtime_version", "driver_version", "compiler")} == {
        "name": "hip", "hip_version": "6.4.43482-0f2d60242", "runtime_version": "6.4.43482",
        "driver_version": "6.4.43482", "compiler": {"name": "clang", "version": SEED_CLANG}}
    assert backend["cupy_version"] == "14.2.0"
    assert ctx["monitoring"] == {"name": "amdsmi", "version": "25.3.0"}
    assert ctx["temperature_type"] == "hotspot"  # this GPU has no edge sensor
    assert dev.temperature() == 47.0 and dev.slowdown_temperature() == 110.0
    dev.monitor.close()


def test_without_monitoring_amd_smi_is_not_loaded(with_fake_cupy: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    dev = hip_device(with_fake_cupy, tmp_path, monkeypatch, monitoring=False)  # amdsmi import would fail
    ctx = dev.context()
    assert "monitoring" not in ctx and "temperature_type" not in ctx and "uuid" not in ctx["gpu"]
    assert dev.temperature() is None and dev.slowdown_temperature() is None


class FakeStamps:
    def __init__(self) -> None:
        self.values = [0, 0]

    def fill(self, value: int) -> None:
        self.values = [value, value]

    def get(self, stream: Any = None) -> list[int]:
        return list(self.values)


def test_clock_sample_converts_wall_ticks_at_the_device_rate(with_fake_cupy: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rt = FakeHipRuntime([mi210("0000:c3:00.0"), mi210("0000:83:00.0")], wall_khz=100_000)
    dev = hip_device(with_fake_cupy, tmp_path, monkeypatch, monitoring=False, rt=rt)
    samples = iter([(1_000_000_000, 7_000), (1_200_000_000, 7_000 + 3_400_000_000)])
    stamps = FakeStamps()
    launches: list[tuple[Any, Any]] = []

    def kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...], stream: Any = None) -> None:
        launches.append((grid, block))
        stamps.values = list(next(samples))

    dev._stamps, dev._stamp = stamps, kernel
    start, end = dev.clock_sample(), dev.clock_sample()
    assert launches[0] == ((104,), (32,))  # one block per CU
    assert start == (10 * 10**9, 7_000) and end == (12 * 10**9, 7_000 + 3_400_000_000)
    assert (HIP_DEVICE_ATTRIBUTE_WALL_CLOCK_RATE, 1) in rt.attribute_calls
    rec = clock_record(start, end, None, None, None, 0.9)
    assert rec is not None and rec["average_mhz"] == pytest.approx(1700)
    assert rec["below_expected"] is False  # no AMD reference clock is claimed

    # gfx11: no CU writes a sample (clock64() is a 20-bit counter there): no clock record.
    dev._stamp = lambda *a, **k: None
    assert dev.clock_sample() is None


# ----------------------------------------------------------------- which CuPy on which machine


def test_installed_cupy_and_its_build() -> None:
    assert installed_cupy(["numpy", "cupy-rocm-7-0", "pytest"]) == "cupy-rocm-7-0"
    assert installed_cupy(["CuPy-CUDA13x"]) == "cupy-cuda13x"
    assert installed_cupy(["cupyx-extras", "numpy"]) is None
    assert installed_cupy(["numpy"]) is None
    assert (cupy_build("cupy-rocm-7-0"), cupy_build("cupy-cuda12x"), cupy_build("cupy"), cupy_build(None)) == (
        "rocm", "cuda", None, None)


def test_cupys_import_error_is_reduced_to_its_cause() -> None:
    assert import_failure(ImportError(CUPY_ROCM_IMPORT_ERROR)) == (
        "ImportError: libamdhip64.so.7: cannot open shared object file: No such file or directory")
    assert import_failure(ImportError("")) == "ImportError"


def test_probe_evidence() -> None:
    ev = probe("/dev/kfd", "/opt/rocm", "nvidia-smi").evidence()
    assert ev == {"cuda": {"driver": [], "other": ["nvidia-smi"]},
                  "rocm": {"driver": ["/dev/kfd"], "other": ["/opt/rocm"]}}


def test_rocm_cupy_on_an_nvidia_machine() -> None:
    msg = mismatch_message("rocm", probe("/dev/nvidiactl", "nvidia-smi"), "cupy-rocm-7-0")
    assert msg is not None
    assert "cupy-rocm-7-0) is a ROCM build, but this is an NVIDIA/CUDA machine" in msg
    assert "found /dev/nvidiactl, nvidia-smi" in msg and "no AMD GPU driver (/dev/kfd)" in msg
    assert "`pip uninstall cupy-rocm-7-0`" in msg and "pip install cupy-cuda13x" in msg


def test_cuda_cupy_on_a_rocm_machine() -> None:
    msg = mismatch_message("cuda", probe("/dev/kfd", "/opt/rocm", "amd-smi"), "cupy-cuda13x")
    assert msg is not None
    assert "is a CUDA build, but this is an AMD/ROCm machine (found /dev/kfd, /opt/rocm, amd-smi" in msg
    assert "no NVIDIA driver (/dev/nvidiactl)" in msg
    assert "pip install cupy-rocm-7-0 amdsmi" in msg and "ROCm 7.0" in msg


@pytest.mark.parametrize(("build", "present"), [
    ("cuda", ("/dev/nvidiactl", "/dev/kfd")),  # both platforms: CuPy's own error says more
    ("rocm", ("/dev/kfd", "nvidia-smi")),
    ("cuda", ()),  # neither shows itself (e.g. WSL): no claim
    ("rocm", ()),
    ("cuda", ("/proc/driver/nvidia/version", "/opt/rocm")),  # the CUDA driver is there
    (None, ("/dev/kfd",)),  # a source build: unknown
])
def test_no_mismatch_claimed(build: str | None, present: tuple[str, ...]) -> None:
    assert mismatch_message(build, probe(*present)) is None


def test_open_backend_names_a_rocm_wheel_that_cannot_load_on_an_nvidia_machine(
        with_fake_cupy: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pkg = tmp_path / "pkgs" / "cupy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"raise ImportError({CUPY_ROCM_IMPORT_ERROR!r})\n")
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setattr(hip, "installed_cupy", lambda: "cupy-rocm-7-0")
    with pytest.raises(DeviceError, match=r"ROCM build, but this is an NVIDIA/CUDA machine"):
        open_backend(0, monitoring=True, probe=probe("/dev/nvidiactl"))
    with pytest.raises(DeviceError) as err:
        open_backend(0, monitoring=True, probe=probe())  # nothing to blame: say why CuPy failed
    assert str(err.value) == ("CuPy (cupy-rocm-7-0) is installed but does not load: ImportError: "
                              "libamdhip64.so.7: cannot open shared object file: No such file or directory")


def test_open_backend_without_cupy_names_the_packages(with_fake_cupy: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with_fake_cupy(None)
    monkeypatch.setattr(hip, "installed_cupy", lambda: None)
    with pytest.raises(MissingDependencyError) as err:
        open_backend(0, monitoring=True, probe=probe())
    assert "CUDA 12: cupy-cuda12x; ROCm: cupy-rocm-7-0 amdsmi" in str(err.value)
    assert "pip install cupy-cuda13x nvidia-ml-py" in str(err.value)


def test_open_backend_names_a_cuda_wheel_on_a_rocm_machine(with_fake_cupy: Any, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    rt = FakeHipRuntime(is_hip=False, fail=RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is "
                                                        "insufficient for CUDA runtime version"))
    with_fake_cupy(fake_cupy(rt, None))
    monkeypatch.setattr(hip, "installed_cupy", lambda: "cupy-cuda13x")
    with pytest.raises(DeviceError) as err:
        open_backend(0, monitoring=False, probe=probe("/dev/kfd", "/opt/rocm"))
    assert "cupy-cuda13x) is a CUDA build, but this is an AMD/ROCm machine" in str(err.value)
    assert isinstance(err.value.__cause__, RuntimeError)
    # On a machine with the NVIDIA driver the runtime's own error stands.
    with pytest.raises(DeviceError, match=r"^no usable GPU: RuntimeError: cudaErrorInsufficientDriver"):
        open_backend(0, monitoring=False, probe=probe("/dev/nvidiactl"))


def test_open_backend_opens_hip_when_cupy_is_a_rocm_build(with_fake_cupy: Any, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    with_fake_cupy(fake_cupy(FakeHipRuntime(), rocm_tree(tmp_path / "rocm")))
    monkeypatch.setattr(hip, "installed_cupy", lambda: "cupy-rocm-7-0")
    dev = open_backend(None, monitoring=False, probe=probe("/dev/kfd"))
    assert dev.backend_name == "hip"
    assert dev.context()["gpu"]["arch"] == "gfx90a"


def test_the_parent_of_workers_checks_cupy_is_installed_without_importing_it(with_fake_cupy: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`require_cupy`: the one-line error a single process gives where CuPy is not installed; nothing where it is
    (found, not imported: a CuPy that cannot start fails in the workers)."""
    with_fake_cupy(None)
    with pytest.raises(MissingDependencyError) as err:
        require_cupy()
    assert str(err.value) == ("running benchmarks on a GPU (CUDA 12: cupy-cuda12x; ROCm: cupy-rocm-7-0 amdsmi) needs "
                              "the Python module 'cupy', which is not installed: run `pip install cupy-cuda13x "
                              "nvidia-ml-py`, or `pip install -e '.[cuda13]'` in a clone of primbench's repository")
    mod = fake_cupy(FakeHipRuntime(), None)
    mod.__spec__ = importlib.machinery.ModuleSpec("cupy", None)
    with_fake_cupy(mod)
    require_cupy()


def test_device_count_names_a_cupy_built_for_the_other_platform(with_fake_cupy: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rt = FakeHipRuntime(is_hip=False, fail=RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected"))
    with_fake_cupy(fake_cupy(rt, None))
    monkeypatch.setattr(hip, "installed_cupy", lambda: "cupy-cuda13x")
    with pytest.raises(DeviceError, match=r"^no usable GPU: RuntimeError: cudaErrorNoDevice"):
        device_count(probe=probe("/dev/nvidiactl"))
    with pytest.raises(DeviceError, match=r"is a CUDA build, but this is an AMD/ROCm machine"):
        device_count(probe=probe("/dev/kfd", "/opt/rocm"))
    with_fake_cupy(fake_cupy(FakeHipRuntime(devices=[mi210("0000:83:00.0"), mi210("0000:84:00.0")]), None))
    assert device_count(probe=probe()) == 2
