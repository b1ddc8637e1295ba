# The ninth evaluation (eval9-plan.md): eval_suite9.py at ${SIZES} as `--processes 16` and `--processes 8`
# runs interleaved run by run (collect.py --alt-out; ALT_P8=1, else 16 workers alone), 7 A/A and 3 planted
# runs of each protocol (AA, PLANTED), one size a device call. PYTHONPYCACHEPREFIX set and PYTHONDONTWRITEBYTECODE cleared (the environment recorded before
# and after), so that the workers read a bytecode cache as a user's Python does (h200/probe9/README.md); the
# smoke run (one process) fills it. Everything is packed into $OUT/e9.tgz.
set -u
O=$OUT/e9 S=tests/benchmarks/verdicts/eval_suite9.py
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/p16 $O/p8
timeout ${BUDGET:-470} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16 --aa ${AA:-7} \
  --planted ${PLANTED:-3} --suite-args=--processes=16 ${ALT_P8:+--alt-out $O/p8 --alt-suite-args=--processes=8} 2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e9.tgz e9 && rm -rf e9 && ls -la
