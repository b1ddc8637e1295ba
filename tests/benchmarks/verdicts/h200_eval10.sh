# The tenth evaluation (eval10-plan.md): eval_suite10.py at ${SIZES} as `--processes 16 --rounds 4 --min-secs 0.5`
# (p16r4) and, with ALT=1, `--processes 16` (p16, the ninth's protocol) run by run after it (collect.py
# --alt-out), 7 A/A and 3 planted runs (AA, PLANTED), each planted run slowing three kernels by 1, 2 and 5 %
# from the 3k-th. One size a device call, everything packed into $OUT/e10-SIZE.tgz. As h200_eval9.sh: the
# bytecode cache on (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE cleared; the environment recorded).
set -u
O=$OUT/e10 S=tests/benchmarks/verdicts/eval_suite10.py
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/p16r4 $O/p16
timeout ${BUDGET:-470} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16r4 \
  --aa ${AA:-7} --planted ${PLANTED:-3} --plant-fractions 0.01,0.02,0.05 --plant-step 3 \
  --suite-args=--processes=16,--rounds=4,--min-secs=0.5 ${ALT:+--alt-out $O/p16 --alt-suite-args=--processes=16} \
  2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e10-$SIZES.tgz e10 && rm -rf e10 && ls -la
