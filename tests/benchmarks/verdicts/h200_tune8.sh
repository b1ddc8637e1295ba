# The eighth pilot's second call (in sample: the seventh evaluation's suite, whose files are read):
# (1) the wall time of a `--processes 4` run before (2db5c8a, carried as .old/primbench) and after
# the energy counter's reads were dropped from short rounds (ca0f2d3), alternating; (2) at 1 MiB,
# 6 runs of `--processes 4` against 6 of `--processes 8` (the same --min-secs: an 8th of it a
# worker), alternating: each protocol's spread of run means and its wall time. PYTHONPYCACHEPREFIX
# gives the lent machine's read-only site-packages a bytecode cache, as a user's environment has.
# Everything is packed into $OUT/t8.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PRIMBENCH_BRANCH=tune8 PRIMBENCH_COMMIT=$(cat .eval_commit)
S=tests/benchmarks/verdicts/eval_suite7.py
O=$OUT/t8; mkdir -p $O
nvidia-smi --query-gpu=uuid,name --format=csv > $O/gpu.txt
python3 -c "import torch, triton, cupy, cupyx.scipy.special, numpy, scipy" 2>/dev/null  # fills the bytecode cache
T0=$(date +%s.%N)
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
one() {  # one LABEL PYTHONPATH ARGS...
  local label=$1 path=$2; shift 2
  local t=$(date +%s.%N)
  (PYTHONPATH=$path timeout 150 python3 $S --size 1MiB "$@" --json-out $O/$label.json 2>&1 | python3 -c "$TS") > $O/wall-$label.txt
  echo "$(python3 -c "print(round($t-$T0,1))") s: $label: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
}
for i in 1 2; do
  one old-p4-$i $PWD/.old:$PWD --processes 4
  one new-p4-$i $PWD --processes 4
done
for i in 1 2 3 4 5 6; do
  one p4-$i $PWD --processes 4
  one p8-$i $PWD --processes 8
done
cd $OUT && tar czf t8.tgz t8 && rm -rf t8 && ls -la
