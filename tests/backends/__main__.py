"""``python -m tests.backends packages|start STATE|stop STATE``: the services the backends'
tests need (each module's ``SERVICE``), for ``.ci/run``.

* ``packages``: the Debian packages of the services that cannot be started here yet, one a line;
* ``start STATE``: start every service that can be, write what ``stop`` needs to the file STATE,
  and print ``export NAME=VALUE`` lines (shell-quoted) pointing the tests at them; a service
  that cannot start is reported on stderr, and its tests start their own or skip;
* ``stop STATE``: stop them.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.backends import services


def main(argv: list[str]) -> int:
    if argv[:1] == ["packages"]:
        for service in services().values():
            if not service.available():
                print("\n".join(service.packages))
        return 0
    if len(argv) == 2 and argv[0] == "start":
        states: dict[str, str] = {}
        for name, service in services().items():
            if not service.available():
                print(f"{name}: its service is not installed: its tests start their own or skip", file=sys.stderr)
                continue
            try:
                env, state = service.start()
            except Exception as exc:
                print(f"{name}: its service could not be started ({exc}): its tests start their own or skip",
                      file=sys.stderr)
                continue
            states[name] = state
            Path(argv[1]).write_text(json.dumps(states))
            for key, value in env.items():
                print(f"export {key}={shlex.quote(value)}")
                print(f"{name}: {key}={value}", file=sys.stderr)
        return 0
    if len(argv) == 2 and argv[0] == "stop":
        path = Path(argv[1])
        found = json.loads(path.read_text()) if path.exists() and path.read_text() else {}
        for name, service in services().items():
            if found.get(name):
                service.stop(found[name])
        return 0
    print("usage: python -m tests.backends packages|start STATE|stop STATE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
