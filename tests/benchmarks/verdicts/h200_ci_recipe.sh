# The CI workflow's recipe (examples/ci/benchmarks.yml) end to end on a GPU, and the gpu-marked tests: base and
# head each two `primbench run examples/copy_benchmark.py --processes 8 --rounds 2 --min-secs 0.25` runs, the same
# code both sides (an A/A), then `primbench compare base/ head/` with its exit code, markdown and JSON, timed as
# the workflow would time it (the CLI, imports and workers' start included). Then `pytest -m gpu`. Everything is
# packed into $OUT/ci-recipe.tgz (one file comes back whole).
set -u
O=$OUT/ci-recipe
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
mkdir -p $O/base $O/head
unset PYTHONDONTWRITEBYTECODE
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
C=$(cat .eval_commit)
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $O/gpu.txt
for side in base head; do
  for k in 1 2; do
    s=$(date +%s.%N)
    python3 -m primbench run examples/copy_benchmark.py --processes 8 --rounds 2 --min-secs 0.25 \
      --json-out $O/$side/copy_benchmark-$k.json --branch $side --commit $C --output-batches > $O/$side-$k.log 2>&1
    echo "$side run $k: exit $? wall $(python3 -c "import time; print(round(time.time() - $s, 1))") s" | tee -a $O/timeline.txt
  done
done
python3 -m primbench compare $O/base $O/head --markdown $O/compare.md --json $O/compare.json > $O/compare.txt 2>&1
echo "compare exit $?" | tee -a $O/timeline.txt
tail -5 $O/compare.txt
PRIMBENCH_GPU_OUT=$O/gpu timeout 240 python3 -m pytest -m gpu tests --continue-on-collection-errors -q -p no:cacheprovider \
  > $O/gpu-tests.txt 2>&1; echo "gpu tests exit $?" | tee -a $O/timeline.txt
tail -3 $O/gpu-tests.txt
cd $OUT && tar czf ci-recipe.tgz ci-recipe && rm -rf ci-recipe && ls -la
