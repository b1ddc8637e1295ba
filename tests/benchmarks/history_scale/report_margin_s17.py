"""s17: `history report -b main` at 100,000 runs, two checkouts alternating under GNU time (user + sys CPU
seconds, peak RSS), each command a new process started in a folder outside both checkouts; the outputs of
the two compared: the HTML with its "Generated <time>" text masked, the regressions' text byte for byte.

    python report_margin_s17.py BASE_ROOT HEAD_ROOT --db /tmp/hs17/s100k.duckdb [--repeat 7]
        [--others 3] > report-margin-s17.txt

BASE_ROOT: the commit before (``git archive HEAD | tar -x -C BASE_ROOT``); HEAD_ROOT: the checkout with the
change. ``--others``: repetitions of ``report -b feat-0`` and ``regressions -b main`` as well (0: none).
The load average (1 minute) is printed before and after each pair.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GENERATED = re.compile(r"Generated [^<]*")  # as sed -E 's/Generated [^<]*/Generated X/'


def commands(db: str, out: Path) -> dict[str, list[str]]:
    return {
        "report -b main": ["history", "report", "-b", "main", "--db", db, "-o", str(out / "main.html")],
        "report -b feat-0": ["history", "report", "-b", "feat-0", "--db", db, "-o", str(out / "feat0.html")],
        "regressions -b main": ["history", "regressions", "-b", "main", "--db", db],
    }


def run(root: Path, argv: list[str], out: Path) -> tuple[float, float, str]:
    """(user + sys CPU seconds, peak RSS in MiB, what it printed) of one process (GNU time)."""
    timing = out / "time.txt"
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(["/usr/bin/time", "-o", str(timing), "-f", "%U %S %M", sys.executable, "-m", "primbench",
                           *argv], cwd=tempfile.gettempdir(), env=env, capture_output=True, text=True, check=True)
    user, system, kb = timing.read_text().split()[-3:]
    return float(user) + float(system), int(kb) / 1024, proc.stdout


def output(name: str, printed: str, out: Path) -> str:
    """What a command wrote: the report's HTML with its moment of making masked, else what it printed."""
    if name.startswith("report"):
        page = out / ("main.html" if "main" in name else "feat0.html")
        return GENERATED.sub("Generated X", page.read_text())
    return printed


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("head", type=Path)
    ap.add_argument("--db", default="/tmp/hs17/s100k.duckdb")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--others", type=int, default=3)
    args = ap.parse_args()
    sides = {"base": args.base.resolve(), "head": args.head.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        out = {side: Path(tmp) / side for side in sides}
        for folder in out.values():
            folder.mkdir()
        cmds = {side: commands(args.db, out[side]) for side in sides}
        plan = [(name, args.repeat if name == "report -b main" else args.others) for name in cmds["base"]]
        got: dict[tuple[str, str], list[tuple[float, float]]] = {}
        same: dict[str, bool] = {}
        print(f"# {' '.join(sys.argv[1:])}\n# python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
        for name, repeat in plan:
            for k in range(repeat):
                before = load()
                texts = {}
                for side, root in sides.items():
                    cpu, mb, printed = run(root, cmds[side][name], out[side])
                    got.setdefault((name, side), []).append((cpu, mb))
                    texts[side] = output(name, printed, out[side])
                    print(f"{name:22s} #{k + 1} {side}: {cpu:5.2f} s CPU, {mb:6.1f} MiB", flush=True)
                same[name] = same.get(name, True) and texts["base"] == texts["head"]
                print(f"{'':22s} load average {before} -> {load()}", flush=True)
    print()
    print("| command | side | runs | CPU s median | CPU s range | peak MiB median | peak MiB range | same output |")
    print("|---|---|---|---|---|---|---|---|")
    for name, repeat in plan:
        if not repeat:
            continue
        for side in sides:
            cpu = [c for c, _ in got[(name, side)]]
            mb = [m for _, m in got[(name, side)]]
            print(f"| {name} | {side} | {len(cpu)} | {statistics.median(cpu):.2f} | {min(cpu):.2f}-{max(cpu):.2f} | "
                  f"{statistics.median(mb):.0f} | {min(mb):.0f}-{max(mb):.0f} | {'yes' if same[name] else 'NO'} |")
        base = statistics.median(c for c, _ in got[(name, "base")])
        head = statistics.median(c for c, _ in got[(name, "head")])
        print(f"| {name} | head - base | | **{head - base:+.2f}** ({(head / base - 1) * 100:+.1f} %) | | | | |")


if __name__ == "__main__":
    main()
