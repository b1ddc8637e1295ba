#!/usr/bin/env bash
# Issue 26, "twice the work, twice the joules", with the fixed part subtracted (--energy-baseline,
# results 4.7.0): the energy suite's 128 MiB part (4 kernels, launched once and twice per call),
# cold, in two identical runs (A and B: the tolerance is their A/A difference), and once hot.
#
#   OUT=/some/dir bash tests/benchmarks/energy/h200_net.sh [a|b|hot ...]   # on the GPU, from the checkout
#   OUT=/tmp/x    PRIMBENCH_FAKE=1 bash tests/benchmarks/energy/h200_net.sh # the logic, on the fake GPU
#   python tests/benchmarks/energy/net_energy.py DIR                       # the table, on any machine
#
# 6 rounds of about 1.2 s each (the counter's 1 s minimum, as h200_issue26.sh), each followed by
# 2 s of empty calls; about 20 s per specialization, 8 of them a run.
set -u
: "${OUT:?set OUT to the directory the results go to}"
R="$OUT/energy_net"
mkdir -p "$R"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PRIMBENCH_BRANCH=issue-26
PRIMBENCH_COMMIT="${PRIMBENCH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
export PRIMBENCH_COMMIT
PY="${PYTHON:-python3}"
RUNS=("$@")
if [ ${#RUNS[@]} -eq 0 ]; then RUNS=(a b hot); fi
{
  echo "commit=$PRIMBENCH_COMMIT date=$(date -u +%FT%TZ) host=$(hostname) fake=${PRIMBENCH_FAKE:-0}"
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv 2>&1 || true
} >> "$R/environment.txt"
SUITE=("$PY" tests/benchmarks/energy/energy_suite.py --filter 'size: 128MiB' --energy-baseline
       --rounds 6 --min-secs 7.2 --noise-timeout-secs 30)
for run in "${RUNS[@]}"; do
  extra=()
  if [ "$run" = hot ]; then extra=(--hot); fi
  t0=$(date +%s)
  timeout -s TERM -k 10 290 "${SUITE[@]}" ${extra[@]+"${extra[@]}"} --json-out "$R/net_$run.json" \
    > "$R/net_$run.log" 2>&1
  echo "net_$run: exit $?, $(( $(date +%s) - t0 )) s" | tee -a "$R/steps.log"
done
