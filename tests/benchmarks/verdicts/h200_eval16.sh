# The sixteenth evaluation (eval16-plan.md): eval_suite16.py (24 specializations) at ${SIZES}, each label one
# command with no option of the protocol (the default, `primbench.settings.DEFAULT_DESIGN`: --processes 8 --runs 2
# --rounds 2 --min-secs 0.25), SIZE/LABEL.json; AA A/A and PLANTED planted labels (default 8 and 3), each planted
# label slowing nine of the 24 kernels by 1, 2 and 5 % (three each) from the 8k-th. The plan's guard: no label is
# collected where the smoke run shows a call above 20 ms. Packed into $OUT/e16-SIZE.tgz.
set -u
O=$OUT/e16 S=tests/benchmarks/verdicts/eval_suite16.py
. tests/benchmarks/verdicts/h200_prelude.sh
unset PRIMBENCH_DESIGN
if SMOKE_FILE=$O/smoke-$SIZES.json python3 - <<'PY'
import json, os, sys
d = json.load(open(os.environ["SMOKE_FILE"]))
slow = [(s["name"], s["gpu_seconds_per_call"]) for s in d["specializations"]
        if not s.get("error") and s.get("gpu_seconds_per_call", 0) > 0.02]
print("guard: calls above 20 ms:", slow)
sys.exit(3 if slow else 0)
PY
then
  mkdir -p $O/default
  timeout ${BUDGET:-540} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES \
    --out $O/default --resume --aa ${AA:-8} --planted ${PLANTED:-3} \
    --plant-fractions 0.01,0.02,0.05,0.01,0.02,0.05,0.01,0.02,0.05 --plant-step 8 2>&1 | tail -30
  pkill -f "$(basename $S) --size"; sleep 2
else
  echo "guard: no label collected at $SIZES (eval16-plan.md)" | tee $O/guard-$SIZES.txt
fi
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cd $OUT && tar czf e16-$SIZES.tgz e16 && rm -rf e16 && ls -la
