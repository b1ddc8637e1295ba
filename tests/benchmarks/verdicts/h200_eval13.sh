# The thirteenth evaluation (eval13-plan.md): eval_suite13.py (24 specializations) at ${SIZES}, each label two
# `--processes 8 --rounds 2 --min-secs 0.25` runs back to back (p8r2x2/SIZE/LABEL-p1.json, -p2.json), AA A/A and
# PLANTED planted labels (default 8 and 3), each planted label slowing nine of the 24 kernels by 1, 2 and 5 %
# (three each) from the 8k-th. Everything is packed into $OUT/e13-SIZE.tgz (one file comes back whole; the device
# returns a limited count of files). As h200_eval12.sh: the bytecode cache on (h200_prelude.sh).
set -u
O=$OUT/e13 S=tests/benchmarks/verdicts/eval_suite13.py
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/p8r2x2
timeout ${BUDGET:-450} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES \
  --out $O/p8r2x2 --first-processes 2 --suite-args=--processes=8,--rounds=2,--min-secs=0.25 \
  --resume --processes 2 --aa ${AA:-8} --planted ${PLANTED:-3} \
  --plant-fractions 0.01,0.02,0.05,0.01,0.02,0.05,0.01,0.02,0.05 --plant-step 8 2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cd $OUT && tar czf e13-$SIZES.tgz e13 && rm -rf e13 && ls -la
