# The eighth pilot (one device call): what sets a run's SM clock regime (clock_probe.py), and where
# a `--processes 4` run's wall time goes per specialization (the seventh evaluation's suite at 1 MiB,
# all 8 specializations against 2, so the fixed cost and the cost a specialization adds come apart).
# Every output is packed into $OUT/p8.tgz (the device returns at most 8 files).
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=probe8 PRIMBENCH_COMMIT=$(cat .eval_commit)
P=tests/benchmarks/verdicts/clock_probe.py
O=$OUT/p8; mkdir -p $O
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,persistence_mode --format=csv > $O/gpu.txt
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER > $O/smi-start.txt 2>&1
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 )) s: $*" | tee -a $O/steps.txt; }
stamp "A: 12 fresh processes, one after another"
for i in $(seq 12); do timeout 60 python3 $P proc --label A$i >> $O/A.jsonl 2>>$O/err.txt; done
stamp "B: 10 fresh processes, 3 s idle before each"
for i in $(seq 10); do sleep 3; timeout 60 python3 $P proc --label B$i >> $O/B.jsonl 2>>$O/err.txt; done
stamp "C: a keeper process holds a context; 10 fresh processes one after another"
python3 $P keeper 2>>$O/err.txt & K=$!; sleep 3
for i in $(seq 10); do timeout 60 python3 $P proc --label C$i >> $O/C.jsonl 2>>$O/err.txt; done
kill $K; wait $K 2>/dev/null; sleep 1
stamp "D: one process, bursts after 0 / 0.3 / 1 / 3 s idle, 4 times"
timeout 120 python3 $P inproc --label D --gaps 0,0.3,1,3 --repeat 4 > $O/D.jsonl 2>>$O/err.txt
stamp "E: wall time, eval_suite7 at 1 MiB, --processes 4: all 8 against 2 specializations, alternating"
S=tests/benchmarks/verdicts/eval_suite7.py
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
one() {  # one LABEL ARGS...
  local label=$1; shift
  local t=$(date +%s.%N)
  (timeout 120 python3 $S --size 1MiB "$@" --json-out $O/$label.json 2>&1 | python3 -c "$TS") > $O/wall-$label.txt
  stamp "$label: $(python3 -c "import time; print(round(time.time()-$t, 2))") s wall"
}
one p4-all-1 --processes 4
one p4-two-1 --processes 4 --filter 'crc32|dgemm'
one p4-all-2 --processes 4
one p4-two-2 --processes 4 --filter 'crc32|dgemm'
one p1-all
one p1-two --filter 'crc32|dgemm'
stamp "F: 12 more fresh processes, one after another (the regimes after the runs)"
for i in $(seq 12); do timeout 60 python3 $P proc --label F$i >> $O/F.jsonl 2>>$O/err.txt; done
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER > $O/smi-end.txt 2>&1
stamp done
cd $OUT && tar czf p8.tgz p8 && rm -rf p8 && ls -la
