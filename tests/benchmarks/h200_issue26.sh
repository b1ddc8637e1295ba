#!/usr/bin/env bash
# Issue 26's GPU evidence in one command (at most about 8 minutes on an H200; no network; the
# history package and DuckDB are not used):
#
#   OUT=/some/dir bash tests/benchmarks/h200_issue26.sh          # on the GPU, from the checkout
#   OUT=/tmp/x    bash tests/benchmarks/h200_issue26.sh --fake   # the same logic on the fake GPU
#
# Writes $OUT/issue26/ (every results file, log, compare output and exit code, steps.log) and
# $OUT/issue26.tar.gz of it. Then, on the development machine:
#
#   python tests/benchmarks/analyze_issue26.py FILES_AT/issue26.tar.gz   # or the issue26/ directory
#
# writes the recorded tables (tests/benchmarks/energy/*.txt, tests/benchmarks/graph/*.txt), the
# raw files under */h200/ and the figures in both READMEs.
#
# Steps, in order (each bounded by `timeout`; a step that would pass the 470 s budget is skipped
# and says so in steps.log; a compare skipped here is recomputed by the analysis): the energy
# counter's resolution; the graph suite, the runtime's capture errors, the CUDA-graph example with
# --graph (10 launches and 1), a synchronizing example with --graph; the energy suite A, B (A/A)
# and C (planted: copy and fma do 10 % more work), compared on --metric energy (and time); the
# energy suite's 128 MiB part hot (the cache clears' share); the GPU tests of the graph column.
set -u
FAKE=0
if [ "${1:-}" = "--fake" ]; then FAKE=1; fi
: "${OUT:?set OUT to the directory the results go to}"
R="$OUT/issue26"
mkdir -p "$R"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=issue-26
# the GPU machine's copy of the checkout may have no .git: pass PRIMBENCH_COMMIT=<hash> then
PRIMBENCH_COMMIT="${PRIMBENCH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
export PRIMBENCH_COMMIT
if [ "$FAKE" = 1 ]; then export PRIMBENCH_FAKE=1; else unset PRIMBENCH_FAKE; fi
PY="${PYTHON:-python3}"
BUDGET="${ISSUE26_BUDGET_SECS:-470}"
# energy: 10 rounds (one warm-up, 9 measured) of about 1.2 s each (at 11 s, some fell under 1 s): a round's window must pass the
# counter's 1 s minimum, and compare needs the rounds' degrees of freedom (the counter moves in
# ~100 ms steps, a few % of a round)
EROUNDS="${ISSUE26_ENERGY_ROUNDS:-10}"
ESECS="${ISSUE26_ENERGY_MIN_SECS:-12}"
START=$(date +%s)
LOG="$R/steps.log"
: > "$LOG"
{
  echo "fake=$FAKE commit=$PRIMBENCH_COMMIT date=$(date -u +%FT%TZ) host=$(hostname)"
  "$PY" -c 'import sys, platform; print("python", platform.python_version())'
  if [ "$FAKE" = 0 ]; then
    nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv 2>&1
    "$PY" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1
  fi
} > "$R/environment.txt"

# step NAME SECS_NEEDED TIMEOUT CMD...: run CMD (stdout+stderr to NAME.log, exit code to NAME.rc)
# unless less than SECS_NEEDED of the budget is left.
step() {
  local name="$1" need="$2" limit="$3"
  shift 3
  local now elapsed t0 rc
  now=$(date +%s)
  elapsed=$((now - START))
  if [ $((elapsed + need)) -gt "$BUDGET" ]; then
    echo "$name: skipped (elapsed ${elapsed} s, needs about ${need} s of ${BUDGET} s)" | tee -a "$LOG"
    echo skipped > "$R/$name.rc"
    return 0
  fi
  # never past the budget by more than 15 s: a run stopped by SIGTERM writes what it finished
  # (NAME.partial.json), which the analysis reads too
  if [ "$limit" -gt $((BUDGET + 15 - elapsed)) ]; then limit=$((BUDGET + 15 - elapsed)); fi
  t0=$(date +%s)
  timeout -s TERM -k 10 "$limit" "$@" > "$R/$name.log" 2>&1
  rc=$?
  echo "$rc" > "$R/$name.rc"
  echo "$name: exit $rc, $(( $(date +%s) - t0 )) s (at ${elapsed} s)" | tee -a "$LOG"
  return 0
}

