# The sixteenth probe (probe16-plan.md): eval_suite12.py at 64 MiB, one `--processes 8 --rounds 2 --min-secs 0.25
# --runs 2` command against two separate commands without --runs, alternating, PAIRS pairs (default 3); each
# command's wall to timeline.txt; packed into $OUT/probe16.tgz. Read by probe16.py.
set -u
O=$OUT/probe16 S=${SUITE:-tests/benchmarks/verdicts/eval_suite12.py} SIZES=64MiB
end=$((SECONDS + ${BUDGET:-240}))
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/runs2 $O/sep
D="--size $SIZES --processes 8 --rounds 2 --min-secs 0.25"
for k in $(seq 1 ${PAIRS:-3}); do
  [ $SECONDS -lt $((end - 60)) ] || { echo "budget: stopped before pair $k" >> $O/timeline.txt; break; }
  t0=$(date +%s.%N)
  timeout 150 python3 $S $D --runs 2 --json-out $O/runs2/cmd-$k.json > $O/runs2/cmd-$k.log 2>&1
  echo "runs2 $k exit $? wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
  for j in 1 2; do
    t0=$(date +%s.%N)
    timeout 150 python3 $S $D --json-out $O/sep/cmd-$k-$j.json > $O/sep/cmd-$k-$j.log 2>&1
    echo "sep $k-$j exit $? wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
  done
done
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cat $O/timeline.txt
cd $OUT && tar czf probe16.tgz probe16 && rm -rf probe16 && ls -la
