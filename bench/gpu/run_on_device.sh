#!/usr/bin/env bash
# run_on_device.sh - the Vulkan backend on a machine with a real NVIDIA GPU, in one go:
# devices, the parity harness, perf vs PyTorch, and the examples on Vulkan vs the CPU.
#
# The GPU machine is bare (no meson, glslc or libstb), so build on the dev machine and copy the
# binaries over with the checkout:
#
#   meson setup build-gpu -Dvulkan=enabled -Dblas=disabled --buildtype=release   # no OpenBLAS on the GPU machine
#   ninja -C build-gpu tests/test_vulkan tools/openinfer examples/minimal examples/kv_cache \
#         examples/branching examples/streaming examples/residual_mlp examples/cache_window
#   cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/vk_peer.c build-gpu/libopeninfer.a \
#      -o build-gpu/vk_peer -lm -lpthread -ldl
#   cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_peer.c build-gpu/libopeninfer.a \
#      -o build-gpu/encoder_peer -lm -lpthread -ldl
#   mkdir -p .gpu && python3 examples/python/minimal_oinf.py .gpu/minimal_model.oinf
#   python3 bench/encoder/gen_encoder.py .gpu/encoder_data   # the encoder's weights (needs onnx)
#   for b in tests/test_vulkan tools/openinfer vk_peer encoder_peer examples/minimal examples/kv_cache \
#            examples/branching examples/streaming examples/residual_mlp examples/cache_window; do
#       cp build-gpu/$b .gpu/; done
#
# .gl/ (git-ignored) holds the Vulkan loader and the libraries NVIDIA's ICD (libGLX_nvidia) needs;
# with libvulkan1 alone vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER. Fetch them once:
#   mkdir -p .gl /tmp/amd64/partial; o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
# Then copy the checkout with .gl/ and .gpu/ (both git-ignored) to the GPU machine and run there:
#
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig;
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json;
#   bash bench/gpu/run_on_device.sh $OUT
#
# QUICK=1 bash bench/gpu/run_on_device.sh $OUT skips the CUDA-context diagnostic and the examples.
# Logs land in $OUT (the first argument): log.txt (everything), perf.txt, ratios.txt.
set -u
OUT=${1:-${OUT:-/tmp/oi-gpu}}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
unset OPENINFER_BACKEND
G=${G:-.gpu} # the binaries' folder (another build's: G=build-x bash ...)
HERE=$(dirname "$0")
N=${N:-4096} # the size of every perf figure
QUICK=${QUICK:-0} # 1: parity, perf and torch only (a shorter run)

section() { printf '\n===== %s =====\n' "$*"; }

encoder() { # the 2-layer encoder block, ours on Vulkan vs PyTorch eager (when its files are in $G)
    if [ -x $G/encoder_peer ] && [ -f $G/encoder_data/encoder.oinf ]; then
        section "encoder block: OPENINFER_BACKEND=vulkan vs PyTorch eager (bench/gpu/encoder_peer.c)"
        OPENINFER_BACKEND=vulkan timeout 180 $G/encoder_peer --dir $G/encoder_data --runs 50 \
            --trace "$OUT/encoder_trace.json" && python3 "$HERE/trace_summary.py" "$OUT/encoder_trace.json"
    fi
}

