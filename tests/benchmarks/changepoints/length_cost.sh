#!/usr/bin/env bash
# What the eighth pass's budget by length (`_LENGTH_PRIOR`: lengths 5-10 a full share, 4 and
# 11-16 a tenth) costs regressions of the lengths it starves: tune_scan8.py's "fixed" cells
# (its tuning seeds 7801-7803, n = 30 and 100), main's method against the prior, with the
# regression fixed 11-16 commits later, then 4, then 5-10 (the issue's case) for reference.
#   bash tests/benchmarks/changepoints/length_cost.sh > tests/benchmarks/changepoints/length_cost.txt
set -euo pipefail
cd "$(dirname "$0")"
for lengths in 11,17 4,5 5,11; do
  echo "## regressions fixed ${lengths%,*}-$(( ${lengths#*,} - 1 )) commits later"
  CP_FIXED_LENGTHS=$lengths CP_ONLY=fixed CP_NS=30,100 python tune_scan8.py main prior 2>&1
  echo
done
