set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
SUITE=${SUITE:-tests/benchmarks/verdicts/eval_suite2.py}
export PYTHONPATH=$PWD PRIMBENCH_COMMIT=$(cat .eval_commit) EVAL_COMMIT=$(cat .eval_commit)
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $OUT/gpu.txt
nvidia-smi -q -d PERFORMANCE >> $OUT/gpu.txt 2>&1
mkdir -p $OUT/e2
# a folder of earlier processes to resume from (--resume keeps the whole ones)
[ -n "${RESUME:-}" ] && cp -r $RESUME/. $OUT/e2/
if [ "${SMOKE:-1}" = 1 ]; then
for s in ${SMOKE_SIZES:-64KiB}; do  # one short round of every kernel at each size
timeout 90 python3 $SUITE --size $s --rounds 1 --min-secs 0.05 --json-out $OUT/e2/smoke-$s.json > $OUT/e2/smoke-$s.log 2>&1; echo "smoke $s exit $?"
SMOKE_FILE=$OUT/e2/smoke-$s.json python3 - <<'PY'
import json,os
d=json.load(open(os.environ["SMOKE_FILE"]))
bad=[s["name"] for s in d["specializations"] if s.get("error")]
print("smoke failures:", bad, [s.get("error") for s in d["specializations"] if s.get("error")])
print("per call (us):", [round(s["gpu_seconds_per_call"]*1e6, 1) for s in d["specializations"] if not s.get("error")])
raise SystemExit(1 if bad else 0)
PY
[ $? = 0 ] || SMOKE_FAILED=1
done
fi
[ -z "${SMOKE_FAILED:-}" ] && [ "${BUDGET:-520}" -gt 0 ] && timeout ${BUDGET:-520} python3 tests/benchmarks/verdicts/collect.py --suite $SUITE --sizes ${SIZES:-64MiB,4MiB} --out $OUT/e2 ${RESUME:+--resume} ${COLLECT_ARGS:+$COLLECT_ARGS} 2>&1 | tail -30
pkill -f "$(basename $SUITE) --size"; sleep 2  # the suite processes only (the calling command line may name the suite too)
if [ -n "${GPU_TESTS:-}" ]; then  # the gpu-marked tests, the time left (DuckDB is not carried)
(PRIMBENCH_GPU_OUT=$OUT/e2/gpu_out timeout $GPU_TESTS python3 -m pytest -q -m gpu -p no:cacheprovider tests \
  --continue-on-collection-errors > $OUT/e2/gpu-tests.log 2>&1; echo "gpu tests exit $?" >> $OUT/e2/gpu-tests.log)
tail -3 $OUT/e2/gpu-tests.log
fi
cd $OUT && tar czf e2.tgz e2 && rm -rf e2 && ls -la
