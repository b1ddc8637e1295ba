#!/bin/bash
# Runs the copy example (1 MiB, no monitoring) at each archived commit, twice, round robin.
out=$1; mkdir -p $out
for rep in 1 2; do
  for d in $(cat .hist/order.txt); do
    (cd .hist/$d && PYTHONPATH=$PWD timeout 60 python3 examples/copy_benchmark.py --size 1MiB --no-monitoring \
      --branch main --commit $d --json-out $out/copy-1mib-${d:0:7}-$rep.json > $out/copy-1mib-${d:0:7}-$rep.log 2>&1)
    echo "$d $rep rc=$? $(grep -h 'ok ' $out/copy-1mib-${d:0:7}-$rep.log | tr -s ' ' | cut -c1-90 | tr '\n' '|')"
  done
done
