"""Throttled batches handled, shown on the fake GPU (issue 26): the SM clock drops to 1000 MHz
(of 1980) for three measured batches, with NVML's power-capping reason, then recovers.

    python tests/benchmarks/throttle/demo.py            # prints what demo.txt records
    python tests/benchmarks/throttle/demo.py --check    # exit 1 if the output is not demo.txt

Prints, batch by batch, the clock the fake GPU ran at, whether the batch was kept or discarded
and the recovery delay waited (`primbench.throttle`: 0.1 s, then doubled), then the harness's
own terminal lines and what results.json counts. Time is the fake GPU's virtual time, so the
output is the same on every machine; nothing here ran on a GPU.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import primbench as pb  # noqa: E402
from primbench.console import Reporter, make_console  # noqa: E402
from tests.fakes import FakeDevice  # noqa: E402

DEFAULT_MHZ = 1980.0
LOW_MHZ = 1000.0
LOW_BATCHES = {2, 3, 4}  # measured batches (1, 2, ...) that run throttled
RECORDED = Path(__file__).with_name("demo.txt")


class Kernel(pb.Benchmark):
    def meta(self) -> dict[str, Any]:
        return {"algo": "throttle_demo", "kernel": "1 ms"}

    def run(self, state: pb.State) -> None:
        device = state.device
        assert isinstance(device, FakeDevice)
        state.run(lambda: device.launch(1.0))


def clock(batch: int) -> tuple[float, list[str]]:
    if batch in LOW_BATCHES:
        return LOW_MHZ, ["sw_power_cap"]
    return DEFAULT_MHZ, []


def demo() -> str:
    os.environ["COLUMNS"] = "160"  # the terminal lines unwrapped, whatever runs it
    device = FakeDevice(1.0, batch_clock=clock, default_clock_mhz=DEFAULT_MHZ, log_ops=False)
    slept: list[tuple[float, float]] = []  # (virtual time, seconds) of each recovery delay
    sleep = device.sleep

    def recorded_sleep(secs: float) -> None:
        slept.append((device.t, secs))
        sleep(secs)

    device.sleep = recorded_sleep  # type: ignore[method-assign]
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "throttle.json"
        ex = pb.Executor(["--json-out", str(path), "--min-secs", "0.2", "--rounds", "1"], device=device,
                         reporter=Reporter(make_console(out)), prog="demo")
        ex.queue(Kernel())
        code = ex.run().exit_code
        doc = json.loads(path.read_text())
    spec = doc["specializations"][0]
    lines = [f"fake GPU, default SM clock {DEFAULT_MHZ:.0f} MHz; batches {sorted(LOW_BATCHES)} run at "
             f"{LOW_MHZ:.0f} MHz with sw_power_cap; threshold 0.9 x default (--min-clock-fraction)", "",
             "measured batch  SM clock  reasons       outcome"]
    delays = iter(slept)
    for batch, mhz, reasons in device.batch_log:
        throttled = mhz < 0.9 * DEFAULT_MHZ or bool(reasons)
        outcome = "kept"
        if throttled:
            _, secs = next(delays)
            outcome = f"discarded, waited {secs:.1f} s"
        lines.append(f"{batch:>14}  {mhz:>5.0f} MHz  {','.join(reasons) or '-':<12}  {outcome}")
    lines += ["", "(the round's first measured batch is the last sizing batch, kept as measured: it opens no",
              "batch range, so the fake's batch 1 above is the window's second batch)", "",
              "the harness's terminal output (the summary's host seconds, this machine's wall time, as X):",
              *[re.sub(r"[0-9.]+ s host", "X s host", ln.rstrip()) for ln in out.getvalue().splitlines()
                if not ln.startswith("Wrote ")], "",
              f"exit code {code}",
              f"results.json: throttled_batches {spec['throttled_batches']} (round 0: "
              f"{spec['rounds'][0]['throttled_batches']}), summary.throttled_batches "
              f"{doc['summary']['throttled_batches']}",
              f"results.json: sm_clock average {spec['sm_clock']['average_mhz']:.1f} MHz over the kept batches, "
              f"below_expected {str(spec['sm_clock']['below_expected']).lower()}",
              f"recovery delays waited: {' + '.join(f'{s:.1f}' for _, s in slept)} = "
              f"{sum(s for _, s in slept):.1f} s (host time, outside the measurement)",
              f"batches kept: {spec['calls']['batches']}, of {spec['calls']['kernel_calls_per_batch']} calls each"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the recorded demo.txt")
    text = demo()
    if ap.parse_args().check:
        if text != RECORDED.read_text():
            sys.stdout.write(text)
            print("differs from demo.txt", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
