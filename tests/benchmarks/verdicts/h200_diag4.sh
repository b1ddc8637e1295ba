# Which monitoring read makes short kernels' batches alternate (h200/diag3: 5-6 % batch noise with
# monitoring, 0.1 % without): each read switched off in turn (diag_patch.py), two short kernels and a
# long one, 3 rounds, 4 MiB; then this commit's harness as it is. Output: $OUT/diag4.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD PRIMBENCH_COMMIT=$(cat .eval_commit)
V=tests/benchmarks/verdicts
D=$OUT/diag4; mkdir -p $D
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $D/gpu.txt
for v in all no-stamp no-reasons no-power no-energy stamp-only all; do
  t0=$(date +%s.%N)
  timeout 100 python3 $V/diag_patch.py $v $V/eval_suite2.py --size 4MiB --rounds 3 --filter 'stencil|bmm|conv2d' --json-out $D/$v.json > $D/$v.log 2>&1
  echo "$v: exit $? wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
  python3 -c "
import json,sys
d=json.load(open('$D/$v.json'))
for s in d['specializations']:
    print('   %-28s %.2f us noise %.2f%% timeouts %d' % (s['name'][:28], s['gpu_seconds_per_call']*1e6, s['noise_percent'], sum(r['noise_timeout'] for r in s['rounds'])))
"
done
cd $OUT && tar czf diag4.tgz diag4 && rm -rf diag4 && ls -la
