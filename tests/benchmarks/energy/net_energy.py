"""Issue 26's "twice the work, twice the joules" with the fixed part subtracted: the table.

    python tests/benchmarks/energy/net_energy.py DIR [--out twice_the_work_net.txt]

DIR holds `h200_net.sh`'s files (``net_a.json``, ``net_b.json``, ``net_hot.json``). For each
kernel at 128 MiB: the board's joules per call of one launch a call (J1) and of two (J2), their
ratio (gross, as `twice_the_work.txt`), the empty calls' joules per call (the fixed part the
harness subtracts, ``energy_baseline.joules_per_call``) and the ratio of the net joules per call
(``energy_baseline.net_joules_per_call``: J - fixed), which should be 2.

Two tolerances, both measured in the same session:

* across runs: runs A and B are identical, so |ln(net_A / net_B)| over the 8 specializations is
  the net value's run-to-run error; a ratio of two net values has at most twice the largest of
  it (both terms' errors), and "twice" checks when |ln(ratio / 2)| is within that;
* per row, from the rounds: each value's standard error is its rounds' spread
  (``net_cv_between_rounds_percent``, or the gross ``cv_between_rounds_percent``) over the root
  of its rounds, the ratio's is the root sum of both terms' squares, and z = ln(ratio / 2) / se;
  "twice" checks at |z| <= 3. The gross ratio gets the same test, for contrast.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KERNELS = ("copy", "scale", "reduce", "fma")


def specs(path: Path) -> dict[tuple[str, int], Mapping[str, Any]]:
    """A run's specializations by (kernel, launches); empty where the file is missing."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    return {(s["meta"]["kernel"], int(s["meta"]["launches"])): s for s in doc["specializations"]
            if s.get("energy_baseline") is not None}


def net(spec: Mapping[str, Any]) -> float | None:
    value = spec["energy_baseline"]["net_joules_per_call"]
    return float(value) if value is not None and value > 0 else None


def tolerance(a: Mapping[tuple[str, int], Mapping[str, Any]],
              b: Mapping[tuple[str, int], Mapping[str, Any]]) -> tuple[float | None, float | None, int]:
    """The A/A pair's net values: RMS and largest |ln(net_A / net_B)|, and how many pairs."""
    diffs = [abs(math.log(x / y)) for k in a.keys() & b.keys()
             if (x := net(a[k])) is not None and (y := net(b[k])) is not None]
    if not diffs:
        return None, None, 0
    return math.sqrt(sum(d * d for d in diffs) / len(diffs)), max(diffs), len(diffs)


def se(spec: Mapping[str, Any], net_spread: bool) -> float | None:
    """The standard error of ln(joules per call) from the rounds' spread."""
    cv = (spec["energy_baseline"]["net_cv_between_rounds_percent"] if net_spread
          else spec["energy"]["cv_between_rounds_percent"])
    n = len(spec.get("rounds") or ())
    return cv / 100.0 / math.sqrt(n) if cv is not None and n > 1 else None


def z_score(ratio: float | None, one: Mapping[str, Any], two: Mapping[str, Any], net_spread: bool) -> float | None:
    s1, s2 = se(one, net_spread), se(two, net_spread)
    if ratio is None or s1 is None or s2 is None or not (s1 or s2):
        return None
    return math.log(ratio / 2) / math.hypot(s1, s2)


