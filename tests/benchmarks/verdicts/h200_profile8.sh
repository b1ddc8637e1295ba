# Where one --processes worker's turn goes beyond its rounds (h200_probe8.sh: a worker's turn takes
# 0.41 s a specialization for a 0.25 s share): one process with a worker's settings (8 rounds, a
# quarter of the default --min-secs, 0.5 ms batches), the seventh evaluation's suite at 1 MiB, under
# cProfile; the profile's top entries by cumulative and own time. Packed into $OUT/prof8.tgz.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=probe8 PRIMBENCH_COMMIT=$(cat .eval_commit)
S=tests/benchmarks/verdicts/eval_suite7.py
O=$OUT/prof8; mkdir -p $O
for i in 1 2; do
  /usr/bin/time -v python3 -m cProfile -o $O/worker-$i.prof $S --size 1MiB --rounds 8 --min-secs 0.25 \
    --min-gpu-ms-per-batch 0.5 --output-batches --json-out $O/worker-$i.json > $O/worker-$i.log 2> $O/worker-$i.time
  python3 -c "
import pstats, sys
p = pstats.Stats('$O/worker-$i.prof', stream=sys.stdout)
p.sort_stats('cumulative').print_stats(60)
p.sort_stats('tottime').print_stats(40)" > $O/worker-$i-profile.txt
done
# the same settings, no profiler, timed: the wall a worker's turn would take
for i in 1 2; do
  /usr/bin/time -f "%e s wall %U user %S sys" python3 $S --size 1MiB --rounds 8 --min-secs 0.25 \
    --min-gpu-ms-per-batch 0.5 --json-out $O/plain-$i.json > $O/plain-$i.log 2>&1; tail -1 $O/plain-$i.log
done
cd $OUT && tar czf prof8.tgz prof8 && rm -rf prof8 && ls -la
