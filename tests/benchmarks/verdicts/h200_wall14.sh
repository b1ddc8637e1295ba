# The round fitting's wall at 64 KiB, in sample (eval_suite13.py, the thirteenth evaluation's suite, whose data13b
# 64 KiB A/A runs took 14.8-15.7 s each on an H100 before it): RUNS (default 3) `--processes 8 --rounds 2
# --min-secs 0.25` runs at 64 KiB on the round-fitting code, each run's wall to timeline.txt, the files kept for
# `round_wall13.py --data`. Packed into $OUT/wall14.tgz. A smaller check than the fourteenth evaluation, for when
# the device time left cannot hold one of its calls.
set -u
O=$OUT/wall14 S=tests/benchmarks/verdicts/eval_suite13.py SIZES=64KiB
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/p8r2x2/64KiB
for k in $(seq 1 ${RUNS:-3}); do
  t0=$(date +%s.%N)
  timeout 60 python3 $S --size 64KiB --processes 8 --rounds 2 --min-secs 0.25 --json-out $O/p8r2x2/64KiB/aa-$k-p1.json > $O/p8r2x2/64KiB/aa-$k-p1.log 2>&1
  echo "run $k exit $? wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
done
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cat $O/timeline.txt; grep -h "workers ready" $O/p8r2x2/64KiB/*.log
cd $OUT && tar czf wall14.tgz wall14 && rm -rf wall14 && ls -la
