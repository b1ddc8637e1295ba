# The wall time of `primbench run --processes 4` before and after the workers prime every
# specialization before their turn (primbench.executor.Executor._prime), on one GPU, alternating:
# main at 8bca0be (carried as .old/primbench) and this checkout; then one default single-process
# run. Each output line stamped with seconds since its run began. Files: $OUT/wall7-*.txt.
set -u
python3 -m pip install -q --no-index --no-deps .whl/msgspec*.whl 2>&1 | tail -1
S=tests/benchmarks/verdicts/eval_suite5.py
export PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=wall PRIMBENCH_COMMIT=$(cat .eval_commit)
TS='import sys,time; t=time.time(); [print(f"{time.time()-t:7.2f} {l}", end="", flush=True) for l in sys.stdin]'
nvidia-smi --query-gpu=uuid,name --format=csv > $OUT/gpu.txt
one() {  # one() LABEL PYTHONPATH ARGS...
  local label=$1 path=$2; shift 2
  (PYTHONPATH=$path python3 $S --size 1MiB "$@" --json-out /tmp/$label.json 2>&1 | python3 -c "$TS") > $OUT/wall7-$label.txt
  echo "$label: $(tail -2 $OUT/wall7-$label.txt | head -1)"
}
one new-1 $PWD --processes 4
one old-1 $PWD/.old:$PWD --processes 4
one new-2 $PWD --processes 4

one default $PWD
python3 - <<'PY' > $OUT/wall7-summary.txt
import json, math, statistics
for label in ("new-1", "old-1", "new-2", "default"):
    d = json.load(open(f"/tmp/{label}.json"))
    specs = d["specializations"]
    print(label, "host", round(d["summary"]["elapsed_secs"]["host"], 2), "s;",
          "; ".join(f"{s['name'].split(',')[0][4:]} {s['gpu_seconds_per_call']*1e6:.2f} us" for s in specs if not s.get("error")))
PY
cat $OUT/wall7-summary.txt