FAKEFLAG=()
if [ "$FAKE" = 1 ]; then FAKEFLAG=(--fake); fi

# (a) the energy counter's resolution
step counter_resolution 10 60 "$PY" tests/benchmarks/energy/counter_resolution.py --secs 2 \
  --json "$R/counter_resolution.json" ${FAKEFLAG[@]+"${FAKEFLAG[@]}"}

# (f) the CUDA-graph column
step graph_suite 40 120 "$PY" tests/benchmarks/graph/graph_suite.py --json-out "$R/graph_suite.json"
step capture_errors 10 60 "$PY" tests/benchmarks/graph/capture_errors.py --json "$R/capture_errors.json" \
  ${FAKEFLAG[@]+"${FAKEFLAG[@]}"}
if [ "$FAKE" = 0 ]; then  # CuPy programs: not on the fake GPU
  step cuda_graph_10 25 90 "$PY" examples/cuda_graph.py --graph --kernels 10 --json-out "$R/cuda_graph_10.json"
  step cuda_graph_1 25 90 "$PY" examples/cuda_graph.py --graph --kernels 1 --json-out "$R/cuda_graph_1.json"
  step sync_graph 15 60 "$PY" examples/sync_benchmark.py --graph --size 1MiB --json-out "$R/sync_graph.json"
fi

# (b) (c) (d) (e) energy: A and B identical, C planted
ENERGY=("$PY" tests/benchmarks/energy/energy_suite.py --rounds "$EROUNDS" --min-secs "$ESECS" --noise-timeout-secs 40)
# A: all 12 (launches 2 at 128 MiB: twice the work); B and C: the 8 with one launch (compare
# lists A's other 4 as removed, which does not fail)
step energy_a 150 200 "${ENERGY[@]}" --json-out "$R/energy_a.json"
step energy_b 100 150 "${ENERGY[@]}" --filter 'launches: 1' --json-out "$R/energy_b.json"
compare() {  # compare NAME BASE HEAD METRIC
  if [ -f "$R/$2" ] && [ -f "$R/$3" ]; then
    step "$1" 5 60 "$PY" -m primbench compare "$R/$2" "$R/$3" --metric "$4" --max-rows 0 --json "$R/$1.json"
  else
    echo "$1: skipped ($2 or $3 missing)" | tee -a "$LOG"
    echo skipped > "$R/$1.rc"
  fi
}
compare compare_aa_energy energy_a.json energy_b.json energy
compare compare_aa_time energy_a.json energy_b.json time
step energy_c_planted 100 150 env PRIMBENCH_PLANT_PERCENT=10 PRIMBENCH_PLANT_KERNELS=copy,fma \
  "${ENERGY[@]}" --filter 'launches: 1' --json-out "$R/energy_c_planted.json"
compare compare_planted_energy energy_a.json energy_c_planted.json energy
compare compare_planted_energy_b energy_b.json energy_c_planted.json energy
compare compare_planted_time energy_a.json energy_c_planted.json time
# the cache clears' share: the 128 MiB part hot, beside A's cold (lowest priority: skipped when
# the budget is spent)
step energy_hot 55 90 "${ENERGY[@]}" --hot --filter 'size: 128MiB' --rounds 5 --min-secs 6 \
  --json-out "$R/energy_hot.json"

# the GPU tests of the graph column (tests/test_gpu_frameworks.py on the cuda_graph example): last
if [ "$FAKE" = 0 ]; then
  step gpu_tests_graph 30 90 "$PY" -m pytest -q -p no:cacheprovider tests/test_gpu_frameworks.py -k graph
fi

echo "total $(( $(date +%s) - START )) s" | tee -a "$LOG"
tar -czf "$OUT/issue26.tar.gz" -C "$OUT" issue26
echo "wrote $OUT/issue26.tar.gz"
