# The seventeenth probe (probe17-plan.md): eval_suite14.py at 4 MiB, p8r2 runs (`--processes 8 --rounds 2
# --min-secs 0.25`) alternating plain and padded (each worker holding a device allocation of a random 2-512 MiB from
# before the program's import: placement_pad/sitecustomize.py), PAIRS pairs (default 10), each run's wall to
# timeline.txt; packed into $OUT/probe17.tgz. Read by `probe17.py`.
set -u
O=$OUT/probe17 S=tests/benchmarks/verdicts/eval_suite14.py SIZES=${SIZES:-4MiB}
end=$((SECONDS + ${BUDGET:-360}))
. tests/benchmarks/verdicts/h200_prelude.sh
timeout 60 python3 tests/benchmarks/verdicts/nvml_costs.py > $O/nvml_costs.txt 2>&1; cat $O/nvml_costs.txt
export PYTHONPATH=$PWD/tests/benchmarks/verdicts/placement_pad:$PYTHONPATH
mkdir -p $O/$SIZES/plain $O/$SIZES/pad
for k in $(seq 1 ${PAIRS:-10}); do
  for d in plain pad; do
    [ $SECONDS -lt $((end - 25)) ] || { echo "budget: stopped before $d $k" >> $O/timeline.txt; break 2; }
    f=$O/$SIZES/$d/run-$k
    t0=$(date +%s.%N)
    PRIMBENCH_PAD=$([ $d = pad ] && echo 1 || echo 0) PRIMBENCH_PAD_LOG=$f.pads timeout 100 python3 $S --size $SIZES --processes 8 --rounds 2 \
      --min-secs 0.25 --json-out $f.json > $f.log 2>&1
    rc=$?
    echo "$SIZES $d $k exit $rc wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
  done
done
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cat $O/timeline.txt
cd $OUT && tar czf probe17.tgz probe17 && rm -rf probe17 && ls -la
