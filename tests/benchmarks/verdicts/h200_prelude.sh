# What every evaluation call since the ninth does before it collects, sourced with O (the output folder),
# S (the suite) and SIZES set: msgspec from the carried wheel; the environment recorded before and after
# PYTHONPYCACHEPREFIX is set and PYTHONDONTWRITEBYTECODE cleared (the workers read a bytecode cache as a user's
# Python does, h200/probe9/README.md); the GPU's state; a one-process smoke run of the suite (which fills the
# cache) and its failures and times per call.
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
mkdir -p $O
{ env | grep -i '^python' ; python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)"; } > $O/env-before-$SIZES.txt 2>&1
unset PYTHONDONTWRITEBYTECODE
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PYTHONPATH=$PWD PRIMBENCH_COMMIT=$(cat .eval_commit) EVAL_COMMIT=$(cat .eval_commit)
python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)" > $O/env-after-$SIZES.txt 2>&1
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
