#!/usr/bin/env bash
# synth_encoder.sh OUT - on the GPU machine, in one go: the synthesizer's Vulkan code against the
# simulator's Vulkan backend and PyTorch on the same GPU.
#   1. bench_encoder's block (2 layers, d 384, seq 128, f32) as emitted for h100.json (one command
#      buffer recorded at open, replayed every step) vs the simulator's Vulkan backend vs PyTorch
#      eager: ms per step, GPU vs host time, dispatches per step, the ratios;
#   2. parity of emitted code with the simulator on this GPU (bench/gpu/synth_parity.py):
#      tests/synth's seeded encoder for h100.json as it is (f32) and at fp16 (f16 temporaries),
#      and tests/synth/matmul_graph.c's 1024^3 matmul on cooperative matrices (fp16);
#   3. the emitted f16 matmul at n = 4096 (cooperative matrices, h100.json at fp16; through
#      VK_KHR_cooperative_matrix, and again through the NV extension) vs cuBLAS through torch, and
#      the backend's own (vk_peer matmul) in the same run.
#
# Stage on the dev machine first (bash bench/gpu/synth_stage.sh: glslc and volk are there, not
# here), copy the checkout with .gpu/ and .gl/ (run_on_device.sh's header says how .gl/ is made),
# then here:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
#   bash bench/gpu/synth_encoder.sh $OUT
#
# Writes to OUT only small text files: synth.txt (everything below), emitted.txt, kernels.txt (the
# emitted encoder's GPU time per kernel), peer.txt, trace_summary.txt (the simulator's per node),
# parity.txt, matmul.txt, interop.txt, summary.txt (the figures and ratios).
#   4. interop: the emitted residual_mlp opened on a device the program makes itself, with the
#      model in its own buffer and x and h passed as device ranges (tests/synth/vulkan_interop.c).
#   5. decode: SmolLM2-135M's decode graph (examples/models/smollm2) as emitted for h100.json
#      (K/V tables resident on the device, one recorded step per token) against PyTorch/
#      transformers' greedy decode with a static KV cache in f16 from the same GGUF
#      (bench/gpu/synth_decode.py: tokens/s of both, their ids, the ratio). It imports
#      smollm2.oinf here from the staged package (.gpu/stage/pkgs, as models_on_device.sh
#      stages it, with the gguf wheel in .gpu/stage/wheels): the importer writes the bytes the
#      folder was synthesized for.
#   6. sweep: the emitted f16 matmul at n = 4096 for several tile shapes (device JSON
#      preferences.coopmat_block / coopmat_subgroups) against cuBLAS, bench/gpu/synth_matmul_sweep.sh
#      (staged by synth_stage.sh into .gpu/sweep/).
# PARTS="encoder parity matmul sweep interop decode" (the default) picks the parts to run.
set -u
OUT=${1:-${OUT:-/tmp/oi-synth-gpu}}
G=${G:-.gpu}
HERE=$(dirname "$0")
RUNS=${RUNS:-200}
PARTS=${PARTS:-encoder parity matmul sweep interop decode}
mkdir -p "$OUT"
WORK=$(mktemp -d) # models, traces and fetched values: not in OUT
mkdir -p "$WORK/enc" "$WORK/mm" "$WORK/mm4k_1" "$WORK/mm4k_9" # the exporters write into folders that exist
trap 'rm -rf "$WORK"' EXIT
exec > >(tee "$OUT/synth.txt") 2>&1
section() { printf '\n===== %s =====\n' "$*"; }
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
: > "$OUT/summary.txt"

section "machine"
date -u
nvidia-smi -L 2>/dev/null || true
timeout 60 $G/openinfer devices 2>&1 | grep -iE "vulkan|coopmat" | head -4

if want encoder; then
section "emitted encoder: parity with ONNX Runtime's output (h after 1 step)"
$G/synth_encoder/encoder $G/encoder_data/encoder.oinf --steps 1 --input x=$G/encoder_data/x_2d.npy \
    --fetch h --out "$WORK/emitted"
python3 -c "
import numpy as np
a, b = np.load('$WORK/emitted/h.npy'), np.load('$G/encoder_data/ref_ort.npy')
d = float(np.abs(a - b).max())
print('parity: max |emitted - onnxruntime| = %.3g (%s)' % (d, 'ok' if d <= 1e-3 else 'DIFFERS'))
"

