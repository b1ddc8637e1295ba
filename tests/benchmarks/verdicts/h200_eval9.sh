# The ninth evaluation (eval9-plan.md): eval_suite9.py at ${SIZES} as `--processes 16` and `--processes 8`
# runs interleaved run by run (collect.py --alt-out; ALT_P8=1, else 16 workers alone), 7 A/A and 3 planted
# runs of each protocol (AA, PLANTED), one size a device call. PYTHONPYCACHEPREFIX set and PYTHONDONTWRITEBYTECODE cleared (the environment recorded before
# and after), so that the workers read a bytecode cache as a user's Python does (h200/probe9/README.md); the
# smoke run (one process) fills it. Everything is packed into $OUT/e9.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
O=$OUT/e9; mkdir -p $O/p16 $O/p8
{ env | grep -i '^python' ; python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)"; } > $O/env-before-$SIZES.txt 2>&1
unset PYTHONDONTWRITEBYTECODE
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PYTHONPATH=$PWD PRIMBENCH_COMMIT=$(cat .eval_commit) EVAL_COMMIT=$(cat .eval_commit)
python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)" > $O/env-after-$SIZES.txt 2>&1
S=tests/benchmarks/verdicts/eval_suite9.py
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
python3 -c "import os; print('bytecode files in /tmp/pycache:', sum(len(f) for _, _, f in os.walk('/tmp/pycache')))" >> $O/env-after-$SIZES.txt
timeout ${BUDGET:-470} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16 --aa ${AA:-7} \
  --planted ${PLANTED:-3} --suite-args=--processes=16 ${ALT_P8:+--alt-out $O/p8 --alt-suite-args=--processes=8} 2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e9.tgz e9 && rm -rf e9 && ls -la
