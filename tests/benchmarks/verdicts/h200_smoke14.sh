# The fourteenth suite's first contact with a GPU, before its plan (eval14-plan.md) is written: a one-process
# smoke run of eval_suite14.py at each of the four sizes (h200_prelude.sh's smoke: failures and times per call),
# so that the plan can drop a kind that fails before any evaluation run. No evaluation data; packed into
# $OUT/smoke14.tgz.
set -u
mkdir -p $OUT/smoke14; O=$OUT/smoke14 S=tests/benchmarks/verdicts/eval_suite14.py
for SIZES in 4MiB 1MiB 64MiB 64KiB; do
  . tests/benchmarks/verdicts/h200_prelude.sh
done 2>&1 | tee $O-console.txt
mv $O-console.txt $O/console.txt
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
cd $OUT && tar czf smoke14.tgz smoke14 && rm -rf smoke14
