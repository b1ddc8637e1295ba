# The seventh evaluation's pilot, on the tuning suite (eval_suite5.py, in-sample): one device call.
# 1. The wall time of `primbench run --processes 4` before and after the workers prime every
#    specialization (h200_wall7.sh: main at 8bca0be carried as .old/primbench, this checkout).
# 2. Variance components and round cost for the --processes protocol: workers P and rounds per
#    worker R at the default --min-secs (1 s split over the P*R rounds), 1 MiB, interleaved, two runs
#    of each (P,R), and one of two at 64 MiB. Files: $OUT/pilot7/P{P}R{R}-{size}-{rep}.json + .txt.
set -u
bash tests/benchmarks/verdicts/h200_wall7.sh
S=tests/benchmarks/verdicts/eval_suite5.py
export PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=pilot PRIMBENCH_COMMIT=$(cat .eval_commit)
mkdir -p $OUT/pilot7
pilot() {  # pilot P R SIZE REP
  local f=$OUT/pilot7/P$1R$2-$3-$4 t0=$(date +%s.%N)
  PYTHONPATH=$PWD python3 $S --size $3 --processes $1 --rounds $2 --json-out $f.json > $f.txt 2>&1
  echo "P$1 R$2 $3 rep $4: rc $? wall $(python3 -c "import time;print(round(time.time()-$t0,1))") s"
}
for rep in 1 2; do
  for pr in "4 4" "8 4" "8 8" "4 12"; do pilot $pr 1MiB $rep; done
done
for pr in "4 4" "8 8"; do pilot $pr 64MiB 1; done
