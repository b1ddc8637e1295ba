"""Device code of the harness, one source for CUDA and HIP (compiled by CuPy at run time).

* ``primbench_spin``: a one-thread kernel that holds the stream until the host writes the
  ticket into a flag in mapped, pinned host memory, or gives up after a timeout and says so
  in a second mapped word.
* ``primbench_timestamps``: on SM 0 only, the global (constant-rate) timer and the SM's own
  cycle counter, for the average SM clock over a measurement (the average-SM-clock check).
* ``primbench_heat``: a transcendental-heavy workload for warming the GPU.

The platform differences are isolated in the first block: the constant-rate timer
(``%globaltimer`` in ns on NVIDIA; ``wall_clock64()`` at the device's wall-clock rate on
AMD, ``hipDeviceAttributeWallClockRate``), which SM/CU counts as "SM 0", and the sleep
between polls. The kernels below it are the same text on both platforms.

On AMD, `clock64()` is the 64-bit shader clock counter (``s_memtime``) on gfx9 (CDNA,
Vega) and gfx10 (RDNA 1/2). gfx11 and later have no ``s_memtime``: there `clock64()` reads
the 20-bit ``SHADER_CYCLES`` register, which wraps within a millisecond, so no CU counts as
"SM 0", the timestamps kernel writes nothing, and the clock check reports no sample. "SM 0"
is CU 0 of shader array 0 of shader engine 0 (gfx9: ``HW_ID`` CU/SH/SE fields, and XCC 0
on gfx94x/gfx950; gfx10: ``HW_ID1`` WGP/SA/SE fields). The HIP branch is checked with hipcc for gfx90a and gfx1100
(tests/test_device_code_hip.py); hiprtc (CuPy on ROCm) pre-includes the HIP runtime header.
"""

from __future__ import annotations

SOURCE = r"""
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) || defined(__HIP__)
  #define PB_WALL_TICKS() ((unsigned long long)wall_clock64())
  #if __has_builtin(__builtin_amdgcn_s_memtime)
    __device__ inline unsigned int pb_smid() {
        unsigned int id;
    #if defined(__GFX10__)
        asm volatile("s_getreg_b32 %0, hwreg(HW_REG_HW_ID1)" : "=s"(id));
        return id & 0x1D3C00u;  /* WGP_ID [13:10], SA_ID [16], SE_ID [20:18] */
    #elif defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
        unsigned int xcc;
        asm volatile("s_getreg_b32 %0, hwreg(HW_REG_HW_ID)" : "=s"(id));
        asm volatile("s_getreg_b32 %0, hwreg(HW_REG_XCC_ID)" : "=s"(xcc));
        return (id & 0xFF00u) | (xcc & 0xFu);  /* and XCC_ID [3:0]: one XCC of several */
    #else
        asm volatile("s_getreg_b32 %0, hwreg(HW_REG_HW_ID)" : "=s"(id));
        return id & 0xFF00u;  /* CU_ID [11:8], SH_ID [12], SE_ID [15:13] */
    #endif
    }
  #else
    __device__ inline unsigned int pb_smid() { return 1u; }  /* no 64-bit cycle counter */
  #endif
  #define PB_SLEEP() __builtin_amdgcn_s_sleep(1)
#else
  __device__ inline unsigned long long pb_globaltimer() {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      return t;
  }
  #define PB_WALL_TICKS() pb_globaltimer()
  __device__ inline unsigned int pb_smid() {
      unsigned int id;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
      return id;
  }
  #if __CUDA_ARCH__ >= 700
    #define PB_SLEEP() __nanosleep(200)
  #else
    #define PB_SLEEP()
  #endif
#endif

extern "C" __global__ void primbench_spin(const volatile int* flag, int ticket,
                                          unsigned long long timeout_ticks,
                                          volatile int* timed_out)
{
    unsigned long long start = PB_WALL_TICKS();
    while (*flag < ticket) {
        if (PB_WALL_TICKS() - start > timeout_ticks) {
            *timed_out = ticket;
            __threadfence_system();
            return;
        }
        PB_SLEEP();
    }
}

extern "C" __global__ void primbench_timestamps(unsigned long long* out)
{
    if (threadIdx.x == 0 && pb_smid() == 0) {
        unsigned long long wall = PB_WALL_TICKS();
        unsigned long long cycles = clock64();
        out[0] = wall;
        out[1] = cycles;
        __threadfence_system();
    }
}

extern "C" __global__ void primbench_heat(float* sink, int steps)
{
    float x = 0.001f * (blockIdx.x * blockDim.x + threadIdx.x);
    for (int i = 0; i < steps; ++i) {
        x = __sinf(x) * __cosf(x) + sqrtf(fabsf(x) + 1.0f) * __logf(fabsf(x) + 2.0f);
    }
    if (x == 12345.678f) sink[0] = x;  /* never true; keeps the loop */
}
"""
