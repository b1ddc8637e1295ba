# The ninth probe (in sample: the eighth evaluation's suite, whose files are read): where a
# `--processes 8` run's wall goes. Per size (64 KiB, 1 MiB, 64 MiB): one run with every worker under
# cProfile (probe9/sitecustomize.py: from interpreter start to exit), then one run without, each
# output line stamped with seconds since the run began. probe9/summary.py prints, per worker, its start
# (imports, device, priming), its wait and its turn, and what its rounds spend outside their measured
# share. PYTHONPYCACHEPREFIX as in the eighth evaluation. Everything is packed into $OUT/p9.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache PRIMBENCH_BRANCH=probe9 PRIMBENCH_COMMIT=$(cat .eval_commit)
S=tests/benchmarks/verdicts/eval_suite8.py
O=$OUT/p9; mkdir -p $O
nvidia-smi --query-gpu=uuid,name,clocks.sm --format=csv > $O/gpu.txt
python3 -c "import torch, triton, cupy, cupyx.scipy.special, numpy, scipy" 2>/dev/null  # fills the bytecode cache
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
for size in 1MiB 64KiB 64MiB; do
  mkdir -p $O/prof-$size
  t=$(date +%s.%N)
  (PROBE9_DIR=$O/prof-$size PYTHONPATH=$PWD/tests/benchmarks/verdicts/probe9:$PWD timeout 150 python3 $S --size $size \
     --processes 8 --json-out $O/prof-$size.json 2>&1 | python3 -c "$TS") > $O/wall-prof-$size.txt
  echo "prof $size: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
  t=$(date +%s.%N)
  (PYTHONPATH=$PWD timeout 150 python3 $S --size $size --processes 8 --json-out $O/plain-$size.json 2>&1 \
     | python3 -c "$TS") > $O/wall-plain-$size.txt
  echo "plain $size: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall" | tee -a $O/steps.txt
  python3 tests/benchmarks/verdicts/probe9/summary.py $O/prof-$size > $O/summary-$size.txt 2>&1
  rm -f $O/prof-$size/*.prof.keep
done
head -60 $O/summary-1MiB.txt
cd $OUT && tar czf p9.tgz p9 && rm -rf p9 && ls -la
