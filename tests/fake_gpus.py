"""Several fake GPUs of one host, for ``--devices`` (issue 27): `FakeGpu` is a `FakeDevice`
with its own identity (UUID ``GPU-fake-N``, serial, PCI bus id) and an injectable fault.

Run as a program it is a benchmark suite of 8 specializations on the fake GPUs:
``PRIMBENCH_FAKE_DEVICES`` (default 4) GPUs, ``PRIMBENCH_FAKE_FAULTS`` the faults, e.g.
``2:crash,3:hang@1,1:gone,0:absent``: GPU 2's worker exits at its first kernel (as a crash in
a driver would), GPU 3's hangs (sleeps) in its second round (after 1 renewal: with
``--rounds 1``, its second specialization), GPU 1's device disappears (every kernel raises, as
a GPU fallen off the bus does), GPU 0 cannot be opened at all. ``PRIMBENCH_FAKE_SLOWER`` makes
GPUs slower, e.g. ``2:0.03``: GPU 2's kernels take 3 % longer; every kernel's time has 0.3 %
of noise. ``PRIMBENCH_FAKE_MODEL`` names the model (default "Fake GPU"). For ``--processes``:
``PRIMBENCH_FAKE_PROCESS_FAULTS`` gives a worker process's fault, e.g. ``1:crash`` (worker 1's GPU
crashes), ``PRIMBENCH_FAKE_PROCESS_SLOWER`` makes the processes FIRST-LAST slower by a fraction (e.g.
``3-5:0.02``: a state every worker of one ``--runs`` run shares), and ``PRIMBENCH_FAKE_PROCESS_SD`` a
per-process state: every kernel of a process is
slower by one draw of N(0, SD) (e.g. 0.02), the same for all its rounds, as identical processes on
an H200 land in states that rounds inside one do not sample. ``PRIMBENCH_FAKE_TRACE`` names a
file to which each process appends a line at each specialization's first call, when it frees
its cached memory and when it exits: its process, the specialization (or ``freed``, ``exit``) and
whether the worker's turn had come (``turn``) or not yet (``before``). ``PRIMBENCH_FAKE_EXIT_SECS``
makes a --processes worker's exit take that long (before its ``exit`` line), as a CUDA context's
teardown does. ``PRIMBENCH_FAKE_SYNCING`` lists values of ``n`` whose call waits on the host (the
stream-blocking timeout against a blocked stream), traced at every call (``sync N``).
``PRIMBENCH_FAKE_SPECS`` sets how many specializations (``n: 1`` ... , default 8).
Subprocesses need the repository root on ``PYTHONPATH``.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import time
from typing import Any, ClassVar

import primbench as pb
from primbench.errors import DeviceError
from tests.fakes import FakeDevice

FAULTS = ("crash", "hang", "gone", "absent")


class FakeGpu(FakeDevice):
    """Fake GPU `index` of the host; `fault` ("crash", "hang", "gone") from the round after its
    `after`-th renewal on (0: from the first kernel)."""

    def __init__(self, index: int, fault: str | None = None, after: int = 0, model: str = "Fake GPU",
                 slower: float = 0.0, noise: float = 0.003, **kwargs: Any) -> None:
        kwargs.setdefault("log_ops", False)
        super().__init__(**kwargs)
        self.index = index
        self.fault = fault
        self.after = after
        self.model = model
        self.launches = 0
        self.scale = 1.0 + slower
        self.noise = noise
        self.rng = random.Random(os.getpid() * 1000 + index)

    def context(self) -> dict[str, Any]:
        return {
            "gpu": {"name": self.model, "arch": "sm_00", "pci_bus_id": f"0000:{self.index:02x}:00.0",
                    "uuid": f"GPU-fake-{self.index}", "serial": f"fake-serial-{self.index}",
                    "l2_cache_bytes": 1024 * 1024},
            "backend": {"name": "fake", "runtime_version": "0"},
        }

    def free_cached_memory(self) -> None:
        trace("freed")

    def launch(self, ms: float | None = None) -> None:
        self.launches += 1
        if self.fault is not None and self.renewals >= self.after:
            if self.fault == "crash":
                os._exit(70)  # as a segfault in a driver: no results written, no line said
            if self.fault == "hang":
                time.sleep(3600)  # a kernel that never ends
            if self.fault == "gone":
                raise DeviceError(f"GPU {self.index}: cudaErrorDevicesUnavailable: the device is gone")
        if ms is not None:
            ms = ms * self.scale * (1.0 + self.noise * self.rng.gauss(0.0, 1.0))
        super().launch(ms)


def faults(text: str) -> dict[int, tuple[str, int]]:
    """``2:crash,3:hang@5`` -> {2: ("crash", 0), 3: ("hang", 5)}."""
    out: dict[int, tuple[str, int]] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        index, _, what = part.partition(":")
        kind, _, after = what.partition("@")
        if kind not in FAULTS:
            raise ValueError(f"fault {kind!r}: give one of {', '.join(FAULTS)}")
        out[int(index)] = (kind, int(after or 0))
    return out


def opener(count: int, injected: dict[int, tuple[str, int]], model: str = "Fake GPU",
           slower: dict[int, float] | None = None) -> Any:
    """The `primbench.device.DeviceOpener` of `count` fake GPUs with the faults `injected`, some
    `slower` (GPU index -> the fraction its kernels take longer)."""

    def open_gpu(index: int | None) -> FakeGpu:
        i = 0 if index is None else index
        if i >= count:
            raise DeviceError(f"no GPU {i} (this fake host has {count})")
        kind, after = injected.get(i, (None, 0))
        if kind == "absent":  # gone between the listing and the opening: the runtime's error
            raise DeviceError(f"no usable GPU: cudaErrorNoDevice: GPU {i} cannot be opened")
        return FakeGpu(i, kind, after, model, (slower or {}).get(i, 0.0))

    return open_gpu


def trace(what: str) -> None:
    """A line in ``PRIMBENCH_FAKE_TRACE``'s file: this worker process, `what`, and whether its turn
    had come (``turn``) or not yet (``before``)."""
    path = os.environ.get("PRIMBENCH_FAKE_TRACE")
    if not path:
        return
    role = json.loads(os.environ.get("PRIMBENCH_WORKER") or "{}")
    turn = "turn" if role.get("turn") and os.path.exists(role["turn"]) else "before"
    with open(path, "a") as f:
        f.write(f"{role.get('process')} {what} {turn}\n")


SPECS = int(os.environ.get("PRIMBENCH_FAKE_SPECS") or 8)


class Copy(pb.Benchmark):
    axes: ClassVar[dict[str, Any]] = {"n": pb.axis.ints(list(range(1, SPECS + 1)))}

    def meta(self) -> dict[str, Any]:
        return {"algo": "fake_copy"}

    first: ClassVar[set[int]] = set()  # the specializations this process has called (PRIMBENCH_FAKE_TRACE)

    def run(self, state: pb.State) -> None:
        device: Any = state.device
        n = int(state.axis("n"))
        state.set_items(n * 1000)
        # each round's fresh setup lands its own way: PRIMBENCH_FAKE_ROUND_SD apart, alternately up and
        # down (never so alike that the precision stop ends the specialization early)
        sd = float(os.environ.get("PRIMBENCH_FAKE_ROUND_SD") or 0.0)
        ms = 0.05 * n * (1.0 + sd * (-1) ** state.round_index)

        syncing = {int(v) for v in os.environ.get("PRIMBENCH_FAKE_SYNCING", "").split(",") if v}
        time.sleep(float(os.environ.get("PRIMBENCH_FAKE_SETUP_SECS") or 0))  # a setup that takes host time

        def call() -> None:
            if n not in self.first:
                self.first.add(n)
                trace(str(n))
            if n in syncing:  # waits on the host: against the blocked stream, the blocking timeout
                trace(f"sync {n}")
                device.synchronous_kernel()
            else:
                device.launch(ms)

        state.run(call)


def main() -> None:
    count = int(os.environ.get("PRIMBENCH_FAKE_DEVICES", "4"))
    injected = faults(os.environ.get("PRIMBENCH_FAKE_FAULTS", ""))
    slower = {int(i): float(f) for i, _, f in (p.partition(":") for p in
                                                 os.environ.get("PRIMBENCH_FAKE_SLOWER", "").split(",") if p)}
    role = json.loads(os.environ.get("PRIMBENCH_WORKER") or "{}")
    if role.get("process") is not None:  # a --processes worker: its own fault and state, on its GPU
        device = int(role.get("device") or 0)
        own = faults(os.environ.get("PRIMBENCH_FAKE_PROCESS_FAULTS", "")).get(int(role["process"]))
        if own is not None:
            injected[device] = own
        sd = float(os.environ.get("PRIMBENCH_FAKE_PROCESS_SD", "0") or 0)
        if sd:
            slower[device] = slower.get(device, 0.0) + random.Random(os.getpid()).gauss(0.0, sd)
        for part in filter(None, os.environ.get("PRIMBENCH_FAKE_PROCESS_SLOWER", "").split(",")):
            span, _, fraction = part.partition(":")  # FIRST-LAST:FRACTION, e.g. a --runs run's shared state
            first, _, last = span.partition("-")
            if int(first) <= int(role["process"]) <= int(last or first):
                slower[device] = slower.get(device, 0.0) + float(fraction)
        atexit.register(trace, "exit")
        atexit.register(time.sleep, float(os.environ.get("PRIMBENCH_FAKE_EXIT_SECS") or 0))  # runs first
    ex = pb.Executor(device=opener(count, injected, os.environ.get("PRIMBENCH_FAKE_MODEL", "Fake GPU"), slower),
                     device_count=count)
    ex.queue(Copy())
    ex.main()


if __name__ == "__main__":
    main()
