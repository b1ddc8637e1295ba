"""How long the one table engine (`primbench.tables`, Rich) takes for 10,000 rows: the
measurement behind its policy (docs/measurements/rich-tables.md). Run: python tests/benchmarks/rich_tables_bench.py"""

from __future__ import annotations

import io
import time

from rich.console import Console

from primbench.tables import Column, render

COLUMNS = [Column("name", "Specialization", 0, wrap=True), Column("base", "Base", 2, right=True),
           Column("head", "Head", 2, right=True), Column("change", "Change", 0, right=True),
           Column("detectable", "Detectable", 4, right=True), Column("verdict", "Verdict", 0),
           Column("why", "Why", 1, wrap=True)]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def main() -> None:
    rows = [(f"ipt: {i % 7}, op: copy, type: t{i}, size: {1 << (i % 12)}KiB", "371.93 GB/s", "363.91 GB/s",
             "-2.16 %", "±5.40 %", "inconclusive", "too noisy to tell: change -2.16 % beyond the ±0.5 % threshold")
            for i in range(10_000)]
    for label, stream, width in (("pipe (full width, unwrapped)", io.StringIO(), 80),
                                 ("terminal, 120 columns", _Tty(), 120), ("terminal, 80 columns", _Tty(), 80)):
        console = Console(file=stream, width=width, force_terminal=isinstance(stream, _Tty), color_system=None)
        start = time.perf_counter()
        render(rows, COLUMNS, limit=0, console=console)
        print(f"{label}: 10,000 rows in {time.perf_counter() - start:.2f} s, "
              f"{len(stream.getvalue().encode()) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
