"""How much of loading a results file a decode restricted to the fields compare reads could save:
CPU seconds (`time.process_time`) of one file's `load_results` (the full model), of msgspec decoding
the same bytes into a slim view (name, meta, the headline metrics, noise fields and each round's
metrics; every other field skipped, so not validated), and of reading the bytes alone. A probe for
the next step of issue 28 (s8): it changes nothing in primbench.

    python tests/benchmarks/compare_scale/decode_probe.py FILE.json
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


class _Round(msgspec.Struct):
    bytes_per_second: float | None = None
    items_per_second: float | None = None
    gpu_ms_per_call: float | None = None


class _Spec(msgspec.Struct):
    name: str
    meta: dict[str, Any] = {}
    bytes_per_second: float | None = None
    items_per_second: float | None = None
    gpu_seconds_per_call: float | None = None
    noise_timeout: bool | None = None
    noise_percent: float | None = None
    skipped: str | None = None
    error: str | None = None
    rounds: list[_Round] = []


class _Doc(msgspec.Struct):
    context: msgspec.Raw
    specializations: list[_Spec]


def main() -> None:
    import gc

    from primbench.results import load_results

    path = Path(sys.argv[1])
    gc.disable()  # as compare runs
    t0 = time.process_time()
    data = path.read_bytes()
    t1 = time.process_time()
    slim = msgspec.json.Decoder(_Doc).decode(data)
    t2 = time.process_time()
    del slim
    t3 = time.process_time()
    full = load_results(path, keep_written=False)
    t4 = time.process_time()
    n = len(full.specializations)
    print(f"{path.name}: {n:,} specializations, {len(data) / 1e6:.0f} MB; load average {os.getloadavg()[0]:.1f}")
    print(f"  read the bytes          {t1 - t0:.2f} s")
    print(f"  slim decode (msgspec)   {t2 - t1:.2f} s")
    print(f"  load_results (full)     {t4 - t3:.2f} s")


if __name__ == "__main__":
    main()
