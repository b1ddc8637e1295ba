# cpu_probe.py on the H200: the machine's CPU topology, then processes pinned to each CPU group and unpinned, interleaved
set -u
export PYTHONPATH=$PWD
mkdir -p $OUT/cpu
( lscpu; echo; numactl -H 2>&1; echo; cat /sys/fs/cgroup/cpuset.cpus.effective /sys/fs/cgroup/cpuset.mems.effective 2>&1;
  grep -i cpus_allowed_list /proc/self/status; nvidia-smi topo -m 2>&1; nproc;
  for n in /sys/devices/system/node/node*; do echo "$n: $(cat $n/cpulist)"; done;
  python3 - <<'PY'
import pynvml as n
n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0)
words = n.nvmlDeviceGetCpuAffinity(h, 4)
print("nvml ideal cpu mask words:", [hex(w) for w in words])
try: print("nvml numa node:", n.nvmlDeviceGetNumaNodeId(h))
except Exception as e: print("numa node:", e)
print("pci:", n.nvmlDeviceGetPciInfo(h).busId)
PY
) > $OUT/cpu/topology.txt 2>&1
nvidia-smi --query-gpu=uuid,name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv > $OUT/cpu/gpu.txt
G=$(python3 -c "
import os
from pathlib import Path
p=Path('/sys/fs/cgroup/cpuset.cpus.effective')
from tests.benchmarks.variance.cpu_probe import cpu_list
c=sorted(cpu_list(p.read_text().strip())) if p.exists() else sorted(os.sched_getaffinity(0))
k=len(c)//4; print(' '.join(','.join(map(str,c[i*k:(i+1)*k])) for i in range(4)))")
echo "groups: $G"
timeout 60 python3 tests/benchmarks/variance/cpu_probe.py --out $OUT/cpu/quick --quick 2>&1 | tail -3
for rep in ${REPS:-1 2 3 4}; do
  for pin in $G none; do
    if [ $pin = none ]; then a=""; else a="--pin $pin"; fi
    timeout 60 python3 tests/benchmarks/variance/cpu_probe.py --out $OUT/cpu/runs $a > /dev/null 2>$OUT/cpu/err-$rep-$pin.log || echo "fail $rep $pin"
  done
  echo "rep $rep done $(date +%T)"
done
cd $OUT && tar czf cpu.tgz cpu && rm -rf cpu && ls -la
