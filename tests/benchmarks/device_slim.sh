#!/usr/bin/env bash
# The device tool sends the working tree only while it is under 64 MiB, and the committed H200 data
# make it larger. `device_slim.sh out` moves the data that no device script reads (the earlier
# evaluations' runs and the compare benchmark's files) to a folder outside the checkout, `device_slim.sh
# back` puts them back; `git status` is clean again after `back`. Kept: h200/data (the tests' conftest
# reads it). A listed folder that does not exist yet (the next collection's) is skipped.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
hold=${PRIMBENCH_SLIM_HOLD:-/tmp/primbench-slim-hold}
moved=(tests/benchmarks/verdicts/h200/data2 tests/benchmarks/verdicts/h200/data3
       tests/benchmarks/verdicts/h200/data4 tests/benchmarks/verdicts/h200/data5 tests/benchmarks/verdicts/h200/data6
       tests/benchmarks/verdicts/h200/data7 tests/benchmarks/verdicts/h200/data8 tests/benchmarks/verdicts/h200/data9 tests/benchmarks/verdicts/h200/data10
       tests/benchmarks/verdicts/h200/data11 tests/benchmarks/verdicts/h200/data12 tests/benchmarks/verdicts/h200/data12b tests/benchmarks/verdicts/h200/data13 tests/benchmarks/verdicts/h200/data13b tests/benchmarks/verdicts/h200/ci-recipe
       tests/benchmarks/verdicts/h200/probe13 tests/benchmarks/verdicts/h200/probe14 tests/benchmarks/verdicts/h200/probe15 tests/benchmarks/verdicts/h200/probe16 tests/benchmarks/verdicts/h200/data14 tests/benchmarks/verdicts/h200/data15 tests/benchmarks/verdicts/h200/data16 tests/benchmarks/verdicts/h200/wall14
       tests/benchmarks/verdicts/h200/probe8 tests/benchmarks/verdicts/h200/tune8
       tests/benchmarks/data)
case "${1:-}" in
  out)
    for d in "${moved[@]}"; do
      [ -e "$hold/$d" ] && { echo "error: $hold/$d exists: run '$0 back' first" >&2; exit 2; }
    done
    for d in "${moved[@]}"; do [ -e "$d" ] || continue; mkdir -p "$hold/$(dirname "$d")"; mv "$d" "$hold/$d"; done
    echo "moved to $hold; the tree that travels: $(git ls-files -z | du -ch --files0-from=- 2>/dev/null | tail -1 | cut -f1)" ;;
  back)
    for d in "${moved[@]}"; do [ -e "$hold/$d" ] && mv "$hold/$d" "$d"; done
    git status --short | head ;;
  *) echo "usage: $0 out|back" >&2; exit 2 ;;
esac
