"""The harness's device source stays valid CUDA: NVRTC (what CuPy uses) and nvcc compile it,
and the CUDA branch reads %globaltimer and %smid, sleeping between polls. Each compiler test
skips where its compiler is absent. The AMD side is tests/test_device_code_hip.py."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from primbench.backends.device_code import SOURCE

KERNELS = ("primbench_spin", "primbench_timestamps", "primbench_heat")


def _nvrtc():
    if importlib.util.find_spec("cupy_backends") is None:
        pytest.skip("CuPy (with NVRTC) is not installed")
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as exc:
        pytest.skip(f"NVRTC is not loadable: {exc}")
    if getattr(__import__("cupy").cuda.runtime, "is_hip", False):
        pytest.skip("CuPy is a ROCm build")
    return nvrtc


def test_nvrtc_compiles_the_cuda_branch() -> None:
    nvrtc = _nvrtc()
    for arch in ("compute_75", "compute_90"):
        prog = nvrtc.createProgram(SOURCE, "primbench.cu", [], [])
        nvrtc.compileProgram(prog, ["-std=c++14", f"--gpu-architecture={arch}"])  # CupyDevice.prepare's options
        ptx = nvrtc.getPTX(prog)
        ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
        entries = re.findall(r"\.entry\s+(\w+)", ptx)
        assert sorted(entries) == sorted(KERNELS)
        assert "%globaltimer" in ptx and "%smid" in ptx and "nanosleep" in ptx


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_nvcc_compiles_the_cuda_branch(tmp_path: Path) -> None:
    src = tmp_path / "primbench.cu"
    src.write_text(SOURCE)
    out = tmp_path / "primbench.ptx"
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++14", "--ptx", str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    ptx = out.read_text()
    assert sorted(re.findall(r"\.entry\s+(\w+)", ptx)) == sorted(KERNELS)
    assert "%globaltimer" in ptx and "%smid" in ptx and "nanosleep" in ptx


def test_the_platform_differences_sit_in_one_block() -> None:
    """Kernels are one text for both platforms; only the first #if block differs."""
    head, _, kernels = SOURCE.partition('extern "C"')
    assert "wall_clock64" in head and "%globaltimer" in head
    assert "#if" not in kernels and "asm" not in kernels
    for name in KERNELS:
        assert f"void {name}(" in SOURCE
