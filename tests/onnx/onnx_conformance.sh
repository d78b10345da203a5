#!/usr/bin/env bash
# onnx_conformance.sh SOURCE_ROOT CASES_DIR RUN_ONNX [run_onnx options...]
# Converts ONNX's node tests into CASES_DIR and runs them. Exits 77 (skip) only when
# the test data is not installed (scripts/setup.sh installs libonnx-testdata).
set -euo pipefail
src=$1 cases=$2 run_onnx=$3
shift 3

find_data() {
    local dir
    for dir in "${ONNX_NODE_TESTS:-}" /usr/share/libonnx-testdata/data/node \
               /usr/include/onnx/backend/test/data/node; do
        if [ -n "$dir" ] && [ -f "$dir/test_abs/model.onnx" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# The converter needs numpy and onnx: Debian's python3-onnx (the same release as the test
# data) is for /usr/bin/python3, tried first; a python3 on PATH with PyPI's onnx works too.
find_python() {
    local py
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null && "$py" -c "import numpy, onnx" 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    return 1
}

if ! data=$(find_data); then
    echo "onnx_conformance: ONNX node tests not installed (apt-get install libonnx-testdata); skipped"
    exit 77
fi
if ! python=$(find_python); then
    echo "onnx_conformance: no Python with numpy and onnx (apt-get install python3-onnx)" >&2
    exit 1
fi
rm -rf "$cases"
"$python" "$src/tests/onnx/convert.py" --data "$data" --out "$cases" --ops "$src/kernels/op_list.h"
exec "$run_onnx" "$cases" --expected-failures "$src/tests/onnx/expected_failures.txt" "$@"
