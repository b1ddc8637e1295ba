"""The CUDA-graph column: the benchmark's function captured once into a graph on the harness
stream, its replay timed beside the stream launches of the same round.

Opt-in: ``--graph`` on the command line (``Settings.graph``), or ``graph = True`` on a
`primbench.Benchmark` class. Per round, after ``state.run(fn)`` has measured `fn`'s stream
launches (`primbench.measure.measure`), `replay_round`:

1. says why not before trying, where capture cannot work (`why_not`): a function timed with
   the host timer (``state.run(fn, timer="host")``: the library launches on streams of its
   own, which a capture of the harness stream does not see) or one that synchronizes
   (``flags.sync``: a synchronization inside a capture is an error and invalidates it);
2. captures one call of `fn` through the device seam (`primbench.device.Device.capture_graph`:
   CuPy's ``stream.begin_capture()`` ... ``end_capture()`` on the harness stream, then
   ``graph.upload(stream)``); a capture that fails (a synchronizing call, a host timer read,
   an allocation the runtime refuses while capturing, anything the runtime raises) is
   recorded with its reason, not raised;
3. replays it once unmeasured (the warmup), then measures ``graph.launch(stream)`` with the same
   per-call protocol as the stream launches (cache clear unless hot, the stream held by the spin
   kernel while a call is enqueued, start and stop events around each replay), the same
   calls per batch as the round's stream batches and the same window and noise tolerance,
   with no minimum time (the replay costs about as many batches as the round, each
   shorter);
4. a replay that took no GPU time at all is recorded as not captured: the function launched
   nothing on the harness stream (it used a stream of its own).

What the two times mean: with the stream held while a call is enqueued, the events measure the
GPU's time from the first kernel to the last, the host's launch cost excluded; what the graph
saves is the gaps between kernels that the GPU spends fetching each launch
(``saved_seconds_per_call``: stream minus replay; negative where the replay is slower). The
host's cost per call (``host_seconds_per_call``, wall time of the measured batches over
their calls, the harness's own overhead per call included) is recorded for both, beside.

Per round the record is ``rounds[r].graph``; per specialization ``graph`` (results 4.6.0):
the replay's GPU time per call over every round (GPU time over calls), the stream time per
call, what the graph saves, the spread of the replay between rounds, or ``"captured": false``
and the ``reason``. The energy counter and the throttle check are not run on replays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from primbench.device import Device, GraphCaptureError
from primbench.errors import PrimbenchError, StreamBlockingTimeout
from primbench.measure import Measurement, Timer, measure
from primbench.rounds import log_sd

#: Why not, before trying: the host timer.
HOST_TIMER = ("timed with the host timer (state.run(fn, timer='host')): the library launches on streams of its "
              "own, which a capture of the harness stream does not see")
#: Why not, before trying: a function that synchronizes.
SYNCHRONIZES = ("the function synchronizes (flags.sync): a synchronization inside a stream capture is an error "
                "that invalidates it")
#: A graph whose replays take no GPU time.
EMPTY = ("the captured graph ran no GPU work: the function launched nothing on the harness stream "
         "(launch on state.stream, which is current inside state.run)")


@dataclass(frozen=True)
class GraphRound:
    """What one round measured of the graph: the replay's `Measurement`, or why there is none."""

    replay: Measurement | None
    reason: str | None = None
    #: Host seconds per call of the round's stream launches and of the replays (None: no replay).
    stream_host_secs_per_call: float | None = None

    @property
    def captured(self) -> bool:
        return self.replay is not None

    @property
    def host_secs_per_call(self) -> float | None:
        m = self.replay
        return m.host_secs / m.kernel_calls if m is not None and m.kernel_calls else None

    def record(self) -> dict[str, Any]:
        """``rounds[r].graph`` (results 4.6.0)."""
        m = self.replay
        if m is None:
            return {"captured": False, "reason": self.reason}
        return {"captured": True, "gpu_ms_per_call": m.gpu_secs * 1000.0 / m.kernel_calls if m.kernel_calls else 0.0,
                "noise_percent": m.noise_percent, "noise_timeout": m.noise_timeout, "batches": len(m.batches),
                "kernel_calls": m.kernel_calls, "host_seconds_per_call": self.host_secs_per_call}


def why_not(timer: Timer, sync: bool) -> str | None:
    """Why `fn` cannot be captured, known before trying; None where a capture may work."""
    if timer == "host":
        return HOST_TIMER
    if sync:
        return SYNCHRONIZES
    return None


