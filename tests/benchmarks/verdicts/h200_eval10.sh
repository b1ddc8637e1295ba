# The tenth evaluation (eval10-plan.md): eval_suite10.py at ${SIZES} as `--processes 16 --rounds 4 --min-secs 0.5`
# (p16r4) and, with ALT=1, `--processes 16` (p16, the ninth's protocol) run by run after it (collect.py
# --alt-out), 7 A/A and 3 planted runs (AA, PLANTED), each planted run slowing three kernels by 1, 2 and 5 %
# from the 3k-th. One size a device call, everything packed into $OUT/e10-SIZE.tgz. As h200_eval9.sh: the
# bytecode cache on (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE cleared; the environment recorded).
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
O=$OUT/e10; mkdir -p $O/p16r4 $O/p16
{ env | grep -i '^python' ; python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)"; } > $O/env-before-$SIZES.txt 2>&1
unset PYTHONDONTWRITEBYTECODE
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PYTHONPATH=$PWD PRIMBENCH_COMMIT=$(cat .eval_commit) EVAL_COMMIT=$(cat .eval_commit)
python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)" > $O/env-after-$SIZES.txt 2>&1
S=tests/benchmarks/verdicts/eval_suite10.py
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $O/gpu-$SIZES.txt
timeout 120 python3 $S --size $SIZES --rounds 1 --min-secs 0.05 --json-out $O/smoke-$SIZES.json > $O/smoke-$SIZES.log 2>&1
echo "smoke $SIZES exit $?"
SMOKE_FILE=$O/smoke-$SIZES.json python3 - <<'PY'
import json, os
d = json.load(open(os.environ["SMOKE_FILE"]))
bad = [s["name"] for s in d["specializations"] if s.get("error")]
print("smoke failures:", bad, [s.get("error") for s in d["specializations"] if s.get("error")])
print("per call (us):", [round(s["gpu_seconds_per_call"] * 1e6, 1) for s in d["specializations"] if not s.get("error")])
PY
timeout ${BUDGET:-470} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16r4 \
  --aa ${AA:-7} --planted ${PLANTED:-3} --plant-fractions 0.01,0.02,0.05 --plant-step 3 \
  --suite-args=--processes=16,--rounds=4,--min-secs=0.5 ${ALT:+--alt-out $O/p16 --alt-suite-args=--processes=16} \
  2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e10-$SIZES.tgz e10 && rm -rf e10 && ls -la
