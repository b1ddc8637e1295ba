# The twelfth evaluation (eval12-plan.md): eval_suite12.py (24 specializations) at ${SIZES}, each label two
# `--processes 16 --rounds 4 --min-secs 0.5` runs back to back (p16r4x2/SIZE/LABEL-p1.json, -p2.json) and then two
# `--processes 8 --rounds 4 --min-secs 0.25` runs (p8r4x2), 7 A/A and 3 planted labels (AA, PLANTED), each planted
# label slowing nine of the 24 kernels by 1, 2 and 5 % (three each) from the 8k-th. A size takes about two calls,
# and collect.py --resume goes on where a call's budget cut it. $OUT is new each call, so the first call's files
# travel back with the checkout: `mkdir -p e12-resume && tar xzf e12-SIZE.tgz -C e12-resume` at the checkout's root
# (ignored by git: name it in the device tool's carry, beside .whl and .eval_commit), then RESUME_FROM=e12-resume/e12
# on the next call, which copies them into $OUT before it collects. Everything is packed into $OUT/e12-SIZE.tgz. As
# h200_eval11.sh: the bytecode cache on (h200_prelude.sh).
# FIRST=1 (the plan's amendment): one p16r4 file a label (p16r4/SIZE/LABEL-p1.json), then the two p8r4 files.
set -u
O=$OUT/e12 S=tests/benchmarks/verdicts/eval_suite12.py
. tests/benchmarks/verdicts/h200_prelude.sh
P16=p16r4x2; [ "${FIRST:-2}" = 1 ] && P16=p16r4
mkdir -p $O/$P16 $O/p8r4x2
if [ -n "${RESUME_FROM:-}" ] && [ -d "$RESUME_FROM" ]; then cp -r "$RESUME_FROM"/. $O/; fi
# ONLY=p8r4x2 (the plan's second amendment): the two p8r4 files a label alone, no p16r4 file.
if [ "${ONLY:-}" = p8r4x2 ]; then
  PROTOCOLS=(--out $O/p8r4x2 --first-processes 2 --suite-args=--processes=8,--rounds=4,--min-secs=0.25)
else
  PROTOCOLS=(--out $O/$P16 --first-processes ${FIRST:-2} --suite-args=--processes=16,--rounds=4,--min-secs=0.5
             --alt-out $O/p8r4x2 --alt-suite-args=--processes=8,--rounds=4,--min-secs=0.25)
fi
timeout ${BUDGET:-540} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES "${PROTOCOLS[@]}" \
  --resume --processes 2 --aa ${AA:-7} --planted ${PLANTED:-3} \
  --plant-fractions 0.01,0.02,0.05,0.01,0.02,0.05,0.01,0.02,0.05 --plant-step 8 2>&1 | tail -40
pkill -f "$(basename $S) --size"; sleep 2
cd $OUT && tar czf e12-$SIZES.tgz e12 && rm -rf e12 && ls -la
