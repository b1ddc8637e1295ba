"""Memory latency: a pointer chase, index = next[index], over a random cyclic
permutation built on the host with a seeded generator, at sizes that span L1, L2 and HBM,
with one thread (no contention) and with a full grid of threads (contention); and the same
chase in shared memory for comparison.

    python examples/memory_latency.py [--reads 4096]

Each thread makes `reads` dependent loads, so one call takes `reads` x latency: items are
set to `reads`, and latency per access is 1 / items_per_second (with contention every thread
runs its chain at the same time, so this is the latency each access sees under load).
The permutation is a single cycle (each element points to the next in a shuffled order), so
the chase visits the whole array instead of falling into a short loop, and each call goes on
from where the last one stopped, so that no call re-reads addresses the last one cached.
"""

from __future__ import annotations

import numpy as np

import primbench as pb

CODE = r"""
extern "C" __global__ void chase(const unsigned long long* next, int reads, unsigned long long* pos)
{
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long i = pos[t];
    for (int k = 0; k < reads; ++k) i = next[i];
    pos[t] = i;  /* the next call goes on from here: no call repeats the last one's addresses */
}

extern "C" __global__ void chase_shared(const unsigned long long* next, int n, int reads,
                                        unsigned long long* pos, int chasers)
{
    /* The whole block fills shared memory (fast), then `chasers` threads of it chase. */
    extern __shared__ unsigned int s[];
    for (int k = threadIdx.x; k < n; k += blockDim.x) s[k] = (unsigned int)next[k];
    __syncthreads();
    if ((int)threadIdx.x >= chasers) return;
    unsigned long long t = blockIdx.x * (unsigned long long)chasers + threadIdx.x;
    unsigned int i = (unsigned int)pos[t];
    for (int k = 0; k < reads; ++k) i = s[i];
    pos[t] = i;
}
"""
KiB, MiB, GiB = pb.KiB, pb.MiB, pb.GiB
SIZES = (16 * KiB, 256 * KiB, 4 * MiB, 32 * MiB, 256 * MiB, 1 * GiB)
CONTENTION_BLOCKS, CONTENTION_THREADS = 132 * 4, 256


def cyclic_permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    order = rng.permutation(n).astype(np.uint64)
    nxt = np.empty(n, dtype=np.uint64)
    nxt[order] = np.roll(order, -1)
    return nxt


class Latency(pb.Benchmark):
    def __init__(self, nbytes: int, contention: bool, reads: int, shared: bool = False) -> None:
        self.nbytes = nbytes
        self.contention = contention
        self.reads = reads
        self.shared = shared

    def meta(self) -> dict:
        where = "shared" if self.shared else "global"
        return {"algo": "memory_latency", "memory": where, "bytes": self.nbytes,
                "threads": "grid" if self.contention else "one"}

    def run(self, state: pb.State) -> None:
        import cupy as cp

        n = self.nbytes // 8
        pb.log(f"Building a {n}-element cyclic permutation")
        nxt = cp.asarray(cyclic_permutation(n, np.random.default_rng(state.seed)))
        blocks, threads = (CONTENTION_BLOCKS, CONTENTION_THREADS) if self.contention else (1, 1)
        # Each thread's place on the cycle; the kernel moves it on, so successive calls
        # chase new addresses instead of re-reading (and caching) the same few.
        starts = np.arange(blocks * threads, dtype=np.uint64) * np.uint64(2654435761) % np.uint64(n)
        pos = cp.asarray(starts)
        module = cp.RawModule(code=CODE)
        state.set_items(self.reads)
        if self.shared:
            kernel = module.get_function("chase_shared")
            args = (nxt, np.int32(n), np.int32(self.reads), pos, np.int32(threads))
            block = max(threads, 256)  # one chaser still gets a full block to fill shared memory
            launch = lambda: kernel((blocks,), (block,), args, shared_mem=n * 4)  # noqa: E731
        else:
            kernel = module.get_function("chase")
            args = (nxt, np.int32(self.reads), pos)
            launch = lambda: kernel((blocks,), (threads,), args)  # noqa: E731
        state.test(lambda: pb.assert_equal(int((pos < n).all()), 1))
        state.run(launch)


def main() -> None:
    # The chase warms the caches it measures; clearing them before each call adds nothing.
    executor = pb.Executor(settings=pb.Settings(hot=True))
    reads = executor.get("reads", 4096, "Dependent loads per thread per call")
    for size in SIZES:
        for contention in (False, True):
            executor.queue(Latency(size, contention, reads))
    executor.queue(Latency(16 * KiB, False, reads, shared=True))
    executor.queue(Latency(16 * KiB, True, reads, shared=True))
    executor.main()


if __name__ == "__main__":
    main()
