# The tenth probe (after the tenth evaluation, whose suite it runs, so in sample for that suite): where the wall of
# a `--processes 16 --rounds 4 --min-secs 0.5` run goes (1.84-2.01 s a specialization in evaluate10.txt against a
# measured share of 0.5 s). As h200_probe9.sh: at 1 MiB one run with every worker under cProfile
# (probe9/sitecustomize.py) and one without, at 64 KiB one without; each output line stamped with seconds since
# the run began; probe9/summary.py per worker. The bytecode cache on, as h200_prelude.sh sets it. Then the
# `gpu`-marked tests at this commit. Everything is packed into $OUT/p10.tgz.
set -u
O=$OUT/p10 S=tests/benchmarks/verdicts/eval_suite10.py SIZES=1MiB
. tests/benchmarks/verdicts/h200_prelude.sh
export PRIMBENCH_BRANCH=probe10
ARGS="--processes 16 --rounds 4 --min-secs 0.5"
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
for size in ${PROBE_SIZES:-1MiB 64KiB}; do
  if [ $size = 1MiB ]; then
    mkdir -p $O/prof-$size
    t=$(date +%s.%N)
    (PROBE9_DIR=$O/prof-$size PYTHONPATH=$PWD/tests/benchmarks/verdicts/probe9:$PWD timeout 120 python3 $S --size $size \
       $ARGS --json-out $O/prof-$size.json 2>&1 | python3 -c "$TS") > $O/wall-prof-$size.txt
    echo "prof $size: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
  fi
  for k in 1 2; do
    t=$(date +%s.%N)
    (timeout 120 python3 $S --size $size $ARGS --json-out $O/plain$k-$size.json 2>&1 | python3 -c "$TS") > $O/wall-plain$k-$size.txt
    echo "plain$k $size: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
  done
done
python3 tests/benchmarks/verdicts/probe9/summary.py $O/prof-1MiB > $O/summary-1MiB.txt 2>&1
rm -f $O/prof-1MiB/*.prof
head -40 $O/summary-1MiB.txt
[ -n "${GPU_TESTS-1}" ] && PRIMBENCH_GPU_OUT=$O/gpu timeout 240 python3 -m pytest -m gpu tests --continue-on-collection-errors -q -p no:cacheprovider \
  > $O/gpu-tests.log 2>&1; tail -3 $O/gpu-tests.log 2>/dev/null
cd $OUT && tar czf p10.tgz p10 && rm -rf p10 && ls -la
