# A pilot of the twelfth evaluation's suite and amended protocol, not evaluation data (eval12-plan.md): the smoke
# run (eval_suite12.py's first contact with a GPU, h200_prelude.sh), then two A/A labels at ${SIZES:-4MiB}, each one
# `--processes 16 --rounds 4 --min-secs 0.5` file (p16r4/) and two `--processes 8 --rounds 4 --min-secs 0.25`
# files (p8r4x2/): whether every kind runs, and the wall a specialization of each design (collect.log). No planted
# label and no compare: nothing here is read by evaluate12.py, and the evaluation's files are measured anew.
set -u
SIZES=${SIZES:-4MiB} O=$OUT/pilot12 S=tests/benchmarks/verdicts/eval_suite12.py
. tests/benchmarks/verdicts/h200_prelude.sh
timeout ${BUDGET:-300} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES --out $O/p16r4 \
  --processes 2 --first-processes 1 --aa 2 --planted 0 \
  --suite-args=--processes=16,--rounds=4,--min-secs=0.5 \
  --alt-out $O/p8r4x2 --alt-suite-args=--processes=8,--rounds=4,--min-secs=0.25 2>&1 | tail -20
pkill -f "$(basename $S) --size"; sleep 1
cat $O/smoke-$SIZES.log | tail -5; ls -la $O
