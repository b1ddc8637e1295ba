#!/bin/bash
# 100,000 specializations (4.6.0), terminal: pairs, the order swapped every pair (GNU time), s11's record
# (pairs-s11.txt). Expects run.py's files in /tmp/cs11 (run.py --work /tmp/cs11) and the two trees as `git archive`s
# byte-compiled in /tmp/s11base (main 2db5c8a) and /tmp/s11final (the branch); run with the project's venv active.
cd /tmp/cs11
echo "# compare, 100,000 specializations (4.6.0), --format terminal: 7 pairs, the order swapped every pair; load at start $(cut -d' ' -f1 /proc/loadavg), $(date -u +%H:%M) UTC; checkout, user s, system s, peak RSS KB"
for i in 1 2 3 4 5 6 7; do
  if [ $((i % 2)) -eq 1 ]; then order="/tmp/s11base /tmp/s11final"; else order="/tmp/s11final /tmp/s11base"; fi
  for root in $order; do
    PYTHONPATH=$root /usr/bin/time -f "$root %U %S %M" -o /tmp/cs11/t.out python -c "from primbench.cli import main; main()" compare compare-100000-base-4.6.0.json compare-100000-head-4.6.0.json > /dev/null 2>&1
    cat /tmp/cs11/t.out
  done
done
echo "load at end $(cut -d' ' -f1 /proc/loadavg), $(date -u +%H:%M) UTC"