section "emitted encoder (bench/gpu/synth_bench.c, $RUNS steps)"
$G/synth_bench $G/encoder_data/encoder.oinf $G/encoder_data/x_2d.npy --runs $RUNS | tee "$OUT/emitted.txt"

section "emitted encoder at fp16 (h100.json with default_precision fp16: f16 temporaries)"
$G/synth_bench_fp16 $G/encoder_data/encoder.oinf $G/encoder_data/x_2d.npy --runs $RUNS | tee "$WORK/emitted_fp16.txt"
grep -E "emitted_ms|emitted_gpu_ms" "$WORK/emitted_fp16.txt" | sed 's/^/fp16 /' >> "$OUT/emitted.txt"

section "emitted encoder: GPU time per kernel (synth_bench_prof: a timestamp after every dispatch)"
$G/synth_bench_prof $G/encoder_data/encoder.oinf $G/encoder_data/x_2d.npy --runs 20 > "$WORK/prof.txt"
python3 - "$WORK/prof.txt" $G/synth_encoder <<'PY' | tee "$OUT/kernels.txt"
import glob, os, re, sys
text, folder = open(sys.argv[1]).read(), sys.argv[2]
rows = [(int(k), float(us), int(n)) for k, us, n in re.findall(r"emitted_kernel k(\d+) us=([\d.]+) dispatches=(\d+)", text)]
total = sum(us for _, us, _ in rows)
for k, us, n in sorted(rows, key=lambda r: -r[1]):
    lines = open(os.path.join(folder, "encoder_k%d.comp" % k)).read().splitlines()
    what = lines[1].split(": ", 1)[1].split(",")[0] if len(lines) > 1 else "?"
    split = re.search(r" - (k\d+)'s slices summed", lines[1]) if len(lines) > 1 else None
    what = "sum of " + split.group(1) if split else what  # a matmul split along K: its second kernel
    stmt = lines[2].lstrip("/ ") if len(lines) > 2 else ""
    print("k%-3d %-10s %8.1f us %2d dispatches  %s" % (k, what, us, n, stmt[:70]))
print("total %.1f us of GPU time (timestamps after every dispatch)" % total)
PY

section "the simulator's Vulkan backend and PyTorch eager (bench/gpu/encoder_peer.c)"
OPENINFER_BACKEND=vulkan timeout 300 $G/encoder_peer --dir $G/encoder_data --runs 50 \
    --trace "$WORK/encoder_trace.json" | tee "$OUT/peer.txt"
python3 "$HERE/trace_summary.py" "$WORK/encoder_trace.json" > "$OUT/trace_summary.txt"
tail -3 "$OUT/trace_summary.txt"

