"""The tables of README.md from results-base.json (main at c16539c) and results-head.json (this
branch): every command's CPU time, wall time and peak RSS per store, beside each other, the
growth exponents (d log CPU / d log runs, 1,000 -> 10,000 -> 100,000 runs) and the targets.

Run: ``python report.py`` (writes results.md beside it); ``python report.py --base LABEL
--head LABEL --base-title TEXT --head-title TEXT --out NAME.md`` for other results files (the
issue-28b figures: ``--base main-cd87fcb --head s3-28b --base-title "main at cd87fcb"
--head-title "issue-28b" --base-short cd87fcb --head-short 28b --out results-28b.md``).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STORES = ("s1k", "s10k", "s100k", "s100k_lean", "s1kx1k")
TITLES = {"s1k": "1,000 runs x 100", "s10k": "10,000 runs x 100", "s100k": "100,000 runs x 100",
          "s100k_lean": "100,000 runs x 100, lean (90,000 runs without documents; see README)",
          "s1kx1k": "1,000 runs x 1,000"}


def _load(label: str) -> dict[str, Any]:
    path = HERE / f"results-{label}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def cell(f: dict[str, Any] | None) -> str:
    if not f:
        return "not run"
    if "skipped" in f:
        return f"skipped ({f['skipped']})"
    if f.get("killed"):
        return f"**killed** ({f['killed']}; {f['cpu_s']:.1f} s CPU, {f['rss_mb']:.0f} MB by then)"
    text = f"{f['cpu_s']:.2f} s / {f['wall_s']:.1f} s / {f['rss_mb']:.0f} MB"
    if f.get("code") not in (0, 1):
        text += f" (exit {f.get('code')})"
    return text


def exponent(a: dict[str, Any] | None, b: dict[str, Any] | None, ratio: float = 10.0) -> str:
    ok = a and b and not a.get("killed") and not b.get("killed") and "cpu_s" in a and "cpu_s" in b
    if not ok or a["cpu_s"] <= 0 or b["cpu_s"] <= 0:  # type: ignore[index]
        return "—"
    return f"{math.log(b['cpu_s'] / a['cpu_s']) / math.log(ratio):.2f}"  # type: ignore[index]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="base")
    parser.add_argument("--head", default="head")
    parser.add_argument("--base-title", default="main at c16539c")
    parser.add_argument("--head-title", default="this branch")
    parser.add_argument("--base-short", default="main", help="the base's name in the exponents' table")
    parser.add_argument("--head-short", default="branch")
    parser.add_argument("--out", default="results.md")
    parser.add_argument("--large", default="s100k_lean", help="the 100,000-run store of the exponents' table")
    parser.add_argument("--limit", default="120 s", help="the runner's time limit, as the header says it")
    args = parser.parse_args()
    base, head = _load(args.base), _load(args.head)
    bt, ht, bs, hs = args.base_title, args.head_title, args.base_short, args.head_short
    out = ["# history_scale: recorded figures", "",
           f"{bt}: {base.get('machine', '?')}", f"{ht}: {head.get('machine', '?')}", "",
           "Each cell: CPU time (user + system, all threads) / wall time / peak RSS of the whole process "
           "(GNU time), one run per command on a shared 2-core machine (wall times include waiting for "
           f"the CPU). Killed: past the runner's limit ({args.limit}, or 4 GB of RSS).", ""]
    if base.get("compare") or head.get("compare"):
        out += ["## compare", "", f"| files | {bt} | {ht} |", "|---|---|---|"]
    for key in (base.get("compare") or head.get("compare") or {}):
        out.append(f"| {key} (median of {len(((head.get('compare') or {}).get(key) or {}).get('cpu_s_all', [1]))}) "
                   f"| {cell((base.get('compare') or {}).get(key))} | {cell((head.get('compare') or {}).get(key))} |")
    for store in STORES:
        b, h = (base.get("stores") or {}).get(store), (head.get("stores") or {}).get(store)
        if not b and not h:
            continue
        size = (h or b or {}).get("store_mb")
        out += ["", f"## {TITLES[store]} (store file {size} MB)", "",
                f"| command | {bt} | {ht} |", "|---|---|---|"]
        keys = [k for k in (h or b or {}) if k not in ("store_runs", "store_mb")]
        for k in keys:
            out.append(f"| {k} | {cell((b or {}).get(k))} | {cell((h or {}).get(k))} |")
    large = " (lean)" if args.large.endswith("_lean") else ""
    out += ["", "## Growth exponents (CPU time ~ runs^k)", "",
            f"| command | {bs} 1k->10k | {hs} 1k->10k | {bs} 10k->100k{large} | {hs} 10k->100k{large} |",
            "|---|---|---|---|---|"]
    s = {lab: d.get("stores") or {} for lab, d in (("base", base), ("head", head))}
    keys = list(s["head"].get("s1k") or s["base"].get("s1k") or {})
    for k in keys:
        if k in ("store_runs", "store_mb"):
            continue
        row = [exponent((s[lab].get(a) or {}).get(k), (s[lab].get(z) or {}).get(k))
               for a, z in (("s1k", "s10k"), ("s10k", args.large)) for lab in ("base", "head")]
        out.append(f"| {k} | {row[0]} | {row[1]} | {row[2]} | {row[3]} |")
    (HERE / args.out).write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
