# The wall of a `--processes 16` run as its suite grows (after the tenth evaluation and 68be21b (the run ends
# without waiting for its released workers' exits); no verdict is read from these files): wall_suite.py at 1 MiB
# with the tenth suite's 8 kernels, the ninth's and tenth's 16, and the eighth's to tenth's 24, each as
# `--processes 16 --rounds 4 --min-secs 0.5` (p16r4) and `--processes 16` (p16), REPS times (default 2), every
# output line stamped with seconds since the run began. The bytecode cache on (h200_prelude.sh, whose smoke run
# of all 24 kernels fills it). Everything is packed into $OUT/w11.tgz. About 330 s.
set -u
O=$OUT/w11 S=tests/benchmarks/verdicts/wall_suite.py SIZES=1MiB
export WALL_SUITES=8,9,10
. tests/benchmarks/verdicts/h200_prelude.sh
export PRIMBENCH_BRANCH=wall11
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
for rep in $(seq 1 ${REPS:-2}); do
  for suites in 10 9,10 8,9,10; do
    for proto in p16r4 p16; do
      args="--processes 16"; [ $proto = p16r4 ] && args="$args --rounds 4 --min-secs 0.5"
      name=$proto-$(echo $suites | tr -d ,)-$rep
      t=$(date +%s.%N)
      (set -o pipefail; WALL_SUITES=$suites timeout 150 python3 $S --size $SIZES $args --json-out $O/$name.json 2>&1 \
         | python3 -c "$TS") > $O/wall-$name.txt
      rc=$?
      echo "$name: $(echo $suites | tr , '\n' | wc -l) suites, exit $rc, $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
    done
  done
done
cd $OUT && tar czf w11.tgz w11 && rm -rf w11 && ls -la
