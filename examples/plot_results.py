"""Figures of the examples' real H200 results: two charts and a table, all from the files.

    python examples/plot_results.py [--dir examples/results/h200]

Reads (with `primbench.results.load_results`) the results files the examples wrote on the
H200 and writes, next to them:

* `memory_latency.png`: latency per access (1e9 / items_per_second ns) against the size of
  the chased array, one line for one thread and one for the full grid, shared memory as
  horizontal markers, the L1 / L2 / HBM regions shaded (L2 size from the file's GPU context);
* `branch_penalty.png`: items per second and time relative to p = 0 against p, with the
  count of set R entries from `branch_penalty.log`;
* `FIGURES.md`: a table per example (copy, branch penalty, memory latency, sync, torch/triton).

Needs matplotlib (the `history` extra).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FixedLocator, NullLocator

from primbench.results import Results, load_results

KiB, MiB, GiB = 1024, 1024**2, 1024**3
L1_BYTES = 256 * KiB  # combined L1 / shared memory per SM on Hopper (H100, H200)
DEFAULT_DIR = Path(__file__).resolve().parent / "results" / "h200"


def _size(n: float) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def _rate(value: float, unit: str) -> str:
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.2f} {unit}"


def latency_rows(results: Results) -> list[dict]:
    """One row per memory-latency specialization: memory, threads, bytes, ns per access."""
    rows = []
    for s in results.specializations:
        if s.error or not s.items_per_second:
            continue
        rows.append({"memory": s.meta["memory"], "threads": s.meta["threads"], "bytes": int(s.meta["bytes"]),
                     "ns": 1e9 / s.items_per_second, "noise": s.noise_percent})
    return sorted(rows, key=lambda r: (r["memory"], r["threads"], r["bytes"]))


def _level(nbytes: int, l2: int) -> str:
    return "L1" if nbytes < L1_BYTES else "L2" if nbytes <= l2 else "HBM"


def _level_summary(rows: list[dict], l2: int) -> str:
    """One line: the range of latencies per level, one thread and full grid."""
    parts = []
    for threads, label in (("one", "One thread"), ("grid", "Full grid")):
        levels: dict[str, list[float]] = {}
        for r in rows:
            if r["threads"] == threads:
                level = "shared memory" if r["memory"] == "shared" else _level(r["bytes"], l2)
                levels.setdefault(level, []).append(r["ns"])
        text = ", ".join(f"{lv} {min(v):.0f}" + (f"–{max(v):.0f}" if len(v) > 1 else "") + " ns"
                         for lv, v in sorted(levels.items(), key=lambda kv: min(kv[1])))
        parts.append(f"{label}: {text}.")
    return " ".join(parts)


def set_entries(log: Path) -> dict[str, int]:
    """{"p: 0.5000": 13, ...}: the count of set R entries the branch example logged before each p."""
    counts: dict[str, int] = {}
    if not log.is_file():
        return counts
    pending = None
    for line in log.read_text(encoding="utf-8").splitlines():
        m = re.search(r"R has (\d+) of 32 entries set", line)
        if m:
            pending = int(m.group(1))
            continue
        m = re.search(r"\[\d+/\d+\] (p: [0-9.]+)", line)
        if m and pending is not None:
            counts[m.group(1)] = pending
            pending = None
    return counts


def branch_rows(results: Results, counts: dict[str, int]) -> list[dict]:
    specs = [s for s in results.specializations if not s.error]
    uniform = next(s for s in specs if float(s.meta["p"]) == 0.0).items_per_second
    return [{"name": s.name, "p": float(s.meta["p"]), "items_per_second": s.items_per_second,
             "relative_time": uniform / s.items_per_second, "noise": s.noise_percent, "set": counts.get(s.name)}
            for s in sorted(specs, key=lambda s: float(s.meta["p"]))]


def plot_memory_latency(results: Results, out: Path) -> None:
    rows = latency_rows(results)
    l2 = int(results.gpu.l2_cache_bytes or 60 * MiB)
    sizes = sorted({r["bytes"] for r in rows if r["memory"] == "global"})
    lo, hi = sizes[0] / 2, sizes[-1] * 2
    fig, ax = plt.subplots(figsize=(9, 5.6), dpi=120)
    for x0, x1, label, colour in ((lo, L1_BYTES, "L1", "#dbe9f6"), (L1_BYTES, l2, f"L2 ({_size(l2)})", "#e5f2df"),
                                  (l2, hi, "HBM", "#f6e3d9")):
        ax.axvspan(x0, x1, color=colour, zorder=0)
        ax.text((x0 * x1) ** 0.5, 0.97, label, transform=ax.get_xaxis_transform(), ha="center", va="top",
                fontsize=11, fontweight="bold", color="#444")
    styles = {"one": ("one thread", "#1f5fa8", "o"), "grid": ("full grid (528 blocks x 256 threads)", "#c2410c", "s")}
    for threads, (label, colour, marker) in styles.items():
        pts = [r for r in rows if r["memory"] == "global" and r["threads"] == threads]
        xs, ys = [r["bytes"] for r in pts], [r["ns"] for r in pts]
        ax.plot(xs, ys, marker=marker, color=colour, lw=2, label=f"global, {label}")
        for x, y in zip(xs, ys, strict=True):
            ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 7), ha="center",
                        fontsize=8.5, color=colour)
        for r in (r for r in rows if r["memory"] == "shared" and r["threads"] == threads):
            ax.hlines(r["ns"], lo, hi, colors=colour, linestyles=":", lw=1.4)
            ax.plot([r["bytes"]], [r["ns"]], marker="D", color=colour, ms=8, mfc="white", mew=2,
                    label=f"shared ({_size(r['bytes'])}), {label.split(' (')[0]}: {r['ns']:.1f} ns")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([_size(s) for s in sizes])
    ys = [r["ns"] for r in rows]
    ax.set_ylim(min(ys) / 1.6, max(ys) * 2.2)
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if min(ys) / 1.6 <= t <= max(ys) * 2.2]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([str(t) for t in ticks])
    ax.set_xlabel("array chased (bytes, log scale)")
    ax.set_ylabel("latency per access (ns, log scale)")
    ax.set_title(f"Pointer-chase latency, {results.gpu.name or 'GPU'} (memory_latency.py)")
    ax.grid(True, which="major", axis="y", color="white", lw=0.8)
    ax.legend(loc="lower right", fontsize=8.5, framealpha=0.95)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def plot_branch_penalty(results: Results, counts: dict[str, int], out: Path) -> None:
    """Bars at evenly spaced positions (p = 0 and 1/32, 0.9 and 31/32 are too close on a linear axis)."""
    rows = branch_rows(results, counts)
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=120)
    xs = list(range(len(rows)))
    rates = [r["items_per_second"] / 1e9 for r in rows]
    diverged = [r["relative_time"] > 1.2 for r in rows]
    colours = ["#c2410c" if d else "#1f5fa8" for d in diverged]
    ax.bar(xs, rates, color=colours, width=0.7, zorder=2)
    for x, r, y in zip(xs, rows, rates, strict=True):
        ax.text(x, y + max(rates) * 0.015, f"{y:.2f}\n{r['relative_time']:.3f}x time", ha="center", va="bottom",
                fontsize=8)
    ax.set_xticks(xs)
    ax.set_xticklabels([f"p={r['p']:.4g}\n" + ("" if r["set"] is None else f"R: {r['set']}/32") for r in rows],
                       fontsize=8.5)
    half = rates[0] / 2
    ax.axhline(half, color="#555", ls="--", lw=1, zorder=3)
    ax.text((len(rows) - 1) / 2, half * 1.55, "dashed: half of the p = 0 rate (items/s halves once one\n"
            "lane of a warp diverges; both branches then run one after the other)", ha="center", va="center",
            fontsize=9, color="#333", zorder=4)
    ax.set_ylim(0, max(rates) * 1.22)
    ax.set_xlabel("p (probability that an entry of R is 1) and the entries of R drawn as 1 (branch_penalty.log)")
    ax.set_ylabel("Gitems/s (threads per second)")
    ax.set_title(f"Branch divergence, {results.gpu.name or 'GPU'} (branch_penalty.py): "
                 "blue uniform warps, orange diverged", fontsize=11)
    ax.grid(True, axis="y", alpha=0.3, zorder=0)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _source(results: Results, path: Path) -> str:
    where = "no branch or commit"
    if results.branch or results.commit:
        where = f"{results.branch}@{(results.commit or '')[:12]}"
    return f"`{path.name}` ({where}, {results.gpu.name or '?'}, {results.date})"


def figures_markdown(directory: Path) -> str:
    """FIGURES.md: every number read from the results files in `directory`."""
    out = ["# Figures of the examples on the H200", "",
           "Generated by `examples/plot_results.py` from the results files in this folder; do not edit by hand.",
           "Noise: the coefficient of variation of the batches' time per call at the end of the run.", ""]

    runs = [(p, load_results(p)) for p in sorted(directory.glob("copy-run*.json"))]
    if runs:
        out += ["## Copy (`copy_benchmark.py`)", ""] + [f"* {_source(r, p)}" for p, r in runs] + [""]
        rows = []
        for p, r in runs:
            for s in r.specializations:
                rows.append([p.stem, s.name, _rate(s.bytes_per_second, "B/s"), _rate(s.items_per_second, "items/s"),
                             f"{s.noise_percent:.3f} %"])
        out += _table(["run", "specialization", "bytes/s", "items/s", "noise"], rows, {2, 3, 4})
        if len(runs) == 2:
            first = {s.name: s for s in runs[0][1].specializations}
            diffs = [f"{s.name}: {100 * (s.bytes_per_second / first[s.name].bytes_per_second - 1):+.3f} %"
                     for s in runs[1][1].specializations if s.name in first]
            out += [f"Run 2 against run 1: {'; '.join(diffs)}.", ""]

    path = directory / "branch_penalty.json"
    if path.is_file():
        r = load_results(path)
        rows_b = branch_rows(r, set_entries(directory / "branch_penalty.log"))
        out += ["## Branch penalty (`branch_penalty.py`)", "", f"* {_source(r, path)}", "",
                "Relative time: time per thread against p = 0 (no lane takes the other branch).", ""]
        out += _table(["p", "R entries set (of 32)", "items/s", "relative time", "noise"],
                      [[f"{b['p']:.4f}", "?" if b["set"] is None else str(b["set"]),
                        _rate(b["items_per_second"], "items/s"), f"{b['relative_time']:.3f}x", f"{b['noise']:.3f} %"]
                       for b in rows_b], {1, 2, 3, 4})
        diverged = [b for b in rows_b if b["set"] not in (None, 0, 32)]
        if diverged:
            worst = max(b["relative_time"] for b in diverged)
            best = min(b["relative_time"] for b in diverged)
            out += [f"Once R has both values (warps diverge), a thread takes {best:.3f}x–{worst:.3f}x the time "
                    f"of the uniform case: both branches run one after the other.", ""]

    path = directory / "memory_latency.json"
    if path.is_file():
        r = load_results(path)
        rows_m = latency_rows(r)
        l2 = int(r.gpu.l2_cache_bytes or 60 * MiB)
        out += ["## Memory latency (`memory_latency.py`)", "", f"* {_source(r, path)}", "",
                f"Latency per access = 1e9 / items_per_second ns. Level: where an array of that size fits "
                f"(L1: below {_size(L1_BYTES)}, the L1 / shared memory of an SM; L2: below {_size(l2)}, "
                f"the L2 of this GPU from the file; HBM above).", ""]
        cells = {(x["memory"], x["bytes"], x["threads"]): f"{x['ns']:.1f} ns" for x in rows_m}
        keys = sorted({(x["memory"], x["bytes"]) for x in rows_m})
        out += _table(["memory", "array", "level", "one thread", "full grid"],
                      [[mem, _size(size), "shared" if mem == "shared" else _level(size, l2)]
                       + [cells.get((mem, size, t), "—") for t in ("one", "grid")] for mem, size in keys],
                      {1, 3, 4})
        out += [_level_summary(rows_m, l2), ""]

    for stem, title in (("sync_benchmark", "Sync (`sync_benchmark.py`)"),
                        ("torch_triton", "Torch and Triton (`torch_triton.py`)")):
        path = directory / f"{stem}.json"
        if path.is_file():
            r = load_results(path)
            out += [f"## {title}", "", f"* {_source(r, path)}", ""]
            out += _table(["algorithm", "specialization", "bytes/s", "items/s", "noise"],
                          [[s.meta.get("algo", r.algorithm), s.name, _rate(s.bytes_per_second, "B/s"),
                            _rate(s.items_per_second, "items/s"), f"{s.noise_percent:.3f} %"]
                           for s in r.specializations], {2, 3, 4})
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR,
                        help="folder of the results files (default: %(default)s)")
    args = parser.parse_args(argv)
    directory: Path = args.dir
    plot_memory_latency(load_results(directory / "memory_latency.json"), directory / "memory_latency.png")
    plot_branch_penalty(load_results(directory / "branch_penalty.json"), set_entries(directory / "branch_penalty.log"),
                        directory / "branch_penalty.png")
    (directory / "FIGURES.md").write_text(figures_markdown(directory), encoding="utf-8")
    for name in ("memory_latency.png", "branch_penalty.png", "FIGURES.md"):
        print(f"wrote {directory / name}")


if __name__ == "__main__":
    main()
