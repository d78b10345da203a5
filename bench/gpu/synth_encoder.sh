#!/usr/bin/env bash
# synth_encoder.sh OUT - on the GPU machine: bench_encoder's block (2 layers, d 384, seq 128,
# f32) as the synthesizer emits it for Vulkan (one command buffer recorded at open, replayed
# every step) against the simulator's Vulkan backend and PyTorch eager on the same GPU.
#
# Stage on the dev machine first (bash bench/gpu/synth_stage.sh: glslc and volk are there, not
# here), copy the checkout with .gpu/ and .gl/ (run_on_device.sh's header says how .gl/ is made),
# then here:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
#   bash bench/gpu/synth_encoder.sh $OUT
#
# Prints (and writes to OUT/synth.txt): the emitted code's wall time per step, its GPU time
# (timestamps), its host CPU time, its dispatches and barriers per step; parity of its output
# with ONNX Runtime's (staged as ref_ort.npy); the simulator's Vulkan backend and PyTorch eager through
# encoder_peer (their ms per step; the simulator's trace counts its dispatches); the ratios.
set -u
OUT=${1:-${OUT:-/tmp/oi-synth-gpu}}
G=${G:-.gpu}
HERE=$(dirname "$0")
RUNS=${RUNS:-200}
mkdir -p "$OUT"
exec > >(tee "$OUT/synth.txt") 2>&1
section() { printf '\n===== %s =====\n' "$*"; }

section "machine"
date -u
nvidia-smi -L 2>/dev/null || true

section "emitted code: parity with ONNX Runtime's output (h after 1 step)"
$G/synth_encoder/encoder $G/encoder_data/encoder.oinf --steps 1 --input x=$G/encoder_data/x_2d.npy \
    --fetch h --out "$OUT/emitted"
python3 -c "
import numpy as np
a, b = np.load('$OUT/emitted/h.npy'), np.load('$G/encoder_data/ref_ort.npy')
d = float(np.abs(a - b).max())
print('parity: max |emitted - onnxruntime| = %.3g (%s)' % (d, 'ok' if d <= 1e-3 else 'DIFFERS'))
"

section "emitted code (bench/gpu/synth_bench.c, $RUNS steps)"
$G/synth_bench $G/encoder_data/encoder.oinf $G/encoder_data/x_2d.npy --runs $RUNS | tee "$OUT/emitted.txt"

section "the simulator's Vulkan backend and PyTorch eager (bench/gpu/encoder_peer.c)"
OPENINFER_BACKEND=vulkan timeout 300 $G/encoder_peer --dir $G/encoder_data --runs 50 \
    --trace "$OUT/encoder_trace.json" | tee "$OUT/peer.txt"
python3 "$HERE/trace_summary.py" "$OUT/encoder_trace.json" | tee "$OUT/trace_summary.txt"

section "ratios"
python3 - "$OUT" <<'PY'
import re, sys
out = sys.argv[1]
em = open(out + "/emitted.txt").read()
peer = open(out + "/peer.txt").read()
def grab(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None
emitted = grab(r"emitted_ms best=\S+ median=([\d.]+)", em)
gpu = grab(r"emitted_gpu_ms median=([\d.]+)", em)
torch = grab(r"torch_ms best=\S+ median=([\d.]+)", peer)
print("emitted: %.4f ms/step (GPU %.4f ms, host and waiting %.4f ms)" % (emitted, gpu, emitted - gpu))
for line in peer.splitlines():
    if line.startswith(("ours:", "torch:", "ours / torch")):
        print("peer:", line.strip())
if torch:
    print("emitted / torch eager = %.3f (goal <= 0.5)" % (emitted / torch))
ours = grab(r"ours: best [\d.]+ ms, median ([\d.]+) ms", peer)
if ours:
    print("simulator / emitted = %.3f (goal >= 2)" % (ours / emitted))
PY
