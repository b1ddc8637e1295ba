# The fourteenth evaluation (eval14-plan.md): eval_suite14.py (24 specializations) at ${SIZES}, each label two
# runs of DESIGN back to back (DESIGNx2/SIZE/LABEL-p1.json, -p2.json): p8r2 (`--processes 8 --rounds 2
# --min-secs 0.25`) or p16r2 (`--processes 16 --rounds 2 --min-secs 0.2`), as probe15.txt names it; AA A/A and
# PLANTED planted labels (default 8 and 3), each planted label slowing nine of the 24 kernels by 1, 2 and 5 % (three
# each) from the 8k-th. Packed into $OUT/e14-SIZE.tgz.
set -u
case ${DESIGN:?DESIGN=p8r2 or p16r2} in
  p8r2) A=--processes=8,--rounds=2,--min-secs=0.25 ;;
  p16r2) A=--processes=16,--rounds=2,--min-secs=0.2 ;;
  *) echo "unknown DESIGN $DESIGN"; exit 2 ;;
esac
O=$OUT/e14 S=tests/benchmarks/verdicts/eval_suite14.py
. tests/benchmarks/verdicts/h200_prelude.sh
mkdir -p $O/${DESIGN}x2
timeout ${BUDGET:-450} python3 tests/benchmarks/verdicts/collect.py --suite $S --sizes $SIZES \
  --out $O/${DESIGN}x2 --suite-args=$A --resume --processes 2 --aa ${AA:-8} --planted ${PLANTED:-3} \
  --plant-fractions 0.01,0.02,0.05,0.01,0.02,0.05,0.01,0.02,0.05 --plant-step 8 2>&1 | tail -30
pkill -f "$(basename $S) --size"; sleep 2
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cd $OUT && tar czf e14-$SIZES.tgz e14 && rm -rf e14 && ls -la
