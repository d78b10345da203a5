#!/usr/bin/env bash
# smollm2_ab.sh - SmolLM2's greedy decode on the Vulkan backend, two builds of
# examples/models/smollm2 run alternately on the same GPU (a before/after of a change):
#
#   bash bench/gpu/smollm2_ab.sh MODEL.oinf BEFORE_BIN AFTER_BIN [ROUNDS]
#
# Each round runs both builds at 64 new tokens (a context of ~70) and at 480 (~490),
# --ignore-eos, the same prompt, and prints the example's own summary line (prompt and
# decode ms a token) under the build's name. The GPU machine is bare and cannot reach the
# network: import the model there from the GGUF with examples/models/smollm2/import_smollm2.py
# (numpy only), and carry the two stripped binaries and .gl/ (bench/gpu/run_on_device.sh).
set -u
MODEL=$1
BEFORE=$2
AFTER=$3
ROUNDS=${4:-2}
export OPENINFER_BACKEND=vulkan
for r in $(seq 1 "$ROUNDS"); do
    for n in 64 480; do
        for build in before after; do
            bin=$BEFORE
            [ $build = after ] && bin=$AFTER
            line=$("$bin" "$MODEL" "Tell me a long story about the sea." -n $n --ignore-eos 2>&1 | grep "new tokens in")
            echo "round $r, $n new tokens, $build: $line"
        done
    done
done
