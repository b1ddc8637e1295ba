"""What the runtime says when a capture is impossible, through primbench's own capture
(`primbench.backends.cupy_graph.capture`) on a fresh non-blocking stream, with nothing holding
it (so a synchronizing function fails instead of waiting on a spin kernel), and whether the
stream still works afterwards.

    python tests/benchmarks/graph/capture_errors.py --json capture_errors.json [--fake]

Cases: a kernel (captures), ``stream.synchronize()`` inside the function, ``.get()`` of a
result (a copy to the host), ``cupy.cuda.Device().synchronize()``, and an allocating call. After
each, one kernel runs on the same stream and its result is checked.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout: primbench, tests.fakes


def cases_real() -> tuple[Any, list[tuple[str, Callable[[], object]]], Callable[[], bool]]:
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    x = cp.ones(1 << 18, dtype=cp.float32)
    y = cp.zeros_like(x)

    def works() -> bool:
        with stream:
            cp.multiply(x, 3.0, out=y)
            stream.synchronize()
            return bool(float(y[0].get()) == 3.0)

    return stream, [
        ("kernel", lambda: cp.multiply(x, 2.0, out=y)),
        ("stream.synchronize()", lambda: (cp.multiply(x, 2.0, out=y), stream.synchronize())),
        ("result.get()", lambda: cp.sum(x).get()),
        ("Device().synchronize()", lambda: cp.cuda.Device().synchronize()),
        ("allocating call", lambda: cp.multiply(x, 2.0)),
    ], works


def cases_fake() -> tuple[Any, list[tuple[str, Callable[[], object]]], Callable[[], bool]]:
    from tests.fakes import FakeDevice, FakeStream

    device = FakeDevice()
    stream = FakeStream(device)

    def works() -> bool:
        device.launch(0.01)
        device.synchronize()
        return True

    return stream, [
        ("kernel", lambda: device.launch(0.01)),
        ("stream.synchronize()", lambda: (device.launch(0.01), device.synchronize())),
        ("Device().synchronize()", device.synchronize_device),
    ], works


def works_replay(name: str) -> str:
    """What a replay is known to have done (only the kernel case is checked: y = 2 x)."""
    return "see stream_works_after" if name != "kernel" else "replayed without error"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--fake", action="store_true")
    args = ap.parse_args()
    from primbench.backends.cupy_graph import capture
    from primbench.device import GraphCaptureError

    stream, cases, works = cases_fake() if args.fake else cases_real()
    out: list[dict[str, Any]] = []
    for name, fn in cases:
        row: dict[str, Any] = {"case": name}
        try:
            # the stream is current while the function runs, as the harness's activate() makes it
            with contextlib.nullcontext() if args.fake else stream:
                graph = capture(stream, fn)
        except GraphCaptureError as exc:
            row.update(captured=False, reason=str(exc))
        except Exception as exc:  # anything else is a bug of the capture: recorded, the script goes on
            row.update(captured=False, reason=f"UNEXPECTED {type(exc).__name__}: {exc}")
        else:
            row["captured"] = True
            try:
                graph.launch()
                stream.synchronize()
                if not args.fake:
                    row["replay_checked"] = works_replay(name)
                row["replayed"] = True
            except Exception as exc:
                row["replayed"] = f"{type(exc).__name__}: {exc}"
            graph.close()
        try:
            row["stream_works_after"] = works()
        except Exception as exc:
            row["stream_works_after"] = f"{type(exc).__name__}: {exc}"
        print(row, flush=True)
        out.append(row)
    args.json.write_text(json.dumps({"fake": args.fake, "cases": out}, indent=1))


if __name__ == "__main__":
    main()