main() {
section "machine"
date -u
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
ldconfig -p | grep libvulkan

section "openinfer devices"
timeout 60 $G/openinfer devices

section "parity: test_vulkan (every op x dtype x shape vs the CPU reference)"
time timeout 300 $G/test_vulkan > "$OUT/parity.txt" 2>&1
echo "test_vulkan exit code: $?"
head -80 "$OUT/parity.txt"

section "perf: test_vulkan perf $N"
timeout 120 $G/test_vulkan perf $N | tee "$OUT/perf.txt"

section "perf: vk_peer $N (ours, GPU timestamps, best of 10, after 2 s of warm-up)"
# the GPU's clocks and P-state every 200 ms while ours runs (clocks.txt)
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,power.draw \
    --format=csv -lms 200 > "$OUT/clocks.txt" 2>&1 &
smi=$!
timeout 120 $G/vk_peer $N 10 2000 | tee -a "$OUT/perf.txt"
kill $smi; wait $smi 2>/dev/null
echo "clocks while vk_peer ran (pstate, SM MHz, memory MHz), every 10th sample:"
awk 'NR == 1 || NR % 10 == 0' "$OUT/clocks.txt" | head -20

section "perf: vk_peer $N with OPENINFER_VULKAN_COOPMAT=0 (the plain shaders, for comparison)"
OPENINFER_VULKAN_COOPMAT=0 timeout 120 $G/vk_peer $N 10 500 | grep -E 'features|matmul' | sed 's/^vk_peer:/vk_peer(no coopmat):/'

if [ "$QUICK" = 1 ]; then
section "perf: torch_peer.py $N (cuBLAS / CUDA, CUDA events, best of 20) and ratios"
timeout 180 python3 "$HERE/torch_peer.py" --n $N --reps 20 --ours "$OUT/perf.txt" | tee "$OUT/ratios.txt"
encoder
section "done (QUICK=1: no CUDA-context diagnostic, no examples)"
date -u
return 0
fi

section "diagnostic: vk_peer $N again while another process holds a CUDA context"
python3 -c "import torch, time; torch.zeros(1, device='cuda'); time.sleep(60)" &
holder=$!
sleep 8
timeout 120 $G/vk_peer $N 10 2000 | sed 's/^vk_peer:/vk_peer(cuda ctx held):/'
kill $holder; wait $holder 2>/dev/null

section "perf: torch_peer.py $N (cuBLAS / CUDA, CUDA events, best of 20) and ratios"
timeout 180 python3 "$HERE/torch_peer.py" --n $N --reps 20 --ours "$OUT/perf.txt" | tee "$OUT/ratios.txt"

encoder

section "examples: OPENINFER_BACKEND=vulkan vs cpu"
compare() { # the numbers in two outputs agree within 1e-4 (relative), 1e-5 (absolute) or one
            # unit of the last printed decimal (a %.4f of two values 1e-7 apart can differ there)
    python3 - "$1" "$2" <<'EOF'
import re, sys
num = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
a, b = (num.findall(open(p).read()) for p in sys.argv[1:3])
if len(a) != len(b):
    print(f"  DIFFERENT: {len(a)} vs {len(b)} numbers"); sys.exit(1)
worst, bad = 0.0, []
for sx, sy in zip(a, b):
    x, y = float(sx), float(sy)
    if x == y or (x != x and y != y):
        continue
    rel = abs(x - y) / max(abs(y), 1e-5 / 1e-4)
    digits = len(sy.split(".")[1]) if "." in sy and "e" not in sy.lower() else 0
    last_place = 10.0 ** -digits if digits else 0.0
    worst = max(worst, rel)
    if rel > 1e-4 and abs(x - y) > last_place * 1.0001:
        bad.append(f"{sx} vs {sy}")
detail = f" ({', '.join(bad[:3])})" if bad else ""
print(f"  {len(a)} numbers, largest relative difference {worst:.2e}{detail}:", "MISMATCH" if bad else "MATCH")
sys.exit(1 if bad else 0)
EOF
}
for ex in "minimal $G/minimal_model.oinf" kv_cache branching streaming residual_mlp cache_window; do
    set -- $ex
    name=$1; shift
    OPENINFER_BACKEND=cpu timeout 60 $G/$name "$@" > "$OUT/ex_${name}_cpu.txt" 2>&1; rc_cpu=$?
    OPENINFER_BACKEND=vulkan timeout 60 $G/$name "$@" > "$OUT/ex_${name}_vk.txt" 2>&1; rc_vk=$?
    echo "--- $name: exit cpu $rc_cpu, vulkan $rc_vk"
    cat "$OUT/ex_${name}_vk.txt" | head -12
    compare "$OUT/ex_${name}_vk.txt" "$OUT/ex_${name}_cpu.txt"
    rm -f "$OUT/ex_${name}_cpu.txt" "$OUT/ex_${name}_vk.txt"
done
section "done"
date -u
}

main 2>&1 | tee "$OUT/log.txt"
