# The round fitting's wall at 64 KiB, in sample (eval_suite13.py, the thirteenth evaluation's suite): PAIRS (default
# 2) pairs of `--processes 8 --rounds 2 --min-secs 0.25` runs at 64 KiB on one GPU, alternating "before" (the
# fitting undone: `--min-gpu-ms-per-batch 0.5`, the old worker floor, and PRIMBENCH_OLDFIT=1, which
# `oldfit/sitecustomize.py` reads in every process of the run so that no window's batches are shortened) and
# "after" (the code as it is; both modes import primbench.measure at every process's start). Each run's wall to
# timeline.txt, the files kept for `round_wall13.py --data`. Packed into $OUT/wall14.tgz. A smaller check than the
# fourteenth evaluation, for when the device time left cannot hold one of its calls.
set -u
O=$OUT/wall14 S=tests/benchmarks/verdicts/eval_suite13.py SIZES=64KiB
. tests/benchmarks/verdicts/h200_prelude.sh
export PYTHONPATH=$PWD/tests/benchmarks/verdicts/oldfit:$PYTHONPATH
D="--size 64KiB --processes 8 --rounds 2 --min-secs 0.25"
mkdir -p $O/before/p8r2x2/64KiB $O/after/p8r2x2/64KiB
for k in $(seq 1 ${PAIRS:-2}); do
  for m in before after; do
    f=$O/$m/p8r2x2/64KiB/aa-$k-p1
    t0=$(date +%s.%N)
    if [ $m = before ]; then
      PRIMBENCH_OLDFIT=1 timeout 60 python3 $S $D --min-gpu-ms-per-batch 0.5 --json-out $f.json > $f.log 2>&1
    else
      timeout 60 python3 $S $D --json-out $f.json > $f.log 2>&1
    fi
    echo "$m $k exit $? wall $(python3 -c "print(round($(date +%s.%N) - $t0, 2))")" >> $O/timeline.txt
  done
done
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cat $O/timeline.txt
cd $OUT && tar czf wall14.tgz wall14 && rm -rf wall14 && ls -la
