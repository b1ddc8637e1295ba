# The thirteenth probe (probe13-plan.md): is the state a whole `--processes` run shares drawn at its start by what
# the run before left on the GPU? eval_suite12.py at ${SIZES:-4MiB}, `--processes 8 --rounds 4 --min-secs 0.25`
# (one p8r4 run, as data12), PAIRS pairs (default 7) alternating: A, right after the run before it (as every
# collection so far ran them), then B, once the GPU lists no compute process (at most 15 s of looking) and 5 s
# more. Each run's start and end, its exit and the GPU's compute processes then go to timeline.txt. Then C:
# PARENTS (default 4) processes that each run the suite twice (same_parent.py), right after the run before.
# Probe data, not an evaluation: nothing here is read by evaluate*.py; probe13.py reads it.
set -u
SIZES=${SIZES:-4MiB} O=$OUT/probe13 S=${SUITE:-tests/benchmarks/verdicts/eval_suite12.py}
. tests/benchmarks/verdicts/h200_prelude.sh
apps() { nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -cE '^ *[0-9]+' ; }
run() {  # CONDITION K
  local f=$O/$1/run-$2
  echo "$1 $2 start $(date +%s.%N) apps $(apps)" >> $O/timeline.txt
  timeout 120 python3 $S --size $SIZES --processes 8 --rounds 4 --min-secs 0.25 --json-out $f.json > $f.log 2>&1
  echo "$1 $2 exit $? end $(date +%s.%N) apps $(apps)" >> $O/timeline.txt
}
# What a run's parent spends before any worker starts (the wall target's fixed part): the program's imports and
# setup, from `--dry` (lists the specializations, runs nothing), twice (the second with warm caches).
for k in 1 2; do
  TIMEFORMAT="dry run $k: %R s wall, %U s user, %S s system"
  { time python3 $S --size $SIZES --dry > $O/dry-$k.log 2>&1 ; } 2>> $O/dry.txt
done
cat $O/dry.txt
mkdir -p $O/A $O/B
end=$((SECONDS + ${BUDGET:-540}))
for k in $(seq 1 ${PAIRS:-7}); do
  [ $SECONDS -lt $((end - 45)) ] || { echo "budget: stopped before pair $k" >> $O/timeline.txt; break; }
  run A $k
  looks=0
  while [ "$(apps)" != 0 ] && [ $looks -lt 30 ]; do sleep 0.5; looks=$((looks + 1)); done
  echo "B $k looked $looks times (0.5 s apart) until no compute process, then 5 s" >> $O/timeline.txt
  sleep 5
  run B $k
done
# C: PARENTS parents (default 4), each one process that runs the suite twice (same_parent.py), right after the
# run before, as A: is the state drawn by the parent (its two runs alike) or by each run's workers?
mkdir -p $O/C
for j in $(seq 1 ${PARENTS:-4}); do
  [ $SECONDS -lt $((end - 40)) ] || { echo "budget: stopped before parent $j" >> $O/timeline.txt; break; }
  echo "C $j start $(date +%s.%N) apps $(apps)" >> $O/timeline.txt
  timeout 150 python3 tests/benchmarks/verdicts/same_parent.py $S $O/C/p$j-r1.json,$O/C/p$j-r2.json \
    --size $SIZES --processes 8 --rounds 4 --min-secs 0.25 > $O/C/p$j.log 2>&1
  echo "C $j exit $? end $(date +%s.%N) apps $(apps)" >> $O/timeline.txt
done
cat $O/timeline.txt; ls -la $O/A $O/B $O/C | head -60
