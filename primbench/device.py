"""The device seam: everything the harness asks of a GPU, and the one place that loads a
GPU runtime.

The measurement loop (`primbench.measure`) is written once against `Device`. Real backends
live in `primbench.backends` and are imported only by `primbench.backends.open_device`, so ``import primbench``
works on a machine without CuPy, NVML or a GPU. Tests drive the loop with a fake device
that has programmable kernel times, noise, temperatures and clocks.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Any


class GraphCaptureError(RuntimeError):
    """A capture the device refused or could not make (`Device.capture_graph`); its text is the
    reason recorded in results.json (`primbench.graph`)."""


class GraphReplay(ABC):
    """One call of a benchmark's function captured into a graph (`Device.capture_graph`)."""

    @abstractmethod
    def launch(self) -> None:
        """Enqueue one replay of the graph on the device's stream."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free the graph (and what the captured call returned, kept alive while it replays)."""


class Device(ABC):
    """One GPU and one stream, as the measurement loop sees them.

    The per-call protocol the loop drives is::

        clear_cache()            # unless hot
        block()                  # unless flags.sync
        record_start(slot); fn(); record_stop(slot)
        unblock()                # unless flags.sync

    with `synchronize()` every few calls, after which `elapsed_ms(slot)` is valid.
    """

    #: "cuda", "hip" or a fake's name; also ``context.general.backend.name``.
    backend_name: str = "device"

    @property
    @abstractmethod
    def stream(self) -> Any:
        """The stream user code launches on (``state.stream``)."""

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        """Make `stream` the current stream of the runtime while user code runs."""
        yield

    @abstractmethod
    def context(self) -> dict[str, Any]:
        """``gpu`` and ``backend`` objects for ``context.general``."""

    def now(self) -> float:
        """Host wall time in seconds (monotonic)."""
        return time.perf_counter()

    def sleep(self, secs: float) -> None:
        """Wait on the host (cooling)."""
        time.sleep(secs)

    @abstractmethod
    def prepare(self, *, cache_size: int, blocking_timeout_secs: float, slots: int) -> None:
        """Allocate the cache-clearing buffer, `slots` event pairs and the blocking flag."""

    def renew(self) -> None:  # noqa: B027 - optional hook
        """Replace the stream, events, blocking flag and cache buffer that `prepare` made with new
        ones, before each round of a specialization. Between separate processes small kernels on
        the H200 moved by 1-2.5 %, while rounds that kept these moved by 0.03-0.2 %; rounds with
        them renewed moved as much as separate processes
        (tests/benchmarks/rounds/fresh_device.md)."""

    @abstractmethod
    def clear_cache(self) -> None:
        """Enqueue a write of the cache-clearing buffer."""

    @abstractmethod
    def block(self) -> None:
        """Enqueue a spin kernel that holds the stream until `unblock`."""

    @abstractmethod
    def unblock(self) -> None:
        """Release the spin kernel enqueued by the last `block`."""

    @abstractmethod
    def record_start(self, slot: int) -> None: ...

    @abstractmethod
    def record_stop(self, slot: int) -> None: ...

    def synchronize_device(self) -> None:  # noqa: B027 - optional hook
        """Wait for all work on the device, on every stream (setup done before measuring)."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until the stream is idle; raise StreamBlockingTimeout if a spin kernel gave up."""

    @abstractmethod
    def elapsed_ms(self, slot: int) -> float:
        """GPU milliseconds between the start and stop events of `slot`."""

    # ----- monitoring and clocks: optional; None means "not supported here"

    def temperature(self) -> float | None:
        """GPU temperature in °C, or None without monitoring."""
        return None

    def heat(self, secs: float) -> None:  # noqa: B027 - optional hook, default does nothing
        """Run a heating workload for about `secs` seconds."""

    def slowdown_temperature(self) -> float | None:
        """Temperature (°C) at which the GPU starts to slow down, where the monitor says."""
        return None

    def default_clock_mhz(self) -> float | None:
        """The SM clock the device runs at by default (the reference for the clock check)."""
        return None

    def clock_event_reasons(self) -> list[str] | None:
        """Why clocks are held down right now (NVML clock-event reasons); None if unsupported."""
        return None

    def clock_sample(self) -> tuple[int, int] | None:
        """(global timer ns, SM 0 clock ticks), for the average SM clock; None if unsupported."""
        return None

    def sm_clock_now_mhz(self) -> float | None:
        """The SM clock now, as the monitoring library reads it (NVML, AMD SMI): no kernel is
        launched, so it can be read after every measured batch (`primbench.throttle`); None if
        unsupported."""
        return None

    def energy_joules(self) -> float | None:
        """The board's cumulative energy counter in joules (`primbench.energy`); None if unsupported."""
        return None

    def power_limit_watts(self) -> float | None:
        """The board's enforced power limit in watts; None if unknown."""
        return None

    def power_watts(self) -> float | None:
        """The board's power draw now in watts (a sample after each measured batch); None if unsupported."""
        return None

    def capture_graph(self, fn: Callable[[], object]) -> GraphReplay:
        """Capture one call of `fn` on `stream` into a graph, ready to replay on `stream`
        (`primbench.graph`, ``--graph``). Raises `GraphCaptureError` (or the runtime's own
        error) with the reason where the capture fails; this default: the device cannot."""
        raise GraphCaptureError(f"the {self.backend_name} device does not capture graphs")

    @contextlib.contextmanager
    def nvtx_range(self, name: str) -> Iterator[None]:
        """A named range for Nsight Systems (NVTX; rocTX on ROCm) around what runs inside: the
        executor opens one per specialization, round, warmup and batch. Cheap: one host call at
        each end, outside the timed events. Where no NVTX library is found it does nothing."""
        yield

    def free_cached_memory(self) -> None:  # noqa: B027 - optional hook
        """Give the device memory that this process's array libraries keep cached (freed arrays'
        blocks) back to the driver. A ``--processes`` worker does so after priming every
        specialization, so that K waiting workers do not each hold their largest setup's memory."""

    def release(self) -> None:  # noqa: B027 - optional hook
        """Free what `prepare` allocated but keep the device usable (a later run prepares it
        again): what an executor does with a device it was given rather than opened."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free what `prepare` allocated, and the monitor: the device is not used again."""


#: A function that opens the device of a GPU index (None: the current one): what a program gives
#: `primbench.Executor` (``device=``) to run on a device of its own, on each GPU of ``--devices``.
DeviceOpener = Callable[[int | None], Device]
