# The fourteenth probe (probe14-plan.md): eval_suite12.py with `--processes 8 --min-secs 0.25`, p8r4 (`--rounds 4`)
# and p8r2 (`--rounds 2`) alternating, PAIRS4 pairs at 4 MiB (default 4) and PAIRS64 at 64 MiB (default 3), each
# run's wall to timeline.txt. Results 4.10.0 files: every round's wall_secs. Probe data, read by probe14.py.
set -u
O=$OUT/probe14 S=${SUITE:-tests/benchmarks/verdicts/eval_suite12.py}
end=$((SECONDS + ${BUDGET:-520}))
for SIZES in 4MiB 64MiB; do
  . tests/benchmarks/verdicts/h200_prelude.sh
  pairs=${PAIRS4:-4}; [ $SIZES = 64MiB ] && pairs=${PAIRS64:-3}
  mkdir -p $O/$SIZES/p8r4 $O/$SIZES/p8r2
  for k in $(seq 1 $pairs); do
    for r in 4 2; do
      [ $SECONDS -lt $((end - 40)) ] || { echo "budget: stopped before $SIZES p8r$r $k" >> $O/timeline.txt; break 3; }
      f=$O/$SIZES/p8r$r/run-$k
      t0=$(date +%s.%N)
      timeout 150 python3 $S --size $SIZES --processes 8 --rounds $r --min-secs 0.25 --json-out $f.json > $f.log 2>&1
      rc=$?
      echo "$SIZES p8r$r $k exit $rc wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
    done
  done
done
cat $O/timeline.txt
