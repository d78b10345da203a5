#!/usr/bin/env bash
# synth_stage.sh [BUILD_DIR] - on the dev machine (glslc, volk, meson here; none on the GPU
# machine): synthesizes bench_encoder's block for the H100 (examples/devices/h100.json), builds
# the emitted folder and bench/gpu/synth_bench.c against it, and puts everything the GPU run
# needs into .gpu/ (git-ignored, copied with the checkout):
#
#   .gpu/encoder_data/encoder.oinf, encoder_input.npy   (bench/encoder/gen_encoder.py; needs onnx)
#   .gpu/encoder_data/x_2d.npy, ref_ort.npy            (the input as [B*S, D], ONNX Runtime's output)
#   .gpu/encoder_graph.json                            (the block's graph, oi_graph_to_json)
#   .gpu/synth_encoder/                                (the emitted folder, built: encoder, libencoder.a)
#   .gpu/synth_bench                                   (the timing harness, linked to libencoder.a)
#   .gpu/openinfer, .gpu/encoder_peer                  (the simulator's CLI and its Vulkan peer)
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
ninja -C "$build" tools/openinfer tests/synth/export_encoder libopeninfer.a
[ -f $G/encoder_data/encoder.oinf ] || python3 bench/encoder/gen_encoder.py $G/encoder_data
# the input as the graph declares it ([B*S, D]) and ONNX Runtime's output, for the parity check there
python3 - $G/encoder_data <<'PY'
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
cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_peer.c "$build/libopeninfer.a" \
    -o $G/encoder_peer -lm -lpthread -ldl
cp "$build/tools/openinfer" $G/openinfer
echo "staged in $G: synth_encoder/ synth_bench encoder_peer openinfer encoder_data/ encoder_graph.json"
