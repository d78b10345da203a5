#!/usr/bin/env bash
# regen_synth_golden.sh [BUILD_DIR] - rewrites tests/synth/golden/ from
# today's synthesizer (after a deliberate change to the generated code);
# review the diff before committing it.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
ninja -C "$build" tools/openinfer tests/synth/export_minimal tests/synth/export_residual_mlp \
  tests/synth/export_branching tests/synth/export_digits tests/synth/export_kv_cache tests/synth/export_encoder
python3 "$root/tests/synth/golden.py" --update "$build/tools/openinfer" \
  minimal="$build/tests/synth/export_minimal" residual_mlp="$build/tests/synth/export_residual_mlp" \
  branching="$build/tests/synth/export_branching" digits="$build/tests/synth/export_digits" \
  kv_cache="$build/tests/synth/export_kv_cache" encoder="$build/tests/synth/export_encoder" \
  residual_mlp@vulkan="$build/tests/synth/export_residual_mlp" encoder@vulkan="$build/tests/synth/export_encoder"
