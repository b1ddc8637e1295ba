# The ninth pilot (in sample: the eighth evaluation's suite, whose files are read). After probe9
# (a worker's turn now ends when its file is written; the exits come after the last turn):
# `--processes 8` (8 rounds of 0.5 ms batches a worker) against `--processes 16` with batches of at
# least 0.25 ms (8 rounds a worker, each a sixteenth of --min-secs: a round's three batches must fit
# its halved share), alternating: 4 runs each at 1 MiB, 2 each at 64 KiB. Bytecode: the lent
# machine's environment is checked and PYTHONDONTWRITEBYTECODE cleared, so that a worker's imports
# read a cache as a user's do (probe9: every worker compiled 2,014 sources, 3.5-5 s). Each output
# line stamped with seconds since its run began. Everything is packed into $OUT/t9.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
O=$OUT/t9; mkdir -p $O
{ env | grep -i '^python' ; python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)"; } > $O/env-before.txt 2>&1
unset PYTHONDONTWRITEBYTECODE
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PRIMBENCH_BRANCH=tune9 PRIMBENCH_COMMIT=$(cat .eval_commit)
python3 -c "import sys; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)" > $O/env-after.txt 2>&1
S=tests/benchmarks/verdicts/eval_suite8.py
nvidia-smi --query-gpu=uuid,name,clocks.sm --format=csv > $O/gpu.txt
# one short run of every kernel in one process: every module a worker imports is compiled once here
PYTHONPATH=$PWD python3 $S --size 64KiB --rounds 1 --min-secs 0.05 --json-out $O/warm.json > $O/warm.log 2>&1
python3 - >> $O/env-after.txt 2>&1 <<'PY'
import os
n = sum(len(f) for _, _, f in os.walk("/tmp/pycache"))
print("bytecode files in /tmp/pycache after the warm run:", n)
PY
T0=$(date +%s.%N)
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
one() {  # one LABEL SIZE ARGS...
  local label=$1 size=$2; shift 2
  local t=$(date +%s.%N)
  (PYTHONPATH=$PWD timeout 150 python3 $S --size $size "$@" --json-out $O/$label.json 2>&1 | python3 -c "$TS") > $O/wall-$label.txt
  echo "$(python3 -c "print(round($t-$T0,1))") s: $label: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
}
for i in 1 2 3 4; do
  one p8-1MiB-$i 1MiB --processes 8
  one p16-1MiB-$i 1MiB --processes 16 --min-gpu-ms-per-batch 0.25
done
for i in 1 2; do
  one p8-64KiB-$i 64KiB --processes 8
  one p16-64KiB-$i 64KiB --processes 16 --min-gpu-ms-per-batch 0.25
done
cd $OUT && tar czf t9.tgz t9 && rm -rf t9 && ls -la
