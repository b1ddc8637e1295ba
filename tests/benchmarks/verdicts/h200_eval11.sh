# The eleventh evaluation (eval11-plan.md): eval_suite11.py (24 specializations) at ${SIZES} as
# `--processes 16 --rounds 4 --min-secs 0.5` (p16r4), 7 A/A and 3 planted runs (AA, PLANTED), each planted run
# slowing nine of the 24 kernels by 1, 2 and 5 % (three each) from the 8k-th. One size a device call, everything
# packed into $OUT/e11-SIZE.tgz. As h200_eval10.sh: the bytecode cache on (h200_prelude.sh).
set -u
O=$OUT/e11 S=tests/benchmarks/verdicts/eval_suite11.py
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/p16r4
timeout ${BUDGET:-500} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16r4 \
  --aa ${AA:-7} --planted ${PLANTED:-3} --plant-fractions 0.01,0.02,0.05,0.01,0.02,0.05,0.01,0.02,0.05 \
  --plant-step 8 --suite-args=--processes=16,--rounds=4,--min-secs=0.5 2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e11-$SIZES.tgz e11 && rm -rf e11 && ls -la