def rows(run: Mapping[tuple[str, int], Mapping[str, Any]], tol: float | None) -> list[list[str]]:
    out = []
    for kernel in KERNELS:
        one, two = run.get((kernel, 1)), run.get((kernel, 2))
        if one is None or two is None:
            out.append([kernel, "missing"])
            continue
        j1, j2 = one["energy"]["joules_per_call"], two["energy"]["joules_per_call"]
        f1, f2 = one["energy_baseline"]["joules_per_call"], two["energy_baseline"]["joules_per_call"]
        n1, n2 = net(one), net(two)
        t1, t2 = one["gpu_seconds_per_call"], two["gpu_seconds_per_call"]
        ratio = n2 / n1 if n1 and n2 else None
        ok = "n/a" if ratio is None or tol is None else ("yes" if abs(math.log(ratio / 2)) <= 2 * tol else "no")
        z_net, z_gross = z_score(ratio, one, two, True), z_score(j2 / j1, one, two, False)
        out.append([kernel, f"{j1 * 1e3:.3f}", f"{j2 * 1e3:.3f}", f"{j2 / j1:.3f}",
                    f"{z_gross:+.1f}" if z_gross is not None else "-", f"{t2 / t1:.3f}",
                    f"{f1 * 1e3:.3f}", f"{f2 * 1e3:.3f}", f"{one['energy_baseline']['share_percent']:.1f} %",
                    f"{n1 * 1e3:.3f}" if n1 else "-", f"{n2 * 1e3:.3f}" if n2 else "-",
                    f"{ratio:.3f}" if ratio else "-",
                    f"{100 * abs(math.log(ratio / 2)):.2f} %" if ratio else "-",
                    f"{z_net:+.1f}" if z_net is not None else "-", ok,
                    "-" if z_net is None else ("yes" if abs(z_net) <= 3 else "no"),
                    "-" if z_gross is None else ("yes" if abs(z_gross) <= 3 else "no")])
    return out


def table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *body] if i < len(r)) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=False)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in body]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", type=Path)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    runs = {name: specs(a.dir / f"net_{name}.json") for name in ("a", "b", "hot")}
    rms, largest, pairs = tolerance(runs["a"], runs["b"])
    env = (a.dir / "environment.txt").read_text().strip() if (a.dir / "environment.txt").is_file() else ""
    header = ["kernel", "J1 mJ", "J2 mJ", "J2/J1", "z", "T2/T1", "fixed1 mJ", "fixed2 mJ", "fixed share",
              "net1 mJ", "net2 mJ", "net2/net1", "|ln(net/2)|", "z", "net within A/A tol", "net |z|<=3",
              "gross |z|<=3"]
    text = ["# written by tests/benchmarks/energy/net_energy.py from h200_net.sh's files",
            *("# " + line for line in env.splitlines()), "",
            "Twice the work, the fixed part subtracted (--energy-baseline): one launch a call against two, "
            "at 128 MiB.",
            "J: the board's joules per call (gross); fixed: the empty calls' joules per call (the clear, the "
            "spin kernel, events, host gaps, idle power over them); net = J - fixed.",
            (f"Tolerance, measured: runs A and B (identical), |ln(net_A/net_B)| over {pairs} specializations: "
             f"RMS {100 * rms:.2f} %, largest {100 * largest:.2f} %; a ratio of two net values checks when "
             f"|ln(ratio/2)| is at most 2x the largest ({200 * largest:.2f} %).") if rms is not None and largest
            else "Tolerance: runs A and B are not both there."]
    verdicts: list[str] = []
    z_net: list[str] = []
    z_gross: list[str] = []
    for name, label in (("a", "cold, run A"), ("b", "cold, run B"), ("hot", "hot (--hot: no clears)")):
        if runs[name]:
            body = rows(runs[name], largest)
            full = [r for r in body if len(r) == len(header)]
            verdicts += [r[-3] for r in full]
            z_net += [r[-2] for r in full]
            z_gross += [r[-1] for r in full]
            text += ["", f"{label}:", table(header, body)]
    text += ["", "z: ln(ratio/2) over the ratio's standard error from the rounds' spreads (gross z after J2/J1, net z "
             "after |ln(net/2)|).",
             f"net twice within the A/A tolerance: {verdicts.count('yes')} of {len(verdicts)} (kernel, run) rows",
             f"net twice at |z| <= 3: {z_net.count('yes')} of {len(z_net)}; gross twice at |z| <= 3: "
             f"{z_gross.count('yes')} of {len(z_gross)}"]
    out = "\n".join(text) + "\n"
    if a.out is not None:
        a.out.write_text(out)
    print(out, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
