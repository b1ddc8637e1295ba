#!/usr/bin/env bash
# Issue 27 on the single lent H200 (no multi-GPU machine was lent): the --devices worker path on
# real hardware, one GPU. A plain run, a --devices all run (one worker), a --devices 0 --replicate
# run, each of examples/copy_benchmark.py (2 specializations), then compare of the plain run
# against each (the per-GPU identity and the sharded-run note).
#   OUT=/dir bash tests/benchmarks/devices/devices_one_gpu.sh      # writes $OUT/devices/
# (tests/benchmarks/devices/ holds its run on an H200 at dbb08dc, whose wall times are blank: that
# run's script timed with `bc`, which the GPU machine lacks; the timing is bash arithmetic now)
set -u
: "${OUT:?set OUT}"
R="$OUT/devices"; mkdir -p "$R"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY="${PYTHON:-python3}"
{
  nvidia-smi --query-gpu=index,name,uuid,serial --format=csv 2>&1
  for args in "plain:" "all:--devices all" "replicate:--devices 0 --replicate"; do
    name=${args%%:*}; opts=${args#*:}
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout 120 "$PY" examples/copy_benchmark.py $opts --json-out "$R/$name.json" > "$R/$name.log" 2>&1
    rc=$?
    echo "$name ($opts): exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms wall"
  done
  for name in all replicate; do
    echo "\$ primbench compare plain.json $name.json"
    COLUMNS=150 "$PY" -m primbench compare "$R/plain.json" "$R/$name.json"
    echo "exit $?"
  done
} > "$R/devices_one_gpu.txt" 2>&1
cat "$R/devices_one_gpu.txt"
