# Why short kernels' batches scatter 5-7 % (every round on the noise timeout) in data2 but 0.1 % in
# data (a9c1633): the same suite-2 kernels under this commit's harness and under a9c1633's (carried
# in .dev/a9c1633), with batches written; the harness without monitoring; suite 1's short kernels.
# Also the third suite's smoke run. Output: $OUT/diag3.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PRIMBENCH_COMMIT=$(cat .eval_commit)
V=tests/benchmarks/verdicts
D=$OUT/diag3; mkdir -p $D
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $D/gpu.txt
nvidia-smi -q -d PERFORMANCE >> $D/gpu.txt 2>&1
F='stencil|bmm|randn|argmax|conv2d'
step() { name=$1; shift; t0=$(date +%s.%N); timeout 120 "$@" > $D/$name.log 2>&1; rc=$?; echo "$name: exit $rc, wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"; }
PYTHONPATH=$PWD step smoke3 python3 $V/eval_suite3.py --size 64KiB --rounds 1 --min-secs 0.05 --json-out $D/smoke3.json
PYTHONPATH=$PWD step head-s2 python3 $V/eval_suite2.py --size 4MiB --filter "$F" --output-batches --json-out $D/head-s2.json
PYTHONPATH=$PWD/.dev/a9c1633 step old-s2 python3 $V/eval_suite2.py --size 4MiB --filter "$F" --output-batches --json-out $D/old-s2.json
PYTHONPATH=$PWD step head-s2-nomon python3 $V/eval_suite2.py --size 4MiB --filter "$F" --output-batches --no-monitoring --json-out $D/head-s2-nomon.json
PYTHONPATH=$PWD step head-s1 python3 $V/eval_suite.py --size 4MiB --filter 'fma|transpose|softmax|sumsq' --output-batches --json-out $D/head-s1.json
python3 - <<'PY'
import json, os, glob
D = os.environ["OUT"] + "/diag3"
for f in sorted(glob.glob(D + "/*.json")):
    d = json.load(open(f))
    bad = [s["name"] for s in d["specializations"] if s.get("error")]
    print(os.path.basename(f), "host %.1f s" % d["summary"]["elapsed_secs"]["host"], "failures:", bad)
    for s in d["specializations"]:
        if s.get("error"): print("   ", s["name"], s["error"][:300]); continue
        r = s.get("rounds") or []
        print("   %-32s %.2f us noise %.2f%% timeouts %d" % (s["name"][:32], s["gpu_seconds_per_call"] * 1e6, s["noise_percent"], sum(x["noise_timeout"] for x in r)))
PY
cd $OUT && tar czf diag3.tgz diag3 && rm -rf diag3 && ls -la
