"""Device code of the harness, one source for CUDA and HIP (compiled by CuPy at run time).

* ``primbench_spin``: a one-thread kernel that holds the stream until the host writes the
  ticket into a flag in mapped, pinned host memory, or gives up after a timeout and says so
  in a second mapped word.
* ``primbench_timestamps``: on SM 0 only, the global (constant-rate) timer and the SM's own
  cycle counter, for the average SM clock over a measurement (seed 003).
* ``primbench_heat``: a transcendental-heavy workload for warming the GPU.

The platform differences are isolated in two macros: the constant-rate timer
(``%globaltimer`` in ns on NVIDIA; ``wall_clock64()`` at the device's wall-clock rate on
AMD) and the SM/CU id.
"""

from __future__ import annotations

SOURCE = r"""
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
  #define PB_WALL_TICKS() ((unsigned long long)wall_clock64())
  __device__ inline unsigned int pb_smid() {
      unsigned int id;
      asm volatile("s_getreg_b32 %0, hwreg(HW_REG_HW_ID)" : "=s"(id));
      return (id >> 8) & 0xF;  /* CU id within its shader engine */
  }
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
