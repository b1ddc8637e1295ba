# One device call: probe16 (h200_probe16.sh, BUDGET and PAIRS as given), then the GPU tests
# (`pytest -m gpu`, files into $OUT/gpu-tests/), so a warm machine serves both. Packed into $OUT/probe16.tgz
# and $OUT/gpu-tests.tgz.
set -u
bash tests/benchmarks/verdicts/h200_probe16.sh
c=$(cat .eval_commit 2>/dev/null | cut -c1-7)
G=$OUT/gpu-tests; mkdir -p $G
nvidia-smi > $G/nvidia-smi.txt 2>&1
PRIMBENCH_GPU_OUT=$G timeout ${GPU_TESTS_SECS:-170} python3 -m pytest -m gpu tests --continue-on-collection-errors \
  -p no:cacheprovider -q > $G/$c-gpu-tests.log 2>&1
echo "pytest exit $?" >> $G/$c-gpu-tests.log
tail -5 $G/$c-gpu-tests.log
cd $OUT && tar czf gpu-tests.tgz gpu-tests && rm -rf gpu-tests && ls -la
