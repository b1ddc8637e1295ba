"""Every device source of the project compiles for AMD GPUs with hipcc (issue 8).

The harness's kernels (`primbench.backends.device_code.SOURCE`: spin, timestamps, heat) and
the copy kernel of `examples/copy_benchmark.py` are compiled device-only, as hiprtc compiles
them under CuPy-ROCm (the HIP runtime header pre-included), for gfx90a (CDNA 2) and gfx1100
(RDNA 3), and the code objects are checked for their target and kernels. Skipped where hipcc
is absent; on Debian 12, ``apt-get install hipcc`` brings ROCm 5.2.3's (clang 15).

Debian's rocm-device-libs 5.2.3 has no ``oclc_isa_version_1100.bc`` (its clang 15 knows
gfx1100, its device libraries stop at gfx1036). For such a target the test links against a
copy of the device-library directory plus that one missing file, which only defines the
constant ``__oclc_ISA_version`` (11000 for gfx1100), written in LLVM IR and assembled with
the same LLVM's llvm-as.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from primbench.backends.device_code import SOURCE

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("gfx90a", "gfx1100")
HARNESS_KERNELS = ("primbench_spin", "primbench_timestamps", "primbench_heat")
EM_AMDGPU = 224

HIPCC = shutil.which("hipcc")
needs_hipcc = pytest.mark.skipif(HIPCC is None, reason="hipcc (ROCm's HIP compiler) is not installed")


def _env() -> dict[str, str]:
    # hipcc picks the NVIDIA platform when it finds nvcc; these sources are for AMD.
    return {**os.environ, "HIP_PLATFORM": "amd"}


def copy_example_source() -> tuple[str, list[str]]:
    """The copy kernel of examples/copy_benchmark.py with the instantiations CuPy asks for."""
    tree = ast.parse((ROOT / "examples" / "copy_benchmark.py").read_text())
    consts: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("CODE", "BLOCK_SIZE", "ITEMS_PER_THREAD"):
                consts[name] = ast.literal_eval(node.value)
    code, block, items = consts["CODE"], consts["BLOCK_SIZE"], consts["ITEMS_PER_THREAD"]
    assert isinstance(code, str)
    types = ("char", "long long")  # C_TYPES of the example
    inst = "".join(
        f"template __global__ void copy_kernel<{t}, {block}, {items}>(const {t}*, {t}*);\n" for t in types
    )
    return code + "\n" + inst, ["copy_kernel"]


def _driver_lines(target: str, tmp: Path) -> str:
    src = tmp / "empty.hip"
    src.write_text("")
    proc = subprocess.run(
        [HIPCC, "-###", "-x", "hip", f"--offload-arch={target}", "--cuda-device-only", "-c", str(src), "-o",
         str(tmp / "empty.o")],
        capture_output=True, text=True, env=_env(), timeout=120,
    )
    return proc.stdout + proc.stderr


def isa_version(target: str) -> int:
    """``__oclc_ISA_version`` of a gfx target: gfx1100 → 11000, gfx90a → 9010."""
    digits = target.removeprefix("gfx")
    return int(digits[:-2]) * 1000 + int(digits[-2], 16) * 100 + int(digits[-1], 16)


def device_lib_args(target: str, tmp: Path) -> list[str]:
    """Extra hipcc arguments for `target`: none where the device libraries cover it."""
    probe = _driver_lines(target, tmp)
    if "cannot find ROCm device library" not in probe:
        return []
    # Where the libraries are and which LLVM hipcc runs: from a target they do cover.
    known = _driver_lines("gfx90a", tmp)
    libs = re.search(r'"-mlink-builtin-bitcode" "([^"]+)/ocml\.bc"', known)
    clang = re.search(r'^ "([^"]+/clang[^"/]*)" "-cc1"', known, re.M)
    if not libs or not clang:
        pytest.skip(f"hipcc has no device library for {target} and its library directory was not found")
    llvm_as = Path(clang.group(1)).with_name("llvm-as")
    if not llvm_as.exists():
        pytest.skip(f"hipcc has no device library for {target}, and no llvm-as to write the missing one")
    libdir = tmp / f"devicelibs-{target}"
    libdir.mkdir()
    for bc in Path(libs.group(1)).glob("*.bc"):
        (libdir / bc.name).symlink_to(bc)
    ll = libdir / f"oclc_isa_version_{target.removeprefix('gfx')}.ll"
    ll.write_text(
        'target triple = "amdgcn-amd-amdhsa"\n'
        f"@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 "
        f"{isa_version(target)}, align 4\n"
    )
    subprocess.run([str(llvm_as), str(ll), "-o", str(ll.with_suffix(".bc"))], check=True, timeout=60)
    return [f"--rocm-device-lib-path={libdir}"]


def hipcc_compile(source: str, target: str, tmp: Path, std: str) -> bytes:
    src = tmp / f"source-{target}.hip"
    out = tmp / f"source-{target}.hsaco"
    src.write_text(source)
    cmd = [HIPCC, "-x", "hip", "-include", "hip/hip_runtime.h", f"--offload-arch={target}", "--cuda-device-only",
           "--no-gpu-bundle-output", "-c", "-O3", f"-std={std}", *device_lib_args(target, tmp),
           str(src), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600)
    errors = "\n".join(ln for ln in proc.stderr.splitlines() if "unused" not in ln)
    assert proc.returncode == 0, f"hipcc failed for {target}:\n{errors}"
    return out.read_bytes()


def check_code_object(blob: bytes, target: str, kernels: list[str] | tuple[str, ...]) -> None:
    assert blob[:4] == b"\x7fELF", "not an ELF code object"
    (machine,) = struct.unpack_from("<H", blob, 18)
    assert machine == EM_AMDGPU
    assert f"amdgcn-amd-amdhsa--{target}".encode() in blob
    for kernel in kernels:
        assert f"{kernel}.kd".encode() in blob, f"no kernel descriptor for {kernel}"


@needs_hipcc
@pytest.mark.parametrize("target", TARGETS)
def test_harness_kernels_compile_for_amd(target: str, tmp_path: Path) -> None:
    blob = hipcc_compile(SOURCE, target, tmp_path, "c++14")  # the options CupyDevice.prepare passes
    check_code_object(blob, target, HARNESS_KERNELS)


@needs_hipcc
@pytest.mark.parametrize("target", TARGETS)
def test_copy_example_kernel_compiles_for_amd(target: str, tmp_path: Path) -> None:
    source, _ = copy_example_source()
    blob = hipcc_compile(source, target, tmp_path, "c++17")  # the example's options
    # Two instantiations of the template, both emitted.
    assert blob.count(b".kd\x00") >= 2
    check_code_object(blob, target, [])
    assert b"copy_kernel" in blob


@needs_hipcc
def test_gfx11_has_no_cycle_sample_and_gfx9_reads_hw_id(tmp_path: Path) -> None:
    """The platform branch as compiled: gfx90a reads HW_ID for "SM 0"; gfx1100, whose clock64()
    is a 20-bit counter, never names a CU "SM 0", so the timestamps kernel stores nothing."""
    for target, expect_hw_id in (("gfx90a", True), ("gfx1100", False)):
        src = tmp_path / f"asm-{target}.hip"
        src.write_text(SOURCE)
        asm = tmp_path / f"asm-{target}.s"
        proc = subprocess.run(
            [HIPCC, "-x", "hip", "-include", "hip/hip_runtime.h", f"--offload-arch={target}", "-nogpulib",
             "--cuda-device-only", "-S", "-O3", "-std=c++14", str(src), "-o", str(asm)],
            capture_output=True, text=True, env=_env(), timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        text = asm.read_text()
        body = function_asm(text, "primbench_timestamps")
        assert ("hwreg(HW_REG_HW_ID)" in body) is expect_hw_id
        assert bool(re.search(r"global_store|flat_store", body)) is expect_hw_id
        assert ("s_memtime" in body) is expect_hw_id  # the 64-bit cycle counter gfx11 lacks
        spin = function_asm(text, "primbench_spin")
        assert "s_sleep 1" in spin
        if target == "gfx90a":
            # The spin kernel's timeout polls the constant-rate counter. (On gfx11, HIP 5.2's
            # wall_clock64() is -1, there being no s_memrealtime; later HIP reads
            # __ockl_steadyctr_u64, the real-time message. Not checkable with Debian's HIP.)
            assert "s_memrealtime" in spin


def function_asm(text: str, name: str) -> str:
    m = re.search(rf"^{name}:(.*?)^\.Lfunc_end", text, re.S | re.M)
    assert m, f"no {name} in the assembly"
    return m.group(1)


def test_isa_version_numbers() -> None:
    assert isa_version("gfx1100") == 11000
    assert isa_version("gfx1036") == 10306
    assert isa_version("gfx90a") == 9010
