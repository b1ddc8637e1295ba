"""CUDA (and HIP) graph capture on CuPy: one call of a benchmark's function captured on the
harness stream and replayed there (`primbench.graph`, ``--graph``).

``stream.begin_capture()`` ... ``stream.end_capture()`` (CuPy's default capture mode), then
``graph.upload(stream)`` so that the first replay does not pay for it. Whatever the call
raises while capturing (a synchronization, a copy to the host, an allocation the runtime
refuses) ends the capture and is raised as `GraphCaptureError` with the runtime's text; the
stream is left out of capture mode either way. What the captured call returned is kept
alive with the graph: the kernels in it write to that memory on every replay.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from primbench.device import GraphCaptureError, GraphReplay


class CupyGraph(GraphReplay):
    def __init__(self, graph: Any, stream: Any, kept: object) -> None:
        self._graph: Any = graph
        self._stream = stream
        self._kept: object = kept

    def launch(self) -> None:
        self._graph.launch(self._stream)

    def close(self) -> None:
        self._graph = None
        self._kept = None


def _text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def capture(stream: Any, fn: Callable[[], object]) -> CupyGraph:
    """Capture one call of `fn` on `stream` (current while it runs: the caller's activate())."""
    stream.synchronize()
    try:
        stream.begin_capture()
    except Exception as exc:
        raise GraphCaptureError(f"begin_capture refused: {_text(exc)}") from exc
    failure: BaseException | None = None
    out: object = None
    graph: Any = None
    try:
        out = fn()
    except Exception as exc:
        failure = exc
    finally:  # the capture ends whatever happened (a Ctrl-C is raised after it)
        try:
            graph = stream.end_capture()
        except Exception as exc:
            if failure is None:
                failure = exc
    if failure is not None or graph is None:
        why = _text(failure) if failure is not None else "end_capture returned no graph"
        with contextlib.suppress(Exception):
            stream.synchronize()  # a runtime error left by the invalidated capture surfaces here, not later
        raise GraphCaptureError(why) from failure
    try:
        graph.upload(stream)
    except Exception as exc:
        raise GraphCaptureError(f"graph upload failed: {_text(exc)}") from exc
    return CupyGraph(graph, stream, out)