def _failure(exc: BaseException) -> str:
    """The reason of a failed capture: a `GraphCaptureError`'s text (it names the runtime's error),
    else the exception's type and text."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"capture failed: {text if isinstance(exc, GraphCaptureError) else f'{type(exc).__name__}: {text}'}"


def replay_round(
    device: Device,
    fn: Callable[[], object],
    stream: Measurement,
    *,
    timer: Timer,
    sync: bool,
    hot: bool,
    batch_window_size: int,
    noise_tolerance_percent: float,
    noise_timeout_secs: float,
    before_each: Callable[[], object] | None = None,
) -> GraphRound:
    """The graph column of one round whose stream launches measured `stream` (the module says how)."""
    stream_host = stream.host_secs / stream.kernel_calls if stream.kernel_calls else None
    reason = why_not(timer, sync)
    if reason is not None:
        return GraphRound(None, reason, stream_host)
    device.synchronize()  # nothing of the stream measurement is left in flight when the capture begins
    try:
        with device.nvtx_range("graph capture"):
            graph = device.capture_graph(fn)
    except (KeyboardInterrupt, PrimbenchError):
        raise
    except Exception as exc:  # the runtime's own error: recorded, the round's stream time stands
        return GraphRound(None, _failure(exc), stream_host)
    try:
        with device.nvtx_range("graph warmup"):
            if before_each is not None:
                before_each()
            graph.launch()
            device.synchronize()
        m = measure(
            device, graph.launch,
            min_gpu_ms_per_batch=0.0, min_secs=0.0, noise_timeout_secs=noise_timeout_secs,
            batch_window_size=batch_window_size, noise_tolerance_percent=noise_tolerance_percent,
            hot=hot, sync=False, before_each=before_each,
            calls_per_batch=max(1, stream.kernel_calls_per_batch),
        )
    except StreamBlockingTimeout as exc:  # a replay that waits on the host: the stream could not be held
        return GraphRound(None, f"replay failed: {exc}", stream_host)
    except (KeyboardInterrupt, PrimbenchError):
        raise
    except Exception as exc:  # the runtime refused a replay: recorded, the round's stream time stands
        return GraphRound(None, f"replay failed: {type(exc).__name__}: {' '.join(str(exc).split())}", stream_host)
    finally:
        graph.close()
    if m.gpu_secs <= 0:
        return GraphRound(None, EMPTY, stream_host)
    return GraphRound(m, None, stream_host)


def over_rounds(rounds: Sequence[GraphRound], stream_secs_per_call: float | None) -> dict[str, Any]:
    """A specialization's ``graph`` (results 4.6.0) over its rounds: the replay's GPU time per
    call (GPU time over calls, every round), the stream's, what the graph saves per call and in
    percent of the stream time, the spread of the replays' time between rounds, the host's
    seconds per call of both; where a round could not capture, ``captured`` false and its
    reason (the first such round's)."""
    failed = [g for g in rounds if g.replay is None]
    if not rounds or failed:
        return {"captured": False, "reason": failed[0].reason if failed else "no round measured the graph",
                "stream_seconds_per_call": stream_secs_per_call}
    replays = [g.replay for g in rounds if g.replay is not None]
    gpu = math.fsum(m.gpu_secs for m in replays)
    calls = sum(m.kernel_calls for m in replays)
    per_call = gpu / calls if calls else None
    spread = log_sd([m.secs_per_call for m in replays]) if len(replays) > 1 else None
    saved = stream_secs_per_call - per_call if stream_secs_per_call is not None and per_call is not None else None
    hosts = [g.host_secs_per_call for g in rounds]
    stream_hosts = [g.stream_host_secs_per_call for g in rounds]
    return {
        "captured": True,
        "seconds_per_call": per_call,
        "stream_seconds_per_call": stream_secs_per_call,
        "saved_seconds_per_call": saved,
        "saved_percent": saved / stream_secs_per_call * 100.0 if saved is not None and stream_secs_per_call else None,
        "cv_between_rounds_percent": spread * 100.0 if spread is not None else None,
        "noise_percent": math.sqrt(math.fsum(m.noise_percent ** 2 for m in replays) / len(replays)),
        "kernel_calls": calls,
        "host_seconds_per_call": _mean(hosts),
        "stream_host_seconds_per_call": _mean(stream_hosts),
    }


def counts(records: Sequence[Any]) -> tuple[int, int] | None:
    """(replayed, not captured) over specializations (results `Specialization` records) that
    have a ``graph``; None where none has (no --graph): the run summary's graph counts."""
    graphs = [r.graph for r in records if getattr(r, "graph", None) is not None]
    if not graphs:
        return None
    replayed = sum(1 for g in graphs if g.captured)
    return replayed, len(graphs) - replayed


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return math.fsum(known) / len(known) if known and len(known) == len(values) else None
