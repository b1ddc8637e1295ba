# The fifteenth probe (probe15-plan.md): eval_suite12.py, p8r2 (`--processes 8 --rounds 2 --min-secs 0.25`) and
# p16r2 (`--processes 16 --rounds 2 --min-secs 0.2`) alternating, PAIRS pairs (default 4) at 4 MiB then 1 MiB, each
# run's wall to timeline.txt; everything packed into $OUT/probe15.tgz (one file comes back whole). Read by
# `probe14.py --designs p8r2,p16r2 --sizes 4MiB,1MiB`.
set -u
O=$OUT/probe15 S=${SUITE:-tests/benchmarks/verdicts/eval_suite12.py}
end=$((SECONDS + ${BUDGET:-480}))
for SIZES in 4MiB 1MiB; do
  . tests/benchmarks/verdicts/h200_prelude.sh
  mkdir -p $O/$SIZES/p8r2 $O/$SIZES/p16r2
  for k in $(seq 1 ${PAIRS:-4}); do
    for d in "p8r2 8 0.25" "p16r2 16 0.2"; do
      set -- $d
      [ $SECONDS -lt $((end - 40)) ] || { echo "budget: stopped before $SIZES $1 $k" >> $O/timeline.txt; break 3; }
      f=$O/$SIZES/$1/run-$k
      t0=$(date +%s.%N)
      timeout 150 python3 $S --size $SIZES --processes $2 --rounds 2 --min-secs $3 --json-out $f.json > $f.log 2>&1
      rc=$?
      echo "$SIZES $1 $k exit $rc wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
    done
  done
done
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cat $O/timeline.txt
cd $OUT && tar czf probe15.tgz probe15 && rm -rf probe15 && ls -la
