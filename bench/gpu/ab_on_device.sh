#!/usr/bin/env bash
# ab_on_device.sh - one run on the GPU machine for a shader change: the parity harness,
# then vk_peer of the new build and (OLD=folder) of an older one back to back
# under the same conditions, again while another process holds a CUDA
# context (the SM clock then stays up), and torch_peer.py's ratios for the new.
# Built and copied as run_on_device.sh's header says; for example, with .gl/,
# NEWDIR and .gpu/ in the checkout on the GPU machine, run
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig;
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json;
#   NEW=NEWDIR OLD=.gpu bash NEWDIR/ab_on_device.sh $OUT
# (NEWDIR holding test_vulkan, vk_peer, torch_peer.py and this script).
set -u
OUT=${1:-/tmp/oi-ab}
mkdir -p "$OUT"
NEW=${NEW:?NEW: the folder of the new build}
OLD=${OLD:-}
N=${N:-4096}
HERE=$(dirname "$0")
export PYTHONUNBUFFERED=1
unset OPENINFER_BACKEND

peers() { # prefix: vk_peer of the new build, then of the old one
    timeout 120 $NEW/vk_peer $N 10 2000 | sed "s/^vk_peer/${1}new/"
    if [ -n "$OLD" ]; then timeout 120 $OLD/vk_peer $N 10 2000 | sed "s/^vk_peer/${1}old/"; fi
}

main() {
echo "===== parity: test_vulkan"
start=$(date +%s)
timeout 300 $NEW/test_vulkan > "$OUT/parity.txt" 2>&1
echo "test_vulkan exit code: $? in $(( $(date +%s) - start )) s"
grep -E "checks|cases|features" "$OUT/parity.txt"
grep -m 20 -iE "fail|nmse" "$OUT/parity.txt"

nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,power.draw \
    --format=csv -lms 100 > "$OUT/clocks.txt" 2>&1 &
smi=$!
echo "===== vk_peer $N: new, old"
timeout 120 $NEW/vk_peer $N 10 2000 | tee "$OUT/perf.txt"
if [ -n "$OLD" ]; then timeout 120 $OLD/vk_peer $N 10 2000 | sed "s/^vk_peer/old_peer/"; fi
echo "===== the same while another process holds a CUDA context"
python3 -c "import torch, time; torch.zeros(1, device='cuda'); time.sleep(45)" &
holder=$!
sleep 8
peers ctx_
kill $holder $smi
wait $holder $smi 2>/dev/null
echo "SM clock (MHz) samples every 100 ms while the peers ran: count, value"
awk -F', ' 'NR > 1 {print $3}' "$OUT/clocks.txt" | sort | uniq -c | sort -rn | head -8

echo "===== torch_peer.py $N and the ratios of the new build (first block)"
timeout 180 python3 "$HERE/torch_peer.py" --n $N --reps 20 --ours "$OUT/perf.txt" | tee "$OUT/ratios.txt"
date -u
}

main 2>&1 | tee "$OUT/log.txt"