section "encoder ratios"
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import re, sys
out = sys.argv[1]
em = open(out + "/emitted.txt").read()
peer = open(out + "/peer.txt").read()
trace = open(out + "/trace_summary.txt").read().splitlines()
def grab(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None
emitted = grab(r"(?m)^emitted_ms best=\S+ median=([\d.]+)", em)
fp16 = grab(r"fp16 emitted_ms best=\S+ median=([\d.]+)", em)
fp16_gpu = grab(r"fp16 emitted_gpu_ms median=([\d.]+)", em)
gpu = grab(r"(?m)^emitted_gpu_ms median=([\d.]+)", em)
cpu = grab(r"emitted_host_cpu_ms per_step=([\d.]+)", em)
dispatches = grab(r"emitted_dispatches=(\d+)", em)
barriers = grab(r"barriers=(\d+)", em)
torch = grab(r"torch: best \S+ ms, median ([\d.]+) ms", peer)
ours = grab(r"ours: best [\d.]+ ms, median ([\d.]+) ms", peer)
sim_gpu = sum(1 for l in trace[1:-1] if l.strip())
sim_gpu_us = grab(r"total \(\d+ events\)\s+([\d.]+)", trace[-1]) if trace else None
print("encoder, emitted: %.4f ms/step (GPU %.4f ms, the rest host and waiting %.4f ms; host CPU %.4f ms/step)"
      % (emitted, gpu, emitted - gpu, cpu or 0))
print("encoder, emitted: %d dispatches, %d barriers per step; the simulator: %d GPU nodes (dispatches)%s"
      % (dispatches or 0, barriers or 0, sim_gpu, ", %.4f ms GPU" % (sim_gpu_us / 1e3) if sim_gpu_us else ""))
if fp16:
    print("encoder, emitted at fp16: %.4f ms/step (GPU %.4f ms)" % (fp16, fp16_gpu or 0))
if ours:
    print("encoder, simulator: %.4f ms/step; simulator / emitted = %.3f (goal >= 2)" % (ours, ours / emitted))
if torch:
    print("encoder, torch eager: %.4f ms/step; emitted / torch = %.3f (goal <= 0.5)" % (torch, emitted / torch))
PY
fi

if want parity; then
section "parity on this GPU: emitted code vs the simulator (bench/gpu/synth_parity.py)"
{
    $G/export_encoder "$WORK/enc" 2 >/dev/null && {
        python3 "$HERE/synth_parity.py" $G/synth_parity/encoder_f32 "$WORK/enc" 2 --out "$WORK/p1"
        python3 "$HERE/synth_parity.py" $G/synth_parity/encoder_fp16 "$WORK/enc" 2 --fp16 --out "$WORK/p2"
    }
    OI_MATMUL_N=1024 $G/export_matmul "$WORK/mm" 1 >/dev/null &&
        python3 "$HERE/synth_parity.py" $G/synth_parity/matmul_coopmat "$WORK/mm" 1 --fp16 --out "$WORK/p3"
    # the graphs synth_stage.sh staged with their data (branches, resets, masks, convolutions, real models)
    for d in $G/parity_data/*/; do
        [ -d "$d/gen" ] || continue
        n=$(basename "$d")
        case $n in ppocr_cls) steps=1 ;; attn_masks|conv_ops) steps=2 ;; *) steps=3 ;; esac
        echo "== $n"
        python3 "$HERE/synth_parity.py" "$d/gen" "$d" $steps --out "$WORK/pd_$n"
    done
} 2>&1 | tee "$OUT/parity.txt"
grep -E "variables compared|driver failed" "$OUT/parity.txt" | sed 's/^/parity: /' >> "$OUT/summary.txt"
fi

if want matmul; then
section "f16 matmul, n = 4096: emitted (cooperative matrices) vs cuBLAS (torch) vs the backend"
{
    for r in 1 9; do # a matmul alone: (GPU time with 9 - with 1) / 8
        OI_MATMUL_N=4096 OI_MATMUL_REPS=$r $G/export_matmul "$WORK/mm4k_$r" 0 >/dev/null
        echo "R = $r:"
        $G/synth_matmul_r$r/bench "$WORK/mm4k_$r/model.oinf" --runs 30
        if [ $r = 1 ]; then
            echo "R = 1 through VK_NV_cooperative_matrix (OI_VK_COOPMAT=nv):"
            OI_VK_COOPMAT=nv $G/synth_matmul_r$r/bench "$WORK/mm4k_$r/model.oinf" --runs 30 | sed 's/^/nv /'
        fi
        rm -f "$WORK/mm4k_$r/model.oinf"
    done
    python3 "$HERE/cublas_f16.py"
    timeout 120 $G/vk_peer 4096 10 2000 matmul
} 2>&1 | tee "$OUT/matmul.txt"
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import re, sys
t = open(sys.argv[1] + "/matmul.txt").read()
gpu = [float(x) for x in re.findall(r"^matmul_gpu_ms best=([\d.]+)", t, re.M)] # R = 1 and 9 (not the NV run)
k1 = re.search(r"R = 1:.*?emitted_kernel k1 us=([\d.]+)", t, re.S) # the matmul's own timestamps at R = 1
nv = re.search(r"nv emitted_kernel k1 us=([\d.]+)", t) # the same through the NV extension
cublas = re.search(r"cublas_f16_ms best=([\d.]+) median=([\d.]+)", t)
backend = re.search(r"matmul_f16 [\d.]+ \S+ \(([\d.]+) us on the GPU", t)
flop = 2 * 4096 ** 3
if len(gpu) == 2:
    ms = (gpu[1] - gpu[0]) / 8
    print("f16 matmul 4096, emitted: %.4f ms (%.0f TFLOP/s; best GPU ms per step %.4f at R = 1, %.4f at R = 9)"
          % (ms, flop / ms / 1e9, gpu[0], gpu[1]))
    if k1:
        print("f16 matmul 4096, emitted, its own timestamps (R = 1): %.4f ms (%.0f TFLOP/s)" % (
            float(k1.group(1)) / 1e3, flop / float(k1.group(1)) / 1e6))
    if nv:
        print("f16 matmul 4096, emitted through VK_NV_cooperative_matrix (OI_VK_COOPMAT=nv): %.4f ms" % (
            float(nv.group(1)) / 1e3))
    if cublas:
        print("f16 matmul 4096, cuBLAS: %.4f ms (%.0f TFLOP/s); emitted reaches %.2f of cuBLAS (goal >= 0.5)"
              % (float(cublas.group(1)), flop / float(cublas.group(1)) / 1e9, float(cublas.group(1)) / ms))
    if backend:
        us = float(backend.group(1))
        print("f16 matmul 4096, the backend (vk_peer): %.4f ms; %.2f of cuBLAS" % (
            us / 1e3, float(cublas.group(1)) / (us / 1e3) if cublas else 0))
else:
    print("f16 matmul 4096: the emitted runs failed (matmul.txt)")
PY
fi

if want sweep; then
section "the emitted f16 matmul at n = 4096: tile shapes (bench/gpu/synth_matmul_sweep.sh)"
if [ -f $G/sweep/variants.txt ]; then
    bash "$HERE/synth_matmul_sweep.sh" run "$OUT" 2>&1
    grep -E "^(cuBLAS|default|variant)" "$OUT/sweep.txt" | sed 's/^/sweep: /' >> "$OUT/summary.txt"
    awk '$3 ~ /^[0-9.]+$/' "$OUT/sweep.txt" | sort -k3 -n | head -1 | sed 's/^/sweep: fastest /' >> "$OUT/summary.txt"
else
    echo "sweep: not staged (bash bench/gpu/synth_matmul_sweep.sh stage)"
fi
fi

if want interop; then
section "interop: the emitted residual_mlp on the application's own device (tests/synth/vulkan_interop.c)"
mkdir -p "$WORK/interop"
$G/export_residual_mlp "$WORK/interop" 1 >/dev/null
$G/interop/vulkan_interop "$WORK/interop/model.oinf" 2>&1 | tee "$OUT/interop.txt"
grep -E "interop" "$OUT/interop.txt" | head -1 | sed 's/^/interop on this GPU: /' >> "$OUT/summary.txt"
fi

if want decode; then
section "decode: SmolLM2-135M, emitted Vulkan folder vs PyTorch f16 static-cache greedy decode"
S=$G/stage
if [ ! -d $S ] && ls $G/t?? >/dev/null 2>&1; then
    cat $G/t?? | tar xf - -C $G
fi
export PYTHONPATH=$PWD/$S/pkgs:/tmp/oi-py${PYTHONPATH:+:$PYTHONPATH}
ls $S/wheels/*.whl >/dev/null 2>&1 && python3 -m pip install -q --no-deps --target /tmp/oi-py $S/wheels/*.whl 2>&1 | tail -2
M=$WORK/smollm2.oinf
python3 examples/models/smollm2/import_smollm2.py "$M" 2>&1 | tail -1
if [ -f $G/synth_smollm2/model.sha256 ] && [ "$(sha256sum "$M" | cut -d' ' -f1)" != "$(cat $G/synth_smollm2/model.sha256)" ]; then
    echo "decode: this import differs from the staged one (the folder's fingerprint check will refuse it)"
fi
python3 "$HERE/synth_decode.py" $G/synth_smollm2 "$M" --runs ${DECODE_RUNS:-5} 2>&1 | grep -v Warning \
    | tee "$OUT/decode.txt"
grep -E "^RESULT|^emitted vulkan decode|^torch f16" "$OUT/decode.txt" | sed 's/^/decode: /' >> "$OUT/summary.txt"
fi

section "summary"
cat "$OUT/summary.txt"
