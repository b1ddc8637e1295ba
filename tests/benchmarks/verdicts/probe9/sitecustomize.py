"""The ninth probe's (h200_probe9.sh): a `--processes` worker profiles itself. With PRIMBENCH_WORKER and
PROBE9_DIR set, cProfile runs from interpreter start to exit and the profile is dumped, with the worker's
start and end times, to PROBE9_DIR/worker-PID.prof / .json. Anything else runs as usual."""

import os

if os.environ.get("PRIMBENCH_WORKER") and os.environ.get("PROBE9_DIR"):
    import atexit
    import cProfile
    import json
    import time

    _started = time.time()
    _profile = cProfile.Profile()
    _profile.enable()

    def _dump() -> None:
        _profile.disable()
        out = os.path.join(os.environ["PROBE9_DIR"], f"worker-{os.getpid()}")
        _profile.dump_stats(out + ".prof")
        role = json.loads(os.environ["PRIMBENCH_WORKER"])
        with open(out + ".json", "w") as f:
            json.dump({"process": role.get("process"), "started": _started, "ended": time.time()}, f)

    atexit.register(_dump)
