# The thirteenth probe (probe13-plan.md): is the state a whole `--processes` run shares drawn at its start by what
# the run before left on the GPU? eval_suite12.py at ${SIZES:-4MiB}, `--processes 8 --rounds 4 --min-secs 0.25`
# (one p8r4 run, as data12), PAIRS pairs (default 8) alternating: A, right after the run before it (as every
# collection so far ran them), then B, once the GPU lists no compute process (at most 15 s of looking) and 5 s
# more. Each run's start and end, its exit and the GPU's compute processes then go to timeline.txt.
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
mkdir -p $O/A $O/B
end=$((SECONDS + ${BUDGET:-480}))
for k in $(seq 1 ${PAIRS:-8}); do
  [ $SECONDS -lt $((end - 45)) ] || { echo "budget: stopped before pair $k" >> $O/timeline.txt; break; }
  run A $k
  looks=0
  while [ "$(apps)" != 0 ] && [ $looks -lt 30 ]; do sleep 0.5; looks=$((looks + 1)); done
  echo "B $k looked $looks times (0.5 s apart) until no compute process, then 5 s" >> $O/timeline.txt
  sleep 5
  run B $k
done
cat $O/timeline.txt; ls -la $O/A $O/B | head -40
