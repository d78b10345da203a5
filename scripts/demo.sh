#!/usr/bin/env bash
# demo.sh - the quick start: set up, build what the demo needs (the CLI and
# the minimal example), make the example model and run the main example on
# the default device. ./scripts/test.sh builds everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --only tools/openinfer examples/minimal
echo "demo: making res/minimal_model.oinf"
python3 examples/python/minimal_oinf.py res/minimal_model.oinf
./build/tools/openinfer inspect res/minimal_model.oinf | head -n 8
./build/examples/minimal res/minimal_model.oinf
