#!/usr/bin/env bash
# precision_on_device.sh - the simulator's precision (docs/precision.md) on a machine with an
# NVIDIA GPU: the precision test on the device, then the encoder block (bench/bench_encoder.c's
# graph) at f32, f16 and bf16 on Vulkan and on the CPU, each in one process, rounds alternating.
#
# The GPU machine is bare (no meson, glslc or onnx), so build and stage on the dev machine
# (the same staging as run_on_device.sh; .gpu/ and .gl/ are git-ignored):
#
#   meson setup build-gpu -Dvulkan=enabled -Dblas=disabled --buildtype=release
#   ninja -C build-gpu libopeninfer.a tests/test_precision
#   cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_precision.c build-gpu/libopeninfer.a \
#      -o build-gpu/encoder_precision -lm -lpthread -ldl
#   mkdir -p .gpu && python3 bench/encoder/gen_encoder.py .gpu/encoder_data   # weights (needs onnx)
#   cp build-gpu/encoder_precision build-gpu/tests/test_precision .gpu/
#   # .gl/: the Vulkan loader and libGLX_nvidia's dependencies, fetched as run_on_device.sh says
#
# On the GPU machine, from the checkout (with .gpu/ and .gl/):
#
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
#   bash bench/gpu/precision_on_device.sh $OUT
#
# Logs land in $OUT (the first argument): precision.txt (everything).
set -u
OUT=${1:-${OUT:-/tmp/oi-precision}}
mkdir -p "$OUT"
G=${G:-.gpu}          # the binaries' folder
RUNS=${RUNS:-100}     # steps per round and precision
ROUNDS=${ROUNDS:-5}
unset OPENINFER_PRECISION

section() { printf '\n===== %s =====\n' "$*"; }

main() {
section "machine"
date -u
nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
nproc; grep -m1 'model name' /proc/cpuinfo; uptime

section "test_precision: f16/bf16 error bounds on the CPU and on Vulkan (the table of docs/precision.md)"
OPENINFER_BACKEND=vulkan timeout 300 $G/test_precision --table
echo "test_precision exit code: $?"

section "encoder block on Vulkan: f32 vs f16 vs bf16 (bench/gpu/encoder_precision.c)"
OPENINFER_BACKEND=vulkan timeout 300 $G/encoder_precision --dir $G/encoder_data --runs $RUNS --rounds $ROUNDS

section "encoder block on Vulkan, the tensor-core matmul off (OPENINFER_VULKAN_COOPMAT=0)"
OPENINFER_VULKAN_COOPMAT=0 OPENINFER_BACKEND=vulkan timeout 300 $G/encoder_precision --dir $G/encoder_data \
    --runs $RUNS --rounds $ROUNDS

section "encoder block on the CPU (all cores): f32 vs f16 vs bf16"
OPENINFER_BACKEND=cpu timeout 300 $G/encoder_precision --dir $G/encoder_data --runs 20 --rounds 3

section "done"
date -u
}

main 2>&1 | tee "$OUT/precision.txt"
